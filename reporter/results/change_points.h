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

#include <string>
#include <vector>

#include "reporter/results/aggregate.h"
#include "reporter/results/alerts.h"

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

// A step in one run's history on one platform.
struct ChangePoint {
  std::string platform, model, config;
  std::string build_before, build;  // the last build of the old segment, the first of the new
  std::string started_at;           // the build's
  double before_ms = 0, after_ms = 0, t = 0;
  int points = 0;        // the series' length
  std::string alert_id;  // CoveringAlert's id, set by the caller; "" when none
  double Factor() const { return after_ms / before_ms; }
};
// Every change point of every series in `history` (oldest first), ordered
// by the build where it happened, then platform, model and config.
std::vector<ChangePoint> FindChangePoints(const std::vector<BuildSummary>& history, const ChangePointOptions& o = {});

// The alert of the comparison that already flagged `c`: one of its platform
// and build, in its direction, with a row of its run; null when the
// build-against-build rules missed it (a drift, a step behind a noisy
// night).
const Alert* CoveringAlert(const std::vector<Alert>& alerts, const ChangePoint& c);

}  // namespace torchgauge::reporter
