// Noise-aware comparison of a new build against a baseline on the same
// platform: the regression detector's rules, in one LibTorch-free place
// shared by `torchgauge-report compare`, the site and bisection.
//
// Rules (DESIGN: asv's "detect" stage; the numbers are the defaults):
//  - Runs are matched by RunKey (model, mode, backend, precision). Metrics
//    are compared only where the run is "ok" on both sides.
//  - time (timing.samples_ms, lower is better) and throughput (samples per
//    second per timed step, higher is better): the relative change of the
//    medians must reach the threshold (7%), AND a two-sided Mann-Whitney U
//    test must give p < alpha (0.05). Over the threshold but p >= alpha is
//    "noise". When even complete separation could not reach alpha
//    (MinAchievablePValue > alpha, e.g. 3 vs 3 values) the verdict is "too
//    few samples to tell", never a regression.
//  - The test's unit is the worker process: where both sides were measured
//    in several processes (timing.process_medians_ms), it compares the
//    processes' medians (5 against 5 can reach p 0.008), since the steps of
//    one process share its memory layout, core placement and the minute it
//    ran in and are not independent draws (50 pooled steps of 5 processes
//    reached p 5e-16 on the same build collected twice). Where a side ran in
//    one process, the step samples are all there is and the test reads them.
//  - Noise band (time and throughput): samples within one process miss the
//    process-to-process and build-to-build variation (memory layout, core
//    placement, host load), which on shared machines is larger than 7%.
//    Where the data shows that variation, a change must also exceed it:
//    the spread max/min of each build's per-process medians (collector
//    --processes N > 1) and, with window W > 1, of the window's per-build
//    medians. Each spread is put on the footing of five values (its log
//    scaled by d2(5)/d2(n), d2 the expected range of n normal samples), since
//    the range of 2 or 3 values understates the spread they come from. The
//    widest is the band; a change inside it is "noise" (noise_percent says
//    how wide the band was). With one process per run and W = 1 there is no
//    band and the rules above decide alone.
//  - ttft, tpot (lower is better) and tokens_per_s (higher is better): a
//    generative run's generation (core/stats/generation.h): its TTFT samples
//    (one per generation), its TPOT samples (every decode step) and its
//    generations' tokens per second, judged as time is: threshold, the rank
//    test, the noise band, noisy runs. Pooled from several worker processes,
//    each process's median is the test's unit and widens the band, from the
//    generation's process_generations (ProcessMedians in generation.h).
//  - cpu_memory (peak RSS) and gpu_memory (peak allocated), lower is better:
//    one value per run, so no test is possible. A change counts when the
//    relative change reaches the threshold AND the absolute change is at
//    least memory_min_abs_bytes (1 MiB), which keeps tiny models' allocator
//    jitter out. p_value is null for these.
//  - Noisy runs (core::RunNoise: the timing CoV or the machine's other load
//    passed its threshold) on either side: a time or throughput change over
//    the threshold is "noisy_run", reported but never a regression or an
//    improvement, as with too few samples. `noisy` names the runs and why.
//    With judge_noisy_runs (bisect: a step must be good or bad) they are
//    judged by the rules above and `noisy` still names them.
//    Memory metrics are judged as usual: a busy machine does not move a
//    run's own peak memory.
//  - A status change (ok -> error, ...) is always flagged; a run present on
//    only one side is flagged as appeared / disappeared.
//  - Baseline: by default the build before --new (builds in the one order of
//    core/contract/results_tree.h: the build's earliest manifest started_at, then
//    id). With window W > 1 it is the W builds ending there: the reference
//    value is the median of the per-build medians (robust to one odd
//    build), and the test pools their process medians (or samples).
//  - instructions and est_cycles (lower is better): a counted run's steps
//    under Callgrind (core/stats/counted.h). Counts repeat within about
//    0.1 %, so no rank test: a change counts when it reaches the metric's own
//    threshold (1 %, core/analysis/metrics.h; rules override it, --threshold
//    does not) and lies beyond the band of the processes' medians (and the
//    window's per-build medians) where there is one. p_value is null.
//  - Persistence: with persist N the baseline moves back to the build before
//    the N-build streak that ends at --new; a regression is "confirmed" when
//    each build of that streak regresses against the same baseline (a step
//    change then stays visible; comparing neighbours would see it once).
//    Without --base and N = 1 this is the plain previous-build comparison.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/function_diff.h"
#include "core/analysis/metrics.h"
#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/contract/results_tree.h"

