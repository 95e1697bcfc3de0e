#include "core/analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <regex>
#include <set>
#include <stdexcept>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"
#include "core/contract/results_tree.h"
#include "core/stats/mann_whitney.h"
#include "core/stats/stats.h"

namespace torchgauge::core {

namespace fs = std::filesystem;
using nlohmann::json;

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kUnchanged:
      return "unchanged";
    case Verdict::kNoise:
      return "noise";
    case Verdict::kTooFewSamples:
      return "too_few_samples";
    case Verdict::kNoisyRun:
      return "noisy_run";
  }
  return "?";
}

const char* TestUnitName(TestUnit u) { return u == TestUnit::kProcessMedians ? "process_medians" : "samples"; }

double MetricChange::Magnitude() const { return ratio > 0 ? std::abs(std::log(ratio)) : 0; }

namespace {

// JSON, and so compare --json and the site's data, can only carry valid
// UTF-8; a rule that is not would fail when the report is written.
bool IsValidUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

// Largest repetition count ({n}, {n,m}) a rule's regex may use, and no
// backreferences: std::regex expands a{n} into n copies of the state, and
// libstdc++'s regex compiler overflows a signed long on a count or a
// backreference number of 19 digits (undefined behaviour; found by the
// compare fuzzer). Model ids need neither.
constexpr long kMaxRegexRepeat = 1000;

bool RepeatCountsBounded(const std::string& re) {
  for (std::size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '\\') {
      // A backreference (\1): its number goes through the same overflowing parse.
      if (i + 1 < re.size() && std::isdigit(static_cast<unsigned char>(re[i + 1]))) return false;
      ++i;
      continue;
    }
    if (re[i] != '{') continue;
    std::size_t j = i + 1;
    for (int part = 0; part < 2; ++part) {
      const std::size_t start = j;
      while (j < re.size() && std::isdigit(static_cast<unsigned char>(re[j]))) ++j;
      if (j - start > 4 || (j > start && std::stol(re.substr(start, j - start)) > kMaxRegexRepeat)) return false;
      if (part == 0 && j < re.size() && re[j] == ',') {
        ++j;
      } else {
        break;
      }
    }
  }
  return true;
}

}  // namespace

ThresholdRule ParseThresholdRule(const std::string& spec) {
  // Found by the compare fuzzer: an invalid UTF-8 rule was accepted, and
  // writing the JSON report then failed with "cannot write a report".
  if (!IsValidUtf8(spec)) throw std::invalid_argument("threshold rule is not valid UTF-8 text");
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw std::invalid_argument("threshold rule '" + spec + "' must look like metric:regex=percent");
  }
  ThresholdRule rule;
  const std::string lhs = spec.substr(0, eq);
  const auto colon = lhs.find(':');
  rule.metric = colon == std::string::npos ? lhs : lhs.substr(0, colon);
  if (colon != std::string::npos) rule.model_regex = lhs.substr(colon + 1);
  if (rule.metric.empty()) rule.metric = "*";
  if (rule.model_regex.empty()) rule.model_regex = ".*";
  if (rule.metric != "*" && !MetricFromName(rule.metric)) {
    throw std::invalid_argument("threshold rule '" + spec + "': unknown metric '" + rule.metric + "' (use " +
                                MetricNames() + " or *)");
  }
  if (!RepeatCountsBounded(rule.model_regex)) {
    throw std::invalid_argument("threshold rule '" + spec + "': repetition counts in the regex are limited to " +
                                std::to_string(kMaxRegexRepeat));
  }
  try {
    std::regex re(rule.model_regex);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("threshold rule '" + spec + "': bad regex: " + e.what());
  }
  std::size_t used = 0;
  try {
    rule.percent = std::stod(spec.substr(eq + 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != spec.size() - eq - 1 || !(rule.percent > 0)) {
    throw std::invalid_argument("threshold rule '" + spec + "': percent must be a positive number");
  }
  return rule;
}

double CompareOptions::ThresholdFor(Metric m, const std::string& model) const {
  // A metric with a default of its own (the counted ones) keeps it under
  // --threshold; a rule naming it (or "*") overrides either.
  double t = Info(m).default_threshold_percent.value_or(threshold_percent);
  for (const auto& r : rules) {
    if ((r.metric == "*" || r.metric == MetricName(m)) && std::regex_search(model, std::regex(r.model_regex))) {
      t = r.percent;
    }
  }
  return t;
}

void CompareOptions::Validate() const {
  if (!(threshold_percent > 0)) throw std::invalid_argument("--threshold must be a positive percentage");
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("--alpha must be in (0, 1)");
  if (window < 1) throw std::invalid_argument("--window must be >= 1");
  if (persist < 1) throw std::invalid_argument("--persist must be >= 1");
  if (memory_min_abs_bytes < 0) throw std::invalid_argument("memory floor must be >= 0");
  if (!(max_noisy_percent >= 0 && max_noisy_percent <= 100)) {
    throw std::invalid_argument("--max-noisy-percent must be in [0, 100]");
  }
}

std::size_t Comparison::CountVerdict(Verdict v, bool confirmed_only) const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    for (const auto& c : p.changes) n += c.verdict == v && (!confirmed_only || c.confirmed);
  }
  return n;
}

