// Stage 2 of the pipeline: aggregate loaded results into views, the plain
// structs that the writer formats. Nothing here formats text or touches disk
// (except the summary cache's JSON conversion), so every number on the site
// can be unit-tested here.
//
// A BuildSummary is the small per-build digest (status counts, suite geomeans,
// per-run medians) that the index and the trend charts read. The writer caches
// it as builds/<id>/data/summary.json so re-rendering one build does not
// re-parse every other build's results.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/results/load.h"
#include "reporter/results/platform_ratio.h"

namespace torchgauge::reporter {

// The paper's published A100 breakdown (reporter/results/paper_table2.json).
struct PaperRow {
  std::string domain;                                           // our domain id: vision, nlp, ...
  std::string label;                                            // the paper's row label
  double train_active = 0, train_movement = 0, train_idle = 0;  // percent
  double eval_active = 0, eval_movement = 0, eval_idle = 0;
};
struct PaperTable2 {
  std::string citation;
  std::vector<PaperRow> rows;
  const PaperRow* Find(const std::string& domain) const;
};
PaperTable2 PaperTable2FromJson(const nlohmann::json& j);
// The paper's row label of `domain` ("Computer Vision"), else the domain id:
// the pages, the build's tables and the paper kit name domains alike.
std::string DomainLabel(const std::string& domain, const PaperTable2& paper);

// "train/eager/fp32/bs32": one run configuration of a model.
std::string ConfigLabel(const core::RunResult& r);
std::string ConfigLabel(const std::string& mode, const std::string& backend, const std::string& precision,
                        int64_t batch);
// The achieved rate: the profiler's count where there is one, else the analytic one.
std::optional<double> Tflops(const core::RunResult& r);

// Which measurement Figures 1/2 and Table 2 show for a platform. The GPU
// breakdown (the paper's: active / data movement / idle) where any run has
// one; otherwise the host breakdown (compute / data movement / outside
// operators, core/stats/host_breakdown.h). The parts keep the same three slots so
// one chart and one table serve both; BreakdownPartNames gives their labels.
// The paper's A100 column is a GPU breakdown: beside a host breakdown it is
// shown as the paper's GPU figures, never as comparable parts.
enum class BreakdownSource { kNone, kGpu, kHost };
const char* BreakdownSourceId(BreakdownSource s);  // "none" | "gpu" | "host"
struct BreakdownPartNames {
  const char* title;   // "GPU time: active / data movement / idle"
  const char* first;   // active | compute
  const char* second;  // data movement
  const char* third;   // idle | outside operators
};
BreakdownPartNames PartNames(BreakdownSource s);
// The platform's source: kGpu if any run has a GPU breakdown, else kHost if
// any run has a host breakdown, else kNone.
BreakdownSource PickBreakdownSource(const std::vector<const core::RunResult*>& runs);
// One run's three fractions from `source`; unset when the run lacks it.
struct BreakdownParts {
  double first = 0, second = 0, third = 0;
};
std::optional<BreakdownParts> PartsOf(const core::RunResult& r, BreakdownSource source);

// The note under Figures 1/2 when they show the host breakdown: the ops it
// counted as data movement (the union of the lists the runs recorded) and the
// profiler's own cost per recorded op, the median over the runs that measured it.
struct HostBreakdownNote {
  std::vector<std::string> data_movement_ops;
  std::optional<double> profiler_overhead_per_op_us;
  int overhead_runs = 0;
};
HostBreakdownNote HostNote(const std::vector<const core::RunResult*>& runs);

// The noise verdict of a run that has figures to judge (ok, timed):
// core::RunNoise. nullopt for a run without a timing or a clean one.
std::optional<core::NoiseVerdict> NoisyVerdict(const core::RunResult& r);
// "noisy (CoV 23 % >= 10 %)": what a ratio or a comparison involving noisy
// runs says, per side: "eager run noisy: ...; backend run noisy: ...". ""
// when both are clean.
std::string NoisySides(const core::RunResult& a, const std::string& a_name, const core::RunResult& b,
                       const std::string& b_name);

// A run's achieved rate against the platform's measured matmul peak
// (core::PercentOfPeak). The analytic FLOP count where the model has one
// (exact for the model's own arithmetic), else the profiler's.
struct PeakShare {
  std::optional<double> percent;
  std::string basis;    // "analytic" | "profiler" | "" (no rate)
  // When percent is unset: "not probed", "no bf16 peak", "no FLOP count", or
  // "withheld: ..." where the run's rate exceeds the probed peak (a share
  // above 100 % is never published).
  std::string why_not;
};
PeakShare PeakShareOf(const core::RunResult& r, const Manifest& m);
// Per domain, then "all" for the suite: the median and the largest % of peak
// over the ok runs that have one, never pooling unlike figures: one row per
// mode, backend and counting basis (analytic or profiler FLOPs) within each.
struct PeakSummary {
  std::string domain;  // "all" for the suite row
  std::string mode, backend, basis;
  int runs = 0;
  double median_percent = 0, max_percent = 0;
};
std::vector<PeakSummary> SummarizePeakShares(const std::vector<const core::RunResult*>& runs, const Manifest& m);

struct BreakdownBar {
  std::string model, label, domain;
  // Fractions summing to ~1: GPU active / data movement / idle, or host
  // compute / data movement / outside operators (BreakdownSource).
  double active = 0, movement = 0, idle = 0;
  bool noisy = false;  // the run's figures are noisy (core::RunNoise)
};

struct DomainBreakdown {
  std::string domain;
  int models = 0;
  double active = 0, movement = 0, idle = 0;  // fractions, mean over models
  int noisy_runs = 0;                         // of the runs averaged in, those judged noisy
  const PaperRow* paper = nullptr;
};

struct CoverageRow {
  std::string domain;  // "all" for the union row
  int models = 0;
  size_t distinct_ops = 0;
};

// Figures 3/4: a non-eager backend against eager on the same model, mode,
// precision and batch size: execution time (T), CPU memory (CM) and GPU
// memory (GM), each backend / eager, so < 1 means the backend does better.
// A memory ratio is absent where either side did not measure it.
struct BackendRatio {
  std::string model, mode, precision, backend;
  double eager_ms = 0, backend_ms = 0, ratio = 0;  // time
  std::optional<double> cpu_memory_ratio, gpu_memory_ratio;
  std::optional<double> backend_setup_ms;  // the backend's one-off preparation, outside the timed steps
  std::string noisy;                       // NoisySides of the pair; "" when both runs are clean
  // The backend run's own paired pass (eager and compiled in the same worker
  // process, core::PairedTiming); null in results without one.
  const core::PairedTiming* paired = nullptr;
};

// How a paired pass's speedup reads: "faster" or "slower" where its
// processes' range (core::PairedTiming::speedup_low/high) lies on one side
// of 1, "within noise" where the range includes 1, and "one process: no
// interval" without a range. The build page's table and chart both use it.
std::string PairedVerdict(const core::PairedTiming& p);

// The paper's headline numbers for Figures 3/4: geomeans of the ratios over
// the models of one backend and mode (section 3.2: "1.30x and 1.46x speedups
// for training and inference on average (geomean)").
struct BackendSummary {
  std::string backend, mode;
  int pairs = 0;                                                 // ratios with a time
  int noisy = 0;                                                 // of those, pairs with a noisy run
  double time_geomean = 0;                                       // < 1: faster than eager
  std::optional<double> cpu_memory_geomean, gpu_memory_geomean;  // absent where no pair measured it
};
// Every ok non-eager run paired with its ok eager run.
std::vector<BackendRatio> BackendRatios(const std::vector<const core::RunResult*>& runs);
std::vector<BackendSummary> SummarizeBackends(const std::vector<BackendRatio>& ratios);

// A compiler as PyTorch's HUD dashboard summarises one (backend, mode):
// pass rate (ok runs over the runs whose eager run was ok), geomean speedup
// (eager / compiled: the run's paired pass when it has one, else the two
// runs' medians), mean compilation latency (the compile split where
// recorded, else the backend's setup; cold compiles only, cache hits' load
// time apart) and memory compression ratio (eager
// peak / compiled peak: GPU where both measured it, else CPU), with the
// HUD's flags (speedup < 0.95, compression < 0.9) and the failures grouped
// by their message.
inline constexpr double kHudSlowSpeedup = 0.95;
inline constexpr double kHudPoorCompression = 0.9;
struct CompilerMetrics {
  std::string backend, mode;
  int attempted = 0, passed = 0;
  std::optional<double> geomean_speedup, compression_geomean;
  // Compilation latency as the HUD means it: over the cold compiles only. A
  // run that found its compiled package in the cache compiled nothing; its
  // setup (trace and load) is a load time, averaged apart.
  std::optional<double> mean_compile_s, mean_load_s;
  int compiles = 0, cache_hits = 0;
  int slow = 0, poor_compression = 0;                       // passed runs under the HUD's flags
  std::vector<std::pair<std::string, int>> failure_causes;  // message, runs; most frequent first
};
std::vector<CompilerMetrics> HudCompilerMetrics(const std::vector<const core::RunResult*>& runs);

// A generative run on the build page: its generation (core/stats/generation.h),
// or why it was not measured.
struct GenerationRow {
  std::string model, mode, backend, precision;
  int64_t batch_size = 1;
  const core::Generation* generation = nullptr;  // null: not measured, see reason
  std::string reason;
  bool noisy = false;  // the run's figures are noisy (core::RunNoise)
};
// The ok runs with a generation or a generation_reason, sorted by model,
// mode, backend and precision.
std::vector<GenerationRow> GenerationRows(const std::vector<const core::RunResult*>& runs);

struct PlatformView {
  std::string id;
  const Manifest* manifest = nullptr;
  std::vector<const core::RunResult*> runs;      // sorted as loaded
  std::vector<const core::RunResult*> failures;  // status != ok
  std::map<std::string, int> status_counts;
  bool has_gpu_breakdown = false;
  BreakdownSource breakdown_source = BreakdownSource::kNone;  // what figure1/2 and table2 hold
  HostBreakdownNote host_note;                                // filled when breakdown_source is kHost
  std::vector<BreakdownBar> figure1_train, figure2_eval;      // sorted by active share, descending
  std::vector<DomainBreakdown> table2_train, table2_eval;
  std::vector<CoverageRow> coverage;  // per domain, then the union row
  std::optional<double> geomean_train_ms, geomean_eval_ms;
  int geomean_train_n = 0, geomean_eval_n = 0;
  std::vector<BackendRatio> backend_ratios;       // sorted by mode, backend, model, precision
  std::vector<BackendSummary> backend_summaries;  // sorted by backend, mode
  std::vector<CompilerMetrics> compiler_metrics;  // sorted by backend, mode
  std::vector<PeakSummary> peak_summaries;        // empty when nothing has a % of peak
  std::vector<GenerationRow> generation;          // the generative runs
  int noisy_runs = 0;
  std::string noise_warning;  // core::NoiseWarning over the judged runs; "" when none is noisy
  std::vector<Problem> problems;
};

struct BuildView {
  std::string id, started_at;
  std::vector<PlatformView> platforms;
  std::vector<std::string> models;  // sorted model ids
  std::vector<Problem> problems;
  // Figure 5, generalized (platform_ratio.h): with two or more platforms,
  // each other platform against the reference, in platform id order.
  std::string reference_platform;
  std::optional<std::string> reference_note;  // why the reference is not the one asked for
  std::vector<PlatformRatios> platform_ratios;
};

// `reference`: the platform the others are compared with (--reference-platform);
// nullopt, or one this build lacks, gives the first platform id in sorted order.
// The view points into `build` and `paper` (PlatformView's manifest and runs,
// DomainBreakdown::paper): both must outlive it, so temporaries are refused.
BuildView AggregateBuild(const BuildResults& build, const PaperTable2& paper,
                         const std::optional<std::string>& reference = std::nullopt);
BuildView AggregateBuild(const BuildResults&, PaperTable2&&, const std::optional<std::string>& = std::nullopt) = delete;
BuildView AggregateBuild(BuildResults&&, const PaperTable2&, const std::optional<std::string>& = std::nullopt) = delete;

// Per-domain means of the breakdown from `source`, for one mode.
// Configurations of one model are averaged first so each model counts once,
// as in the paper.
std::vector<DomainBreakdown> DomainMeans(const std::vector<const core::RunResult*>& runs, const std::string& mode,
                                         const PaperTable2& paper, BreakdownSource source = BreakdownSource::kGpu);
std::vector<DomainBreakdown> DomainMeans(const std::vector<const core::RunResult*>&, const std::string&, PaperTable2&&,
                                         BreakdownSource = BreakdownSource::kGpu) = delete;
// Bars for Figures 1/2: eager runs with a breakdown from `source`, sorted by
// the first part's share (descending), then label.
std::vector<BreakdownBar> BreakdownBars(const std::vector<const core::RunResult*>& runs, const std::string& mode,
                                        BreakdownSource source = BreakdownSource::kGpu);
// Geomean of median_ms over the ok eager runs of one mode (the paper's
// configuration, so that adding a backend to a suite does not move the
// trend); nullopt when there are none.
std::optional<double> SuiteGeomean(const std::vector<const core::RunResult*>& runs, const std::string& mode, int* n);
std::vector<CoverageRow> ApiCoverage(const std::vector<const core::RunResult*>& runs);

struct ConfigMedian {
  std::string model, config;
  double median_ms = 0;
  bool noisy = false;  // core::RunNoise: the trend charts mark it
  // The run's level for the change-point search (alerts/change_points.h),
  // where it ran in two or more worker processes: the geometric mean of the
  // processes' medians, and its standard error on the log scale (the sample
  // standard deviation of their logs over the square root of their count).
  // The process is the unit, as in the comparison's rank test; 0: one
  // process, or a cache written before (the search then reads median_ms).
  double level_ms = 0, level_se = 0;
};
// The level of `r` as ConfigMedian keeps it: the geometric mean of its
// process medians and the log-scale standard error; {0, 0} when it has
// fewer than two.
std::pair<double, double> ProcessLevel(const core::RunResult& r);
std::pair<double, double> ProcessLevel(const std::vector<double>& process_medians_ms);
// A counted run's median counts per step (core::Counted), where the run
// has no timed median: the model page charts them beside time.
struct ConfigCount {
  std::string model, config;
  double instructions = 0, est_cycles = 0;
};
struct PlatformSummary {
  std::string id, vendor, device;
  std::map<std::string, int> status_counts;
  std::optional<double> geomean_train_ms, geomean_eval_ms;
  int geomean_train_n = 0, geomean_eval_n = 0;
  std::vector<ConfigMedian> medians;                        // ok timed runs, sorted by (model, config)
  std::vector<ConfigCount> counts;                          // ok counted runs, sorted by (model, config)
  std::vector<std::pair<std::string, std::string>> not_ok;  // (model, config) of the runs that are not ok
};
// What the comparison with the previous build on one platform flagged
// (filled by the site's writer, which runs core::CompareWithHistory).
// Counts are runs (core::Comparison::CountRuns), as compare counts them.
struct FlaggedChanges {
  std::string platform, baseline;
  int regressions = 0, confirmed = 0, improvements = 0;
  int status_changes = 0;  // status changes plus runs that appeared or disappeared
  // The platform's comparison judged alone by compare's rules
  // (core::Comparison::Outcome): regression | inconclusive | cannot_tell |
  // no_regression, with the counts its verdict names.
  std::string outcome = "no_regression";
  int compared_runs = 0, noisy_runs = 0, untestable_runs = 0;
  // A build that cannot say nothing regressed is listed like one that flagged a change.
  bool Any() const {
    return regressions + improvements + status_changes > 0 || outcome == "inconclusive" || outcome == "cannot_tell";
  }
};
struct BuildSummary {
  std::string id, started_at;
  int problems = 0;
  int runs = 0, ok = 0;
  std::vector<PlatformSummary> platforms;
  std::vector<FlaggedChanges> flagged;  // per compared platform, sorted by platform
};
BuildSummary Summarize(const BuildView& view);
nlohmann::json ToJson(const BuildSummary& s);
// Throws on a malformed cache (the caller then recomputes from results).
BuildSummary BuildSummaryFromJson(const nlohmann::json& j);

}  // namespace torchgauge::reporter
