#include "collector/platform/probe.h"

#include <ATen/Parallel.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "models/torch_compat.h"

#ifdef TORCHGAUGE_HAVE_PROBE_KERNELS
#include "collector/platform/probe_kernels.h"
#endif

namespace torchgauge::collector {

namespace {

// The two CUDA calls the probe needs, made here rather than through
// collector/cuda_support.h so that the probe library does not pull in the
// whole collector library (models included); when `probe` is wired into
// torchgauge-collect these can become CudaProps() and CudaSynchronize().
struct GpuCapability {
  int major = 0, minor = 0;
  bool rocm = false;
};
GpuCapability DeviceCapability() {
  const auto* p = at::cuda::getCurrentDeviceProperties();
  GpuCapability c{p->major, p->minor, false};
#if defined(USE_ROCM)
  c.rocm = true;
#endif
  return c;
}
void DeviceSynchronize() { c10::cuda::device_synchronize(); }

// "32768K", "1M", "512" (bytes) as sysfs writes cache sizes.
std::optional<int64_t> ParseCacheSize(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = s.substr(used);
  if (unit == "K")
    v *= 1024;
  else if (unit == "M")
    v *= 1024 * 1024;
  else if (unit == "G")
    v *= int64_t{1024} * 1024 * 1024;
  else if (!unit.empty())
    return std::nullopt;
  return v;
}

// Native low-precision matmul on this CPU, as cpuinfo reports it through
// LibTorch. Without it LibTorch still multiplies bf16/fp16, by converting to
// fp32, so a figure would describe the conversion, not the precision.
std::optional<std::string> CpuLacks(const std::string& precision) {
  const auto native = compat::CpuNativeLowPrecision();
  if (precision == "bf16") {
    if (native.bf16) return std::nullopt;
    return std::string("no native bf16 matmul on this CPU (cpuinfo reports no AVX512-BF16, AMX-BF16 or Arm BF16)");
  }
  if (precision == "fp16") {
    if (native.fp16) return std::nullopt;
    return std::string("no native fp16 matmul on this CPU (cpuinfo reports no AVX512-FP16, AMX-FP16 or Arm FP16)");
  }
  if (precision == "tf32") return std::string("TF32 is a CUDA tensor-core mode");
  return std::nullopt;
}

std::optional<std::string> CudaLacks(const std::string& precision) {
  const auto c = DeviceCapability();
  if (precision == "tf32" && c.rocm) return std::string("TF32 is an NVIDIA tensor-core mode");
  if ((precision == "bf16" || precision == "tf32") && !c.rocm && c.major < 8) {
    return precision + " needs compute capability 8.0 or newer; this device is " + std::to_string(c.major) + "." +
           std::to_string(c.minor);
  }
  return std::nullopt;
}

c10::ScalarType DtypeOf(const std::string& precision) {
  if (precision == "bf16") return torch::kBFloat16;
  if (precision == "fp16") return torch::kHalf;
  return torch::kFloat32;
}

// Best wall time of `repeats` calls after `warmup`, each bracketed by a
// device synchronisation so queued GPU work is counted.
template <typename F>
double BestMs(F&& f, int warmup, int repeats, bool gpu) {
  auto sync = [gpu] {
    if (gpu) DeviceSynchronize();
  };
  for (int i = 0; i < warmup; ++i) f();
  sync();
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    sync();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0 || ms < best) best = ms;
  }
  return best;
}

core::MatmulPeak ProbeMatmul(const std::string& precision, const torch::Device& device, int64_t n,
                             const ProbeOptions& o) {
  core::MatmulPeak m;
  m.precision = precision;
  const bool gpu = device.is_cuda();
  if (auto lacks = gpu ? CudaLacks(precision) : CpuLacks(precision)) {
    m.status = "unsupported";
    m.reason = *lacks;
    return m;
  }
  // TF32 is a mode of fp32 matmul; fp32 itself is measured strictly.
  const compat::CudaMatmulModeGuard restore_mode;
  compat::SetCudaTf32(compat::Fp32Op::kMatmul, precision == "tf32");
  try {
    auto opts = torch::TensorOptions().dtype(DtypeOf(precision)).device(device);
    torch::NoGradGuard no_grad;
    auto a = torch::randn({n, n}, opts);
    auto b = torch::randn({n, n}, opts);
    auto c = torch::empty({n, n}, opts);
    m.best_ms = BestMs([&] { torch::mm_out(c, a, b); }, o.warmup, o.repeats, gpu);
  } catch (const std::exception& e) {
    m.status = "unsupported";
    std::string what = e.what();
    m.reason = "mm failed: " + what.substr(0, what.find('\n'));
    return m;
  }
  m.n = n;
  m.repeats = o.repeats;
  m.tflops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / (*m.best_ms / 1e3) / 1e12;
  return m;
}

core::TriadPeak ProbeTriad(const torch::Device& device, int64_t elements, std::optional<int64_t> llc,
                           const ProbeOptions& o) {
  const bool gpu = device.is_cuda();
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  torch::NoGradGuard no_grad;
  auto a = torch::empty({elements}, opts);
  auto b = torch::rand({elements}, opts);
  auto c = torch::rand({elements}, opts);
  // add_out with alpha is one fused pass: a = b + 3 * c.
  core::TriadPeak t;
  t.elements = elements;
  t.bytes_moved = 3.0 * static_cast<double>(elements) * sizeof(float);
  t.llc_bytes = llc;
  t.repeats = o.repeats;
  t.best_ms = BestMs([&] { torch::add_out(a, b, c, 3.0); }, o.warmup, o.repeats, gpu);
  t.gb_per_s = t.bytes_moved / (t.best_ms / 1e3) / 1e9;
  return t;
}

}  // namespace

