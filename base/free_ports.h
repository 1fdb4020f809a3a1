// Free TCP ports on 127.0.0.1, for servers a test or a bench starts with
// ports given on their command line (nats-server's client and cluster
// ports).
//
// The ports are bound all at once, so none repeats, then released for the
// servers to take: another process may still take one in between, which
// the caller sees as its server failing to start.
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace limbic {

// `count` distinct ports; an error when the system gives none.
Result<std::vector<uint16_t>> FreeLoopbackPorts(size_t count);

}  // namespace limbic
