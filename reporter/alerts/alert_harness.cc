#include "reporter/alerts/alert_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/stats/stats.h"
#include "reporter/alerts/alerts.h"

namespace torchgauge::reporter {

namespace {

constexpr int kStepRuns = 3;

double Lognormal(std::mt19937_64& rng, double median, double cov) {
  std::normal_distribution<double> z(0.0, std::sqrt(std::log1p(cov * cov)));
  return median * std::exp(z(rng));
}

// One run's measurement in one build, as the summary keeps it.
ConfigMedian Measure(std::mt19937_64& rng, const ConfigMedian& run, double truth, const NoiseModel& n) {
  std::vector<double> pooled, process_medians;
  for (int p = 0; p < n.processes; ++p) {
    const double level = Lognormal(rng, truth, n.between);
    std::vector<double> samples;
    for (int s = 0; s < n.repeats; ++s) samples.push_back(Lognormal(rng, level, n.within));
    pooled.insert(pooled.end(), samples.begin(), samples.end());
    process_medians.push_back(core::Quantile(samples, 0.5));
  }
  ConfigMedian m = run;
  m.median_ms = core::Quantile(pooled, 0.5);
  m.noisy = false;
  std::tie(m.level_ms, m.level_se) = ProcessLevel(process_medians);  // as Summarize keeps a run's level
  return m;
}

// What was planted in one history: runs are indices into the base's medians.
struct Plants {
  std::vector<size_t> step;  // kStepRuns runs
  size_t step1 = 0, bump = 0, vanish = 0;
  int s = 0, q = 0, u = 0, v = 0, m = 0, w = 0;
  bool slow_night = true;
};

Plants Plant(std::mt19937_64& rng, size_t runs, int builds) {
  std::vector<size_t> order(runs);
  for (size_t i = 0; i < runs; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Plants p;
  p.step.assign(order.begin(), order.begin() + kStepRuns);
  p.step1 = order[kStepRuns];
  p.bump = order[kStepRuns + 1];
  p.vanish = order[kStepRuns + 2];
  auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  p.s = in(8, 11);
  p.q = in(13, 15);
  p.u = in(17, 20);
  p.v = in(10, builds - 4);
  p.m = builds - 5;
  p.w = in(4, 6);
  return p;
}

double Truth(const Plants& p, size_t run, int b, double base) {
  double t = base;
  if (std::find(p.step.begin(), p.step.end(), run) != p.step.end() && b >= p.s) t *= 1.15;
  if (run == p.step1 && b >= p.q) t *= 1.15;
  if (run == p.bump && b >= p.u && b < p.u + 3) t *= 1.25;
  if (b >= p.m) t *= 0.85;
  if (b == p.w && p.slow_night) t *= 1.20;
  return t;
}

std::vector<BuildSummary> History(std::mt19937_64& rng, const PlatformSummary& base, const Plants& p, int builds,
                                  const NoiseModel& n) {
  std::vector<BuildSummary> out;
  for (int b = 0; b < builds; ++b) {
    BuildSummary s;
    char id[32], at[32];
    std::snprintf(id, sizeof id, "b%02d", b);
    std::snprintf(at, sizeof at, "2027-%02d-%02dT02:00:00Z", 1 + b / 28, 1 + b % 28);
    s.id = id;
    s.started_at = at;
    PlatformSummary ps;
    ps.id = "cpu-synthetic";
    ps.not_ok = base.not_ok;
    for (size_t r = 0; r < base.medians.size(); ++r) {
      if (r == p.vanish && b >= p.v) continue;
      ps.medians.push_back(Measure(rng, base.medians[r], Truth(p, r, b, base.medians[r].median_ms), n));
    }
    s.runs = static_cast<int>(ps.medians.size() + ps.not_ok.size());
    s.ok = static_cast<int>(ps.medians.size());
    s.platforms.push_back(std::move(ps));
    out.push_back(std::move(s));
  }
  return out;
}

int BuildIndex(const std::string& id) { return std::stoi(id.substr(1)); }

// Whether alert `a` has a time row of run `run` of the base.
bool Covers(const Alert& a, const ConfigMedian& run) {
  return std::any_of(a.rows.begin(), a.rows.end(), [&](const FlaggedChange& f) {
    return f.metric == "time" && f.model == run.model &&
           ConfigLabel(f.mode, f.backend, f.precision, f.batch_size) == run.config;
  });
}

void Score(const std::vector<Alert>& alerts, const PlatformSummary& base, const Plants& p, HarnessFigures& f) {
  auto near = [](const Alert& a, int at) { return std::abs(BuildIndex(a.build) - at) <= 2; };
  auto raised = [](const Alert& a) { return BuildIndex(a.raised_in.empty() ? a.build : a.raised_in); };
  bool step = false, step_exact = false, step1 = false, bump = false, recovered = false, reverted = false,
       bump_exact = false, machine = false;
  int step_delay = -1;
  std::string bump_id;
  for (const auto& a : alerts) {
    bool ok = false;
    if (a.regression) {
      for (size_t r : p.step) {
        if (!Covers(a, base.medians[r]) || !near(a, p.s)) continue;
        ok = true;
        if (raised(a) <= p.s + 2) {
          step = true;
          step_exact = step_exact || BuildIndex(a.build) == p.s;
          if (step_delay < 0 || raised(a) - p.s < step_delay) step_delay = raised(a) - p.s;
        }
      }
      if (Covers(a, base.medians[p.step1]) && near(a, p.q)) ok = true, step1 = step1 || raised(a) <= p.q + 2;
      if (Covers(a, base.medians[p.bump]) && near(a, p.u)) {
        ok = bump = true;
        recovered = recovered || a.recovered;
        bump_exact = bump_exact ||
                     (BuildIndex(a.build) == p.u && !a.recovered_in.empty() && BuildIndex(a.recovered_in) == p.u + 3);
        bump_id = a.id;
      }
    } else {
      if (Covers(a, base.medians[p.bump]) && near(a, p.u + 3)) ok = true;
      if (near(a, p.m)) ok = machine = true;  // every run moved there
    }
    if (!ok && p.slow_night && (BuildIndex(a.build) == p.w || BuildIndex(a.build) == p.w + 1)) ++f.slow_night_alerts;
    ++f.alerts;
    f.true_alerts += ok;
    f.regression_alerts += a.regression;
    f.true_regression_alerts += a.regression && ok;
    if (!ok) ++(a.regression ? f.false_regressions : f.false_improvements);
  }
  for (const auto& a : alerts) reverted = reverted || (!bump_id.empty() && a.reverts == bump_id);
  f.step_raised += step;
  f.step_at_build += step_exact;
  if (step) f.step_delay += step_delay;
  f.step1_raised += step1;
  f.bump_raised += bump;
  f.bump_recovered += bump && recovered;
  f.bump_reverted += bump && reverted;
  f.bump_at_build += bump_exact;
  f.machine_raised += machine;
}

}  // namespace

HarnessFigures RunAlertHarness(const BuildSummary& base, const HarnessOptions& o) {
  if (base.platforms.empty() || base.platforms[0].medians.size() < kStepRuns + 3)
    throw std::invalid_argument("the harness's base build needs a platform with at least 6 timed runs");
  const PlatformSummary& runs = base.platforms[0];
  HarnessFigures f;
  f.histories = o.histories;
  f.builds = o.builds;
  f.runs = static_cast<int>(runs.medians.size());
  for (int h = 0; h < o.histories; ++h) {
    std::mt19937_64 rng(o.first_seed + static_cast<uint64_t>(h));
    Plants p = Plant(rng, runs.medians.size(), o.builds);
    p.slow_night = o.slow_night;
    const std::vector<BuildSummary> history = History(rng, runs, p, o.builds, o.noise);
    Score(BuildAlerts({}, {}, history, FindHistoryChanges(history, o.rules)), runs, p, f);
  }
  if (f.step_raised) f.step_delay /= f.step_raised;
  return f;
}

std::string HarnessTable(const HarnessFigures& f, const std::string& title) {
  char buf[2048];
  auto of = [&](int n) {
    char c[64];
    std::snprintf(c, sizeof c, "%d of %d", n, f.histories);
    return std::string(c);
  };
  std::snprintf(buf, sizeof buf,
                "| %s: %d histories of %d builds x %d runs | found |\n|---|---|\n"
                "| regression alert precision | %.1f %% (%d true of %d) |\n"
                "| alert precision, improvements too | %.1f %% (%d true of %d) |\n"
                "| false regression alerts | %d (%.2f per 100 builds) |\n"
                "| false improvement alerts | %d |\n"
                "| +15 %% step in 3 runs raised within 2 builds | %s (at its build in %d; mean delay %.2f builds) |\n"
                "| +15 %% step in 1 run raised within 2 builds | %s |\n"
                "| reverted +25 %% regression raised / recovered / revert linked | %s / %d / %d |\n"
                "| the bump at its build and recovered at the revert's | %d |\n"
                "| machine change (every run 15 %% faster) raised within 2 builds | %s |\n"
                "| alerts at a slow night (every run 20 %% slower in one build) | %d |\n",
                title.c_str(), f.histories, f.builds, f.runs, 100 * f.RegressionPrecision(), f.true_regression_alerts,
                f.regression_alerts, 100 * f.Precision(), f.true_alerts, f.alerts,
                f.false_regressions, f.FalseRegressionsPer100Builds(), f.false_improvements, of(f.step_raised).c_str(),
                f.step_at_build, f.step_delay, of(f.step1_raised).c_str(), of(f.bump_raised).c_str(), f.bump_recovered,
                f.bump_reverted, f.bump_at_build, of(f.machine_raised).c_str(), f.slow_night_alerts);
  return buf;
}

}  // namespace torchgauge::reporter
