#include "reporter/alerts/change_points.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "core/io/json_io.h"

using namespace torchgauge::reporter;
namespace fs = std::filesystem;

namespace {
// The project's noise model (core/analysis/compare_test.cc, "measured:
// process-level noise"; docs/nightly.md): the processes of one run differ
// by ~10 % (lognormal), samples within a process by ~5 %; at the nightly's
// defaults a run is 5 processes x 3 repetitions, pooled, and its median is
// what a build's summary keeps.
double Lognormal(std::mt19937_64& rng, double median, double cov) {
  std::normal_distribution<double> z(0.0, std::sqrt(std::log1p(cov * cov)));
  return median * std::exp(z(rng));
}
double NightlyMedian(std::mt19937_64& rng, double true_ms, double between = 0.10, double within = 0.05) {
  std::vector<double> pooled;
  for (int p = 0; p < 5; ++p) {
    const double level = Lognormal(rng, true_ms, between);
    for (int s = 0; s < 3; ++s) pooled.push_back(Lognormal(rng, level, within));
  }
  std::sort(pooled.begin(), pooled.end());
  return pooled[pooled.size() / 2];
}
// A history of `n` builds whose true value is `truth(i)`.
template <typename F>
std::vector<double> History(std::mt19937_64& rng, int n, F truth) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(NightlyMedian(rng, truth(i)));
  return v;
}
bool FoundUp(const std::vector<Step>& steps, size_t from, size_t to) {
  return std::any_of(steps.begin(), steps.end(),
                     [&](const Step& s) { return s.at >= from && s.at <= to && s.Factor() > 1; });
}
}  // namespace

TEST_CASE("change points: a clean step is found where it is; a flat series has none; short series none") {
  std::vector<double> v(20, 10.0);
  for (size_t i = 12; i < v.size(); ++i) v[i] = 12.0;
  for (size_t i = 0; i < v.size(); ++i) v[i] *= 1 + 0.002 * std::sin(static_cast<double>(i));
  auto steps = FindSteps(v);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].at == 12);
  CHECK(steps[0].Factor() == doctest::Approx(1.2).epsilon(0.01));
  for (auto& x : v) x = 10.0 * (1 + 0.002 * std::sin(x));
  CHECK(FindSteps(v).empty());
  CHECK(FindSteps({10, 10, 20, 20}).empty());  // under min_segment on each side
  // A change under the threshold is not a change point, however clean.
  std::vector<double> small(20, 10.0);
  for (size_t i = 10; i < small.size(); ++i) small[i] = 10.5;
  CHECK(FindSteps(small).empty());
}

TEST_CASE("change points from the site's summaries: noisy runs are left out, builds are named") {
  std::vector<BuildSummary> h;
  for (int b = 0; b < 12; ++b) {
    BuildSummary s;
    s.id = "b" + std::to_string(b);
    s.started_at = "2026-01-" + std::string(b < 9 ? "0" : "") + std::to_string(b + 1) + "T02:00:00Z";
    PlatformSummary p;
    p.id = "cpu";
    p.medians.push_back({"m", "eval", b >= 6 ? 13.0 : 10.0, false});
    p.medians.push_back({"n", "eval", b == 3 ? 30.0 : 10.0, b == 3});  // a noisy night
    s.platforms.push_back(p);
    h.push_back(s);
  }
  const auto cps = FindChangePoints(h);
  REQUIRE(cps.size() == 1);
  CHECK(cps[0].model == "m");
  CHECK(cps[0].build_before == "b5");
  CHECK(cps[0].build == "b6");
  CHECK(cps[0].Factor() == doctest::Approx(1.3));
  CHECK(cps[0].points == 12);
}

