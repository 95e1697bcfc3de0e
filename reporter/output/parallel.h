// The reporter's one way to spread independent jobs over cores: loading
// result files and rendering model pages.
#pragma once

#include <cstddef>
#include <functional>

namespace torchgauge::reporter {

// Threads to use for `jobs` jobs when `requested` were asked for (0: every
// core): at least 1, at most 16 and at most one per job.
int ThreadCount(int requested, std::size_t jobs);

// Calls fn(i, worker) for every i in [0, n) on `threads` threads (worker is
// the thread's index, 0 being the calling thread). Jobs are taken in order
// from a shared counter. The first exception stops the remaining jobs and is
// rethrown once every thread has finished.
void ParallelFor(std::size_t n, int threads, const std::function<void(std::size_t, int)>& fn);

}  // namespace torchgauge::reporter
