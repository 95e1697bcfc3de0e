// Alerts that reach people (issue 37, item 6).
//
// - The site writes every alert and health alert, with its triage state, to
//   alerts.json at its root (AlertsJson, schemas/alerts.schema.json): the one
//   machine-readable list of alerts, read by `torchgauge-report track` and
//   by `torchgauge-collect bisect --alert`.
// - A nightly keeps one long-lived tracking issue per platform and adds one
//   comment per night with the alerts that are new or changed since the last
//   comment (ComposeTrackingComments), as the PyTorch HUD's daily report on a
//   team's tracking issue does. What was posted is kept per platform and
//   alert id in the results tree (<results>/tracking.json), beside
//   triage.json, so a team keeps it in git with the results; an alert is
//   posted again only when its state, its runs or its recovery changed.
// - GhCommands writes the `gh` commands that find or open the tracking issue
//   and post the comment: the nightly runs them when it has credentials and
//   prints them when it has not.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/alerts_file.h"
#include "reporter/alerts/health.h"
#include "reporter/alerts/triage.h"

namespace torchgauge::reporter {

inline constexpr int kTrackingSchemaVersion = 1;

// The site's alerts.json (core/contract/alerts_file.h, which also reads
// it): oldest first as the regressions page lists them. Each alert carries
// its page's path relative to the site root, and its culprit when `bisect
// --alert` found one.
// Health alerts carry their triage state from `triage` (untriaged without
// an entry). `rules` (RulesJson) records the comparison rules the alerts
// were flagged under; null leaves it out.
nlohmann::json AlertsJson(const std::vector<TriagedAlert>& alerts, const std::vector<HealthAlert>& health,
                          const std::map<std::string, core::Culprit>& culprits = {}, const TriageFile& triage = {},
                          const nlohmann::json& rules = nullptr);
// The rules of a comparison as alerts.json records them: threshold (and
// per-pattern rules), alpha, window, persistence and the noisy share. The
// nightly passes one set of options to `build` and `compare`; this is how
// the site, and `track` after it, show which.
nlohmann::json RulesJson(const core::CompareOptions& o);
// "threshold 7%, alpha 0.05, window 1, persist 1", for a comment's footer.
std::string RulesLine(const nlohmann::json& rules);
// Whether a health alert of alerts.json still asks for attention: untriaged
// or investigating (an acknowledged one, e.g. expected, does not).
bool HealthOpen(const nlohmann::json& health_alert);

// What the last comment on a platform's tracking issue said of one alert.
struct PostedAlert {
  std::string state;  // the triage state's name, or the health alert's kind
  int runs = 0;
  std::string posted_at;
  bool operator==(const PostedAlert& o) const { return state == o.state && runs == o.runs; }
};
struct TrackingLedger {
  std::map<std::string, std::map<std::string, PostedAlert>> platforms;  // platform -> alert id -> posted
};
// <results>/tracking.json.
std::filesystem::path TrackingPath(const std::filesystem::path& results_root);
// An absent file is an empty ledger; a malformed one throws core::FileError.
TrackingLedger ReadTracking(const std::filesystem::path& file);
void WriteTracking(const std::filesystem::path& file, const TrackingLedger& ledger);  // atomic

struct TrackingComment {
  std::string platform;
  int fresh = 0, changed = 0, health = 0;  // alerts never posted, posted with another state or runs, health
  std::map<std::string, PostedAlert> now;  // what this comment says of each alert it lists
  std::string markdown;                    // the comment; empty when nothing is new or changed
};
// One per platform named in `alerts_json` (or only `platforms`, when not
// empty), sorted by platform. `site_url` (may be empty) makes the links
// absolute; `build` names the night in the heading.
std::vector<TrackingComment> ComposeTrackingComments(const nlohmann::json& alerts_json, const TrackingLedger& ledger,
                                                     const std::string& site_url, const std::string& build,
                                                     const std::vector<std::string>& platforms = {});
// Records what `c` posted (its `now`) in the ledger at time `now_utc`.
void RecordPosted(TrackingLedger& ledger, const TrackingComment& c, const std::string& now_utc);

// The regression alerts raised in the night of `build` (alerts.json's
// raised_in; an older file's build) that are untriaged or investigating, as a
// Markdown section for the night's issue body; "" when there are none.
std::string RaisedRegressions(const nlohmann::json& alerts_json, const std::string& build,
                              const std::string& site_url);

// "TorchGauge tracking: <platform>": the title the commands search for.
std::string TrackingIssueTitle(const std::string& platform);
// A bash script: for each comment with something to say, find the open
// issue titled TrackingIssueTitle in `repo` (or open it), then comment with
// the file `<dir>/<platform>.md`. `repo` empty: the script reads it from
// $TORCHGAUGE_TRACKING_REPO.
std::string GhCommands(const std::vector<TrackingComment>& comments, const std::string& repo,
                       const std::filesystem::path& dir);

}  // namespace torchgauge::reporter
