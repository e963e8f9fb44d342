// The one host thread pool. TESSEL_NUM_THREADS sets its size (default: the cores this process
// may run on). parallel_for splits [0, n) into chunks of at least `grain` items and runs them on
// the pool, the calling thread included; a parallel_for inside a worker runs inline (no nested
// parallelism, no deadlock).
#pragma once

#include <cstdint>
#include <functional>

namespace tessel {

// The threads a parallel_for started here can use: the pool's size, or 1 inside a parallel_for
// (a nested one runs inline), so that a kernel called from a worker partitions its work for one.
int num_threads();
// Resizes the pool (>= 1); for benchmarks and tests. Not to be called from inside parallel_for.
void set_num_threads(int n);

using RangeFn = std::function<void(int64_t begin, int64_t end)>;
void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

}  // namespace tessel
