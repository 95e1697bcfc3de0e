#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/manifest.h"
#include "core/io/json_io.h"
#include "core/stats/mann_whitney.h"
#include "core/stats/stats.h"

using namespace torchgauge::core;
namespace fs = std::filesystem;

namespace {

constexpr int kSamples = 10;  // the collector's default repeat

RunResult MakeRun(const std::string& build, const std::string& model, std::vector<double> samples,
                  std::optional<int64_t> rss = std::nullopt) {
  RunResult r;
  r.build_id = build;
  r.platform_id = "cpu-test";
  r.model = {model, model, "test", "synthetic", "none"};
  r.mode = "eval";
  r.batch_size = 4;
  r.device = "cpu";
  r.started_at = "2026-11-22T00:00:00Z";
  Timing t;
  t.samples_ms = std::move(samples);
  t.repetitions = static_cast<int>(t.samples_ms.size());
  t.clock = "steady_clock";
  t.samples_per_step = 4;
  SummarizeTiming(t);
  r.timing = t;
  if (rss) {
    r.memory = Memory{};
    r.memory->cpu_peak_rss_bytes = rss;
  }
  return r;
}

// Lognormal samples around `median_ms` with coefficient of variation ~cov.
std::vector<double> Lognormal(std::mt19937_64& rng, double median_ms, double cov, int n = kSamples) {
  std::normal_distribution<double> z(0.0, std::sqrt(std::log1p(cov * cov)));
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(median_ms * std::exp(z(rng)));
  return out;
}

RunSet MakeSet(const std::string& build) {
  RunSet s;
  s.build_id = build;
  s.platform_id = "cpu-test";
  s.manifest = {{"build_id", build}};
  return s;
}

void Add(RunSet& s, RunResult r) {
  RunKey k{r.model.id, r.mode, r.backend, r.precision};
  s.runs.insert_or_assign(k, std::move(r));
}

const MetricChange* Find(const PlatformComparison& pc, const std::string& model, Metric m) {
  for (const auto& c : pc.changes) {
    if (c.key.model == model && c.metric == m) return &c;
  }
  return nullptr;
}

// The machine around a run's timing pass on a 2-CPU host: the run used one
// core, other processes `outside_cores`.
SystemLoad MachineLoad(double outside_cores) {
  SystemLoad l;
  l.window_s = 1;
  l.cpus = 2;
  l.own_cpu_cores = 1;
  l.outside_cpu_cores = outside_cores;
  l.resolution_cores = 0.02;
  return l;
}

}  // namespace

TEST_CASE("threshold rules parse and apply, last match wins") {
  auto r = ParseThresholdRule("time:^hf_.*=10");
  CHECK(r.metric == "time");
  CHECK(r.model_regex == "^hf_.*");
  CHECK(r.percent == 10);
  CHECK(ParseThresholdRule("gpu_memory=3").model_regex == ".*");
  CHECK_THROWS_AS(ParseThresholdRule("speed:.*=3"), std::invalid_argument);
  CHECK_THROWS_AS(ParseThresholdRule("time:(=3"), std::invalid_argument);
  CHECK_THROWS_AS(ParseThresholdRule("time:.*=x"), std::invalid_argument);
  CHECK_THROWS_AS(ParseThresholdRule("time:.*"), std::invalid_argument);
  // Found by the compare fuzzer: the JSON report cannot carry invalid UTF-8.
  CHECK_THROWS_AS(ParseThresholdRule("time:\xF5x=3"), std::invalid_argument);
  // Also found by it: libstdc++'s regex compiler overflows on huge repetition counts.
  CHECK_THROWS_AS(ParseThresholdRule("time:a{9999999999999999999}=3"), std::invalid_argument);
  CHECK_THROWS_AS(ParseThresholdRule("time:a{1,2000}=3"), std::invalid_argument);
  CHECK_THROWS_AS(ParseThresholdRule("time:(a)\\9999999999999999999=3"), std::invalid_argument);
  CHECK(ParseThresholdRule("time:^resnet\\d{2,3}$=3").model_regex == "^resnet\\d{2,3}$");
  CompareOptions o;
  o.rules = {ParseThresholdRule("*:.*=9"), ParseThresholdRule("time:^hf_=12")};
  CHECK(o.ThresholdFor(Metric::kTime, "hf_bert") == 12);
  CHECK(o.ThresholdFor(Metric::kGpuMemory, "hf_bert") == 9);
  CHECK(o.ThresholdFor(Metric::kTime, "resnet50") == 9);
  o.rules.clear();
  CHECK(o.ThresholdFor(Metric::kTime, "resnet50") == 7);
}

TEST_CASE("a clear slowdown is a regression, throughput follows, noise is not") {
  auto base = MakeSet("b1"), next = MakeSet("b2");
  Add(base, MakeRun("b1", "slow", {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01}));
  Add(next, MakeRun("b2", "slow", {11, 11.1, 10.9, 11.2, 10.8, 11.05, 10.95, 11.15, 10.85, 11.01}));
  Add(base, MakeRun("b1", "same", {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10}));
  Add(next, MakeRun("b2", "same", {10.02, 10.12, 9.92, 10.22, 9.82, 10.07, 9.97, 10.17, 9.87, 10.01}));
  // Over the threshold, but one wild sample each side and overlapping: noise.
  Add(base, MakeRun("b1", "noisy", {10, 14, 9, 13, 8, 12, 11, 10, 9, 15}));
  Add(next, MakeRun("b2", "noisy", {12, 9, 14, 10, 13, 11, 15, 9, 12, 10.5}));
  // Three samples a side: even complete separation cannot reach 0.05.
  Add(base, MakeRun("b1", "short", {10, 10, 10.1}));
  Add(next, MakeRun("b2", "short", {20, 20.1, 20.2}));
  auto pc = CompareRunSets({&base}, next, {});
  const auto* slow = Find(pc, "slow", Metric::kTime);
  REQUIRE(slow);
  CHECK(slow->verdict == Verdict::kRegression);
  CHECK(slow->delta_percent == doctest::Approx(10.0).epsilon(0.01));
  CHECK(*slow->p_value < 0.001);
  CHECK(slow->exact);
  CHECK(Find(pc, "slow", Metric::kThroughput)->verdict == Verdict::kRegression);
  CHECK(Find(pc, "same", Metric::kTime)->verdict == Verdict::kUnchanged);
  // CoV about 20 % on both sides, under the noise verdict's 25 %: judged, and
  // the overlap makes it not significant.
  CHECK(Find(pc, "noisy", Metric::kTime)->verdict == Verdict::kNoise);
  CHECK(Find(pc, "short", Metric::kTime)->verdict == Verdict::kTooFewSamples);
  REQUIRE(pc.summary.size() == 1);
  CHECK(pc.summary[0].runs == 4);
}

