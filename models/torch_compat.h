// The one adapter between TorchGauge and the LibTorch releases it builds
// against (tools/bootstrap.sh --torch). The collector is built and run
// against 2.9.0, 2.11.0 (the pin), 2.13.0, 2.14.1 and 2.15.0. Where
// LibTorch's C++ API differs between releases, the difference is resolved here, keyed on
// TORCH_VERSION_MAJOR/MINOR, and nowhere else: the rest of the code calls
// these functions and includes <torch/version.h> (every release has it;
// 2.11 moved the macros to <torch/headeronly/version.h> and kept the old
// header as a forwarder).
//
// What differs, release by release (found by building against each, and by
// comparing the headers the collector includes):
//   - KinetoEvent::metadataJson(), which carries a memcpy's byte count on
//     GPU traces, arrived in 2.10 (adapted below).
//   - The float32 precision modes: 2.9 names backend, operation and mode by
//     strings (Context::float32Precision("cuda", "matmul") == "tf32"); 2.10
//     made them enums (at::Float32Backend, at::Float32Op,
//     at::Float32Precision). Adapted below as CudaTf32/SetCudaTf32.
//   - at::cpu::get_cpu_capabilities(), cpuinfo's whole feature map, arrived
//     in 2.11; 2.9 and 2.10 have only is_avx512_bf16_supported() and
//     is_amx_fp16_supported(). Adapted below as CpuNativeLowPrecision.
//   - Not an API difference, but a limit: 2.9.0's PyPI wheel is built for
//     CUDA 12.8 (libcudart.so.12), while the collector's own GPU kernels link
//     the CUDA 13.0 toolkit's runtime (collector/platform/CMakeLists.txt), so
//     the linker warns that the two may conflict. CPU runs are checked (CI's
//     oldest_release_test); GPU runs of 2.9.0 are not.
#pragma once

#include <torch/version.h>

#include <optional>
#include <string>

namespace torch::autograd::profiler {
struct KinetoEvent;
}

// True when the LibTorch being compiled against is at least major.minor.
#define TORCHGAUGE_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace torchgauge::compat {

// "2.15.0": the release this binary was compiled against.
std::string CompiledTorchVersion();

// The event's metadata as JSON text (Kineto's "bytes" of a memcpy among
// it), or nullopt where this release does not expose it.
std::optional<std::string> KinetoEventMetadataJson(const torch::autograd::profiler::KinetoEvent& e);

// The float32 operations whose CUDA mode (TF32 or strict IEEE) the collector
// sets and records.
enum class Fp32Op { kMatmul, kConv, kRnn };

// Sets CUDA's float32 mode for op: TF32 when tf32, else strict IEEE.
void SetCudaTf32(Fp32Op op, bool tf32);

// Whether CUDA's float32 mode for op is TF32 (an op left unset takes the
// backend-wide setting). As Python's torch.backends.cudnn.conv.fp32_precision
// and torch.backends.cuda.matmul.fp32_precision read it: by default conv and
// rnn are TF32 and matmul is not, in 2.9, 2.11, 2.13 and 2.15 alike.
bool CudaTf32(Fp32Op op);

// Restores CUDA's float32 matmul mode, exactly as it was (unset included),
// when it goes out of scope.
class CudaMatmulModeGuard {
 public:
  CudaMatmulModeGuard();
  ~CudaMatmulModeGuard();
  CudaMatmulModeGuard(const CudaMatmulModeGuard&) = delete;
  CudaMatmulModeGuard& operator=(const CudaMatmulModeGuard&) = delete;

 private:
  [[maybe_unused]] int saved_ = 0;  // the mode's enum value (2.10 on; unused by 2.9)
  std::string saved_name_;  // the mode's name (2.9)
};

// Whether this CPU multiplies bf16 / fp16 natively, as cpuinfo reports it
// through LibTorch. Before 2.11 LibTorch exposes only the x86 flags
// (AVX512-BF16, AMX-FP16), so an Arm CPU reads as lacking both there.
struct CpuLowPrecision {
  bool bf16 = false;
  bool fp16 = false;
};
CpuLowPrecision CpuNativeLowPrecision();

}  // namespace torchgauge::compat
