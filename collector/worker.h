// The worker: measures one run inside its own child process and returns the
// result. Timing pass (W warm-up iterations, then R timed repetitions of one
// iteration each, synchronised with the device) first, then a separate
// profiling pass. Failures become statuses: unsupported, error, oom.
#pragma once

#include <filesystem>

#include "collector/run_spec.h"
#include "core/contract/result.h"

namespace torchgauge::collector {

core::RunResult RunWorker(const RunSpec& spec);

// The identity part of a result (model, mode, ...), shared by the worker and
// by the supervisor when it records a crash or a timeout.
core::RunResult ResultSkeleton(const RunSpec& spec);

// Entry point of the child (`torchgauge-collect worker --spec FILE`): reads
// the spec, measures, writes the result where the spec says.
int WorkerMain(const std::filesystem::path& spec_file);

// Fixes glibc malloc's mmap and trim thresholds for the rest of the process,
// so that freed tensor memory is reused rather than returned to the kernel
// and faulted in again at the next step (worker.cc says why and what it
// measured). WorkerMain calls it first; harness_overhead_bench calls it too,
// so that its bare loop runs on the same heap policy.
void SteadyHeap();

}  // namespace torchgauge::collector