TEST_CASE("memory: threshold plus an absolute floor, no test") {
  auto base = MakeSet("b1"), next = MakeSet("b2");
  std::vector<double> t(10, 5.0);
  for (int i = 0; i < 10; ++i) t[i] += 0.01 * i;
  Add(base, MakeRun("b1", "grew", t, 100 << 20));
  Add(next, MakeRun("b2", "grew", t, 110 << 20));
  Add(base, MakeRun("b1", "tiny", t, 4 << 10));
  Add(next, MakeRun("b2", "tiny", t, 8 << 10));  // +100% but 4 KiB: below the floor
  Add(base, MakeRun("b1", "shrank", t, 100 << 20));
  Add(next, MakeRun("b2", "shrank", t, 80 << 20));
  auto pc = CompareRunSets({&base}, next, {});
  CHECK(Find(pc, "grew", Metric::kCpuMemory)->verdict == Verdict::kRegression);
  CHECK_FALSE(Find(pc, "grew", Metric::kCpuMemory)->p_value);
  CHECK(Find(pc, "tiny", Metric::kCpuMemory)->verdict == Verdict::kUnchanged);
  CHECK(Find(pc, "shrank", Metric::kCpuMemory)->verdict == Verdict::kImprovement);
  CHECK_FALSE(Find(pc, "grew", Metric::kGpuMemory));  // not measured: not compared
}

TEST_CASE("status changes and runs that appear or disappear are flagged") {
  auto base = MakeSet("b1"), next = MakeSet("b2");
  std::vector<double> t = {1, 1.1, 1.2, 1.3};
  Add(base, MakeRun("b1", "breaks", t));
  auto broken = MakeRun("b2", "breaks", t);
  broken.status = "error";
  broken.reason = "CUDA error: illegal memory access";
  broken.timing.reset();
  Add(next, broken);
  auto was_oom = MakeRun("b1", "fixed", t);
  was_oom.status = "oom";
  Add(base, was_oom);
  Add(next, MakeRun("b2", "fixed", t));
  Add(base, MakeRun("b1", "gone", t));
  Add(next, MakeRun("b2", "new", t));
  auto pc = CompareRunSets({&base}, next, {});
  REQUIRE(pc.status_changes.size() == 2);
  CHECK(pc.status_changes[0].key.model == "breaks");
  CHECK(pc.status_changes[0].worse);
  CHECK(pc.status_changes[0].reason == "CUDA error: illegal memory access");
  CHECK(pc.status_changes[1].key.model == "fixed");
  CHECK_FALSE(pc.status_changes[1].worse);
  REQUIRE(pc.presence.size() == 2);
  CHECK(pc.presence[0].key.model == "gone");
  CHECK_FALSE(pc.presence[0].appeared);
  CHECK(pc.presence[1].key.model == "new");
  CHECK(pc.presence[1].appeared);
  Comparison c;
  c.platforms = {pc};
  CHECK(c.HasRegression());
}

// ---------------------------------------------------------------- measured rates

namespace {

struct Rates {
  int trials = 0, flagged = 0;
  double Rate() const { return trials ? static_cast<double>(flagged) / trials : 0; }
};

// One synthetic suite comparison: `models` runs, each with its own median and
// CoV drawn from [cov_lo, cov_hi]; `slowed` models get `factor` on the new side.
// build_sigma adds a per-build, per-run lognormal offset (run-to-run drift
// that within-run samples cannot see), the main source of false alarms.
PlatformComparison SyntheticSuite(std::mt19937_64& rng, int models, double cov_lo, double cov_hi,
                                  const std::vector<int>& slowed, double factor, double build_sigma = 0,
                                  std::vector<double>* covs = nullptr) {
  std::uniform_real_distribution<double> cov_d(cov_lo, cov_hi), median_d(1.0, 200.0);
  std::normal_distribution<double> drift(0.0, build_sigma > 0 ? build_sigma : 1e-300);
  auto base = MakeSet("b1"), next = MakeSet("b2");
  if (covs) covs->clear();
  for (int m = 0; m < models; ++m) {
    const std::string id = "m" + std::to_string(m);
    const double cov = cov_d(rng), median = median_d(rng);
    if (covs) covs->push_back(cov);
    const bool slow = std::find(slowed.begin(), slowed.end(), m) != slowed.end();
    const double b_off = build_sigma > 0 ? std::exp(drift(rng)) : 1.0;
    const double n_off = build_sigma > 0 ? std::exp(drift(rng)) : 1.0;
    Add(base, MakeRun("b1", id, Lognormal(rng, median * b_off, cov)));
    Add(next, MakeRun("b2", id, Lognormal(rng, median * n_off * (slow ? factor : 1.0), cov)));
  }
  return CompareRunSets({&base}, next, {});
}

}  // namespace

TEST_CASE("measured: injected 10% regressions are detected (lognormal noise, 2-5% CoV, 10 samples)") {
  std::mt19937_64 rng(20261122);
  const std::vector<int> slowed = {3, 7, 11};
  Rates overall, by_cov[3];  // CoV bins [2,3), [3,4), [4,5]
  int wrong_models = 0;
  std::vector<double> covs;
  for (int trial = 0; trial < 400; ++trial) {
    auto pc = SyntheticSuite(rng, 20, 0.02, 0.05, slowed, 1.10, 0, &covs);
    for (const auto& c : pc.changes) {
      if (c.metric != Metric::kTime) continue;
      const int m = std::stoi(c.key.model.substr(1));
      const bool is_slow = std::find(slowed.begin(), slowed.end(), m) != slowed.end();
      const bool hit = c.verdict == Verdict::kRegression;
      if (is_slow) {
        const int bin = std::min(2, static_cast<int>((covs[m] - 0.02) / 0.01));
        ++overall.trials;
        ++by_cov[bin].trials;
        overall.flagged += hit;
        by_cov[bin].flagged += hit;
      } else {
        wrong_models += hit;
      }
    }
  }
  std::printf(
      "[measured] detection of +10%% (n=10 vs 10, 7%% threshold, alpha 0.05): %.1f%% of %d runs; "
      "CoV 2-3%%: %.1f%%, 3-4%%: %.1f%%, 4-5%%: %.1f%%; unslowed models flagged: %d of %d\n",
      100 * overall.Rate(), overall.trials, 100 * by_cov[0].Rate(), 100 * by_cov[1].Rate(), 100 * by_cov[2].Rate(),
      wrong_models, 400 * 17);
  // The medians' own noise decides: at 5% CoV, 10 samples put the observed
  // change under 7% about 15% of the time (analytic: z = 0.98 on log scale).
  CHECK(by_cov[0].Rate() >= 0.97);
  CHECK(overall.Rate() >= 0.85);
}

