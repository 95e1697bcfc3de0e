// Change points over a run's whole history, beside the build-against-build
// comparison: a slow drift whose every night is under the threshold, or a
// step that one noisy night hides from the comparison, shows as a step
// between two segments of the history.
//
// The method is binary segmentation of a piecewise-constant fit (least
// squares on log medians), as asv fits its histories: the split that most
// reduces the squared error is kept when its two segments differ by at
// least the comparison's threshold (7 %) and by at least `min_t` standard
// errors of the series' own noise, and each side is searched again. The
// noise is estimated from the series itself, robustly: the median absolute
// deviation of the night-to-night differences, so steps and drifts barely
// inflate it. It is deterministic (no permutations, unlike E-divisive) and
// costs O(n^2) a series; docs/nightly.md says why, with its measured
// false-alarm and detection rates.
//
// Short excursions (issue 60): a regression that lasts a few builds and is
// reverted moves neither half of any single split by the threshold, so
// plain binary segmentation stopped there. When no single split of a
// segment passes, the search tries the best pair of splits, a segment
// inside it against the rest on both sides (circular binary segmentation's
// statistic), with at least `min_segment` builds inside and outside, and
// recurses into the three parts. The pair is chosen over recursing blindly
// into halves because a split that failed its test says nothing about
// where to recurse; and it needs `min_t_segment` (7) standard errors rather
// than 5, since it is the best of O(n^2) candidates, not O(n): with 7 the
// false alarms on the nightly's noise model stay what they were (0.2 % of
// series). A step's levels are the final segments either side of it.
//
// The series are the per-build medians of the site's summaries
// (BuildSummary::platforms[].medians); runs that were noisy (core::RunNoise)
// are left out of their series.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

struct ChangePointOptions {
  double min_change_percent = 7;  // the comparison's default threshold
  double min_t = 5;               // the split's standard errors of noise
  // A segment inside the series (a short excursion, tried when no single
  // split passes) is the best of O(n^2) candidates, not O(n): it needs more.
  double min_t_segment = 7;
  int min_segment = 3;  // builds on each side
  int max_points = 4;   // per series
};

// One step found in a series of values (one per point, > 0): the first
// index of the new segment, and the two segments' geometric means.
struct Step {
  size_t at = 0;
  double before = 0, after = 0, t = 0;
  double Factor() const { return after / before; }
};
// The steps of `values`, by index.
std::vector<Step> FindSteps(const std::vector<double>& values, const ChangePointOptions& o = {});

