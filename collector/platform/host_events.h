// The bridge from LibTorch's Kineto profiler to core/stats/host_breakdown.h: the
// CPU operator and user-scope events of a profile as plain CpuOpEvents, the
// host breakdown over the profile's named window(s), and the profiler's own
// cost per recorded operator, from a null step timed with and without it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/autograd/profiler_kineto.h>

#include "core/stats/host_breakdown.h"

namespace torchgauge::collector {

// CPU-side events of a profile (Kineto CPU ops and user annotations), kinds
// assigned from each event's RecordFunction scope and name. Device activity
// (kernels, copies on the GPU timeline, runtime calls) is left out.
std::vector<core::CpuOpEvent> CpuOpEvents(const torch::autograd::profiler::ProfilerResult& result);

// The host breakdown over every event named `window_name` (one spanning all
// iterations, as RECORD_USER_SCOPE("torchgauge::profile_window") in
// profiling.cc, or one per iteration). Throws std::runtime_error when the
// profile has no such window.
core::HostBreakdown HostBreakdownFromProfile(const torch::autograd::profiler::ProfilerResult& result,
                                             const std::string& window_name, int iterations);

// Per-op cost of the profiler in microseconds, with the profiling pass's
// configuration (Kineto, CPU activity, input shapes and FLOPs recorded): a
// null step of `ops_per_step` one-element additions, best of `repeats`
// without and with the profiler. Unset when it could not be measured.
std::optional<double> MeasureProfilerOverheadPerOpUs(int ops_per_step = 2000, int repeats = 5);

}  // namespace torchgauge::collector
