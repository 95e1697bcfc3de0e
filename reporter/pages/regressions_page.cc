#include "reporter/pages/regressions_page.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/io/hash.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/paths.h"
#include "reporter/pages/pruned.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

namespace {

const Target kPageMd{Kind::kRegressionsPage, "", "", "md"};
const Target kPageHtml{Kind::kRegressionsPage, "", "", "html"};
const Target kFeed{Kind::kRegressionsPage, "", "", "atom"};

core::Metric MetricOf(const FlaggedChange& f) { return core::MetricFromName(f.metric).value_or(core::Metric::kTime); }
std::string Config(const FlaggedChange& f) { return ConfigLabel(f.mode, f.backend, f.precision, f.batch_size); }
std::string Factor(const FlaggedChange& f) { return Num(f.ratio, "%.2f") + "\xC3\x97"; }  // "1.30×"
std::string BeforeAfter(const FlaggedChange& f) {
  return MetricValue(MetricOf(f), f.base_value) + " \xE2\x86\x92 " + MetricValue(MetricOf(f), f.new_value);
}
std::string Noise(const FlaggedChange& f) { return f.noise_percent ? Num(*f.noise_percent, "%.1f") + "%" : Dash(); }
std::string StateText(const RegressionEvent& e) {
  switch (e.state) {
    case RegressionState::kOpen:
      return "open";
    case RegressionState::kRecovered:
      return "recovered in " + e.state_build;
    case RegressionState::kPersisting:
      return "persisting (confirmed in " + e.state_build + ")";
  }
  return "open";
}
std::string Date(const std::string& started_at) { return started_at.size() >= 10 ? started_at.substr(0, 10) : Dash(); }

// Newest first: by the first build's start, then the stable key.
std::vector<const RegressionEvent*> NewestFirst(const std::vector<RegressionEvent>& events) {
  std::vector<const RegressionEvent*> out;
  for (const auto& e : events) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const RegressionEvent* a, const RegressionEvent* b) {
    if (a->started_at != b->started_at) return a->started_at > b->started_at;
    return a->Key() < b->Key();
  });
  return out;
}

bool IsPruned(const Pruned* pruned, const std::string& build) { return pruned && pruned->Has(build); }

// "A-0123456789ab · untriaged", or a dash for a row of no alert.
std::string AlertText(const TriagedAlert* a) {
  return a ? a->alert.id + " \xC2\xB7 " + TriageStateLabel(a->state) : Dash();
}

mu::data MarkdownRow(const RegressionEvent& e, bool pruned, const TriagedAlert* alert) {
  const FlaggedChange& f = e.change;
  mu::data r;
  Set(r, "alert", AlertText(alert));
  Set(r, "build", e.build);
  Set(r, "pruned", pruned);
  Set(r, "build_href", Href(kPageMd, {Kind::kComparePage, e.build, "", "md"}));
  Set(r, "date", Date(e.started_at));
  Set(r, "platform", f.platform);
  Set(r, "model", f.model);
  Set(r, "model_href", Href(kPageMd, {Kind::kModelPage, e.build, f.model, "html"}));
  Set(r, "domain", e.domain.empty() ? Dash() : e.domain);
  Set(r, "config", Config(f));
  Set(r, "metric", f.metric);
  Set(r, "factor", Factor(f));
  Set(r, "before_after", BeforeAfter(f));
  Set(r, "p_value", PValue(f.p_value));
  Set(r, "noise", Noise(f));
  Set(r, "state", StateText(e));
  return r;
}

std::string Cell(const std::string& text) { return "<td>" + HtmlEscape(text) + "</td>"; }
std::string LinkCell(const std::string& href, const std::string& text) {
  return "<td><a href=\"" + HtmlEscape(href) + "\">" + HtmlEscape(text) + "</a></td>";
}

