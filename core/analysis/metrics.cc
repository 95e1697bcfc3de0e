#include "core/analysis/metrics.h"

#include <cmath>
#include <cstdio>

#include "core/stats/counted.h"
#include "core/stats/generation.h"
#include "core/stats/stats.h"

namespace torchgauge::core {

namespace {

std::string Printf(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string FormatMs(double v) {
  const double a = std::fabs(v);
  return Printf(a >= 1000 ? "%.0f ms" : a >= 100 ? "%.1f ms" : a >= 10 ? "%.2f ms" : "%.3f ms", v);
}
std::string FormatRate(double v) { return Printf("%.1f/s", v); }
std::string FormatTokenRate(double v) { return Printf("%.1f tokens/s", v); }
std::string FormatBytes(double v) { return Printf("%.1f MiB", v / (1024.0 * 1024.0)); }
// Counts in SI steps, four significant figures where it matters: a 1 %
// change of 2.345 G is visible as 2.368 G.
std::string FormatCount(double v, const char* unit) {
  const double a = std::fabs(v);
  const std::string n = a >= 1e9 ? Printf("%.4g G", v / 1e9) : a >= 1e6 ? Printf("%.4g M", v / 1e6) : Printf("%.0f", v);
  return n + " " + unit;
}
std::string FormatInstructions(double v) { return FormatCount(v, "instr"); }
std::string FormatCycles(double v) { return FormatCount(v, "cycles"); }

// Samples per second for step (or process median) times in ms: each timed
// step handles samples_per_step inputs. Non-positive times are left out.
std::vector<double> Rates(const Timing& t, const std::vector<double>& ms) {
  std::vector<double> out;
  for (double v : ms) {
    if (v > 0) out.push_back(1000.0 * static_cast<double>(t.samples_per_step) / v);
  }
  return out;
}

std::vector<double> TimeSamples(const RunResult& r) { return r.timing ? r.timing->samples_ms : std::vector<double>{}; }
std::vector<double> TimeMedians(const RunResult& r) {
  return r.timing ? r.timing->process_medians_ms : std::vector<double>{};
}
// Throughput only where the collector reports it; each timed step of
// samples_per_step inputs gives one throughput sample.
std::vector<double> ThroughputSamples(const RunResult& r) {
  return r.timing && r.timing->throughput_per_s ? Rates(*r.timing, r.timing->samples_ms) : std::vector<double>{};
}
std::vector<double> ThroughputMedians(const RunResult& r) {
  if (!r.timing || !r.timing->throughput_per_s) return {};
  std::vector<double> out = Rates(*r.timing, r.timing->process_medians_ms);
  return out.size() < 2 ? std::vector<double>{} : out;
}
std::vector<double> CpuPeak(const RunResult& r) {
  if (r.memory && r.memory->cpu_peak_rss_bytes) return {static_cast<double>(*r.memory->cpu_peak_rss_bytes)};
  return {};
}
std::vector<double> GpuPeak(const RunResult& r) {
  if (r.memory && r.memory->gpu_peak_allocated_bytes) return {static_cast<double>(*r.memory->gpu_peak_allocated_bytes)};
  return {};
}
std::vector<double> None(const RunResult&) { return {}; }
std::vector<double> Ttft(const RunResult& r) { return r.generation ? r.generation->ttft_samples_ms : None(r); }
std::vector<double> Tpot(const RunResult& r) { return r.generation ? r.generation->tpot_samples_ms : None(r); }
std::vector<double> Tokens(const RunResult& r) { return r.generation ? GenerationRates(*r.generation) : None(r); }
std::vector<double> TtftMedians(const RunResult& r) {
  return r.generation ? ProcessMedians(*r.generation).ttft_ms : None(r);
}
std::vector<double> TpotMedians(const RunResult& r) {
  return r.generation ? ProcessMedians(*r.generation).tpot_ms : None(r);
}
std::vector<double> TokensMedians(const RunResult& r) {
  return r.generation ? ProcessMedians(*r.generation).tokens_per_s : None(r);
}
std::vector<double> Instructions(const RunResult& r) { return r.counted ? CountedInstructions(*r.counted) : None(r); }
std::vector<double> Cycles(const RunResult& r) { return r.counted ? CountedCycles(*r.counted) : None(r); }
std::vector<double> InstructionMedians(const RunResult& r) {
  return r.counted ? r.counted->process_median_instructions : None(r);
}
std::vector<double> CycleMedians(const RunResult& r) {
  return r.counted ? r.counted->process_median_est_cycles : None(r);
}

// Counted metrics: a 1 % change is what they resolve (repeats agree within
// about 0.1 %), where time on a shared machine needs 7 %.
constexpr double kCountedThresholdPercent = 1.0;

const std::vector<MetricInfo> kMetricTable = {
    {Metric::kTime, "time", "ms", true, std::nullopt, JudgeRule::kRankTest, TimeSamples, TimeMedians, FormatMs},
    {Metric::kThroughput, "throughput", "samples/s", false, std::nullopt, JudgeRule::kRankTest, ThroughputSamples,
     ThroughputMedians, FormatRate},
    {Metric::kCpuMemory, "cpu_memory", "bytes", true, std::nullopt, JudgeRule::kSingleValue, CpuPeak, None,
     FormatBytes},
    {Metric::kGpuMemory, "gpu_memory", "bytes", true, std::nullopt, JudgeRule::kSingleValue, GpuPeak, None,
     FormatBytes},
    {Metric::kTtft, "ttft", "ms", true, std::nullopt, JudgeRule::kRankTest, Ttft, TtftMedians, FormatMs},
    {Metric::kTpot, "tpot", "ms", true, std::nullopt, JudgeRule::kRankTest, Tpot, TpotMedians, FormatMs},
    {Metric::kTokensPerSecond, "tokens_per_s", "tokens/s", false, std::nullopt, JudgeRule::kRankTest, Tokens,
     TokensMedians, FormatTokenRate},
    {Metric::kInstructions, "instructions", "instructions", true, kCountedThresholdPercent, JudgeRule::kCounted,
     Instructions, InstructionMedians, FormatInstructions},
    {Metric::kEstimatedCycles, "est_cycles", "cycles", true, kCountedThresholdPercent, JudgeRule::kCounted, Cycles,
     CycleMedians, FormatCycles},
};

}  // namespace

const std::vector<MetricInfo>& Metrics() { return kMetricTable; }

const MetricInfo& Info(Metric m) {
  for (const auto& info : kMetricTable) {
    if (info.metric == m) return info;
  }
  return kMetricTable.front();  // unreachable: every enum value has its row (metrics_test)
}

const char* MetricName(Metric m) { return Info(m).name; }

std::optional<Metric> MetricFromName(const std::string& name) {
  for (const auto& info : kMetricTable) {
    if (name == info.name) return info.metric;
  }
  return std::nullopt;
}

std::string MetricNames() {
  std::string out;
  for (const auto& info : kMetricTable) out += (out.empty() ? "" : ", ") + std::string(info.name);
  return out;
}

bool LowerIsBetter(Metric m) { return Info(m).lower_is_better; }
const char* MetricUnit(Metric m) { return Info(m).unit; }
std::vector<double> MetricSamples(const RunResult& r, Metric m) { return Info(m).samples(r); }
std::vector<double> MetricProcessMedians(const RunResult& r, Metric m) { return Info(m).process_medians(r); }
std::optional<double> MetricMedian(const RunResult& r, Metric m) {
  const auto v = MetricSamples(r, m);
  if (v.empty()) return std::nullopt;
  return Quantile(v, 0.5);
}
std::string FormatMetricValue(Metric m, double v) { return Info(m).format(v); }

}  // namespace torchgauge::core
