// `torchgauge-collect probe`: the platform's measured peaks, attainable
// through LibTorch (not hardware peak), run once per collection and stored in
// the manifest as "peaks" (core/contract/peaks.h):
//   - matmul FLOP/s: a large square torch::mm, best of k after warm-up, at
//     fp32 and, where the device has native support, tf32 (CUDA >= 8.0),
//     bf16 and fp16; unsupported precisions are recorded with the reason;
//   - memory bandwidth: a triad a = b + s*c (one fused add_out) over arrays of
//     at least 4x the last-level cache each, so every pass streams from memory;
//   - on CUDA, the project's own kernels (collector/platform/probe_kernels.cu): a copy
//     and a triad kernel, cudaMemcpy device-to-device beside them, and an FMA
//     kernel that needs no cuBLAS.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/contract/peaks.h"

namespace torchgauge::collector {

struct ProbeOptions {
  std::string device = "cpu";  // LibTorch device string: cpu, cuda, cuda:0
  int64_t matmul_n = 0;        // 0: 2048 on CPU, 8192 on GPU
  int warmup = 2;
  int repeats = 5;             // best of
  int64_t triad_elements = 0;  // 0: 4x the last-level cache per array (at least 32 Mi elements on GPU)
  bool kernels = true;         // on CUDA: also the project's own kernels
};

// Last-level cache of CPU 0 in bytes from sysfs (the highest-level data or
// unified cache under cache_dir/index*/), or nullopt where sysfs has none.
std::optional<int64_t> LastLevelCacheBytes(
    const std::filesystem::path& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// Runs the probe. Throws std::runtime_error naming the device when it cannot
// be used at all; a precision the device lacks is recorded as unsupported.
core::ProbeResult RunProbe(const ProbeOptions& options);

// Human-readable table of a probe's figures, one line per figure.
std::string FormatProbe(const core::ProbeResult& peaks);

// The subcommand: runs the probe, prints FormatProbe, and writes the peaks
// JSON atomically to `out` when it is non-empty. Returns the exit code; errors
// are printed as "probe: <message>".
int ProbeCommand(const ProbeOptions& options, const std::filesystem::path& out);

}  // namespace torchgauge::collector
