// The worker: measures one run inside its own child process and returns the
// result. Timing pass (W warm-up iterations, then R timed repetitions of one
// iteration each, synchronised with the device) first, then a separate
// profiling pass. Failures become statuses: unsupported, error, oom.
#pragma once

#include <filesystem>

#include "collector/run_spec.h"
#include "core/result.h"

namespace torchgauge::collector {

core::RunResult RunWorker(const RunSpec& spec);

// The identity part of a result (model, mode, ...), shared by the worker and
// by the supervisor when it records a crash or a timeout.
core::RunResult ResultSkeleton(const RunSpec& spec);

// Entry point of the child (`torchgauge-collect worker --spec FILE`): reads
// the spec, measures, writes the result where the spec says.
int WorkerMain(const std::filesystem::path& spec_file);

}  // namespace torchgauge::collector