std::size_t Comparison::CountRuns(Verdict v, bool confirmed_only) const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    std::set<RunKey> runs;
    for (const auto& c : p.changes) {
      if (c.verdict == v && (!confirmed_only || c.confirmed)) runs.insert(c.key);
    }
    n += runs.size();
  }
  return n;
}

std::size_t Comparison::WorseStatusCount() const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    for (const auto& s : p.status_changes) n += s.worse;
  }
  return n;
}

bool Comparison::HasRegression() const {
  return CountVerdict(Verdict::kRegression, true) > 0 || WorseStatusCount() > 0;
}

std::size_t Comparison::ComparedRuns() const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    for (const auto& c : p.changes) n += c.metric == Metric::kTime;
  }
  return n;
}

std::size_t Comparison::NoisyRuns() const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    for (const auto& c : p.changes) n += c.metric == Metric::kTime && c.noisy.has_value();
  }
  return n;
}

bool Comparison::Inconclusive() const {
  const std::size_t compared = ComparedRuns();
  return !HasRegression() && compared > 0 &&
         100.0 * static_cast<double>(NoisyRuns()) > options.max_noisy_percent * static_cast<double>(compared);
}

std::size_t Comparison::UntestableRuns() const {
  std::size_t n = 0;
  for (const auto& p : platforms) {
    std::map<RunKey, bool> testable;  // the runs whose time was compared
    for (const auto& c : p.changes) {
      if (c.metric == Metric::kTime) testable.emplace(c.key, false);
    }
    for (const auto& c : p.changes) {
      auto it = testable.find(c.key);
      // p_value: a metric the rank test read (memory has none).
      if (it != testable.end() && c.p_value && MinAchievablePValue(c.n_base, c.n_new) < options.alpha) {
        it->second = true;
      }
    }
    for (const auto& [key, can] : testable) n += !can;
  }
  return n;
}

std::size_t Comparison::TooFewSamplesRuns() const { return CountRuns(Verdict::kTooFewSamples); }

bool Comparison::CannotTell() const {
  if (HasRegression()) return false;
  const std::size_t compared = ComparedRuns();
  return TooFewSamplesRuns() > 0 || (compared > 0 && UntestableRuns() == compared);
}

const char* Comparison::Outcome() const {
  if (HasRegression()) return "regression";
  if (Inconclusive()) return "inconclusive";
  if (CannotTell()) return "cannot_tell";
  return "no_regression";
}

// ---------------------------------------------------------------- loading

std::vector<std::string> ListPlatforms(const TreeBuild& build) {
  std::vector<std::string> out;
  for (const auto& p : build.platforms) {
    if (p.has_manifest_file) out.push_back(p.id);
  }
  return out;
}

std::vector<std::string> ListPlatforms(const fs::path& results, const std::string& build_id) {
  CheckSafeId(build_id, "build id");
  std::error_code ec;
  if (!fs::is_directory(results / build_id, ec)) return {};
  return ListPlatforms(ScanBuild(results, build_id));
}

std::vector<BuildEntry> ListBuilds(const TreeScan& scan, const std::string& platform_id) {
  std::vector<BuildEntry> out;
  for (const auto& b : scan.builds) {
    const TreePlatform* p = b.Find(platform_id);
    if (p && p->has_manifest_file) out.push_back({b.id, b.started_at});
  }
  return out;
}

std::vector<BuildEntry> ListBuilds(const fs::path& results, const std::string& platform_id) {
  CheckSafeId(platform_id, "platform id");
  std::error_code ec;
  if (!fs::is_directory(results, ec))
    throw std::invalid_argument("results directory '" + results.string() + "' not found");
  return ListBuilds(ScanTree(results), platform_id);
}

RunSet LoadRunSet(const TreeBuild& build, const std::string& platform_id) {
  const TreePlatform* p = build.Find(platform_id);
  if (!p || !p->has_manifest_file) {
    throw std::invalid_argument("no results for build '" + build.id + "' on platform '" + platform_id + "' (" +
                                (p ? ManifestPath(p->dir).string() : platform_id + "/manifest.json") + " not found)");
  }
  LoadedPlatform loaded = LoadPlatform(build, *p);
  // A comparison reads nothing that validate refuses: any refused file fails it.
  if (!loaded.problems.empty()) {
    const Problem& first = loaded.problems.front();
    std::string more;
    if (loaded.problems.size() > 1) {
      more =
          " (and " + std::to_string(loaded.problems.size() - 1) + " more refused file(s) in " + p->dir.string() + ")";
    }
    throw FileError(first.file, first.field, first.message + more);
  }
  return MakeRunSet(build.id, loaded);
}