TEST_CASE("measured: false-alarm rate over 1000 noise-only comparisons at default settings") {
  std::mt19937_64 rng(7);
  const int kComparisons = 1000, kModels = 20;
  // Per run, each comparison is one test; under H0 the test alone fires at
  // alpha, and the 7% threshold can only remove alarms, so alpha bounds it.
  Rates iid_runs, iid_suites, drift_runs, drift_suites;
  for (int i = 0; i < kComparisons; ++i) {
    auto pc = SyntheticSuite(rng, kModels, 0.02, 0.05, {}, 1.0);
    int f = 0;
    for (const auto& c : pc.changes) {
      if (c.metric != Metric::kTime) continue;
      ++iid_runs.trials;
      f += c.verdict == Verdict::kRegression;
    }
    iid_runs.flagged += f;
    ++iid_suites.trials;
    iid_suites.flagged += f > 0;
  }
  // Run-to-run drift of 2% between builds (same code, different process).
  for (int i = 0; i < kComparisons; ++i) {
    auto pc = SyntheticSuite(rng, kModels, 0.02, 0.05, {}, 1.0, 0.02);
    int f = 0;
    for (const auto& c : pc.changes) {
      if (c.metric != Metric::kTime) continue;
      ++drift_runs.trials;
      f += c.verdict == Verdict::kRegression;
    }
    drift_runs.flagged += f;
    ++drift_suites.trials;
    drift_suites.flagged += f > 0;
  }
  // For contrast: the plain 7% rule on one sample per side (TorchBench's rule).
  Rates naive;
  std::mt19937_64 rng2(7);
  for (int i = 0; i < kComparisons * kModels; ++i) {
    std::uniform_real_distribution<double> cov_d(0.02, 0.05);
    const double cov = cov_d(rng2);
    const double a = Lognormal(rng2, 10, cov, 1)[0], b = Lognormal(rng2, 10, cov, 1)[0];
    ++naive.trials;
    naive.flagged += b / a >= 1.07;
  }
  std::printf(
      "[measured] false alarms, noise only, 2-5%% CoV, 10 samples, %d comparisons x %d runs: "
      "iid %.3f%% of runs (%.1f%% of suites); with 2%% build drift %.3f%% of runs (%.1f%% of suites); "
      "plain 7%% rule on 1 sample: %.2f%% of runs\n",
      kComparisons, kModels, 100 * iid_runs.Rate(), 100 * iid_suites.Rate(), 100 * drift_runs.Rate(),
      100 * drift_suites.Rate(), 100 * naive.Rate());
  const double alpha = CompareOptions{}.alpha;
  // Two-sided test, regressions are one side: alpha / 2 bounds the iid rate.
  CHECK(iid_runs.Rate() < alpha / 2);
  CHECK(drift_runs.Rate() < alpha);
}

// ---------------------------------------------------------------- results trees

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tg_compare_test_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void WriteBuild(const fs::path& root, const std::string& build, const std::string& started_at,
                const std::vector<RunResult>& runs) {
  const fs::path dir = PlatformDir(root, build, "cpu-test");
  Manifest m;
  m.build_id = build;
  m.platform_id = "cpu-test";
  m.started_at = started_at;
  m.collector_version = "0.1.0";
  m.git_sha = "test";
  m.libtorch_version = "2.11.0";
  m.vendor = "CPU";
  m.device_name = m.cpu_model = "test CPU";
  m.logical_cores = 2;
  m.hostname = "test";
  m.os = "Linux";
  m.suite = "test";
  WriteJsonAtomic(ManifestPath(dir), ToJson(m));
  for (auto r : runs) {
    r.build_id = build;
    WriteJsonAtomic(RunPath(dir, {r.model.id, r.mode, r.backend, r.precision}), ToJson(r));
  }
}

}  // namespace

TEST_CASE("CompareBuilds: previous build by default, window, persistence, bad input") {
  TempDir tmp;
  std::mt19937_64 rng(3);
  // Builds b1..b5 ordered by started_at (ids deliberately out of order: z0 is first).
  // Model "step" gets 15% slower from b4 on; "flat" never changes.
  const std::vector<std::pair<std::string, std::string>> builds = {{"z0", "2026-11-18T00:00:00Z"},
                                                                   {"b1", "2026-11-19T00:00:00Z"},
                                                                   {"b2", "2026-11-20T00:00:00Z"},
                                                                   {"b4", "2026-11-21T00:00:00Z"},
                                                                   {"b5", "2026-11-22T00:00:00Z"}};
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const double f = i >= 3 ? 1.15 : 1.0;
    WriteBuild(tmp.path, builds[i].first, builds[i].second,
               {MakeRun("", "step", Lognormal(rng, 20 * f, 0.01)), MakeRun("", "flat", Lognormal(rng, 5, 0.01))});
  }
  auto order = ListBuilds(tmp.path, "cpu-test");
  REQUIRE(order.size() == 5);
  CHECK(order.front().build_id == "z0");

  CompareRequest req{tmp.path, std::nullopt, "b4", std::nullopt, {}};
  auto c = CompareBuilds(req);
  CHECK(c.base_label == "b2");
  CHECK(c.HasRegression());
  CHECK(c.CountVerdict(Verdict::kRegression) == 2);  // time and throughput of "step"

  req.new_build = "b5";  // against b4: already slow, nothing new
  CHECK_FALSE(CompareBuilds(req).HasRegression());

  req.options.persist = 2;  // b5 and b4 both against b2: confirmed
  c = CompareBuilds(req);
  CHECK(c.base_label == "b2");
  CHECK(c.CountVerdict(Verdict::kRegression, true) == 2);
  CHECK(Find(c.platforms[0], "step", Metric::kTime)->seen_in == 2);

  req.new_build = "b4";  // b4 against b1, b2 not slow: seen once, unconfirmed
  c = CompareBuilds(req);
  CHECK(c.CountVerdict(Verdict::kRegression) == 2);
  CHECK(c.CountVerdict(Verdict::kRegression, true) == 0);
  CHECK_FALSE(c.HasRegression());

  req.options.persist = 1;
  req.options.window = 3;  // b4 against the median of z0, b1, b2
  c = CompareBuilds(req);
  CHECK(c.base_label == "median of z0..b2");
  CHECK(Find(c.platforms[0], "step", Metric::kTime)->n_base == 30);
  CHECK(c.HasRegression());

  req.options.window = 1;
  req.base = "b1";
  req.new_build = "b2";
  CHECK_FALSE(CompareBuilds(req).HasRegression());
  CHECK(ToJson(CompareBuilds(req))["kind"] == "torchgauge.comparison");

  req.base = std::nullopt;
  req.new_build = "z0";  // the first build: nothing before it
  CHECK_THROWS_AS(CompareBuilds(req), std::invalid_argument);
  req.new_build = "nope";
  CHECK_THROWS_AS(CompareBuilds(req), std::invalid_argument);
  req.new_build = "../etc";
  CHECK_THROWS_AS(CompareBuilds(req), std::invalid_argument);
  req.new_build = "b2";
  req.options.alpha = 2;
  CHECK_THROWS_AS(CompareBuilds(req), std::invalid_argument);
}

