# Thin wrapper over CMake. `make run` and `make test` work from a fresh clone
# on Debian 12: they install missing packages first (apt-get; sudo when not root).

BUILD   ?= build
TYPE    ?= RelWithDebInfo
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CONFIG  ?=
BENCH_ARGS ?=
# Debian packages the build, the tests and the README tour need.
PKGS := build-essential cmake pkg-config git \
        librocksdb-dev libboost-dev nlohmann-json3-dev libspdlog-dev libfmt-dev \
        catch2 libssl-dev libre2-dev libcli11-dev libsimdjson-dev libjemalloc-dev libsqlite3-dev libpoppler-cpp-dev libhnswlib-dev curl openssl python3

.PHONY: deps configure build run test bench clean format

deps:
	@missing=""; for p in $(PKGS); do \
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
	$(BUILD)/limbic run $(if $(CONFIG),--config $(CONFIG),)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

# make bench BENCH_ARGS="--quick" (or --scenarios ..., see bench/main.cc)
bench: build
	$(BUILD)/limbic_bench $(BENCH_ARGS)
	$(BUILD)/limbic_loop_bench
	cd $(BUILD) && ./limbic_archive_bench && ./limbic_search_bench
	$(BUILD)/limbic_memory_bench
	$(BUILD)/limbic_vector_bench
	cd $(BUILD) && ./limbic_world_bench

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')