RunSet MakeRunSet(const std::string& build_id, const LoadedPlatform& platform) {
  RunSet set;
  set.build_id = build_id;
  set.platform_id = platform.manifest.platform_id;
  set.dir = platform.dir;
  set.manifest = platform.manifest.present ? ToJson(platform.manifest) : json::object();
  for (const auto& r : platform.runs) set.runs.insert_or_assign(RunKey{r.model.id, r.mode, r.backend, r.precision}, r);
  return set;
}

RunSet LoadRunSet(const fs::path& results, const std::string& build_id, const std::string& platform_id) {
  const fs::path dir = PlatformDir(results, build_id, platform_id);  // checks both ids
  std::error_code ec;
  if (!fs::exists(ManifestPath(dir), ec)) {
    throw std::invalid_argument("no results for build '" + build_id + "' on platform '" + platform_id + "' (" +
                                ManifestPath(dir).string() + " not found)");
  }
  return LoadRunSet(ScanBuild(results, build_id), platform_id);
}

// ---------------------------------------------------------------- rules

namespace {

int StatusRank(const std::string& s) {
  if (s == "ok") return 0;
  if (s == "unsupported") return 1;
  return 2;
}

}  // namespace

namespace {

double Median(const std::vector<double>& v) { return Quantile(v, 0.5); }

// d2(n): the expected range of n standard normal samples (the SPC constant
// behind range-based estimates of sigma), for n = 2..25.
double ExpectedRange(std::size_t n) {
  static constexpr double kD2[] = {1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336,
                                   3.407, 3.472, 3.532, 3.588, 3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931};
  return kD2[std::min<std::size_t>(std::max<std::size_t>(n, 2), 25) - 2];
}

// How far apart values that should agree are (one build's per-process
// medians, or a window's per-build medians), as the log-spread five of them
// would show: log(max/min) scaled by d2(5)/d2(n). The range of 2 or 3 values
// understates the spread they come from; the scaling puts every count on the
// footing of five processes.
std::optional<double> LogBand(const std::vector<double>& v) {
  if (v.size() < 2) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (!(*lo > 0)) return std::nullopt;
  return std::log(*hi / *lo) * ExpectedRange(5) / ExpectedRange(v.size());
}

double BandPercent(double log_band) { return std::expm1(log_band) * 100.0; }

// Every metric with more than one value per run (timed samples, counted
// steps) has a spread of medians (per process, or per build of a window)
// that bounds its noise; a peak has one value.
bool HasNoiseBand(Metric m) { return Info(m).rule != JudgeRule::kSingleValue; }

// The values the rank test compares for one run: one per worker process
// (its median, as a time or as a rate), since steps of one process share
// its memory layout, core placement and the minute it ran in and so are not
// independent of each other. Empty where the run has no per-process medians
// (one process, or a memory metric): the test then reads the step samples.
std::vector<double> ProcessUnits(const RunResult& r, Metric m) {
  std::vector<double> medians = MetricProcessMedians(r, m);
  return medians.size() < 2 ? std::vector<double>{} : medians;
}

}  // namespace

std::optional<double> NoiseBandPercent(const std::vector<double>& medians) {
  if (auto b = LogBand(medians)) return BandPercent(*b);
  return std::nullopt;
}