TEST_CASE("measured: persistence (--persist 2) against run-to-run drift") {
  // Three builds of the same code, each with a 2% per-build drift per run:
  // the baseline, then two nights. A false alarm needs both nights to regress.
  std::mt19937_64 rng(11);
  const int kComparisons = 1000, kModels = 20;
  std::normal_distribution<double> drift(0.0, 0.02);
  std::uniform_real_distribution<double> cov_d(0.02, 0.05), median_d(1.0, 200.0);
  Rates single, confirmed, detect;
  for (int i = 0; i < kComparisons; ++i) {
    RunSet b0 = MakeSet("b0"), b1 = MakeSet("b1"), b2 = MakeSet("b2");
    for (int m = 0; m < kModels; ++m) {
      const std::string id = "m" + std::to_string(m);
      const double cov = cov_d(rng), median = median_d(rng);
      const double slow = m == 0 ? 1.10 : 1.0;  // m0 regresses from b1 on: a step change
      Add(b0, MakeRun("b0", id, Lognormal(rng, median * std::exp(drift(rng)), cov)));
      Add(b1, MakeRun("b1", id, Lognormal(rng, median * slow * std::exp(drift(rng)), cov)));
      Add(b2, MakeRun("b2", id, Lognormal(rng, median * slow * std::exp(drift(rng)), cov)));
    }
    auto c1 = CompareRunSets({&b0}, b1, {}), c2 = CompareRunSets({&b0}, b2, {});
    for (int m = 0; m < kModels; ++m) {
      const std::string id = "m" + std::to_string(m);
      const bool r1 = Find(c1, id, Metric::kTime)->verdict == Verdict::kRegression;
      const bool r2 = Find(c2, id, Metric::kTime)->verdict == Verdict::kRegression;
      if (m == 0) {
        ++detect.trials;
        detect.flagged += r1 && r2;
      } else {
        ++single.trials;
        single.flagged += r2;
        ++confirmed.trials;
        confirmed.flagged += r1 && r2;
      }
    }
  }
  std::printf(
      "[measured] with 2%% build drift: false alarms %.3f%% of runs with --persist 1, %.3f%% with "
      "--persist 2; a +10%% step change is confirmed by --persist 2 in %.1f%% of cases\n",
      100 * single.Rate(), 100 * confirmed.Rate(), 100 * detect.Rate());
  CHECK(confirmed.Rate() <= single.Rate());
  CHECK(detect.Rate() >= 0.6);
}

namespace {
// One run measured in `processes` worker processes: each process has its own
// level (lognormal around `median_ms` with process_cov) and `per_process`
// samples around that level with sample_cov, as on a shared machine.
RunResult MakeProcessRun(std::mt19937_64& rng, const std::string& build, const std::string& model, double median_ms,
                         double process_cov, double sample_cov, int processes, int per_process) {
  std::vector<RunResult> parts;
  for (int p = 0; p < processes; ++p) {
    double level = Lognormal(rng, median_ms, process_cov, 1).front();
    RunResult r = MakeRun(build, model, Lognormal(rng, level, sample_cov, per_process));
    r.settings = RunSettings{};
    parts.push_back(std::move(r));
  }
  return PoolProcesses(parts);
}
}  // namespace

TEST_CASE("a change inside the process-to-process spread is noise, a larger one is a regression") {
  // The base build's two processes disagree by 25% (15 samples each, their
  // samples close to their own medians: no process is noisy in itself).
  std::vector<double> base_samples, slow_samples, much_slower;
  for (int i = 0; i < 15; ++i) base_samples.push_back(10.0 + 0.01 * i);
  for (int i = 0; i < 15; ++i) base_samples.push_back(12.5 + 0.01 * i);
  for (int i = 0; i < 30; ++i) {
    slow_samples.push_back(13.0 + 0.01 * i);  // +15% on the pooled median (11.32)
    much_slower.push_back(19.3 + 0.01 * i);   // +70%
  }
  RunSet base = MakeSet("b1"), next = MakeSet("b2");
  RunResult b = MakeRun("b1", "m", base_samples);
  b.timing->process_medians_ms = {10.07, 12.57};
  Add(base, b);
  CHECK_FALSE(RunNoise(b).noisy);  // judged within each process, not on the pooled spread
  Add(next, MakeRun("b2", "m", slow_samples));
  PlatformComparison pc = CompareRunSets({&base}, next, CompareOptions{});
  const MetricChange* t = Find(pc, "m", Metric::kTime);
  REQUIRE(t);
  CHECK(*t->p_value < 0.05);
  CHECK(t->delta_percent > 7);
  REQUIRE(t->noise_percent);
  // Two processes 25% apart: on the footing of five, log(1.25) * d2(5)/d2(2).
  CHECK(*t->noise_percent == doctest::Approx(std::expm1(std::log(12.57 / 10.07) * 2.326 / 1.128) * 100));
  CHECK(t->verdict == Verdict::kNoise);

  RunSet next2 = MakeSet("b3");
  Add(next2, MakeRun("b3", "m", much_slower));
  PlatformComparison pc2 = CompareRunSets({&base}, next2, CompareOptions{});
  CHECK(Find(pc2, "m", Metric::kTime)->verdict == Verdict::kRegression);
  CHECK(Find(pc2, "m", Metric::kThroughput)->verdict == Verdict::kRegression);

  // Without process medians there is no band and a +15% change counts.
  std::vector<double> plain_samples, plain_slow;
  for (int i = 0; i < 30; ++i) {
    plain_samples.push_back(10.0 + 0.01 * i);
    plain_slow.push_back(11.5 + 0.01 * i);
  }
  RunSet plain = MakeSet("b1"), plain_next = MakeSet("b2");
  Add(plain, MakeRun("b1", "m", plain_samples));
  Add(plain_next, MakeRun("b2", "m", plain_slow));
  PlatformComparison pc3 = CompareRunSets({&plain}, plain_next, CompareOptions{});
  CHECK_FALSE(Find(pc3, "m", Metric::kTime)->noise_percent);
  CHECK(Find(pc3, "m", Metric::kTime)->verdict == Verdict::kRegression);
}