// Issue 60: a short regression, up for 3 builds and then back, on a quiet
// history (2 % between processes, 1 % within). No single split of the series
// separates it from the rest by the threshold, so binary segmentation alone
// stopped at the first split and found it in 2 of 20 histories.
TEST_CASE("change points: a 3-build +25% bump on a quiet history is found at its builds; pure noise has none") {
  auto quiet = [](std::mt19937_64& rng, double true_ms) { return NightlyMedian(rng, true_ms, 0.02, 0.01); };
  const int n = 32, seeds = 20;
  int found = 0, false_series = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    const int k = std::uniform_int_distribution<int>(6, n - 9)(rng);
    std::vector<double> bump, flat;
    for (int i = 0; i < n; ++i) bump.push_back(quiet(rng, i >= k && i < k + 3 ? 25.0 : 20.0));
    for (int i = 0; i < n; ++i) flat.push_back(quiet(rng, 20.0));
    const auto steps = FindSteps(bump);
    const bool up = std::any_of(steps.begin(), steps.end(),
                                [&](const Step& s) { return s.at == static_cast<size_t>(k) && s.Factor() > 1.2; });
    const bool down = std::any_of(steps.begin(), steps.end(), [&](const Step& s) {
      return s.at == static_cast<size_t>(k + 3) && s.Factor() < 1 / 1.2;
    });
    found += up && down && steps.size() == 2;
    false_series += !FindSteps(flat).empty();
  }
  MESSAGE("quiet history of " << n << " builds: 3-build +25% bump found at its two builds in " << found << " of "
                              << seeds << " seeds; change points in " << false_series << " of " << seeds
                              << " pure-noise series");
  CHECK(found >= 19);
  CHECK(false_series == 0);
}

// Issue 37, item 2: the search's false-alarm and detection rates at the
// defaults, on the project's noise model, over 30-build histories.
TEST_CASE("measured: change-point false alarms and detection on the nightly's noise model") {
  std::mt19937_64 rng(20261128);
  const int series = 1000, n = 30;
  const ChangePointOptions o;
  int false_series = 0, false_points = 0, step15 = 0, step30 = 0, drift = 0, hidden = 0;
  std::uniform_int_distribution<int> where(8, 22);
  for (int i = 0; i < series; ++i) {
    const auto flat = FindSteps(History(rng, n, [](int) { return 20.0; }), o);
    false_series += !flat.empty();
    false_points += static_cast<int>(flat.size());
    const int k = where(rng);
    step15 += FoundUp(FindSteps(History(rng, n, [&](int b) { return b >= k ? 23.0 : 20.0; }), o), k - 2, k + 2);
    step30 += FoundUp(FindSteps(History(rng, n, [&](int b) { return b >= k ? 26.0 : 20.0; }), o), k - 2, k + 2);
    // A slow drift: +3 % a night over ten nights (each under the threshold), from night 10.
    drift += FoundUp(
        FindSteps(History(rng, n, [](int b) { return 20.0 * std::pow(1.03, std::clamp(b - 10, 0, 10)); }), o), 10, 21);
    // A +30 % step whose first night is an outlier (+40 % more), which the
    // build-against-build rules may call noise.
    auto v = History(rng, n, [&](int b) { return b >= k ? 26.0 : 20.0; });
    v[static_cast<size_t>(k)] *= 1.4;
    hidden += FoundUp(FindSteps(v, o), k - 2, k + 2);
  }
  auto pct = [&](int x) { return 100.0 * x / series; };
  MESSAGE("change points at the defaults (min change "
          << o.min_change_percent << "%, " << o.min_t << " sigma, segments >= " << o.min_segment << "), " << series
          << " histories of " << n << " builds, 5 processes x 3 per build: false alarms " << pct(false_series)
          << "% of series (" << false_points << " points)");
  MESSAGE("detected within 2 builds: +15% step " << pct(step15) << "%, +30% step " << pct(step30)
                                                 << "%, +30% step behind an outlier night " << pct(hidden)
                                                 << "%; +34% drift over 10 nights (3%/night) " << pct(drift) << "%");
  CHECK(pct(false_series) <= 2.0);
  CHECK(pct(step30) >= 90.0);
  CHECK(pct(drift) >= 80.0);
  CHECK(pct(hidden) >= 80.0);
}