namespace {
// Whether two results of one run key measured the same workload: the same
// batch size, and both at smoke sizes or both not.
bool Smoke(const RunResult& r) { return r.settings && r.settings->smoke; }
bool SameConfiguration(const RunResult& a, const RunResult& b) {
  return a.batch_size == b.batch_size && Smoke(a) == Smoke(b);
}

// The window's result of `key` that a comparison may read against `r`: ok
// and of the same configuration; nullptr otherwise.
const RunResult* Comparable(const RunSet& build, const RunKey& key, const RunResult& r) {
  auto it = build.runs.find(key);
  if (it == build.runs.end() || it->second.status != "ok" || !SameConfiguration(it->second, r)) return nullptr;
  return &it->second;
}

// The compared runs of `key` that are noisy, named by build; "" when none is.
std::string NoisyRuns(const RunResult& r, const RunSet& next, const std::vector<const RunSet*>& window,
                      const RunKey& key) {
  std::string out;
  auto add = [&out](const RunResult& run, const std::string& side) {
    const NoiseVerdict v = RunNoise(run);
    if (v.noisy) out += (out.empty() ? "" : "; ") + side + ": " + v.reason;
  };
  add(r, "new build " + next.build_id);
  for (const RunSet* b : window) {
    if (const RunResult* base = Comparable(*b, key, r)) add(*base, "base build " + b->build_id);
  }
  return out;
}

// Presence and status against the newest baseline build.
void ComparePresence(const std::vector<const RunSet*>& base_window, const RunSet& next, PlatformComparison& pc) {
  const RunSet& base = *base_window.back();
  for (const auto& [key, r] : base.runs) {
    if (!next.runs.count(key)) pc.presence.push_back({key, false, r.status});
  }
  for (const auto& [key, r] : next.runs) {
    auto it = base.runs.find(key);
    if (it == base.runs.end()) {
      bool anywhere = false;
      for (const RunSet* b : base_window) anywhere |= b->runs.count(key) > 0;
      if (!anywhere) pc.presence.push_back({key, true, r.status});
      continue;
    }
    if (!SameConfiguration(it->second, r)) {
      pc.config_changes.push_back(
          {key, it->second.batch_size, r.batch_size, Smoke(it->second), Smoke(r), it->second.status, r.status});
    } else if (it->second.status != r.status) {
      pc.status_changes.push_back({key, r.batch_size, r.device, r.settings, it->second.status, r.status, r.reason,
                                   StatusRank(r.status) > StatusRank(it->second.status)});
    }
  }
}

// One metric of one run over the baseline window: each build's median, the
// builds' samples pooled, and the widest log-band the data shows.
struct Baseline {
  std::vector<double> pooled, per_build;
  // The window's per-process medians (ProcessUnits); `all_processes` is
  // false when a build of the window has none, and the test then pools samples.
  std::vector<double> processes;
  bool all_processes = true;
  std::optional<double> band;
};

Baseline MetricBaseline(const RunResult& r, const RunKey& key, Metric m, const std::vector<const RunSet*>& window) {
  Baseline out;
  auto widen = [&out](const std::vector<double>& v) {
    if (auto s = LogBand(v)) out.band = std::max(out.band.value_or(0.0), *s);
  };
  widen(MetricProcessMedians(r, m));
  for (const RunSet* b : window) {
    const RunResult* base = Comparable(*b, key, r);
    if (!base) continue;
    auto s = MetricSamples(*base, m);
    if (s.empty()) continue;
    out.per_build.push_back(Median(s));
    out.pooled.insert(out.pooled.end(), s.begin(), s.end());
    const std::vector<double> units = ProcessUnits(*base, m);
    out.all_processes = out.all_processes && !units.empty();
    out.processes.insert(out.processes.end(), units.begin(), units.end());
    widen(MetricProcessMedians(*base, m));
  }
  if (HasNoiseBand(m) && !out.per_build.empty()) widen(out.per_build);
  return out;
}

// The verdict on a change over its threshold: memory needs only a large
// enough absolute difference; times and rates need the rank test and, with
// a band, a ratio beyond it.
// The rank test's two sides are the per-process medians where both have
// them (see ProcessUnits), else the step samples; n_base and n_new count
// what was tested.
void Judge(MetricChange& c, const Baseline& base, const RunResult& r, const std::vector<double>& new_samples, bool over,
           const CompareOptions& options) {
  const bool worse = LowerIsBetter(c.metric) ? c.ratio > 1 : c.ratio < 1;
  const JudgeRule rule = Info(c.metric).rule;
  if (rule == JudgeRule::kSingleValue) {
    const bool big_enough = std::abs(c.new_value - c.base_value) >= static_cast<double>(options.memory_min_abs_bytes);
    c.verdict = over && big_enough ? (worse ? Verdict::kRegression : Verdict::kImprovement) : Verdict::kUnchanged;
    return;
  }
  if (rule == JudgeRule::kCounted) {
    // Counts repeat within a fraction of the threshold, so no rank test:
    // a change over the threshold and beyond the processes' spread is real.
    c.n_base = base.pooled.size();
    c.n_new = new_samples.size();
    if (base.band) c.noise_percent = BandPercent(*base.band);
    const bool beyond_band = !base.band || std::abs(std::log(c.ratio)) > *base.band;
    c.verdict = !over         ? Verdict::kUnchanged
                : beyond_band ? (worse ? Verdict::kRegression : Verdict::kImprovement)
                              : Verdict::kNoise;
    return;
  }
  const std::vector<double> new_units = ProcessUnits(r, c.metric);
  const bool by_process = base.all_processes && !base.processes.empty() && !new_units.empty();
  const std::vector<double>& a = by_process ? base.processes : base.pooled;
  const std::vector<double>& b = by_process ? new_units : new_samples;
  c.test_unit = by_process ? TestUnit::kProcessMedians : TestUnit::kSamples;
  c.n_base = a.size();
  c.n_new = b.size();
  const MannWhitneyResult t = MannWhitneyU(a, b);
  c.p_value = t.p_value;
  c.exact = t.exact;
  if (base.band) c.noise_percent = BandPercent(*base.band);
  const bool beyond_band = !base.band || std::abs(std::log(c.ratio)) > *base.band;
  if (!over) {
    c.verdict = Verdict::kUnchanged;
  } else if (c.noisy && !options.judge_noisy_runs) {
    c.verdict = Verdict::kNoisyRun;
  } else if (MinAchievablePValue(c.n_base, c.n_new) >= options.alpha) {
    c.verdict = Verdict::kTooFewSamples;
  } else if (t.p_value < options.alpha && beyond_band) {
    c.verdict = worse ? Verdict::kRegression : Verdict::kImprovement;
  } else {
    c.verdict = Verdict::kNoise;
  }
}

// One metric of one "ok" run against the window; unset where either side
// has no value or the baseline is not positive (a ratio needs one).
std::optional<MetricChange> CompareMetric(const RunResult& r, const RunKey& key, Metric m,
                                          const std::vector<const RunSet*>& window, const std::string& noisy,
                                          const CompareOptions& options) {
  const std::vector<double> new_samples = MetricSamples(r, m);
  if (new_samples.empty()) return std::nullopt;
  const Baseline base = MetricBaseline(r, key, m, window);
  if (base.per_build.empty()) return std::nullopt;
  MetricChange c;
  c.key = key;
  c.metric = m;
  c.batch_size = r.batch_size;
  c.device = r.device;
  c.settings = r.settings;
  c.base_value = Median(base.per_build);
  c.new_value = Median(new_samples);
  c.n_base = base.pooled.size();
  c.n_new = new_samples.size();
  c.threshold_percent = options.ThresholdFor(m, key.model);
  if (!(c.base_value > 0)) return std::nullopt;
  c.ratio = c.new_value / c.base_value;
  c.delta_percent = (c.ratio - 1.0) * 100.0;
  // Only timed samples are moved by the machine's other load.
  if (!noisy.empty() && Info(m).rule == JudgeRule::kRankTest) c.noisy = noisy;
  Judge(c, base, r, new_samples, std::abs(c.delta_percent) >= c.threshold_percent, options);
  return c;
}

// A flagged counted change: the functions that moved between the newest
// comparable baseline run's profile and the new run's. Reads two profiles
// from disk, so it runs once per reported comparison (ComparePlatform), not
// inside the pure rules that the persistence streak repeats.
void AddFunctions(MetricChange& c, const RunResult& r, const RunSet& next, const std::vector<const RunSet*>& window) {
  if (Info(c.metric).rule != JudgeRule::kCounted ||
      (c.verdict != Verdict::kRegression && c.verdict != Verdict::kImprovement)) {
    return;
  }
  const RunResult* base = nullptr;
  const RunSet* base_set = nullptr;
  for (const RunSet* b : window) {
    if (const RunResult* x = Comparable(*b, c.key, r)) {
      base = x;
      base_set = b;
    }
  }
  auto profile = [](const RunResult& run, const RunSet& set) -> std::optional<fs::path> {
    if (!run.counted || !run.counted->profile_file || set.dir.empty()) return std::nullopt;
    return set.dir / *run.counted->profile_file;
  };
  const auto a = base ? profile(*base, *base_set) : std::nullopt, b = profile(r, next);
  if (!a || !b) {
    c.functions_reason = "no Callgrind profile kept for the " + std::string(!a ? "baseline" : "new") + " run";
    return;
  }
  try {
    c.functions = DiffFunctions(ReadProfile(*a), ReadProfile(*b));
  } catch (const std::exception& e) {
    c.functions_reason = e.what();
  }
}

}  // namespace

