// limbic as a benchmarked Store: the state library exactly as `limbic run`
// uses it (state::Build* commands, Engine::Submit with group commit, reads
// from the projections), driven from one thread without an io_context: the
// benchmark's thread is the owner and runs completions with Poll.
#pragma once

#include <memory>
#include <string>

#include "bench/store.h"
#include "state/event_log.h"

namespace limbic::bench {

struct LimbicStoreOptions {
  std::string dir;  // the state dir
  state::Durability durability = state::Durability::kFsync;
  // Writes in flight, as that many concurrent clients would keep (each
  // waiting for its acknowledgement before sending the next).
  size_t window = 64;
};

// Opens (recovering) the state dir: what the benchmark times as limbic's
// recovery, including re-applying log events the projections lack.
Result<std::unique_ptr<Store>> OpenLimbicStore(const LimbicStoreOptions& options);

}  // namespace limbic::bench
