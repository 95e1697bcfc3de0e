// Precision modes (DESIGN.md vocabulary) applied through LibTorch's float32
// precision settings, dtype casts and autocast, and the effective flags that
// every result records.
//   fp32      strict IEEE everywhere (no TF32 for matmul, convolution or RNN)
//   tf32      TF32 for matmul and convolution (CUDA)
//   default   LibTorch's defaults: TF32 convolutions, IEEE matmul
//   bf16/fp16 parameters and floating inputs cast to that dtype
//   amp-*     autocast to that dtype around the step (thread-local)
#pragma once

#include <optional>
#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "core/contract/result.h"

namespace torchgauge::models {
class Workload;
}

namespace torchgauge::collector {

// Why (precision, device) cannot run, or nullopt when it can.
std::optional<std::string> PrecisionUnsupported(const std::string& precision, c10::DeviceType device);

// Sets the global float32 precision flags for `precision` and casts the
// workload for bf16/fp16. Call once, before warm-up.
void ApplyPrecision(const std::string& precision, models::Workload& workload);

// Enables autocast on the calling thread for amp-* precisions while alive.
class AutocastScope {
 public:
  AutocastScope(const std::string& precision, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_ = false;
  c10::DeviceType device_;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::Undefined;
};

// The flags in force now, for `precision` on `device`.
core::PrecisionFlags EffectiveFlags(const std::string& precision, c10::DeviceType device);

}  // namespace torchgauge::collector
