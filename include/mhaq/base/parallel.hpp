// Deterministic parallel loop. Work items are independent and write only to
// their own slot, so results do not depend on the thread count or on the
// order in which threads finish. Each worker inherits the caller's working
// precision (it is thread-local) and releases FLINT/Arb thread caches at exit.
// If items throw, the exception of the lowest failing index is rethrown, so
// the reported error is also independent of the thread count; items above a
// failed index may be skipped (their results would be discarded anyway).
#pragma once
#include <cstddef>
#include <functional>

namespace mhaq {

// Runs fn(i) for i in [begin, end) on up to `threads` threads (>= 1).
void parallel_for(std::size_t begin, std::size_t end, int threads, const std::function<void(std::size_t)>& fn);

// Number of hardware threads (at least 1); the default for --threads 0.
int hardware_threads();

}  // namespace mhaq
