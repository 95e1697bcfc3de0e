// The site's regressions history for readers: regressions.{md,html}, one
// page over every build with filters by platform, domain and state that work
// offline (site/readers.js), and regressions.atom, an Atom 1.0 feed of the
// newest regressions for feed readers and chat apps. The events come from
// alerts/regressions.h; this file only lays them out.
//
// The feed is byte-stable: an entry's id is a name-based UUID of its build,
// run key and metric (RegressionEvent::Key), so a re-render never announces
// an old regression again, and every timestamp is a build's start time,
// never the time of rendering.
#pragma once

#include <string>
#include <vector>

#include "reporter/output/mustache_fwd.h"
#include "reporter/output/paths.h"
#include "reporter/alerts/change_points.h"
#include "reporter/alerts/health.h"
#include "reporter/alerts/regressions.h"
#include "reporter/alerts/triage.h"

namespace torchgauge::reporter {

struct Pruned;

// Entries in the feed: the newest regressions.
inline constexpr size_t kFeedEntries = 50;

// The page data for templates/regressions.md.mustache. `compared`: whether
// any build was compared (otherwise the page says comparisons are off).
// `pruned`: builds the retention policy pruned; their rows name the build
// and model without links, marked "(pruned)".
// `health`: the pipeline's own alerts (alerts/health.h), listed first.
// `change_points`: the steps the change-point search found over each run's
// whole history (alerts/change_points.h), listed with the alert that
// covers each, if any.
// `alerts`: the alerts with their triage (alerts/triage.h): the page lists
// them by state, and each regression row names its alert and that state.
// `triage`: the health alerts' triage (an acknowledged one shows its state).
mu::data RegressionsPageData(const std::vector<RegressionEvent>& events, bool compared, const Pruned* pruned = nullptr,
                             const std::vector<TriagedAlert>& alerts = {},
                             const std::vector<ChangePoint>& change_points = {},
                             const std::vector<HealthAlert>& health = {}, const TriageFile& triage = {});

// The Atom document: one entry per alert (alerts/alerts.h, with its triage
// state as a category "alert-state:<state>" and in its title) and per health
// alert (category "health:<kind>"), newest first by their latest change
// (the build, a recovery, a triage). An alert's entry links its alert page.
// `site_url` (may be empty) makes its links absolute; without it they are
// relative to the feed, which sits at the site root. `newest_build_at`: the
// feed's updated time when it has no entries.
std::string RegressionsAtom(const std::vector<TriagedAlert>& alerts, const std::vector<HealthAlert>& health,
                            const std::string& site_url, const std::string& newest_build_at);

// Links to the regressions page, its feed and the model grid for another
// page's data (regressions_href, regressions_feed, models_href); `base` as
// in BuildPageData (a non-empty base links the HTML pages absolutely).
void SetReaderLinks(mu::data& d, const Target& page, const std::string& base = "");

// A regression alert's Alert::still_present in words: "yes", "no", or "not
// measured"; an improvement's is a dash.
std::string StillPresent(const Alert& a);

// "urn:uuid:..." derived from `name` alone (RFC 4122 layout, version 8).
std::string NameUuid(const std::string& name);

}  // namespace torchgauge::reporter