namespace {
// One run of several processes, each at the level given, its steps within
// 0.1 % of it: the steps of a process agree, the processes do not.
RunResult RunOfProcesses(const std::string& build, const std::vector<double>& levels, int steps = 6) {
  std::vector<RunResult> parts;
  for (double level : levels) {
    std::vector<double> s;
    for (int i = 0; i < steps; ++i) s.push_back(level * (1 + 0.0002 * i));
    RunResult r = MakeRun(build, "m", s);
    r.settings = RunSettings{};
    parts.push_back(std::move(r));
  }
  return PoolProcesses(parts);
}
}  // namespace

TEST_CASE("the rank test's unit is the process: pooled steps of one process are not independent") {
  // Median +19.5 %, beyond the processes' band (14.7 %). Over 30 steps a
  // side the two builds separate almost completely (p < 1e-4); over the
  // five processes' medians two of the new ones sit among the base's (U 21
  // of 25, p 0.095): the processes do not show a change, so it is noise.
  RunSet base = MakeSet("b1"), next = MakeSet("b2");
  Add(base, RunOfProcesses("b1", {10, 10.02, 10.04, 11.0, 11.02}));
  Add(next, RunOfProcesses("b2", {10.5, 10.6, 12, 12.02, 12.04}));
  const PlatformComparison pc = CompareRunSets({&base}, next, CompareOptions{});
  const MetricChange* t = Find(pc, "m", Metric::kTime);
  REQUIRE(t);
  CHECK(t->delta_percent > 7);
  REQUIRE(t->noise_percent);
  CHECK(std::abs(t->delta_percent) > *t->noise_percent);
  CHECK(t->test_unit == TestUnit::kProcessMedians);
  CHECK(t->n_base == 5);
  CHECK(t->n_new == 5);
  CHECK(*t->p_value == doctest::Approx(2.0 * 12 / 252));
  CHECK(t->verdict == Verdict::kNoise);
  CHECK(
      MannWhitneyU(base.runs.begin()->second.timing->samples_ms, next.runs.begin()->second.timing->samples_ms).p_value <
      1e-4);
  const MetricChange* q = Find(pc, "m", Metric::kThroughput);
  REQUIRE(q);
  CHECK(q->test_unit == TestUnit::kProcessMedians);
  CHECK(q->verdict == Verdict::kNoise);
  const nlohmann::json j = ToJson(Comparison{"b1", "b2", {}, {pc}});
  for (const auto& c : j["platforms"][0]["changes"]) {
    CHECK(c["test_unit"] == (c["metric"] == "time" || c["metric"] == "throughput" ? nlohmann::json("process_medians")
                                                                                  : nlohmann::json(nullptr)));
  }

  // Every new process slower than every base one: p 2/252, a regression.
  RunSet slow = MakeSet("b3");
  Add(slow, RunOfProcesses("b3", {11.6, 11.7, 11.8, 11.9, 12.0}));
  const PlatformComparison slow_pc = CompareRunSets({&base}, slow, CompareOptions{});
  const MetricChange* r = Find(slow_pc, "m", Metric::kTime);
  REQUIRE(r);
  CHECK(*r->p_value == doctest::Approx(2.0 / 252));
  CHECK(r->verdict == Verdict::kRegression);

  // Three processes against three can never reach p < 0.05 (2/20): too few to tell.
  RunSet base3 = MakeSet("c1"), slow3 = MakeSet("c2");
  Add(base3, RunOfProcesses("c1", {10, 10.1, 10.2}));
  Add(slow3, RunOfProcesses("c2", {13, 13.1, 13.2}));
  const PlatformComparison few_pc = CompareRunSets({&base3}, slow3, CompareOptions{});
  const MetricChange* f = Find(few_pc, "m", Metric::kTime);
  REQUIRE(f);
  CHECK(f->n_base == 3);
  CHECK(f->verdict == Verdict::kTooFewSamples);

  // One side in a single process: its steps are all there is, and the test reads the steps.
  RunSet single = MakeSet("b4");
  Add(single, RunOfProcesses("b4", {11.9}));
  const PlatformComparison single_pc = CompareRunSets({&base}, single, CompareOptions{});
  const MetricChange* s = Find(single_pc, "m", Metric::kTime);
  REQUIRE(s);
  CHECK(s->test_unit == TestUnit::kSamples);
  CHECK(s->n_base == 30);
  CHECK(s->n_new == 6);
}

TEST_CASE("a window's per-build medians widen the band") {
  std::vector<double> s1, s2, s3;
  for (int i = 0; i < 10; ++i) {
    s1.push_back(10.0 + 0.01 * i);
    s2.push_back(11.0 + 0.01 * i);
    s3.push_back(11.5 + 0.01 * i);
  }
  RunSet w1 = MakeSet("w1"), w2 = MakeSet("w2"), next = MakeSet("n");
  Add(w1, MakeRun("w1", "m", s1));
  Add(w2, MakeRun("w2", "m", s2));
  Add(next, MakeRun("n", "m", s3));
  CompareOptions o;
  o.window = 2;
  PlatformComparison pc = CompareRunSets({&w1, &w2}, next, o);
  const MetricChange* t = Find(pc, "m", Metric::kTime);
  REQUIRE(t);
  REQUIRE(t->noise_percent);
  CHECK(*t->noise_percent == doctest::Approx(std::expm1(std::log(11.045 / 10.045) * 2.326 / 1.128) * 100));
  // Base = median of 10.045 and 11.045 = 10.545; +9.5% is over 7% and significant, inside the ~22% band.
  CHECK(t->verdict == Verdict::kNoise);
}

