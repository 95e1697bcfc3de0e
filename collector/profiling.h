// The profiling pass: a few iterations run under LibTorch's Kineto profiler,
// separate from the timing pass so that profiler overhead never touches the
// timed samples. It yields the host breakdown (every device), the GPU time
// breakdown (CUDA/ROCm only), the FLOPs by formula from the recorded shapes, the distinct ATen
// operators exercised (through a RecordFunction callback) and optionally a
// Chrome trace.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <c10/core/DeviceType.h>

#include "core/contract/result.h"

namespace torchgauge::collector {

struct ProfileOutput {
  double wall_ms_per_iter = 0;
  std::optional<core::GpuBreakdown> breakdown;  // only with a GPU
  // From the CPU operator events over the profiling window; the profiler's
  // per-op overhead is left for the caller to fill.
  std::optional<core::HostBreakdown> host_breakdown;
  // By formula from the recorded shapes (platform/flop_formulas.h); null
  // with flops_reason when not measured.
  std::optional<double> flops_per_iter;
  std::string flops_reason;
  std::vector<std::string> flop_counted_ops;
  std::vector<std::string> operators;  // distinct ATen ops, "name.overload"
};

// Runs `step` `iterations` times under the profiler. `sync` waits for the
// device. Writes a Chrome trace to `trace_path` when it is non-empty.
ProfileOutput ProfileSteps(const std::function<void()>& step, const std::function<void()>& sync, int iterations,
                           c10::DeviceType device, const std::string& trace_path);

}  // namespace torchgauge::collector
