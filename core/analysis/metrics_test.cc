#include <doctest/doctest.h>

#include <set>

#include "core/analysis/compare.h"
#include "core/analysis/metrics.h"

using namespace torchgauge::core;

namespace {

// One counted run: each step's instructions and cycles, one process.
RunResult CountedRun(const std::string& build, const std::string& model, std::vector<int64_t> instructions) {
  RunResult r;
  r.build_id = build;
  r.platform_id = "cpu-counted";
  r.model = {model, model, "test", "synthetic", "none"};
  r.mode = "eval";
  r.started_at = "2026-12-07T00:00:00Z";
  Counted c;
  c.valgrind_version = "valgrind-3.19.0";
  c.cpu_capability = "AVX2";
  for (int64_t n : instructions) c.steps.push_back({n, n / 4, n / 8, n / 100, n / 1000, 2 * n});
  r.counted = c;
  return r;
}

RunSet Set(const std::string& build, std::vector<RunResult> runs) {
  RunSet s;
  s.build_id = build;
  s.platform_id = "cpu-counted";
  for (auto& r : runs) s.runs[{r.model.id, r.mode, r.backend, r.precision}] = r;
  return s;
}

const MetricChange* Find(const PlatformComparison& pc, const std::string& model, Metric m) {
  for (const auto& c : pc.changes) {
    if (c.key.model == model && c.metric == m) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the metric table: every metric once, names round-trip") {
  std::set<std::string> names;
  for (const auto& info : Metrics()) {
    CHECK(names.insert(info.name).second);
    CHECK(MetricFromName(info.name) == info.metric);
    CHECK(&Info(info.metric) == &info);
    CHECK((info.samples && info.process_medians && info.format));
  }
  CHECK(Metrics().size() == 9);
  CHECK_FALSE(MetricFromName("walltime"));
  CHECK(MetricNames().find("instructions") != std::string::npos);
  CHECK(FormatMetricValue(Metric::kTime, 12.345) == "12.35 ms");
  CHECK(FormatMetricValue(Metric::kCpuMemory, 3.0 * 1024 * 1024) == "3.0 MiB");
  CHECK(FormatMetricValue(Metric::kInstructions, 2.345e9) == "2.345 G instr");
  CHECK(FormatMetricValue(Metric::kEstimatedCycles, 12.5e6) == "12.5 M cycles");
}

TEST_CASE("a counted run: its steps are instructions and cycles, it has no time") {
  const RunResult r = CountedRun("b1", "m", {1000000, 1000400});
  CHECK(MetricSamples(r, Metric::kInstructions) == std::vector<double>{1000000, 1000400});
  CHECK(MetricSamples(r, Metric::kEstimatedCycles) == std::vector<double>{2000000, 2000800});
  CHECK(MetricSamples(r, Metric::kTime).empty());
  CHECK(MetricSamples(r, Metric::kThroughput).empty());
}

TEST_CASE("counted metrics: 1 % is their threshold, no rank test, the processes' spread is the band") {
  CompareOptions options;
  const RunSet base = Set("b1", {CountedRun("b1", "same", {1000000}), CountedRun("b1", "slower", {1000000}),
                                 CountedRun("b1", "faster", {1000000})});
  const RunSet next = Set("b2", {CountedRun("b2", "same", {1004000}), CountedRun("b2", "slower", {1015000}),
                                 CountedRun("b2", "faster", {985000})});
  const PlatformComparison pc = CompareRunSets({&base}, next, options);
  const MetricChange* same = Find(pc, "same", Metric::kInstructions);
  REQUIRE(same != nullptr);
  CHECK(same->verdict == Verdict::kUnchanged);
  CHECK(same->threshold_percent == doctest::Approx(1.0));
  CHECK_FALSE(same->p_value);
  CHECK(Find(pc, "slower", Metric::kInstructions)->verdict == Verdict::kRegression);
  CHECK(Find(pc, "slower", Metric::kEstimatedCycles)->verdict == Verdict::kRegression);
  CHECK(Find(pc, "faster", Metric::kInstructions)->verdict == Verdict::kImprovement);
  CHECK(Find(pc, "same", Metric::kTime) == nullptr);  // the simulator's wall time is not compared

  // --threshold moves the timed metrics, not the counted ones; a rule does.
  // (Each comparison is kept: Find points into it.)
  options.threshold_percent = 20;
  const PlatformComparison wide_threshold = CompareRunSets({&base}, next, options);
  CHECK(wide_threshold.changes.size() == pc.changes.size());
  CHECK(Find(wide_threshold, "slower", Metric::kInstructions)->verdict == Verdict::kRegression);
  options.rules.push_back(ParseThresholdRule("instructions=2"));
  const PlatformComparison ruled = CompareRunSets({&base}, next, options);
  CHECK(Find(ruled, "slower", Metric::kInstructions)->verdict == Verdict::kUnchanged);

  // Processes that disagree by 3 % make a 1.5 % change noise.
  RunResult wide = CountedRun("b1", "slower", {1000000});
  wide.counted->process_median_instructions = {985000, 1015000};
  wide.counted->process_median_est_cycles = {1970000, 2030000};
  const RunSet noisy_base = Set("b1", {wide});
  const PlatformComparison banded = CompareRunSets({&noisy_base}, next, CompareOptions{});
  const MetricChange* c = Find(banded, "slower", Metric::kInstructions);
  REQUIRE(c != nullptr);
  CHECK(c->verdict == Verdict::kNoise);
  REQUIRE(c->noise_percent);
  CHECK(*c->noise_percent > 1.5);
}
