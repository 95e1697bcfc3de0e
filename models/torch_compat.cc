#include "models/torch_compat.h"

#include <ATen/Context.h>
#include <ATen/cpu/Utils.h>
#include <torch/csrc/autograd/profiler_kineto.h>

namespace torchgauge::compat {

std::string CompiledTorchVersion() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

std::optional<std::string> KinetoEventMetadataJson(const torch::autograd::profiler::KinetoEvent& e) {
#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
  // Present from 2.10 (its header checked) on; absent in 2.9.
  return e.metadataJson();
#else
  (void)e;
  return std::nullopt;
#endif
}

namespace {

#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
at::Float32Op OpOf(Fp32Op op) {
  switch (op) {
    case Fp32Op::kMatmul:
      return at::Float32Op::MATMUL;
    case Fp32Op::kConv:
      return at::Float32Op::CONV;
    case Fp32Op::kRnn:
      return at::Float32Op::RNN;
  }
  return at::Float32Op::ALL;
}
#else
const char* OpOf(Fp32Op op) {
  switch (op) {
    case Fp32Op::kMatmul:
      return "matmul";
    case Fp32Op::kConv:
      return "conv";
    case Fp32Op::kRnn:
      return "rnn";
  }
  return "all";
}
#endif

}  // namespace

void SetCudaTf32(Fp32Op op, bool tf32) {
#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, OpOf(op),
                                          tf32 ? at::Float32Precision::TF32 : at::Float32Precision::IEEE);
#else
  at::globalContext().setFloat32Precision("cuda", OpOf(op), tf32 ? "tf32" : "ieee");
#endif
}

bool CudaTf32(Fp32Op op) {
  // The per-op mode, else the backend-wide one ("none": not set). Not the
  // legacy allowTF32CuBLAS/allowTF32CuDNN: they warn that they are
  // deprecated, and some releases refuse them once the new API has set a
  // mode the legacy flags cannot express.
  auto& ctx = at::globalContext();
#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
  auto p = ctx.float32Precision(at::Float32Backend::CUDA, OpOf(op));
  if (p == at::Float32Precision::NONE) p = ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::ALL);
  return p == at::Float32Precision::TF32;
#else
  auto p = ctx.float32Precision("cuda", OpOf(op));
  if (p == "none") p = ctx.float32Precision("cuda", "all");
  return p == "tf32";
#endif
}

CudaMatmulModeGuard::CudaMatmulModeGuard() {
#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
  saved_ = static_cast<int>(at::globalContext().float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL));
#else
  saved_name_ = at::globalContext().float32Precision("cuda", "matmul");
#endif
}

CudaMatmulModeGuard::~CudaMatmulModeGuard() {
#if TORCHGAUGE_TORCH_AT_LEAST(2, 10)
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL,
                                          static_cast<at::Float32Precision>(saved_));
#else
  at::globalContext().setFloat32Precision("cuda", "matmul", saved_name_);
#endif
}

CpuLowPrecision CpuNativeLowPrecision() {
  CpuLowPrecision c;
#if TORCHGAUGE_TORCH_AT_LEAST(2, 11)
  const auto caps = at::cpu::get_cpu_capabilities();
  auto flag = [&](const char* key) {
    auto it = caps.find(key);
    return it != caps.end() && it->second.isBool() && it->second.toBool();
  };
  c.bf16 = flag("avx512_bf16") || flag("amx_bf16") || flag("bf16") || flag("sve_bf16");
  c.fp16 = flag("avx512_fp16") || flag("amx_fp16") || flag("fp16") || flag("asimd_fp16");
#else
  c.bf16 = at::cpu::is_avx512_bf16_supported();
  c.fp16 = at::cpu::is_amx_fp16_supported();
#endif
  return c;
}

}  // namespace torchgauge::compat