PlatformComparison CompareRunSets(const std::vector<const RunSet*>& base_window, const RunSet& next,
                                  const CompareOptions& options) {
  if (base_window.empty()) throw std::invalid_argument("empty baseline window");
  PlatformComparison pc;
  pc.platform_id = next.platform_id;
  for (const RunSet* b : base_window) pc.base_builds.push_back(b->build_id);
  pc.new_build = next.build_id;
  pc.streak = {next.build_id};
  pc.base_manifest = base_window.back()->manifest;
  pc.new_manifest = next.manifest;
  ComparePresence(base_window, next, pc);

  using Config = std::tuple<std::string, std::string, std::string>;
  std::map<Config, std::vector<double>> time_ratios, instruction_ratios, cycle_ratios;
  for (const auto& [key, r] : next.runs) {
    if (r.status != "ok") continue;
    const std::string noisy = NoisyRuns(r, next, base_window, key);
    for (const MetricInfo& info : Metrics()) {
      const Metric m = info.metric;
      auto c = CompareMetric(r, key, m, base_window, noisy, options);
      if (!c) continue;
      const Config config{key.mode, key.backend, key.precision};
      if (m == Metric::kTime && c->new_value > 0) time_ratios[config].push_back(c->ratio);
      if (m == Metric::kInstructions && c->new_value > 0) instruction_ratios[config].push_back(c->ratio);
      if (m == Metric::kEstimatedCycles && c->new_value > 0) cycle_ratios[config].push_back(c->ratio);
      pc.changes.push_back(std::move(*c));
    }
  }
  for (const auto& [k, ratios] : time_ratios) {
    pc.summary.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), ratios.size(), GeoMean(ratios)});
  }
  for (const auto& [k, ratios] : instruction_ratios) {
    const auto cycles = cycle_ratios.find(k);
    pc.counted_summary.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), ratios.size(), GeoMean(ratios),
                                  cycles == cycle_ratios.end() ? 1.0 : GeoMean(cycles->second)});
  }
  return pc;
}