TEST_CASE("a noisy run on either side is reported, never a regression or an improvement") {
  const std::vector<double> base_s = {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01};
  const std::vector<double> slow_s = {11, 11.1, 10.9, 11.2, 10.8, 11.05, 10.95, 11.15, 10.85, 11.01};
  const SystemLoad busy = MachineLoad(1.6), quiet = MachineLoad(0.05);
  auto base = MakeSet("b1"), next = MakeSet("b2");
  auto with_load = [](RunResult r, const SystemLoad& l) {
    r.system_load = l;
    return r;
  };
  // Slowed by 10 %, significant: busy on the new side, busy on the base side, quiet on both.
  Add(base, with_load(MakeRun("b1", "busy_new", base_s, 100 << 20), quiet));
  Add(next, with_load(MakeRun("b2", "busy_new", slow_s, 200 << 20), busy));
  Add(base, with_load(MakeRun("b1", "busy_base", slow_s), busy));
  Add(next, with_load(MakeRun("b2", "busy_base", base_s), quiet));
  Add(base, with_load(MakeRun("b1", "quiet", base_s), quiet));
  Add(next, with_load(MakeRun("b2", "quiet", slow_s), quiet));
  auto pc = CompareRunSets({&base}, next, {});
  const MetricChange* t = Find(pc, "busy_new", Metric::kTime);
  REQUIRE(t);
  CHECK(t->verdict == Verdict::kNoisyRun);
  REQUIRE(t->noisy);
  CHECK(t->noisy->find("new build b2: other processes used 1.6 cores") != std::string::npos);
  CHECK(Find(pc, "busy_new", Metric::kThroughput)->verdict == Verdict::kNoisyRun);
  // Peak memory is the run's own: a busy machine does not excuse it.
  CHECK(Find(pc, "busy_new", Metric::kCpuMemory)->verdict == Verdict::kRegression);
  const MetricChange* b = Find(pc, "busy_base", Metric::kTime);
  CHECK(b->verdict == Verdict::kNoisyRun);  // would be an improvement
  CHECK(b->noisy->find("base build b1") != std::string::npos);
  CHECK(Find(pc, "quiet", Metric::kTime)->verdict == Verdict::kRegression);
  CHECK_FALSE(Find(pc, "quiet", Metric::kTime)->noisy);
  CHECK(std::string(VerdictName(Verdict::kNoisyRun)) == "noisy_run");
  const nlohmann::json j = ToJson(Comparison{"b1", "b2", {}, {pc}});
  bool seen = false;
  for (const auto& c : j["platforms"][0]["changes"]) {
    if (c["model"] == "busy_new" && c["metric"] == "time") {
      seen = c["verdict"] == "noisy_run" && c["noisy"].is_string();
    }
    if (c["model"] == "quiet") CHECK(c["noisy"].is_null());
  }
  CHECK(seen);
  // Bisect must call every step good or bad: noisy runs judged by the test, still named.
  CompareOptions judge_all;
  judge_all.judge_noisy_runs = true;
  const auto judged = CompareRunSets({&base}, next, judge_all);
  CHECK(Find(judged, "busy_new", Metric::kTime)->verdict == Verdict::kRegression);
  CHECK(Find(judged, "busy_new", Metric::kTime)->noisy);
  CHECK(Find(judged, "busy_base", Metric::kTime)->verdict == Verdict::kImprovement);
}

TEST_CASE("a build too noisy to judge is inconclusive, not green; a regression found anyway stays one") {
  const std::vector<double> same_s = {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01};
  const std::vector<double> slow_s = {11, 11.1, 10.9, 11.2, 10.8, 11.05, 10.95, 11.15, 10.85, 11.01};
  const SystemLoad busy = MachineLoad(1.6);
  auto noisy = [&](RunResult r) {
    r.system_load = busy;
    return r;
  };
  // Four runs compared on time; `noisy_runs` of them busy on the new side.
  auto compare = [&](int noisy_runs, bool quiet_regression, CompareOptions o) {
    auto base = MakeSet("b1"), next = MakeSet("b2");
    for (int i = 0; i < 4; ++i) {
      const std::string m = "m" + std::to_string(i);
      Add(base, MakeRun("b1", m, same_s));
      const bool slowed = quiet_regression && i == 3;
      RunResult r = MakeRun("b2", m, slowed ? slow_s : same_s);
      Add(next, i < noisy_runs ? noisy(r) : r);
    }
    return Comparison{"b1", "b2", o, {CompareRunSets({&base}, next, o)}};
  };
  const CompareOptions defaults;
  CHECK(defaults.max_noisy_percent == 25);
  const auto half = compare(2, false, defaults);
  CHECK(half.ComparedRuns() == 4);
  CHECK(half.NoisyRuns() == 2);
  CHECK_FALSE(half.HasRegression());
  CHECK(half.Inconclusive());
  const nlohmann::json j = ToJson(half);
  CHECK(j["inconclusive"] == true);
  CHECK(j["noisy_runs"] == 2);
  CHECK(j["compared_runs"] == 4);
  CHECK(j["options"]["max_noisy_percent"] == 25);
  // At the share itself it is still judged: more than the share is needed.
  CHECK_FALSE(compare(1, false, defaults).Inconclusive());
  CompareOptions lenient;
  lenient.max_noisy_percent = 50;
  CHECK_FALSE(compare(2, false, lenient).Inconclusive());
  // A regression among the quiet runs is a regression, however noisy the rest.
  const auto regressed = compare(2, true, defaults);
  CHECK(regressed.HasRegression());
  CHECK_FALSE(regressed.Inconclusive());
  CompareOptions bad;
  bad.max_noisy_percent = 101;
  CHECK_THROWS_AS(bad.Validate(), std::invalid_argument);
}