// One row of the HTML table; its data-* attributes drive the filters. A
// pruned build's pages are gone: its cells name build and model unlinked.
std::string HtmlRow(const RegressionEvent& e, bool pruned, const TriagedAlert* alert) {
  const FlaggedChange& f = e.change;
  std::string row = "<tr data-platform=\"" + HtmlEscape(f.platform) + "\" data-domain=\"" + HtmlEscape(e.domain) +
                    "\" data-state=\"" + StateName(e.state) + "\" id=\"" + HtmlEscape(NameUuid(e.Key()).substr(9)) +
                    "\" data-alert-state=\"" + (alert ? TriageStateName(alert->state) : "") + "\">";
  row += (pruned ? Cell(e.build + " (pruned)")
                 : LinkCell(Href(kPageHtml, {Kind::kComparePage, e.build, "", "html"}), e.build)) +
         Cell(Date(e.started_at));
  row += Cell(f.platform) +
         (pruned ? Cell(f.model) : LinkCell(Href(kPageHtml, {Kind::kModelPage, e.build, f.model, "html"}), f.model));
  row += Cell(e.domain.empty() ? Dash() : e.domain) + Cell(Config(f)) + Cell(f.metric);
  row += "<td class=\"num\">" + HtmlEscape(Factor(f)) + "</td>" + Cell(BeforeAfter(f));
  row +=
      "<td class=\"num\">" + HtmlEscape(PValue(f.p_value)) + "</td><td class=\"num\">" + HtmlEscape(Noise(f)) + "</td>";
  row += alert
             ? "<td class=\"alert\"><a href=\"" +
                   HtmlEscape(Href(kPageHtml, {Kind::kAlertPage, "", alert->alert.id, "html"})) + "\">" +
                   HtmlEscape(alert->alert.id) + "</a> \xC2\xB7 " + HtmlEscape(TriageStateLabel(alert->state)) + "</td>"
             : Cell(Dash());
  row +=
      "<td class=\"state state-" + std::string(StateName(e.state)) + "\">" + HtmlEscape(StateText(e)) + "</td></tr>\n";
  return row;
}

std::string Select(const std::string& field, const std::string& label, const std::set<std::string>& values) {
  std::string s = "<label>" + label + " <select data-filter=\"" + field + "\"><option value=\"\">all</option>";
  for (const auto& v : values) s += "<option value=\"" + HtmlEscape(v) + "\">" + HtmlEscape(v) + "</option>";
  return s + "</select></label>\n";
}

// The filters and the table as one raw HTML block (no blank line inside).
std::string HtmlTable(const std::vector<const RegressionEvent*>& events, const Pruned* pruned,
                      const std::vector<TriagedAlert>& alerts) {
  std::set<std::string> platforms, domains, states;
  for (const auto* e : events) {
    platforms.insert(e->change.platform);
    if (!e->domain.empty()) domains.insert(e->domain);
    states.insert(StateName(e->state));
  }
  std::string h = "<form class=\"filters\" data-filters-for=\"regressions\">\n";
  h += Select("platform", "Platform", platforms) + Select("domain", "Domain", domains) +
       Select("state", "State", states);
  h += "<output data-shown-for=\"regressions\">" + std::to_string(events.size()) + " of " +
       std::to_string(events.size()) + " shown</output>\n</form>\n";
  h += "<table id=\"regressions\" class=\"filterable\">\n<thead><tr><th>Build</th><th>Date</th><th>Platform</th>"
       "<th>Model</th><th>Domain</th><th>Configuration</th><th>Metric</th><th>Factor</th><th>Before \xE2\x86\x92 "
       "after</th>"
       "<th>p</th><th>Noise band</th><th>Alert</th><th>State</th></tr></thead>\n<tbody>\n";
  for (const auto* e : events) h += HtmlRow(*e, IsPruned(pruned, e->build), AlertOfEvent(alerts, *e));
  return h + "</tbody>\n</table>\n";
}

std::string Range(const Alert& a) { return (a.base_build.empty() ? "?" : a.base_build) + ".." + a.build; }