namespace {
// The window [i_first, i_base] against i_new, then persistence over the
// builds after i_base up to i_new (see the header comment).
PlatformComparison ComparePlatform(std::size_t i_first, std::size_t i_base, std::size_t i_new,
                                   const std::function<const RunSet&(std::size_t)>& load,
                                   const CompareOptions& options) {
  std::vector<const RunSet*> window;
  for (std::size_t i = i_first; i <= i_base; ++i) window.push_back(&load(i));
  const RunSet& next = load(i_new);
  PlatformComparison pc = CompareRunSets(window, next, options);
  for (auto& c : pc.changes) AddFunctions(c, next.runs.at(c.key), next, window);
  // Persistence: the builds after the baseline, ending at the new one, newest first.
  std::vector<std::size_t> streak = {i_new};
  for (std::size_t i = i_new; i-- > i_base + 1 && static_cast<int>(streak.size()) < options.persist;) {
    streak.push_back(i);
  }
  std::vector<std::set<std::pair<RunKey, Metric>>> flagged;  // per older streak build, newest first
  for (std::size_t s = 1; s < streak.size(); ++s) {
    PlatformComparison older = CompareRunSets(window, load(streak[s]), options);
    std::set<std::pair<RunKey, Metric>> f;
    for (const auto& c : older.changes) {
      if (c.verdict == Verdict::kRegression) f.insert({c.key, c.metric});
    }
    flagged.push_back(std::move(f));
  }
  for (auto& c : pc.changes) {
    if (c.verdict != Verdict::kRegression) continue;
    c.seen_in = 1;
    for (const auto& f : flagged) {
      if (!f.count({c.key, c.metric})) break;
      ++c.seen_in;
    }
    c.confirmed = c.seen_in >= options.persist;
  }
  pc.streak.clear();
  for (auto it = streak.rbegin(); it != streak.rend(); ++it) pc.streak.push_back(load(*it).build_id);
  return pc;
}
}  // namespace

PlatformComparison CompareWithHistory(const std::vector<const RunSet*>& history, const CompareOptions& options) {
  options.Validate();
  if (history.size() < 2) throw std::invalid_argument("a comparison needs a baseline build and a new build");
  const std::size_t i_new = history.size() - 1;
  const std::size_t persist = static_cast<std::size_t>(options.persist);
  const std::size_t i_base = i_new > persist ? i_new - persist : 0;
  const std::size_t window = static_cast<std::size_t>(options.window);
  const std::size_t i_first = i_base + 1 > window ? i_base + 1 - window : 0;
  return ComparePlatform(
      i_first, i_base, i_new, [&](std::size_t i) -> const RunSet& { return *history[i]; }, options);
}

