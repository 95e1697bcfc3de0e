// Alerts: one per cause. The changes that the comparison rules flagged
// (alerts/regressions.h, the same cached rows the regressions page reads)
// are grouped so that every run on one platform whose change points at the
// same build range, in the same direction, is one alert, as Perfherder's
// alert summaries group every test that moved at one push.
//
// - The build range is (the last build of the comparison's baseline, the
//   build that flagged it]: bisecting it finds the culprit of every run in
//   the alert at once.
// - An alert lists its runs largest change first and carries the geomean of
//   their factors. Every flagged row is a run both builds have (the rules
//   compare nothing else), so the geomean is over exactly those runs
//   (test-infra #6969). Time rows give it; an alert with no time row (a
//   memory change alone) takes the factors of its first row's metric.
// - Its id is derived from platform, range and direction alone, so it is the
//   same in every render and on every machine (AlertId).
// - A regression alert whose every run recovered (RegressionEvent's
//   recovered state: the series came back within the regression's band)
//   closes itself as recovered. Triage states are applied on top
//   (alerts/triage.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reporter/results/aggregate.h"
#include "reporter/alerts/change_points.h"
#include "reporter/alerts/regressions.h"

namespace torchgauge::reporter {

struct Alert {
  std::string id;  // AlertId(platform, base_build, build, regression)
  std::string platform;
  std::string base_build, build, started_at;  // the range (base_build, build]; the build's start time
  bool regression = true;                     // false: an improvement alert
  std::vector<FlaggedChange> rows;            // every flagged row: the geomean's metric first, largest first
  int runs = 0;                               // distinct runs (platform, run key) among the rows
  std::string geomean_metric;                 // the metric the geomean is over
  double geomean = 1;                         // geomean of that metric's factors (new / before)
  int geomean_runs = 0;                       // how many factors it is over
  bool recovered = false;                     // every run's regression recovered
  std::string recovered_in;                   // the build in which the last one recovered
  std::string recovered_at;
  std::vector<std::string> domains;  // sorted, distinct
  // Whether the regression is still there in the newest build of its
  // platform (MarkStillPresent); unset for an improvement, or where that
  // build has no median of any of the alert's time rows.
  std::optional<bool> still_present;
  std::string newest_build;  // the platform's newest build, which still_present judges
  // Where the alert came from the history search (BuildAlerts): the build
  // of the night that first raised it, which may be a build or two after
  // `build`; for an improvement that brought a regression's runs back, the
  // regression alert's id (the revert). Empty otherwise.
  std::string raised_in, reverts;
  int history_runs = 0;  // rows raised by the history search
  // The alerts of other platforms with the same range and direction: one
  // cause seen on several platforms (ids stay per platform, so a platform
  // added later never renames an alert). Set by BuildAlerts.
  std::vector<std::string> related;
};

// "A-" and 12 hex digits of a fingerprint of the four fields: stable across
// renders, machines and versions of this reporter.
std::string AlertId(const std::string& platform, const std::string& base_build, const std::string& build,
                    bool regression);

// Every alert of `history` (oldest first), oldest build first, then
// regressions before improvements, then platform. `events` are
// TrackRegressions(history), for the recovered states.
std::vector<Alert> GroupAlerts(const std::vector<BuildChanges>& history, const std::vector<RegressionEvent>& events);

// The alerts of a site (issue 60): alerts from the whole history, not from
// two builds. A run's time enters an alert where the history search raised
// a change in its series (FindHistoryChanges): a row whose before and after
// are the levels of the segments either side, whose p-value and noise band
// are the build comparison's where it flagged the same run at that build in
// the same direction (with its throughput row), and whose range is (the last
// build at the old level, the first at the new]: the same id rules as a
// comparison's alert, so both join one. A time or throughput change that
// only the build comparison flagged is not an alert: at the project's noise
// it was false in 66 of 80 cases (issue 60), and it stays in that build's
// comparison and on the regressions page's list of flagged changes; except
// where the history search could not judge the run that night
// (HistoryCanJudge: one-process runs in a history of under 11 builds), when
// the comparison's rows are the alert, as before. The
// other metrics (memory, counted), one value per run with no series noise to
// learn, are alerts as the comparison flags them. A regression is recovered
// when the series came back within the threshold of its old level in every
// history run (and its other rows recovered as TrackRegressions says); its
// still_present is the newest segment's; an improvement that brought back
// all of a regression alert's runs names it as `reverts`, and alerts of the
// same range and direction on other platforms name each other (`related`).
// `history` and
// `changes` are the site's (oldest first), `found` is
// FindHistoryChanges(history), `events` TrackRegressions(changes).
std::vector<Alert> BuildAlerts(const std::vector<BuildChanges>& changes, const std::vector<RegressionEvent>& events,
                               const std::vector<BuildSummary>& history, const std::vector<HistoryChange>& found);

// Sets each regression alert's still_present (issue 60: what still matters
// to on-call): yes when the median time of any of its time rows' runs in
// the newest build of its platform in `history` (oldest first) is still
// beyond the row's band against the value before the change (the recovery
// rule, BackWithinBand); no when every such run is back. The summaries keep
// time medians only, so a run with no time row (a memory change alone) is
// not judged.
void MarkStillPresent(std::vector<Alert>& alerts, const std::vector<BuildSummary>& history);

// The alert whose id is `id`, or null.
const Alert* FindAlert(const std::vector<Alert>& alerts, const std::string& id);

}  // namespace torchgauge::reporter
