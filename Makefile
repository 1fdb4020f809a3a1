# Thin wrapper over CMake. `make run` and `make test` work from a fresh clone
# on Debian 12: they install missing packages first (apt-get; sudo when not root).

BUILD   ?= build
TYPE    ?= RelWithDebInfo
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# make run CONFIG=file PORT=7078 STATE=dir: limbic run's --config, --port, --state
CONFIG  ?=
PORT    ?=
STATE   ?=
BENCH_ARGS ?=
# Debian packages the build, the tests and the README tour need.
PKGS := build-essential cmake pkg-config git \
        librocksdb-dev libboost-dev nlohmann-json3-dev libspdlog-dev libfmt-dev \
        catch2 libssl-dev libre2-dev libcli11-dev libsimdjson-dev libjemalloc-dev libsqlite3-dev libpoppler-cpp-dev libhnswlib-dev libstemmer-dev libopenblas-dev libutf8proc-dev curl openssl python3 python3-numpy \
        python3-venv python3-pip python3-setuptools python3-wheel \
        chromium nats-server libnats-dev

# `make fuzz` only (docs/fuzzing.md): clang, and libFuzzer + the sanitizer
# runtimes (libclang-rt-dev). `make test` needs none of them.
FUZZ_PKGS := clang libclang-rt-dev
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= events config rules archive http mcp tokenizer safetensors
FUZZ_ARGS    ?=

.PHONY: deps npm-deps fuzz-deps install-pkgs configure build run test bench fuzz fuzz-corpus clean format openapi

deps:
	@$(MAKE) --no-print-directory install-pkgs INSTALL_PKGS="$(PKGS)"
	@$(MAKE) --no-print-directory npm-deps

# The JavaScript the tests need, from the npm registry, each pinned by its
# lockfile: the browser tests' (puppeteer-core) and the TypeScript client's
# compiler (clients/typescript; its tests build dist/ from src/).
# Node.js and npm from Debian when there is none.
NPM_DIRS := tests/browser clients/typescript
npm-deps:
	@command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory install-pkgs INSTALL_PKGS="nodejs npm"
	@for d in $(NPM_DIRS); do \
	  if [ ! -f $$d/node_modules/.package-lock.json ] || \
	      [ $$d/package-lock.json -nt $$d/node_modules/.package-lock.json ]; then \
	    echo "npm ci ($$d)"; \
	    (cd $$d && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	  fi; \
	done

fuzz-deps:
	@$(MAKE) --no-print-directory install-pkgs INSTALL_PKGS="$(FUZZ_PKGS)"

install-pkgs:
	@missing=""; for p in $(INSTALL_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/limbic run $(if $(CONFIG),--config $(CONFIG),) $(if $(PORT),--port $(PORT),) $(if $(STATE),--state $(STATE),)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

# docs/openapi.json as the binary serves it (GET /v1/openapi.json); a test
# fails while the two differ.
openapi: build
	$(BUILD)/limbic openapi > docs/openapi.json

# make bench BENCH_ARGS="--quick" (or --scenarios ..., see bench/main.cc)
bench: build
	$(BUILD)/limbic_bench $(BENCH_ARGS)
	$(BUILD)/limbic_bench --scenarios timetravel
	$(BUILD)/limbic_loop_bench
	cd $(BUILD) && ./limbic_archive_bench && ./limbic_search_bench
	$(BUILD)/limbic_memory_bench
	$(BUILD)/limbic_vector_bench
	$(BUILD)/limbic_encoder_bench
	cd $(BUILD) && ./limbic_world_bench
	$(BUILD)/limbic_startup_bench
	$(BUILD)/limbic_replication_bench --limbic $(BUILD)/limbic
	$(BUILD)/limbic_mind_bench --limbic $(BUILD)/limbic
	node bench/inspector/inspector_bench.mjs --limbic $(BUILD)/limbic

# The libFuzzer targets (fuzz/), clang with ASan + UBSan, in $(FUZZ_BUILD):
# each runs FUZZ_SECONDS on fuzz/corpus/<target>, writing what it learns to
# $(FUZZ_BUILD)/corpus/<target> and crashes to $(FUZZ_BUILD)/crashes/<target>/.
# make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS="http mcp" FUZZ_ARGS="-jobs=2"
fuzz: fuzz-deps deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIMBIC_FUZZ=ON -DBUILD_TESTING=OFF \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addsuffix _fuzz,$(FUZZ_TARGETS))
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes/$$t; \
	  dict=""; [ -f fuzz/$$t.dict ] && dict="-dict=fuzz/$$t.dict"; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s (log: $(FUZZ_BUILD)/crashes/$$t.log)"; \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan.supp \
	  $(FUZZ_BUILD)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=60 \
	    -rss_limit_mb=4096 -print_final_stats=1 $$dict -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t/ \
	    $(FUZZ_ARGS) $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t > $(FUZZ_BUILD)/crashes/$$t.log 2>&1 \
	    || failed="$$failed $$t"; \
	  grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" $(FUZZ_BUILD)/crashes/$$t.log; \
	done; \
	if [ -n "$$failed" ]; then \
	  echo "fuzz: crashes in:$$failed (inputs in $(FUZZ_BUILD)/crashes/; docs/fuzzing.md says what next)"; \
	  exit 1; \
	fi

# Merges what `make fuzz` learnt into the committed corpus: only inputs that
# add coverage are copied to fuzz/corpus/<target> (keep it small).
fuzz-corpus:
	@for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_BUILD)/fuzz/$${t}_fuzz -merge=1 -max_len=4096 fuzz/corpus/$$t $(FUZZ_BUILD)/corpus/$$t \
	    2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files"; \
	done

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')