std::optional<int64_t> LastLevelCacheBytes(const std::filesystem::path& cache_dir) {
  std::error_code ec;
  int best_level = -1;
  std::optional<int64_t> best;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = core::ReadFirstLine(entry.path() / "type");
    if (type == "Instruction") continue;
    const std::string level_text = core::ReadFirstLine(entry.path() / "level");
    auto size = ParseCacheSize(core::ReadFirstLine(entry.path() / "size"));
    if (level_text.empty() || !size) continue;
    const int level = std::atoi(level_text.c_str());
    if (level > best_level) {
      best_level = level;
      best = size;
    }
  }
  return best;
}

core::ProbeResult RunProbe(const ProbeOptions& o) {
  torch::Device device(o.device);
  const bool gpu = device.is_cuda();
  if (gpu && !torch::cuda::is_available()) throw std::runtime_error("device " + o.device + " is not available");
  if (!gpu && !device.is_cpu()) throw std::runtime_error("unsupported device " + o.device + " (cpu or cuda)");
  core::ProbeResult p;
  p.device = device.str();
  p.measured_at = core::NowUtc();
  if (!gpu) p.threads = at::get_num_threads();

  const int64_t n = o.matmul_n > 0 ? o.matmul_n : (gpu ? 8192 : 2048);
  for (const char* precision : {"fp32", "tf32", "bf16", "fp16"}) {
    if (!gpu && std::string(precision) == "tf32") continue;  // not a CPU mode: not listed at all
    p.matmul.push_back(ProbeMatmul(precision, device, n, o));
  }

  // Each array at least 4x the last-level cache, as STREAM asks, so no pass
  // is served from cache. The GPU's L2 is far smaller than its memory; the
  // CPU's LLC comes from sysfs (cpuinfo's L2 where sysfs has no L3).
  std::optional<int64_t> llc = LastLevelCacheBytes();
  int64_t elements = o.triad_elements;
  if (elements <= 0) {
    const int64_t cache = llc.value_or(int64_t{32} << 20);
    elements = 4 * cache / static_cast<int64_t>(sizeof(float));
    if (gpu) elements = std::max<int64_t>(elements, int64_t{1} << 25);
  }
  p.triad = ProbeTriad(device, elements, gpu ? std::nullopt : llc, o);

#ifdef TORCHGAUGE_HAVE_PROBE_KERNELS
  if (gpu && o.kernels) {
    GpuKernelFigures k;
    std::string error;
    if (MeasureGpuKernels(elements, o.repeats, &k, &error)) {
      p.kernels = core::KernelPeaks{"raw CUDA kernels (nvcc)", k.copy_gb_per_s, k.triad_gb_per_s, k.memcpy_d2d_gb_per_s,
                                    k.fma_fp32_tflops};
    } else {
      std::cerr << "probe: own kernels not measured: " << error << "\n";
    }
  }
#endif
  return p;
}

std::string FormatProbe(const core::ProbeResult& p) {
  std::ostringstream out;
  char line[256];
  out << "peaks on " << p.device << " (" << p.label << ")";
  if (p.threads) out << ", " << *p.threads << " threads";
  out << "\n";
  for (const auto& m : p.matmul) {
    if (m.status == "ok") {
      std::snprintf(line, sizeof line, "  matmul %-5s n=%-6lld %10.1f GFLOP/s  (best of %d: %.3f ms)\n",
                    m.precision.c_str(), static_cast<long long>(m.n.value_or(0)), *m.tflops * 1e3,
                    m.repeats.value_or(0), m.best_ms.value_or(0));
    } else {
      std::snprintf(line, sizeof line, "  matmul %-5s unsupported: %s\n", m.precision.c_str(),
                    m.reason.value_or("").c_str());
    }
    out << line;
  }
  if (p.triad) {
    std::snprintf(line, sizeof line, "  triad  %lld floats/array (%.0f MiB moved) %8.1f GB/s  (best %.3f ms)\n",
                  static_cast<long long>(p.triad->elements), p.triad->bytes_moved / (1 << 20), p.triad->gb_per_s,
                  p.triad->best_ms);
    out << line;
  }
  if (p.kernels) {
    const auto& k = *p.kernels;
    std::snprintf(line, sizeof line,
                  "  %s: copy %.1f GB/s, triad %.1f GB/s, cudaMemcpy D2D %.1f GB/s, FMA %.2f TFLOP/s fp32\n",
                  k.label.c_str(), k.copy_gb_per_s.value_or(0), k.triad_gb_per_s.value_or(0),
                  k.memcpy_d2d_gb_per_s.value_or(0), k.fma_fp32_tflops.value_or(0));
    out << line;
  }
  return out.str();
}

int ProbeCommand(const ProbeOptions& options, const std::filesystem::path& out) {
  try {
    const auto peaks = RunProbe(options);
    std::cout << FormatProbe(peaks) << std::flush;
    if (!out.empty()) core::WriteJsonAtomic(out, core::ToJson(peaks));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "probe: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace torchgauge::collector
