// ParallelFor: a loop whose iterations run on the process's shared thread
// pool and the calling thread (the archive's loops over every document:
// Verify, loading an archive, links).
//
// The pool is min(cores, 8) - 1 Workers (base/worker.h), started on the
// first call that needs them and kept until the process exits, so a loop
// costs no thread start. Loops may run at once and may nest: a helper that
// had not started by the time the caller ran out of items is skipped, so a
// caller never waits for a queued helper, only for running ones.
#pragma once

#include <cstddef>
#include <functional>

namespace limbic {

// How many threads (the caller's included) a loop over n items uses: one
// per core, at most 8, and one per 8 items (handing a few small documents
// to other threads costs more than it saves).
size_t ParallelWorkers(size_t n);

// Calls fn(i, worker) for every i in [0, n), on ParallelWorkers(n) threads
// that each take the next index; `worker` in [0, ParallelWorkers(n)) names
// the thread, for per-thread scratch state. Returns when all calls have
// returned. `fn` must be safe to call from several threads for different i.
// If a call throws, the loop stops handing out indices and the first
// exception is rethrown on the calling thread.
void ParallelForWorkers(size_t n, const std::function<void(size_t i, size_t worker)>& fn);

// The same without the worker index.
void ParallelFor(size_t n, const std::function<void(size_t i)>& fn);

}  // namespace limbic