// Issue 37, item 2, on a real history: the pin collected night after night
// on the 2-core CI VM, with no change of build (tests/data/real_history/,
// its README says how). Every step found in the raw series is a false
// alarm; steps planted at every place a step can be found measure detection
// against the machine's own noise, not a model of it.
TEST_CASE("measured: change points on a real history of one build collected night after night") {
  const fs::path dir = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/real_history/pin-nights";
  std::vector<BuildSummary> history;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    // Written at summary version 4, whose "flagged" counted metrics where
    // version 5 counts runs; the series are all this test reads, so the
    // comparison's counts are dropped rather than restated. Version 6 adds
    // the counted runs, which these timed nights have none of.
    nlohmann::json j = torchgauge::core::ReadJsonFile(e.path());
    if (j.value("summary_version", 0) == 4) {
      j["summary_version"] = 7;
      j["flagged"] = nlohmann::json::array();
      for (auto& p : j["platforms"]) p["counts"] = nlohmann::json::array();
    }
    history.push_back(BuildSummaryFromJson(j));
  }
  std::sort(history.begin(), history.end(),
            [](const BuildSummary& a, const BuildSummary& b) { return a.started_at < b.started_at; });
  REQUIRE(history.size() >= 12);
  // The series as FindChangePoints reads them: per run, noisy nights left out.
  std::map<std::string, std::vector<double>> series;
  for (const auto& b : history) {
    for (const auto& p : b.platforms) {
      for (const auto& m : p.medians) {
        if (!m.noisy) series[m.model + " " + m.config].push_back(m.median_ms);
      }
    }
  }
  REQUIRE(series.size() >= 6);
  const ChangePointOptions o;
  const auto raw = FindChangePoints(history, o);
  std::set<std::string> alarmed;
  for (const auto& c : raw) alarmed.insert(c.model + " " + c.config);
  for (const auto& c : raw) {
    MESSAGE("false alarm: " << c.model << " " << c.config << " at " << c.build << ", x" << c.Factor() << ", t " << c.t);
  }
  // The alerts' search replays the same nights: these summaries have no
  // process levels, so it reads the series' own night-to-night noise.
  const auto online = FindHistoryChanges(history);
  for (const auto& c : online) {
    MESSAGE("alerts' search, false alarm: " << c.model << " " << c.config << " at build " << c.change.at << ", x"
                                            << c.change.Factor() << ", t " << c.change.t);
  }
  MESSAGE("real history: the alerts' search raised " << online.size() << " changes in " << series.size()
                                                     << " series of " << history.size() << " nights");
  CHECK(online.size() * 2 <= series.size());
  int tries = 0, found15 = 0, found30 = 0;
  double widest = 0;
  for (const auto& entry : series) {
    const std::vector<double>& v = entry.second;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    widest = std::max(widest, *hi / *lo);
    for (size_t k = static_cast<size_t>(o.min_segment); k + static_cast<size_t>(o.min_segment) <= v.size(); ++k) {
      auto planted = [&](double f) {
        std::vector<double> w = v;
        for (size_t i = k; i < w.size(); ++i) w[i] *= f;
        return FoundUp(FindSteps(w, o), k >= 2 ? k - 2 : 0, k + 2);
      };
      ++tries;
      found15 += planted(1.15);
      found30 += planted(1.30);
    }
  }
  MESSAGE("real history: " << history.size() << " builds of one release, " << series.size()
                           << " series; widest night-to-night range max/min " << widest << "; false alarms in "
                           << alarmed.size() << " of " << series.size() << " series (" << raw.size()
                           << " steps); planted at every possible place (" << tries << " histories): +15% found "
                           << 100.0 * found15 / tries << "%, +30% found " << 100.0 * found30 / tries << "%");
  // Bounds from the measurement (tests/data/real_history/README.md): a
  // change that made the search blind on this machine's noise, or alarm on
  // most of its series, fails here.
  CHECK(alarmed.size() * 2 <= series.size());
  CHECK(100.0 * found30 / tries >= 80.0);
}

namespace {
// `runs` series of `n` builds at level 100 with a deterministic wobble of
// `noise` (log scale), each point's level known to `se`; `f(run, build)`
// multiplies the truth.
template <typename F>
std::vector<std::vector<SeriesPoint>> Series(int runs, int n, double noise, double se, F f) {
  std::vector<std::vector<SeriesPoint>> out(static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    for (int b = 0; b < n; ++b) {
      const double wobble = noise * std::sin(1.7 * b + 0.9 * r);
      out[static_cast<size_t>(r)].push_back({static_cast<size_t>(b), 100 * f(r, b) * std::exp(wobble), se});
    }
  }
  return out;
}
}  // namespace

