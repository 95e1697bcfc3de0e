#include "collector/precision.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include "models/torch_compat.h"
#include "models/workload.h"

namespace torchgauge::collector {

namespace {

std::optional<c10::ScalarType> CastDtype(const std::string& p) {
  if (p == "bf16") return c10::ScalarType::BFloat16;
  if (p == "fp16") return c10::ScalarType::Half;
  return std::nullopt;
}

std::optional<c10::ScalarType> AutocastDtype(const std::string& p) {
  if (p == "amp-bf16") return c10::ScalarType::BFloat16;
  if (p == "amp-fp16") return c10::ScalarType::Half;
  return std::nullopt;
}

const char* DtypeName(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::BFloat16:
      return "bfloat16";
    case c10::ScalarType::Half:
      return "float16";
    default:
      return "float32";
  }
}

}  // namespace

std::optional<std::string> PrecisionUnsupported(const std::string& precision, c10::DeviceType device) {
  if (device == c10::DeviceType::CPU) {
    if (precision == "tf32") return "TF32 is a tensor-core format of NVIDIA GPUs; it has no meaning on the CPU";
    if (precision == "fp16" || precision == "amp-fp16") {
      return "float16 is not a supported benchmark precision on the CPU (LibTorch lacks fast fp16 CPU kernels for "
             "most operators); use bf16 or amp-bf16";
    }
  }
  return std::nullopt;
}

void ApplyPrecision(const std::string& precision, models::Workload& workload) {
  // tf32 sets TF32; fp32 and the reduced-precision modes make any float32
  // work left strict IEEE; "default" leaves LibTorch's own defaults.
  if (precision != "default") {
    for (auto op : {compat::Fp32Op::kMatmul, compat::Fp32Op::kConv, compat::Fp32Op::kRnn}) {
      compat::SetCudaTf32(op, precision == "tf32");
    }
  }
  if (auto dtype = CastDtype(precision)) workload.CastTo(*dtype);
}

AutocastScope::AutocastScope(const std::string& precision, c10::DeviceType device) : device_(device) {
  auto dtype = AutocastDtype(precision);
  if (!dtype) return;
  enabled_ = true;
  prev_enabled_ = at::autocast::is_autocast_enabled(device_);
  prev_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::set_autocast_dtype(device_, *dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  // As Python's autocast.__exit__: drop the cast cache when the outermost scope ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, prev_enabled_);
  at::autocast::set_autocast_dtype(device_, prev_dtype_);
}

core::PrecisionFlags EffectiveFlags(const std::string& precision, c10::DeviceType device) {
  auto& ctx = at::globalContext();
  core::PrecisionFlags f;
  auto cast = CastDtype(precision);
  f.param_dtype = cast ? DtypeName(*cast) : "float32";
  f.matmul_allow_tf32 = compat::CudaTf32(compat::Fp32Op::kMatmul);
  f.cudnn_allow_tf32 = compat::CudaTf32(compat::Fp32Op::kConv);
  f.float32_matmul_precision = f.matmul_allow_tf32 ? "tf32" : "ieee";
  f.cudnn_enabled = ctx.userEnabledCuDNN();
  f.cudnn_benchmark = ctx.benchmarkCuDNN();
  f.cudnn_deterministic = ctx.deterministicCuDNN();
  f.autocast_enabled = at::autocast::is_autocast_enabled(device);
  if (auto a = AutocastDtype(precision)) f.autocast_dtype = DtypeName(*a);
  return f;
}

}  // namespace torchgauge::collector
