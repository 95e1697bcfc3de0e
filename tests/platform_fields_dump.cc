// Writes the issue-13 fields as the C++ code serialises them (host_breakdown
// and system_load of a run; peaks and cpu_frequency of a manifest), so that
// tests/validate_platform_fields.py can check them against schemas/ — the
// schema and the code cannot drift apart unnoticed.
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/contract/peaks.h"
#include "core/contract/result.h"
#include "core/stats/host_breakdown.h"
#include "core/stats/system_load.h"

using namespace torchgauge::core;

int main() {
  auto breakdown = ComputeHostBreakdown(
      {{"aten::mm", 1, 0, 50, CpuEventKind::kOperator}, {"aten::copy_", 1, 60, 70, CpuEventKind::kOperator}},
      {{0, 100}}, 1);
  breakdown.profiler_overhead_per_op_us = 2.5;
  auto unmeasured = breakdown;
  unmeasured.profiler_overhead_per_op_us.reset();

  const auto before = SampleSystem();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + 1.0;
  const auto load = LoadBetween(before, SampleSystem());

  ProbeResult peaks;
  peaks.threads = 2;
  peaks.measured_at = NowUtc();
  peaks.matmul.push_back({"fp32", "ok", std::nullopt, 2048, 5, 500.0, 0.03});
  peaks.matmul.push_back(
      {"fp16", "unsupported", "no native fp16", std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  peaks.triad = TriadPeak{1 << 20, "float32", 3.0 * (1 << 20) * 4, 32 << 20, 5, 1.0, 12.6};
  auto gpu_peaks = peaks;
  gpu_peaks.device = "cuda:0";
  gpu_peaks.kernels = KernelPeaks{"raw CUDA kernels (nvcc)", 3000.0, 2900.0, 3100.0, 50.0};

  nlohmann::json out{{"runs",
                      {{{"host_breakdown", ToJson(breakdown)}, {"system_load", load ? ToJson(*load) : nullptr}},
                       {{"host_breakdown", ToJson(unmeasured)}, {"system_load", nullptr}}}},
                     {"manifests",
                      {{{"peaks", ToJson(peaks)}, {"cpu_frequency", ToJson(ReadCpuFrequencyPolicy())}},
                       {{"peaks", ToJson(gpu_peaks)}, {"cpu_frequency", nullptr}}}}};
  std::cout << out.dump(1) << "\n";
  return 0;
}