TEST_CASE("measured: process-level noise, false alarms and detection with and without the band") {
  // Shared-machine model measured on the 2-core CI VM (docs/nightly.md):
  // processes of one run differ by ~10% (lognormal), samples within a
  // process by ~5%. Three collection shapes: `--processes 5 --repeat 6`,
  // the nightly's default (tools/nightly.sh: 5 processes on the smoke
  // suite's 3 repetitions) and 3 processes x 3.
  struct Shape {
    int processes, per_process;
  };
  for (Shape shape : {Shape{5, 6}, Shape{5, 3}, Shape{3, 3}}) {
    std::mt19937_64 rng(20261122);
    const int comparisons = 1000;
    int alarms_band = 0, alarms_plain = 0, detected_band = 0, detected_plain = 0, noisy = 0;
    for (int i = 0; i < comparisons; ++i) {
      RunSet base = MakeSet("b"), same = MakeSet("n"), slow = MakeSet("s");
      Add(base, MakeProcessRun(rng, "b", "m", 20.0, 0.10, 0.05, shape.processes, shape.per_process));
      Add(same, MakeProcessRun(rng, "n", "m", 20.0, 0.10, 0.05, shape.processes, shape.per_process));
      Add(slow, MakeProcessRun(rng, "s", "m", 20.0 * 1.5, 0.10, 0.05, shape.processes, shape.per_process));
      auto verdict = [&](RunSet& next, bool band) {
        RunSet b = base, n = next;
        if (!band) {
          for (auto* s : {&b, &n}) {
            for (auto& [k, r] : s->runs) r.timing->process_medians_ms.clear();
          }
        }
        return Find(CompareRunSets({&b}, n, CompareOptions{}), "m", Metric::kTime)->verdict;
      };
      alarms_band += verdict(same, true) == Verdict::kRegression;
      alarms_plain += verdict(same, false) == Verdict::kRegression;
      const Verdict slow_band = verdict(slow, true);
      detected_band += slow_band == Verdict::kRegression;
      detected_plain += verdict(slow, false) == Verdict::kRegression;
      noisy += slow_band == Verdict::kNoisyRun;
    }
    // The noise verdict (core::RunNoise) judges the jitter within each
    // process (5 % here), not the spread between processes, which the band
    // weighs: a comparison reported as a noisy run is rare, and detection is
    // judged on the others.
    const int judged = comparisons - noisy;
    CHECK(noisy <= comparisons / 100);
    MESSAGE(shape.processes << " processes x " << shape.per_process << ": " << noisy << " of " << comparisons
                            << " slowed comparisons involve a noisy run");
    MESSAGE(shape.processes << " processes x " << shape.per_process
                            << " samples: false regressions per run, noise only: " << 100.0 * alarms_band / comparisons
                            << "% with the band, " << 100.0 * alarms_plain / comparisons
                            << "% without; +50% detected: " << 100.0 * detected_band / comparisons
                            << "% with the band, " << 100.0 * detected_plain / comparisons << "% without");
    CHECK(alarms_band < alarms_plain);
    CHECK(alarms_band <= comparisons / 100);  // 1 % of runs
    CHECK(judged > 0);
    if (shape.processes >= 4) {
      CHECK(detected_band >= judged * 7 / 10);
    } else {
      // The test's unit is the process, and 3 against 3 cannot reach alpha:
      // the comparison says so instead of guessing.
      CHECK(detected_band == 0);
      CHECK(alarms_band == 0);
    }
  }
}

// Issue 36, item 11: alpha applies to each of a suite's runs, so what a
// nightly reader meets is the chance that a night with no change reports
// one. Measured at the nightly's own defaults: 5 processes x 3 repetitions
// (tools/nightly.sh on the smoke suite), window 1, persist 1, and the smoke
// suite's 48 ok runs, under the process-level noise model above.
TEST_CASE("measured: false alarms per night, whole suite, at the nightly's defaults") {
  std::mt19937_64 rng(20261128);
  const int nights = 1000, runs = 48;
  int night_alarms = 0, run_alarms = 0, nights_inconclusive = 0;
  for (int n = 0; n < nights; ++n) {
    RunSet base = MakeSet("b"), next = MakeSet("n");
    for (int m = 0; m < runs; ++m) {
      const std::string model = "m" + std::to_string(m);
      const double median = 5.0 + 10.0 * m;  // models of 5 to 475 ms
      Add(base, MakeProcessRun(rng, "b", model, median, 0.10, 0.05, 5, 3));
      Add(next, MakeProcessRun(rng, "n", model, median, 0.10, 0.05, 5, 3));
    }
    Comparison c;
    c.platforms.push_back(CompareRunSets({&base}, next, CompareOptions{}));
    const std::size_t flagged = c.CountRuns(Verdict::kRegression, true);
    run_alarms += static_cast<int>(flagged);
    night_alarms += flagged > 0;
    nights_inconclusive += c.Inconclusive();
  }
  const double per_run = 100.0 * run_alarms / (nights * runs), per_night = 100.0 * night_alarms / nights;
  MESSAGE("nightly defaults (5 processes x 3, " << runs << " runs, window 1, persist 1), noise only, " << nights
                                                << " nights: false regressions " << per_run << "% of runs, nights with "
                                                << "at least one " << per_night << "%; inconclusive nights "
                                                << nights_inconclusive);
  // The figures docs/nightly.md states; a change to the rules that raises
  // the nightly's false alarms fails here.
  CHECK(per_run <= 0.5);
  CHECK(per_night <= 15.0);
}

// Issue 36, item 5: throughput is computed from the same samples as time, so
// one slowed run flagged two regressions (three with its memory); the count
// that titles an issue is by run.
TEST_CASE("one slowed run is one regression, its metrics listed under it") {
  auto base = MakeSet("b1"), next = MakeSet("b2");
  Add(base, MakeRun("b1", "slow", {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01}, 200 << 20));
  Add(next, MakeRun("b2", "slow", {11, 11.1, 10.9, 11.2, 10.8, 11.05, 10.95, 11.15, 10.85, 11.01}, 240 << 20));
  Comparison c;
  c.platforms.push_back(CompareRunSets({&base}, next, {}));
  CHECK(c.CountVerdict(Verdict::kRegression) == 3);  // time, throughput, CPU memory
  CHECK(c.CountRuns(Verdict::kRegression) == 1);
  CHECK(c.CountRuns(Verdict::kRegression, true) == 1);
  CHECK(c.CountRuns(Verdict::kImprovement) == 0);
  CHECK(c.HasRegression());
}

