// The one place for what the collector assumes about LibTorch's Kineto
// profiler: the libkineto::ActivityType values it reads back from events,
// the name of the profiling window, and the profiling pass's configuration
// (the per-op overhead is measured with that same configuration, so it is
// the overhead the pass pays). Used by profiling.cc and host_events.cc.
#pragma once

#include <cstdint>

#include <torch/csrc/autograd/profiler_kineto.h>

namespace torchgauge::collector::kineto {

// Values of libkineto::ActivityType (kineto/ActivityType.h), which LibTorch
// does not install as a header.
inline constexpr uint8_t kCpuOp = 0;
inline constexpr uint8_t kUserAnnotation = 1;
inline constexpr uint8_t kGpuMemcpy = 3;
inline constexpr uint8_t kGpuMemset = 4;
inline constexpr uint8_t kConcurrentKernel = 5;

// The user scope around a profiling pass's iterations (RECORD_USER_SCOPE).
inline constexpr char kProfileWindow[] = "torchgauge::profile_window";

// Kineto with input shapes and concrete inputs (which the FLOP formulas of
// platform/flop_formulas.h read); no memory, stacks, modules or the
// profiler's own FLOP counts.
inline torch::profiler::impl::ProfilerConfig PassConfig() {
  namespace impl = torch::profiler::impl;
  return impl::ProfilerConfig(impl::ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false,
                              /*with_stack=*/false, /*with_flops=*/false, /*with_modules=*/false);
}

}  // namespace torchgauge::collector::kineto