// --- The search as the nightly runs it (issue 60) --------------------------
//
// The alerts need what FindSteps cannot give: the night a step is first
// seen, and a verdict that a later night never takes back. So the history
// is replayed night by night. Each run's series has a current segment (all
// of it, until a change is found); each night, every split of the current
// segment into an old level (at least `min_before` builds, the newest
// `lookback` of them) and a new one is tested, on log values:
//   t = (mean after - mean before) / (sigma * sqrt(1/n_before + 1/n_after)).
// A run raises a change on its own when t reaches `min_t` with at least
// `min_after` builds at the new level (a step is raised within two builds
// of its first), or `min_t_early` with `min_after_early` (a large step the
// next night). Never on one build: a whole night that ran slow (the machine,
// not the build) agrees with itself in every process, and one build is all
// the build comparison sees, which was wrong 66 times in 80 (issue 60).
// Runs of one platform corroborate each other: a real change of the build
// moves several runs at one build, noise does not, so where `group_runs` or
// more runs split at the same build in the same direction with t of at least
// `min_t_group` each, all of them raise it. In both cases the change must
// reach the comparison's threshold (7 %). A raised change starts the run's
// new segment there; nothing before it is searched again.
//
// sigma is the noise of one point: the level's own standard error where the
// runs had two or more processes (ConfigMedian::level_se, pooled over the
// series), unless the series itself varies more than `night_noise_ratio`
// times that from night to night (a machine whose nights differ beyond its
// processes, as tests/data/real_history shows), in which case, and where no
// process data exists, the series' own night-to-night estimate (over
// the newest `lookback` points, once `min_series_points` are known: the
// root mean square of the night-to-night differences).
// Deterministic and prefix-stable: the changes raised by night n depend on
// builds 0..n only (tested).
struct OnlineOptions {
  double min_change_percent = 7;
  double min_t = 4;
  double min_t_early = 9;
  double min_t_group = 3;
  int group_runs = 2;
  // Builds at the old level: at the start of a series, and after a raised
  // change (a revert soon after a change must be found: a two-build
  // excursion leaves two builds at its level).
  int min_before = 3, min_before_after_change = 1;
  int min_after = 3, min_after_early = 2;
  int min_series_points = 8;
  int lookback = 60;
  double night_noise_ratio = 1.5;
};
// One point of a series: the build (an index into the history), its level
// and the level's log-scale standard error (0: unknown).
struct SeriesPoint {
  size_t build = 0;
  double value = 0, se = 0;
};
struct OnlineChange {
  size_t series = 0;                // index into the input
  size_t at = 0, before_build = 0;  // builds: the first at the new level, the last at the old
  size_t raised = 0;                // the build of the night that raised it
  double t = 0;
  bool grouped = false;  // raised by the corroboration of other runs
  // The levels of the whole segments either side, as the full history has
  // them (geometric means), and the new level as it was when raised.
  double before = 0, after = 0, after_when_raised = 0;
  // A regression's fate: the first later change of the series whose new
  // level, when it was raised, was back within the threshold of `before`
  // (its build: judged when raised, so a later change cannot blur it);
  // whether that change is an improvement (the revert, at recovered_at);
  // and whether the newest segment is still beyond the threshold.
  std::optional<size_t> recovered_at;
  bool reverted = false;
  bool still_present = false;
  double Factor() const { return after / before; }
};
// The changes of `series` (each oldest first, its points' builds rising)
// over a history of `builds` builds, in the order raised (night, then series).
std::vector<OnlineChange> FindChangesOnline(const std::vector<std::vector<SeriesPoint>>& series, size_t builds,
                                            const OnlineOptions& o = {});

// A change FindChangesOnline raised in one run's series on one platform.
struct HistoryChange {
  std::string platform, model, config;
  OnlineChange change;  // its builds index `history`
  int points = 0;       // the series' length
};
// The raised changes of every run of every platform in `history` (oldest
// first): the series are the summaries' levels (ConfigMedian::level_ms, or
// the median where a run had one process), noisy runs left out, each
// platform searched on its own (runs corroborate only their own platform).
// Ordered by the build at the new level, then platform, model and config.
std::vector<HistoryChange> FindHistoryChanges(const std::vector<BuildSummary>& history, const OnlineOptions& o = {});

// A step in one run's history on one platform.
struct ChangePoint {
  std::string platform, model, config;
  std::string build_before, build;  // the last build of the old segment, the first of the new
  std::string started_at;           // the build's
  double before_ms = 0, after_ms = 0, t = 0;
  int points = 0;        // the series' length
  std::string alert_id;   // CoveringAlert's id, set by the caller; "" when none
  std::string raised_in;  // the history search's: the build of the night that raised it
  double Factor() const { return after_ms / before_ms; }
};
// Every change point of every series in `history` (oldest first), ordered
// by the build where it happened, then platform, model and config.
std::vector<ChangePoint> FindChangePoints(const std::vector<BuildSummary>& history, const ChangePointOptions& o = {});

struct Alert;
// Whether the history search knew the noise of run (platform, model,
// config) on the night of build `at` (an index into `history`): its points
// so far carry a level's standard error, or are enough for the series' own
// estimate. Where it did not (a young history of one-process runs), the
// alerts take the build comparison's word (BuildAlerts).
bool HistoryCanJudge(const std::vector<BuildSummary>& history, const std::string& platform, const std::string& model,
                     const std::string& config, size_t at, const OnlineOptions& o = {});

// The history search's changes as the regressions page lists them.
std::vector<ChangePoint> ChangePointsOf(const std::vector<HistoryChange>& found,
                                        const std::vector<BuildSummary>& history);

// The alert of the comparison that already flagged `c`: one of its platform
// and build, in its direction, with a row of its run; null when the
// build-against-build rules missed it (a drift, a step behind a noisy
// night).
const Alert* CoveringAlert(const std::vector<Alert>& alerts, const ChangePoint& c);

}  // namespace torchgauge::reporter