// Issue 36, item 4: hf_t5's CPU train batch went from 8 to 2 (commit a649586),
// which compare read as a 4x improvement, and its revert would fail the
// nightly. A run whose batch size (or smoke sizing) changed is a
// configuration change: reported, never compared.
TEST_CASE("a batch-size change is a configuration change, not a regression or an improvement") {
  auto base = MakeSet("b1"), next = MakeSet("b2");
  RunResult big = MakeRun("b1", "hf_t5", {40, 40.2, 39.8, 40.4, 39.6, 40.1, 39.9, 40.3, 39.7, 40});
  big.batch_size = 8;
  RunResult small = MakeRun("b2", "hf_t5", {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01});
  small.batch_size = 2;
  Add(base, big);
  Add(next, small);
  for (bool reverted : {false, true}) {
    CAPTURE(reverted);
    const RunSet& from = reverted ? next : base;
    RunSet to = reverted ? base : next;
    to.build_id = "b3";
    Comparison c;
    c.platforms.push_back(CompareRunSets({&from}, to, {}));
    const PlatformComparison& pc = c.platforms[0];
    CHECK(pc.changes.empty());
    CHECK(pc.status_changes.empty());
    REQUIRE(pc.config_changes.size() == 1);
    CHECK(pc.config_changes[0].key.model == "hf_t5");
    CHECK(pc.config_changes[0].base_batch_size == (reverted ? 2 : 8));
    CHECK(pc.config_changes[0].new_batch_size == (reverted ? 8 : 2));
    CHECK_FALSE(c.HasRegression());
    CHECK(ToJson(c)["platforms"][0]["config_changes"].size() == 1);
  }
  // In a window, only the builds of the new run's configuration are its
  // baseline: an older build at batch 2 is compared, the newest at 8 is not.
  RunSet older = MakeSet("b0");
  RunResult older_small = MakeRun("b0", "hf_t5", {10, 10.1, 9.9, 10.2, 9.8, 10.05, 9.95, 10.15, 9.85, 10.01});
  older_small.batch_size = 2;
  Add(older, older_small);
  auto pc = CompareRunSets({&older, &base}, next, {});
  const MetricChange* time = Find(pc, "hf_t5", Metric::kTime);
  REQUIRE(time);
  CHECK(time->verdict == Verdict::kUnchanged);
  CHECK(time->base_value == doctest::Approx(10.005));
}

namespace {
// A generative run: 5 generations of 16 decode steps, TTFT around ttft_ms
// and TPOT around tpot_ms (lognormal, CoV 3 %).
RunResult MakeGenerativeRun(std::mt19937_64& rng, const std::string& build, double ttft_ms, double tpot_ms) {
  RunResult r = MakeRun(build, "llm", Lognormal(rng, 100, 0.02));
  Generation g;
  g.prompt_tokens = 32;
  g.decode_steps = 16;
  g.output_tokens = 17;
  g.generations = 5;
  g.ttft_samples_ms = Lognormal(rng, ttft_ms, 0.03, 5);
  g.tpot_samples_ms = Lognormal(rng, tpot_ms, 0.03, 5 * 16);
  SummarizeGeneration(g);
  r.generation = g;
  return r;
}
}  // namespace

TEST_CASE("generation: TTFT and TPOT lower is better, tokens per second higher") {
  CHECK(LowerIsBetter(Metric::kTtft));
  CHECK(LowerIsBetter(Metric::kTpot));
  CHECK_FALSE(LowerIsBetter(Metric::kTokensPerSecond));
  CHECK(MetricFromName("tpot") == Metric::kTpot);
  CHECK(std::string(MetricUnit(Metric::kTokensPerSecond)) == "tokens/s");
  CHECK(ParseThresholdRule("tpot:^llama=5").metric == "tpot");
  std::mt19937_64 rng(38);
  auto base = MakeSet("b1"), same = MakeSet("b2"), slow = MakeSet("b3");
  Add(base, MakeGenerativeRun(rng, "b1", 50, 10));
  Add(same, MakeGenerativeRun(rng, "b2", 50, 10));
  Add(slow, MakeGenerativeRun(rng, "b3", 50, 12));  // TPOT +20 %
  const auto flat = CompareRunSets({&base}, same, {});
  for (Metric m : {Metric::kTtft, Metric::kTpot, Metric::kTokensPerSecond}) {
    REQUIRE(Find(flat, "llm", m));
    CHECK(Find(flat, "llm", m)->verdict == Verdict::kUnchanged);
  }
  const auto pc = CompareRunSets({&base}, slow, {});
  const auto* tpot = Find(pc, "llm", Metric::kTpot);
  REQUIRE(tpot);
  CHECK(tpot->verdict == Verdict::kRegression);
  CHECK(tpot->delta_percent == doctest::Approx(20).epsilon(0.2));
  CHECK(tpot->n_new == 80);
  CHECK(Find(pc, "llm", Metric::kTokensPerSecond)->verdict == Verdict::kRegression);
  CHECK(Find(pc, "llm", Metric::kTtft)->verdict == Verdict::kUnchanged);
  // Pooled from worker processes, each process's median is the unit: five
  // processes whose medians overlap (the machine's minute-to-minute drift,
  // as in a real release history) are noise however many samples they hold,
  // where the samples alone would give a tiny p.
  auto pooled = [&rng](const std::string& build, std::vector<double> tpots) {
    std::vector<Generation> processes;
    for (double tpot : tpots) processes.push_back(*MakeGenerativeRun(rng, build, 50, tpot).generation);
    RunResult r = MakeRun(build, "llm", Lognormal(rng, 100, 0.02));
    r.generation = PoolGenerations(processes);
    return r;
  };
  auto drift_base = MakeSet("b5"), drift_new = MakeSet("b6");
  Add(drift_base, pooled("b5", {7.5, 6.2, 6.5, 12.5, 7.0}));
  Add(drift_new, pooled("b6", {10.8, 4.5, 4.1, 11.0, 5.5}));
  const auto drift = CompareRunSets({&drift_base}, drift_new, {});
  const auto* drift_tpot = Find(drift, "llm", Metric::kTpot);
  REQUIRE(drift_tpot);
  CHECK(drift_tpot->test_unit == TestUnit::kProcessMedians);
  CHECK(drift_tpot->n_new == 5);
  CHECK(drift_tpot->verdict != Verdict::kImprovement);
  // Processes that all moved are a change.
  auto fast = MakeSet("b7");
  Add(fast, pooled("b7", {5.0, 5.1, 4.9, 5.2, 5.0}));
  auto steady = MakeSet("b8");
  Add(steady, pooled("b8", {10.0, 10.2, 9.9, 10.1, 10.0}));
  const auto moved = CompareRunSets({&steady}, fast, {});
  const auto* faster = Find(moved, "llm", Metric::kTpot);
  REQUIRE(faster);
  CHECK(faster->verdict == Verdict::kImprovement);
  // A run without a generation has none of these metrics.
  auto plain = MakeSet("b4");
  Add(plain, MakeRun("b4", "llm", Lognormal(rng, 100, 0.02)));
  CHECK_FALSE(Find(CompareRunSets({&base}, plain, {}), "llm", Metric::kTpot));
}