namespace torchgauge::core {

// A threshold for one metric ("*" for all) and the models whose id matches
// model_regex (ECMAScript, searched, so use ^...$ to anchor).
// The default relative threshold of a change, in percent: the one place it
// is written (CompareOptions and the CLI take it from here).
inline constexpr double kDefaultThresholdPercent = 7.0;

struct ThresholdRule {
  std::string metric = "*";
  std::string model_regex = ".*";
  double percent = kDefaultThresholdPercent;  // always set by ParseThresholdRule
};
// Parses 'metric:regex=pct' ('time:^hf_.*=10', '*:.*=5', 'gpu_memory=3').
// Throws std::invalid_argument with what is wrong.
ThresholdRule ParseThresholdRule(const std::string& spec);

struct CompareOptions {
  double threshold_percent = kDefaultThresholdPercent;
  std::vector<ThresholdRule> rules;  // the last matching rule wins
  double alpha = 0.05;
  int window = 1;
  int persist = 1;
  int64_t memory_min_abs_bytes = int64_t{1} << 20;
  bool judge_noisy_runs = false;  // see "Noisy runs" above
  // Inconclusive: when more than this share (percent) of the runs whose time
  // was compared is noisy on either side, a comparison without a regression
  // says it cannot tell, instead of "no regressions" (see Inconclusive()).
  double max_noisy_percent = 25;
  double ThresholdFor(Metric m, const std::string& model) const;
  void Validate() const;  // throws std::invalid_argument
};

enum class Verdict {
  kRegression,
  kImprovement,
  kUnchanged,      // under the threshold
  kNoise,          // over the threshold, not significant
  kTooFewSamples,  // over the threshold, the test cannot reach alpha
  kNoisyRun,       // over the threshold, a compared run is noisy (time and throughput)
};
// The noise band one set of medians that should agree shows (a run's
// per-process medians), in percent: what the comparison uses for it. Null
// for fewer than two values.
std::optional<double> NoiseBandPercent(const std::vector<double>& medians);

// regression | improvement | unchanged | noise | too_few_samples | noisy_run
const char* VerdictName(Verdict v);

// What the rank test compared (see "The test's unit" above).
enum class TestUnit { kSamples, kProcessMedians };
const char* TestUnitName(TestUnit u);  // samples | process_medians

struct MetricChange {
  RunKey key;
  Metric metric = Metric::kTime;
  int64_t batch_size = 1;
  std::string device;
  std::optional<RunSettings> settings;  // the new run's, for the reproduction command
  double base_value = 0, new_value = 0;
  double ratio = 1;                                     // new / base
  double delta_percent = 0;                             // (ratio - 1) * 100
  double threshold_percent = kDefaultThresholdPercent;  // the one that applied
  std::optional<double> p_value;                        // null for memory metrics
  // The noise band (max/min - 1, in percent) where the data shows one; null
  // for memory metrics and for single-process runs compared with W = 1.
  std::optional<double> noise_percent;
  // Time and throughput: the compared runs that are noisy and why ("new
  // build b3: CoV 23 % >= 10 %"); unset when every compared run is clean.
  std::optional<std::string> noisy;
  bool exact = false;  // exact U distribution used
  TestUnit test_unit = TestUnit::kSamples;
  std::size_t n_base = 0, n_new = 0;  // the values tested (processes or samples); memory: 1/1
  Verdict verdict = Verdict::kUnchanged;
  // Counted metrics, flagged changes: the functions that moved between the
  // newest baseline build's profile and the new one's (core/analysis/
  // function_diff.h); unset where either run kept no profile.
  std::optional<FunctionDiff> functions;
  std::optional<std::string> functions_reason;  // why `functions` is unset for a flagged counted change
  bool confirmed = true;                        // regressions only: seen in `persist` consecutive builds
  int seen_in = 1;                              // consecutive builds (ending at new) with this regression
  // |log ratio|: the sort key for "sorted by magnitude".
  double Magnitude() const;
};

struct StatusChange {
  RunKey key;
  int64_t batch_size = 1;
  std::string device;
  std::optional<RunSettings> settings;  // the new run's
  std::string base_status, new_status;
  std::optional<std::string> reason;  // the new side's reason
  bool worse = false;                 // ok < unsupported < error/timeout/oom/crashed
};

struct PresenceChange {
  RunKey key;
  bool appeared = false;  // false: disappeared
  std::string status;     // the status on the side where it exists
};

// A run whose configuration differs between the builds (its batch size, or
// smoke sizes against full ones): its figures measure another workload, so
// they are not compared, and the change is reported as what it is, never as
// a regression or an improvement.
struct ConfigChange {
  RunKey key;
  int64_t base_batch_size = 1, new_batch_size = 1;
  bool base_smoke = false, new_smoke = false;
  std::string base_status, new_status;
};

struct SummaryRow {
  std::string mode, backend, precision;
  std::size_t runs = 0;
  double geomean_time_ratio = 1;  // geomean of new/base median times
};

// The counted runs' summary (settings.measure "counted", which have no time):
// geomean of new/base median instructions and estimated cycles per step.
struct CountedSummaryRow {
  std::string mode, backend, precision;
  std::size_t runs = 0;
  double geomean_instructions_ratio = 1, geomean_cycles_ratio = 1;
};

struct PlatformComparison {
  std::string platform_id;
  std::vector<std::string> base_builds;  // the window, oldest first
  std::string new_build;
  std::vector<std::string> streak;             // builds checked for persistence, oldest first
  nlohmann::json base_manifest, new_manifest;  // base: the newest build of the window
  std::vector<MetricChange> changes;           // every compared metric, every verdict
  std::vector<StatusChange> status_changes;
  std::vector<PresenceChange> presence;
  std::vector<CountedSummaryRow> counted_summary;  // per mode, backend and precision; empty without counted runs
  std::vector<ConfigChange> config_changes;
  std::vector<SummaryRow> summary;
};

struct Comparison {
  std::string base_label;  // "b1" or "median of b1..b3"
  std::string new_build;
  CompareOptions options;
  std::vector<PlatformComparison> platforms;
  std::size_t CountVerdict(Verdict v, bool confirmed_only = false) const;
  // Runs (a platform and a run key) with at least one metric of verdict v:
  // one slowed run is one regression, however many of its metrics (time and
  // the throughput computed from the same samples, memory) moved.
  std::size_t CountRuns(Verdict v, bool confirmed_only = false) const;
  std::size_t WorseStatusCount() const;
  // What the CI exit code reads: a confirmed regression or a status that got worse.
  bool HasRegression() const;
  // Runs (platform and run key) whose time was compared (ok on both sides,
  // same configuration), and those of them that were noisy on either side.
  std::size_t ComparedRuns() const;
  std::size_t NoisyRuns() const;
  // No regression, but more than options.max_noisy_percent of the compared
  // runs were noisy: a noisy run can never regress, so "no regressions" would
  // hide what the machine kept from being measured. A regression found
  // anyway stays a regression.
  bool Inconclusive() const;
  // Runs whose time was compared but whose counts (processes or samples,
  // base and new) cannot reach alpha however large a change, on every
  // metric the rank test read for them (MinAchievablePValue >= alpha: 3
  // against 3 gives at best p 0.1; a generative run's TPOT, one value per
  // decode step, usually can). And runs with a change past its threshold
  // that was filed too_few_samples.
  std::size_t UntestableRuns() const;
  std::size_t TooFewSamplesRuns() const;
  // No regression, and the rank test could not have found one: a run moved
  // past its threshold with too few samples to test it, or every run whose
  // time was compared is untestable (the protocol is blind, whatever moved).
  // "No regressions" would then be a night that cannot detect anything
  // reporting green.
  bool CannotTell() const;
  // What the comparison concludes, in the order the exit code reads it:
  // regression | inconclusive | cannot_tell | no_regression.
  const char* Outcome() const;
};

// One build's results on one platform, as a comparison reads them.
// `manifest` is ToJson of the typed manifest (core/contract/manifest.h).
struct RunSet {
  std::string build_id, platform_id;
  std::filesystem::path dir;  // the platform's folder: counted runs' profiles are found from it
  nlohmann::json manifest;
  std::map<RunKey, RunResult> runs;
};
// The loaders of compare and bisect, over the one reader
// (core/contract/results_tree.h): a refused manifest or run file fails the load with
// a FileError naming file and field, so a comparison never reads a file that
// validate refuses. Throws std::invalid_argument when the build has no
// manifest.json for the platform.
RunSet LoadRunSet(const TreeBuild& build, const std::string& platform_id);
// A platform already loaded (the site's LoadResults) as a run set, without
// reading anything again: the refused files were skipped by the loader, so a
// comparison sees what the page shows.
RunSet MakeRunSet(const std::string& build_id, const LoadedPlatform& platform);
RunSet LoadRunSet(const std::filesystem::path& results, const std::string& build_id, const std::string& platform_id);

struct BuildEntry {
  std::string build_id, started_at;
};
// Builds with a manifest.json for `platform_id`, in the one build order of
// core/contract/results_tree.h (a build's earliest started_at across its platforms,
// then id), so compare and the site pick the same baselines.
std::vector<BuildEntry> ListBuilds(const TreeScan& scan, const std::string& platform_id);
std::vector<BuildEntry> ListBuilds(const std::filesystem::path& results, const std::string& platform_id);
// Platforms of one build with a manifest.json, sorted.
std::vector<std::string> ListPlatforms(const TreeBuild& build);
std::vector<std::string> ListPlatforms(const std::filesystem::path& results, const std::string& build_id);

// The pure rules: a baseline window (oldest first, non-empty) against a new run set.
PlatformComparison CompareRunSets(const std::vector<const RunSet*>& base_window, const RunSet& next,
                                  const CompareOptions& options);

// CompareBuilds' rules for one platform on run sets already in memory (the
// site's renderer streams builds and keeps the recent ones): `history` is the
// platform's builds oldest first, ending with the new build; the baseline,
// window and persistence streak are picked as CompareBuilds does without
// --base. Needs at least two builds; throws std::invalid_argument.
PlatformComparison CompareWithHistory(const std::vector<const RunSet*>& history, const CompareOptions& options);

struct CompareRequest {
  std::filesystem::path results;
  std::optional<std::string> base;  // default: see the header comment
  std::string new_build;
  std::optional<std::string> platform;  // default: every platform of the new build
  CompareOptions options;
};
// Loads, picks baselines, compares and applies persistence. Throws
// std::invalid_argument or FileError on bad input (the CLI's exit code 2).
Comparison CompareBuilds(const CompareRequest& request);

nlohmann::json ToJson(const Comparison& c);

}  // namespace torchgauge::core
