// Measured peaks of a platform: what `torchgauge-collect probe` found
// attainable through LibTorch (a large mm per precision, a triad over arrays
// beyond the last-level cache) and, on a GPU, through the project's own
// kernels. The manifest stores it as "peaks"; the reporter sets each run's
// achieved FLOP/s against it. Attainable, never hardware peak: the label says
// so in the JSON too. LibTorch-free so the reporter reads it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

inline constexpr const char* kPeaksLabel = "attainable through LibTorch";

struct MatmulPeak {
  std::string precision;              // fp32 | tf32 | bf16 | fp16
  std::string status = "ok";          // ok | unsupported
  std::optional<std::string> reason;  // why unsupported
  std::optional<int64_t> n;           // square n x n x n
  std::optional<int> repeats;
  std::optional<double> best_ms;
  std::optional<double> tflops;  // 2 n^3 / best time
  bool operator==(const MatmulPeak&) const = default;
};

struct TriadPeak {
  int64_t elements = 0;
  std::string dtype = "float32";
  double bytes_moved = 0;  // per triad: two arrays read, one written
  std::optional<int64_t> llc_bytes;
  std::optional<int> repeats;
  double best_ms = 0;
  double gb_per_s = 0;
  bool operator==(const TriadPeak&) const = default;
};

// The project's own kernels (collector/platform/probe_kernels.cu, .hip); GPU only.
struct KernelPeaks {
  std::string label;  // "raw CUDA kernels (nvcc)"
  std::optional<double> copy_gb_per_s, triad_gb_per_s, memcpy_d2d_gb_per_s, fma_fp32_tflops;
  bool operator==(const KernelPeaks&) const = default;
};

struct ProbeResult {
  std::string label = kPeaksLabel;
  std::string device = "cpu";
  std::optional<int> threads;  // LibTorch intra-op threads on CPU
  std::optional<std::string> measured_at;
  std::vector<MatmulPeak> matmul;
  std::optional<TriadPeak> triad;
  std::optional<KernelPeaks> kernels;
  bool operator==(const ProbeResult&) const = default;
};

// The matmul peak a run's precision is measured against: fp32 and default
// against fp32, tf32 against tf32 where probed and fp32 otherwise,
// bf16/amp-bf16 against bf16, fp16/amp-fp16 against fp16. `tf32_allowed`:
// the run's precision flags let matmuls or cuDNN convolutions use TF32
// (CUDA's default precision keeps IEEE matmuls but lets cuDNN use TF32), so
// an fp32 or default run is measured against the TF32 peak where probed: the
// fastest math it allowed. Null when that peak was not measured or is
// unsupported.
const MatmulPeak* PeakForPrecision(const ProbeResult& peaks, std::string_view run_precision, bool tf32_allowed = false);
// A run's achieved TFLOP/s as a percentage of the peak for its precision.
std::optional<double> PercentOfPeak(const ProbeResult& peaks, std::string_view run_precision,
                                    std::optional<double> achieved_tflops, bool tf32_allowed = false);

nlohmann::json ToJson(const ProbeResult& p);
// Throws FileError naming `file` and "peaks.<field>".
ProbeResult ProbeResultFromJson(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace torchgauge::core