TEST_CASE("online search: a step raised when its third build is in, at its build; the early rule with its second") {
  auto one = Series(1, 20, 0.01, 0.01, [](int, int b) { return b >= 10 ? 1.15 : 1.0; });
  auto found = FindChangesOnline(one, 20);
  REQUIRE(found.size() == 1);
  CHECK(found[0].at == 10);
  CHECK(found[0].before_build == 9);
  // 14 standard errors at its first build; the early rule (9) raises it
  // with its second build, never on one.
  CHECK(found[0].raised == 11);
  CHECK(found[0].Factor() == doctest::Approx(1.15).epsilon(0.02));
  CHECK(found[0].still_present);
  CHECK_FALSE(found[0].recovered_at);
  // At 3 % noise a +15 % step is 4.7 sigma a point: not early; alone once
  // three builds are in (t about 6.6).
  auto noisy = Series(1, 20, 0.03, 0.03, [](int, int b) { return b >= 10 ? 1.15 : 1.0; });
  found = FindChangesOnline(noisy, 20);
  REQUIRE(found.size() == 1);
  CHECK(found[0].at == 10);
  CHECK(found[0].raised == 12);
  CHECK_FALSE(found[0].grouped);
  // Under the threshold (7 %) nothing is raised, however clean.
  CHECK(FindChangesOnline(Series(1, 20, 0.001, 0.001, [](int, int b) { return b >= 10 ? 1.05 : 1.0; }), 20).empty());
}

TEST_CASE("online search: runs at one build corroborate each other; one run alone waits for more builds") {
  // +10 % at a standard error of 4 %: 3.7 sigma with three builds in,
  // under min_t (4) alone, over min_t_group (3) in each of two runs.
  auto step = [](int r, int b) { return r < 2 && b >= 12 ? 1.10 : 1.0; };
  OnlineOptions o;
  auto found = FindChangesOnline(Series(6, 20, 0.0, 0.04, step), 20, o);
  REQUIRE(found.size() == 2);
  for (const auto& c : found) {
    CHECK(c.grouped);
    CHECK(c.at == 12);
    CHECK(c.raised == 14);
  }
  // Two runs are not a group of three: each is raised alone, a night later,
  // when its fourth build at the new level takes it past min_t (4.1).
  o.group_runs = 3;
  found = FindChangesOnline(Series(6, 20, 0.0, 0.04, step), 20, o);
  REQUIRE(found.size() == 2);
  for (const auto& c : found) {
    CHECK_FALSE(c.grouped);
    CHECK(c.at == 12);
    CHECK(c.raised == 15);
  }
}

TEST_CASE("online search: a reverted regression is recovered at the revert; nothing earlier moves later") {
  auto bump = [](int, int b) { return b >= 10 && b < 13 ? 1.25 : 1.0; };
  auto series = Series(1, 24, 0.01, 0.01, bump);
  const auto found = FindChangesOnline(series, 24);
  REQUIRE(found.size() == 2);
  CHECK(found[0].at == 10);
  CHECK(found[0].Factor() > 1.2);
  REQUIRE(found[0].recovered_at);
  CHECK(*found[0].recovered_at == 13);
  CHECK(found[0].reverted);
  CHECK_FALSE(found[0].still_present);
  CHECK(found[1].at == 13);
  CHECK(found[1].Factor() < 1 / 1.2);
  // Prefix-stable: what night n raised, the search of builds 0..n raised
  // alike, at the same build on the same night.
  for (size_t n = 1; n <= 24; ++n) {
    std::vector<std::vector<SeriesPoint>> prefix{{series[0].begin(), series[0].begin() + static_cast<long>(n)}};
    const auto part = FindChangesOnline(prefix, n);
    size_t expected = 0;
    for (const auto& c : found) expected += c.raised < n;
    REQUIRE(part.size() == expected);
    for (size_t i = 0; i < part.size(); ++i) {
      CHECK(part[i].at == found[i].at);
      CHECK(part[i].raised == found[i].raised);
    }
  }
}
