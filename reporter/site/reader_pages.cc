// The pages over the whole history for readers: the regressions page and
// feed (pages/regressions_page.h), the model grid (pages/model_grid.h) and the page
// comparing any two builds (compare/browser_page.h). They are
// assembled on every render from the per-build caches, so they need no
// build's results.
#include <algorithm>
#include <iostream>
#include <map>

#include "reporter/compare/browser_page.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/writer.h"
#include "reporter/pages/alert_page.h"
#include "reporter/pages/model_grid.h"
#include "reporter/pages/regressions_page.h"
#include "reporter/alerts/alerts.h"
#include "reporter/alerts/change_points.h"
#include "reporter/alerts/health.h"
#include "reporter/alerts/tracking.h"
#include "reporter/alerts/triage.h"
#include "reporter/site/page_writer.h"

namespace torchgauge::reporter {

namespace {
// The triage this render applies. A malformed <results>/triage.json (a git
// conflict left in it, a bad hand edit) must not stop the render, nor the
// nightly's comparison that runs after it: the site then keeps the triage
// of the last render that read the file whole (its copy under
// .torchgauge/), and `problem` says what is wrong. The results' file is
// never rewritten here: it is the team's to fix.
TriageFile ReadTriageOrLastGood(const SiteOptions& o, SiteWriter& w, std::string* problem) {
  const std::filesystem::path file = TriagePath(o.results);
  const std::string applied = SitePath({Kind::kTriageApplied, "", "", ""});
  try {
    TriageFile t = ReadTriage(file);
    w.Write(applied, ToJson(t).dump(1) + "\n");
    return t;
  } catch (const std::exception& e) {
    *problem = e.what();
  }
  TriageFile last;
  try {
    last = ReadTriage(o.out / applied);
  } catch (const std::exception& e) {
    std::cerr << "warning: " << e.what() << "\n";  // no usable last state either: none applied
  }
  std::cerr << "warning: " << *problem << "\nwarning: " << file.string()
            << " was not read: the site shows the triage of the last render that read it (" << last.alerts.size()
            << " entries); fix the file (build exits " << kExitTriageMalformed << ")\n";
  return last;
}
}  // namespace

std::string PageWriter::WriteReaderPages(const std::vector<BuildSummary>& history,
                                         const std::vector<BuildChanges>& changes, const Pruned* pruned) {
  const std::vector<RegressionEvent> events = TrackRegressions(changes);
  // The triage is read on every render: a state set since the last render
  // shows at once, and no build's pages depend on it.
  std::string triage_problem;
  const TriageFile triage = ReadTriageOrLastGood(o_, w_, &triage_problem);
  const auto culprits = core::ReadCulprits(core::CulpritsPath(o_.results));
  // Alerts from the whole history (issue 60): the search replays it night
  // by night, so each change has the night that raised it.
  const std::vector<HistoryChange> found = FindHistoryChanges(history);
  std::vector<Alert> grouped = BuildAlerts(changes, events, history, found);
  MarkStillPresent(grouped, history);
  std::vector<ChangePoint> steps = ChangePointsOf(found, history);
  for (auto& c : steps) {
    if (const Alert* a = CoveringAlert(grouped, c)) c.alert_id = a->id;
  }
  const std::vector<TriagedAlert> alerts = ApplyTriage(std::move(grouped), triage);
  HealthOptions health_options;
  health_options.max_noisy_percent = o_.compare_options.max_noisy_percent;
  const std::vector<HealthAlert> health = CheckHealth(changes, history, health_options);
  for (const auto& id : UnknownTriageIds(alerts, triage)) {
    if (std::any_of(health.begin(), health.end(), [&](const HealthAlert& h) { return h.id == id; })) continue;
    std::cerr << "warning: " << TriagePath(o_.results).string() << ": alerts." << id
              << " names no alert of this site\n";
  }
  mu::data d = RegressionsPageData(events, o_.compare, pruned, alerts, steps, health, triage);
  r_.Page(w_, PageKind::kRegressions, d, {Kind::kRegressionsPage, "", "", "md"},
          {Kind::kRegressionsPage, "", "", "html"}, "Regressions · TorchGauge");
  for (const auto& t : alerts) {
    auto culprit = culprits.find(t.alert.id);
    mu::data ad = AlertPageData(
        {t, history, changes, steps, pruned, culprit == culprits.end() ? nullptr : &culprit->second}, ctx_.figures);
    r_.Page(w_, PageKind::kAlert, ad, {Kind::kAlertPage, "", t.alert.id, "md"},
            {Kind::kAlertPage, "", t.alert.id, "html"}, "Alert " + t.alert.id + " · TorchGauge");
  }
  // The rules the alerts were flagged under: the nightly passes the same
  // ones to `compare`, and `track` shows them in its comment.
  const nlohmann::json rules = o_.compare ? RulesJson(o_.compare_options) : nlohmann::json(nullptr);
  const std::string newest_at = history.empty() ? "" : history.back().started_at;
  w_.Write(SitePath({Kind::kRegressionsPage, "", "", "atom"}), RegressionsAtom(alerts, health, o_.site_url, newest_at));
  w_.Write(SitePath({Kind::kAlertsData, "", "", ""}),
           AlertsJson(alerts, health, culprits, triage, rules).dump(1) + "\n");
  // A model's domain as its newest build records it.
  std::map<std::string, std::string> domains;
  for (const auto& c : changes) {
    for (const auto& [model, domain] : c.domains) domains[model] = domain;
  }
  mu::data g = ModelGridPageData(BuildModelGrid(history, domains, o_.trend_builds));
  r_.Page(w_, PageKind::kModelGrid, g, {Kind::kModelGridPage, "", "", "md"}, {Kind::kModelGridPage, "", "", "html"},
          "Models · TorchGauge");
  mu::data c = ComparePageData(o_.compare_options, o_.site_url);
  r_.HtmlPage(w_, PageKind::kCompare, c, {Kind::kCompareBuildsPage, "", "", "html"}, "Compare builds · TorchGauge",
              nullptr, "");
  return triage_problem;
}

}  // namespace torchgauge::reporter