namespace {

// The platforms to compare: --platform, or every platform of the new build.
std::vector<std::string> PlatformsToCompare(const CompareRequest& req, const TreeScan& scan) {
  if (req.platform) {
    CheckSafeId(*req.platform, "--platform");
    return {*req.platform};
  }
  std::vector<std::string> platforms;
  const TreeBuild* nb = nullptr;
  for (const auto& b : scan.builds) nb = b.id == req.new_build ? &b : nb;
  if (nb) platforms = ListPlatforms(*nb);
  if (platforms.empty()) {
    throw std::invalid_argument("build '" + req.new_build + "' has no results under '" + req.results.string() + "'");
  }
  return platforms;
}

// The places of the baseline and the new build in one platform's build order.
std::pair<long, long> BaseAndNew(const CompareRequest& req, const std::vector<BuildEntry>& builds,
                                 const std::string& platform) {
  auto index_of = [&](const std::string& id) -> long {
    for (std::size_t i = 0; i < builds.size(); ++i) {
      if (builds[i].build_id == id) return static_cast<long>(i);
    }
    return -1;
  };
  const long i_new = index_of(req.new_build);
  if (i_new < 0) {
    throw std::invalid_argument("build '" + req.new_build + "' has no results on platform '" + platform + "'");
  }
  if (!req.base) {
    if (i_new == 0) {
      throw std::invalid_argument("build '" + req.new_build + "' is the first build on platform '" + platform +
                                  "': there is nothing to compare it with (pass --base)");
    }
    return {std::max(0L, i_new - req.options.persist), i_new};
  }
  const long i_base = index_of(*req.base);
  if (i_base < 0) {
    throw std::invalid_argument("build '" + *req.base + "' has no results on platform '" + platform + "'");
  }
  if (i_base == i_new) throw std::invalid_argument("--base and --new are the same build");
  return {i_base, i_new};
}

PlatformComparison CompareOnePlatform(const CompareRequest& req, const TreeScan& scan, const std::string& platform) {
  const auto builds = ListBuilds(scan, platform);
  // A refused manifest of the new build is the error to report, before
  // its (then unknown) place in the build order is.
  for (const auto& b : scan.builds) {
    const TreePlatform* tp = b.id == req.new_build ? b.Find(platform) : nullptr;
    if (tp && tp->manifest_problem && tp->has_manifest_file) {
      const Problem& pr = *tp->manifest_problem;
      throw FileError(pr.file, pr.field, pr.message);
    }
  }
  const auto [i_base, i_new] = BaseAndNew(req, builds, platform);
  const long i_first = std::max(0L, i_base - req.options.window + 1);
  std::map<std::string, RunSet> cache;
  auto load = [&](std::size_t i) -> const RunSet& {
    const std::string& id = builds[i].build_id;
    auto it = cache.find(id);
    if (it == cache.end()) {
      const TreeBuild* tb = nullptr;
      for (const auto& b : scan.builds) tb = b.id == id ? &b : tb;
      it = cache.emplace(id, LoadRunSet(*tb, platform)).first;
    }
    return it->second;
  };
  return ComparePlatform(static_cast<std::size_t>(i_first), static_cast<std::size_t>(i_base),
                         static_cast<std::size_t>(i_new), load, req.options);
}

}  // namespace

Comparison CompareBuilds(const CompareRequest& req) {
  req.options.Validate();
  CheckSafeId(req.new_build, "--new build id");
  if (req.base) CheckSafeId(*req.base, "--base build id");
  Comparison out;
  out.new_build = req.new_build;
  out.options = req.options;
  // The tree is listed and every manifest parsed once, here.
  std::error_code ec;
  if (!fs::is_directory(req.results, ec)) {
    throw std::invalid_argument("results directory '" + req.results.string() + "' not found");
  }
  const TreeScan scan = ScanTree(req.results);
  for (const auto& platform : PlatformsToCompare(req, scan)) {
    out.platforms.push_back(CompareOnePlatform(req, scan, platform));
  }
  // The label names the baseline of the first platform (usually the only one).
  const auto& bb = out.platforms.front().base_builds;
  out.base_label = bb.size() == 1 ? bb.front() : "median of " + bb.front() + ".." + bb.back();
  return out;
}

// ---------------------------------------------------------------- JSON