// A note longer than this folds, so that one long note does not make its
// row hundreds of lines tall: the HTML shows its start and opens the rest in
// <details>, the Markdown shows its start and links the alert's page, which
// has it whole. Both are Markdown, rendered with {{{...}}}.
constexpr size_t kNoteFolded = 160;
void SetNote(mu::data& r, const std::string& note, const std::string& alert_href) {
  if (note.size() <= kNoteFolded) {
    Set(r, "note_html", MarkdownEscape(note));
    Set(r, "note_md", MarkdownEscape(note));
    return;
  }
  size_t cut = 120;
  while (cut > 0 && (static_cast<unsigned char>(note[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  const std::string start = MarkdownEscape(note.substr(0, cut)) + "\xE2\x80\xA6";
  Set(r, "note_html", "<details><summary>" + start + "</summary>" + MarkdownEscape(note) + "</details>");
  Set(r, "note_md", start + " ([the whole note](" + alert_href + "))");
}

}  // namespace

std::string StillPresent(const Alert& a) {
  if (!a.regression) return Dash();
  if (!a.still_present) return "not measured";
  return *a.still_present ? "yes" : "no";
}

namespace {
mu::data AlertRow(const TriagedAlert& t) {
  const Alert& a = t.alert;
  mu::data r;
  Set(r, "id", a.id);
  Set(r, "href", Href(kPageMd, {Kind::kAlertPage, "", a.id, "md"}));
  Set(r, "range", Range(a));
  Set(r, "date", Date(a.started_at));
  Set(r, "raised_in", a.raised_in.empty() ? a.build : a.raised_in);
  Set(r, "platform", a.platform);
  Set(r, "direction", a.regression ? "regression" : "improvement");
  Set(r, "runs", std::to_string(a.runs));
  Set(r, "geomean",
      Num(a.geomean, "%.3f") + "\xC3\x97 " + a.geomean_metric + " over " + std::to_string(a.geomean_runs));
  const FlaggedChange& top = a.rows.front();
  Set(r, "largest", top.model + " " + Config(top) + " " + top.metric + " " + Factor(top));
  Set(r, "still_present", StillPresent(a));
  Set(r, "owner", t.entry && !t.entry->owner.empty() ? t.entry->owner : Dash());
  std::string note = t.entry ? t.entry->note : "";
  if (t.state == TriageState::kRecovered)
    note += (note.empty() ? "" : " ") + std::string("(recovered in ") + a.recovered_in + ")";
  if (!a.reverts.empty()) note += (note.empty() ? "" : " ") + std::string("(reverts ") + a.reverts + ")";
  for (const auto& other : a.related)
    note += (note.empty() ? "" : " ") + std::string("(same range on another platform: ") + other + ")";
  SetNote(r, note.empty() ? Dash() : note, Href(kPageMd, {Kind::kAlertPage, "", a.id, "md"}));
  std::string links;
  if (t.entry) {
    for (const auto& l : t.entry->links) links += (links.empty() ? "" : " ") + MarkdownUrlLink(l);
  }
  Set(r, "links", links.empty() ? MarkdownEscape(Dash()) : links);  // Markdown: {{{links}}}
  return r;
}

// Newest first, as the other tables.
void SetHealth(mu::data& d, const std::vector<HealthAlert>& health, const TriageFile& triage) {
  mu::data rows = List();
  for (auto it = health.rbegin(); it != health.rend(); ++it) {
    mu::data r;
    Set(r, "id", it->id);
    Set(r, "kind", it->kind);
    Set(r, "platform", it->platform);
    Set(r, "build", it->build);
    Set(r, "date", Date(it->started_at));
    Set(r, "detail", it->detail);
    const TriageEntry* e = triage.Find(it->id);
    Set(r, "state", TriageStateLabel(e ? e->state : TriageState::kUntriaged));
    Set(r, "owner", e && !e->owner.empty() ? e->owner : Dash());
    Append(rows, std::move(r));
  }
  Set(d, "has_health", !health.empty());
  Set(d, "health_total", std::to_string(health.size()));
  Set(d, "health", std::move(rows));
}

// Newest first, as the other tables.
void SetChangePoints(mu::data& d, const std::vector<ChangePoint>& cps) {
  mu::data rows = List();
  int uncovered = 0;
  for (auto it = cps.rbegin(); it != cps.rend(); ++it) {
    const ChangePoint& c = *it;
    mu::data r;
    Set(r, "range", c.build_before + ".." + c.build);
    Set(r, "date", Date(c.started_at));
    Set(r, "platform", c.platform);
    Set(r, "model", c.model);
    Set(r, "config", c.config);
    Set(r, "before_after",
        MetricValue(core::Metric::kTime, c.before_ms) + " \xE2\x86\x92 " +
            MetricValue(core::Metric::kTime, c.after_ms));
    Set(r, "factor", Num(c.Factor(), "%.2f") + "\xC3\x97");
    Set(r, "t", Num(c.t, "%.1f"));
    Set(r, "raised_in", c.raised_in.empty() ? c.build : c.raised_in);
    Set(r, "alert", c.alert_id.empty() ? std::string("none") : c.alert_id);
    Set(r, "alert_href", c.alert_id.empty() ? std::string() : Href(kPageMd, {Kind::kAlertPage, "", c.alert_id, "md"}));
    uncovered += c.alert_id.empty();
    Append(rows, std::move(r));
  }
  Set(d, "has_change_points", !cps.empty());
  Set(d, "change_points_total", std::to_string(cps.size()));
  Set(d, "change_points_uncovered", std::to_string(uncovered));
  Set(d, "change_points", std::move(rows));
}

// The alerts grouped by their state, in the order of kTriageStates.
void SetAlertsByState(mu::data& d, const std::vector<TriagedAlert>& alerts) {
  mu::data groups = List();
  std::string states;  // "3 untriaged, 1 investigating": the header counts alerts, not metric rows
  for (TriageState s : kTriageStates) {
    mu::data rows = List();
    int n = 0;
    // Newest first within a state.
    for (auto it = alerts.rbegin(); it != alerts.rend(); ++it) {
      if (it->state != s) continue;
      Append(rows, AlertRow(*it));
      ++n;
    }
    if (n == 0) continue;
    states += (states.empty() ? "" : ", ") + std::to_string(n) + " " + TriageStateLabel(s);
    mu::data g;
    Set(g, "state", TriageStateLabel(s));
    Set(g, "state_name", TriageStateName(s));
    Set(g, "count", std::to_string(n));
    Set(g, "alerts", std::move(rows));
    Append(groups, std::move(g));
  }
  Set(d, "has_alerts", !alerts.empty());
  Set(d, "alerts_total", std::to_string(alerts.size()));
  Set(d, "alert_states", states);
  Set(d, "alert_groups", std::move(groups));
}

}  // namespace

mu::data RegressionsPageData(const std::vector<RegressionEvent>& events, bool compared, const Pruned* pruned,
                             const std::vector<TriagedAlert>& alerts, const std::vector<ChangePoint>& change_points,
                             const std::vector<HealthAlert>& health, const TriageFile& triage) {
  const auto sorted = NewestFirst(events);
  mu::data d;
  Set(d, "home", Href(kPageMd, {Kind::kIndexPage, "", "", "md"}));
  Set(d, "feed", Href(kPageMd, kFeed));
  Set(d, "models_href", Href(kPageMd, {Kind::kModelGridPage, "", "", "md"}));
  Set(d, "readers_js", Href(kPageHtml, {Kind::kAsset, "", "readers.js", ""}));
  Set(d, "compared", compared);
  Set(d, "has_events", !sorted.empty());
  std::map<RegressionState, int> counts;
  mu::data rows = List();
  for (const auto* e : sorted) {
    counts[e->state]++;
    Append(rows, MarkdownRow(*e, IsPruned(pruned, e->build), AlertOfEvent(alerts, *e)));
  }
  Set(d, "rows", std::move(rows));
  Set(d, "total", std::to_string(sorted.size()));
  // The rows are per metric; the runs behind them are what compare counts.
  std::set<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>> runs;
  for (const auto* e : sorted) {
    const FlaggedChange& f = e->change;
    runs.insert({e->build, f.platform, f.model, f.mode, f.backend, f.precision});
  }
  Set(d, "total_runs", std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs"));
  Set(d, "open", std::to_string(counts[RegressionState::kOpen]));
  Set(d, "recovered", std::to_string(counts[RegressionState::kRecovered]));
  Set(d, "persisting", std::to_string(counts[RegressionState::kPersisting]));
  Set(d, "table_html", HtmlTable(sorted, pruned, alerts));
  SetAlertsByState(d, alerts);
  SetChangePoints(d, change_points);
  SetHealth(d, health, triage);
  Set(d, "has_sections", !alerts.empty() || !change_points.empty() || !health.empty());
  return d;
}

void SetReaderLinks(mu::data& d, const Target& page, const std::string& base) {
  const std::string ext = base.empty() ? page.ext : "html";
  Set(d, "regressions_href", base + Href(page, {Kind::kRegressionsPage, "", "", ext}));
  Set(d, "regressions_feed", base + Href(page, kFeed));
  Set(d, "models_href", base + Href(page, {Kind::kModelGridPage, "", "", ext}));
  Set(d, "compare_href", base + Href(page, {Kind::kCompareBuildsPage, "", "", "html"}));
}

std::string NameUuid(const std::string& name) {
  const uint64_t hi = core::Fingerprint().Add("torchgauge uuid hi").Add(name).value();
  const uint64_t lo = core::Fingerprint().Add("torchgauge uuid lo").Add(name).value();
  char buf[64];
  std::snprintf(buf, sizeof buf, "urn:uuid:%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>((hi & 0x0fff) | 0x8000),
                static_cast<unsigned>(((lo >> 48) & 0x3fff) | 0x8000),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

namespace {
std::string Link(const std::string& site_url, const Target& t) {
  return site_url.empty() ? SitePath(t) : SiteUrl(site_url, t);
}

constexpr size_t kFeedRunsListed = 3;  // the largest runs an alert's entry names

// The latest of the alert's own times: its build, its recovery, its triage.
std::string Updated(const TriagedAlert& t, const std::string& fallback) {
  std::string u = t.alert.started_at.empty() ? fallback : t.alert.started_at;
  u = std::max(u, t.alert.recovered_at);
  if (t.entry) u = std::max(u, t.entry->updated_at);
  return u;
}

std::string AlertEntry(const TriagedAlert& t, const std::string& site_url, const std::string& fallback) {
  const Alert& a = t.alert;
  const std::string kind = a.regression ? "Regression" : "Improvement";
  const std::string title = kind + " alert " + a.id + " on " + a.platform + ": " + std::to_string(a.runs) +
                            " run(s), geomean " + Num(a.geomean, "%.2f") + "\xC3\x97 " + a.geomean_metric +
                            ", builds " + a.base_build + " \xE2\x86\x92 " + a.build + " (" + TriageStateLabel(t.state) +
                            ")";
  std::string runs;
  for (size_t i = 0; i < a.rows.size() && i < kFeedRunsListed; ++i) {
    const FlaggedChange& f = a.rows[i];
    runs += std::string(i ? "; " : "") + f.model + " " + Config(f) + " " + f.metric + " " + BeforeAfter(f) + " (" +
            Factor(f) + ")";
  }
  if (a.rows.size() > kFeedRunsListed) runs += "; and " + std::to_string(a.rows.size() - kFeedRunsListed) + " more";
  std::string summary = kind + " in build " + a.build + " (" + Date(a.started_at) + ") on " + a.platform +
                        ", against " + a.base_build + ": " + runs + ". State: " + TriageStateLabel(t.state) +
                        (a.recovered ? ", recovered in " + a.recovered_in : std::string()) + ".";
  if (t.entry && !t.entry->owner.empty()) summary += " Owner: " + t.entry->owner + ".";
  if (t.entry && !t.entry->note.empty()) summary += " Note: " + t.entry->note;
  std::string x = "  <entry>\n    <id>" + NameUuid("torchgauge alert " + a.id) + "</id>\n";
  x += "    <title>" + HtmlEscape(title) + "</title>\n";
  x += "    <published>" + HtmlEscape(a.started_at.empty() ? fallback : a.started_at) + "</published>\n";
  x += "    <updated>" + HtmlEscape(Updated(t, fallback)) + "</updated>\n";
  x += "    <link rel=\"alternate\" type=\"text/html\" href=\"" +
       HtmlEscape(Link(site_url, {Kind::kAlertPage, "", a.id, "html"})) + "\"/>\n";
  x += "    <category term=\"" + std::string(a.regression ? "regression" : "improvement") + "\"/>\n";
  x += "    <category term=\"alert-state:" + std::string(TriageStateName(t.state)) + "\"/>\n";
  x += "    <summary type=\"text\">" + HtmlEscape(summary) + "</summary>\n  </entry>\n";
  return x;
}

std::string HealthEntry(const HealthAlert& h, const std::string& site_url, const std::string& fallback) {
  const std::string at = h.started_at.empty() ? fallback : h.started_at;
  std::string x = "  <entry>\n    <id>" + NameUuid("torchgauge health " + h.id) + "</id>\n";
  x += "    <title>" +
       HtmlEscape("Pipeline health alert " + h.id + " (" + h.kind + ") on " + h.platform + " in build " + h.build) +
       "</title>\n";
  x += "    <published>" + HtmlEscape(at) + "</published>\n    <updated>" + HtmlEscape(at) + "</updated>\n";
  x += "    <link rel=\"alternate\" type=\"text/html\" href=\"" + HtmlEscape(Link(site_url, kPageHtml)) + "\"/>\n";
  x += "    <category term=\"health:" + HtmlEscape(h.kind) + "\"/>\n";
  x += "    <summary type=\"text\">" + HtmlEscape(h.detail) + "</summary>\n  </entry>\n";
  return x;
}
}  // namespace

std::string RegressionsAtom(const std::vector<TriagedAlert>& alerts, const std::vector<HealthAlert>& health,
                            const std::string& site_url, const std::string& newest_build_at) {
  const std::string fallback = newest_build_at.empty() ? "1970-01-01T00:00:00Z" : newest_build_at;
  // (updated, entry), newest first.
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& t : alerts) entries.push_back({Updated(t, fallback), AlertEntry(t, site_url, fallback)});
  for (const auto& h : health) {
    entries.push_back({h.started_at.empty() ? fallback : h.started_at, HealthEntry(h, site_url, fallback)});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::string updated = entries.empty() ? fallback : entries.front().first;
  std::string x = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n";
  x += "  <title>TorchGauge alerts</title>\n";
  x += "  <subtitle>One entry per alert (every run that changed at one build range on one platform) and per "
       "pipeline health alert, newest first, with its triage state</subtitle>\n";
  x += "  <id>" + NameUuid("torchgauge regressions feed " + site_url) + "</id>\n";
  x += "  <updated>" + HtmlEscape(updated) + "</updated>\n";
  x += "  <link rel=\"self\" type=\"application/atom+xml\" href=\"" + HtmlEscape(Link(site_url, kFeed)) + "\"/>\n";
  x += "  <link rel=\"alternate\" type=\"text/html\" href=\"" + HtmlEscape(Link(site_url, kPageHtml)) + "\"/>\n";
  x += "  <author><name>torchgauge-report</name></author>\n  <generator>torchgauge-report</generator>\n";
  for (size_t i = 0; i < entries.size() && i < kFeedEntries; ++i) x += entries[i].second;
  return x + "</feed>\n";
}

}  // namespace torchgauge::reporter