namespace {

json KeyJson(const RunKey& k) {
  return {{"model", k.model}, {"mode", k.mode}, {"backend", k.backend}, {"precision", k.precision}};
}

json ChangeJson(const MetricChange& m) {
  json mj = KeyJson(m.key);
  mj["metric"] = MetricName(m.metric);
  mj["unit"] = MetricUnit(m.metric);
  mj["lower_is_better"] = LowerIsBetter(m.metric);
  mj["batch_size"] = m.batch_size;
  mj["device"] = m.device;
  mj["base"] = m.base_value;
  mj["new"] = m.new_value;
  mj["ratio"] = m.ratio;
  mj["delta_percent"] = m.delta_percent;
  mj["threshold_percent"] = m.threshold_percent;
  mj["p_value"] = Opt(m.p_value);
  mj["noise_percent"] = Opt(m.noise_percent);
  mj["exact_test"] = m.exact;
  mj["test_unit"] = m.p_value ? json(TestUnitName(m.test_unit)) : json(nullptr);
  mj["n_base"] = m.n_base;
  mj["n_new"] = m.n_new;
  mj["verdict"] = VerdictName(m.verdict);
  mj["noisy"] = Opt(m.noisy);
  if (m.functions) mj["functions"] = ToJson(*m.functions);
  if (m.functions_reason) mj["functions_reason"] = *m.functions_reason;
  mj["confirmed"] = m.confirmed;
  mj["seen_in"] = m.seen_in;
  return mj;
}

json PlatformJson(const PlatformComparison& p) {
  json pj;
  pj["platform_id"] = p.platform_id;
  pj["base_builds"] = p.base_builds;
  pj["new_build"] = p.new_build;
  pj["streak"] = p.streak;
  pj["base_manifest"] = p.base_manifest;
  pj["new_manifest"] = p.new_manifest;
  pj["changes"] = json::array();
  for (const auto& m : p.changes) pj["changes"].push_back(ChangeJson(m));
  pj["status_changes"] = json::array();
  for (const auto& s : p.status_changes) {
    json sj = KeyJson(s.key);
    sj["batch_size"] = s.batch_size;
    sj["device"] = s.device;
    sj["base_status"] = s.base_status;
    sj["new_status"] = s.new_status;
    sj["reason"] = Opt(s.reason);
    sj["worse"] = s.worse;
    pj["status_changes"].push_back(sj);
  }
  pj["presence"] = json::array();
  for (const auto& s : p.presence) {
    json sj = KeyJson(s.key);
    sj["change"] = s.appeared ? "appeared" : "disappeared";
    sj["status"] = s.status;
    pj["presence"].push_back(sj);
  }
  if (!p.config_changes.empty()) {
    pj["config_changes"] = json::array();
    for (const auto& s : p.config_changes) {
      json sj = KeyJson(s.key);
      sj["base_batch_size"] = s.base_batch_size;
      sj["new_batch_size"] = s.new_batch_size;
      sj["base_smoke"] = s.base_smoke;
      sj["new_smoke"] = s.new_smoke;
      sj["base_status"] = s.base_status;
      sj["new_status"] = s.new_status;
      pj["config_changes"].push_back(sj);
    }
  }
  pj["summary"] = json::array();
  for (const auto& s : p.summary) {
    pj["summary"].push_back({{"mode", s.mode},
                             {"backend", s.backend},
                             {"precision", s.precision},
                             {"runs", s.runs},
                             {"geomean_time_ratio", s.geomean_time_ratio}});
  }
  pj["counted_summary"] = json::array();
  for (const auto& s : p.counted_summary) {
    pj["counted_summary"].push_back({{"mode", s.mode},
                                     {"backend", s.backend},
                                     {"precision", s.precision},
                                     {"runs", s.runs},
                                     {"geomean_instructions_ratio", s.geomean_instructions_ratio},
                                     {"geomean_cycles_ratio", s.geomean_cycles_ratio}});
  }
  return pj;
}

}  // namespace

json ToJson(const Comparison& c) {
  json j;
  j["schema_version"] = 1;
  j["kind"] = "torchgauge.comparison";
  j["base"] = c.base_label;
  j["new"] = c.new_build;
  j["options"] = {{"threshold_percent", c.options.threshold_percent},
                  {"alpha", c.options.alpha},
                  {"window", c.options.window},
                  {"persist", c.options.persist},
                  {"memory_min_abs_bytes", c.options.memory_min_abs_bytes},
                  {"max_noisy_percent", c.options.max_noisy_percent},
                  {"rules", json::array()}};
  for (const auto& r : c.options.rules) {
    j["options"]["rules"].push_back({{"metric", r.metric}, {"model_regex", r.model_regex}, {"percent", r.percent}});
  }
  // Counted per run, as the Markdown's title and the site count them (one
  // slowed run moves its time and the throughput of the same samples); the
  // metrics behind them are the *_metrics counts.
  j["regressions"] = c.CountRuns(Verdict::kRegression, true);
  j["unconfirmed_regressions"] = c.CountRuns(Verdict::kRegression) - c.CountRuns(Verdict::kRegression, true);
  j["improvements"] = c.CountRuns(Verdict::kImprovement);
  j["regressed_metrics"] = c.CountVerdict(Verdict::kRegression, true);
  j["unconfirmed_regressed_metrics"] =
      c.CountVerdict(Verdict::kRegression) - c.CountVerdict(Verdict::kRegression, true);
  j["improved_metrics"] = c.CountVerdict(Verdict::kImprovement);
  j["worse_statuses"] = c.WorseStatusCount();
  j["has_regression"] = c.HasRegression();
  j["compared_runs"] = c.ComparedRuns();
  j["noisy_runs"] = c.NoisyRuns();
  j["inconclusive"] = c.Inconclusive();
  j["untestable_runs"] = c.UntestableRuns();
  j["too_few_samples_runs"] = c.TooFewSamplesRuns();
  j["cannot_tell"] = c.CannotTell();
  j["outcome"] = c.Outcome();
  j["platforms"] = json::array();
  for (const auto& p : c.platforms) j["platforms"].push_back(PlatformJson(p));
  return j;
}

}  // namespace torchgauge::core
