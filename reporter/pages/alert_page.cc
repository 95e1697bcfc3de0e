#include "reporter/pages/alert_page.h"

#include <algorithm>
#include <map>
#include <set>

#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/paths.h"
#include "reporter/pages/charts.h"
#include "reporter/pages/figures.h"
#include "reporter/pages/pruned.h"
#include "reporter/pages/regressions_page.h"

namespace torchgauge::reporter {

namespace {

std::string Config(const FlaggedChange& f) { return ConfigLabel(f.mode, f.backend, f.precision, f.batch_size); }
core::Metric MetricOf(const FlaggedChange& f) { return core::MetricFromName(f.metric).value_or(core::Metric::kTime); }
std::string Quote(const std::string& s) { return "'" + s + "'"; }

// The alert's rows grouped by what one collector command can select:
// (mode, backend, precision) -> the models, sorted.
std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> Selections(const Alert& a) {
  std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> out;
  for (const auto& f : a.rows) out[{f.mode, f.backend, f.precision}].insert(f.model);
  return out;
}
std::string ModelRegex(const std::set<std::string>& models) {
  std::string r;
  for (const auto& m : models) r += (r.empty() ? "" : "|") + m;
  return models.size() == 1 ? "^" + r + "$" : "^(" + r + ")$";
}

const BuildChanges* ChangesOf(const std::vector<BuildChanges>& changes, const std::string& build) {
  for (const auto& c : changes) {
    if (c.build == build) return &c;
  }
  return nullptr;
}
const std::map<std::string, std::string>& IdentityOf(const BuildChanges* c, const std::string& platform) {
  static const std::map<std::string, std::string> kNone;
  if (!c) return kNone;
  auto it = c->identities.find(platform);
  return it == c->identities.end() ? kNone : it->second;
}
// The revision bisect names a build by: its torch commit, else its version, else its id.
std::string Revision(const std::map<std::string, std::string>& id, const std::string& build) {
  for (const char* k : {"torch commit", "torch version"}) {
    auto it = id.find(k);
    if (it != id.end()) return it->second;
  }
  return build;
}
mu::data RunRows(const Alert& a) {
  mu::data rows = List();
  for (const auto& f : a.rows) {
    mu::data r;
    Set(r, "model", f.model);
    Set(r, "config", Config(f));
    Set(r, "metric", f.metric);
    Set(r, "factor", Num(f.ratio, "%.2f") + "\xC3\x97");
    Set(r, "before_after",
        MetricValue(MetricOf(f), f.base_value) + " \xE2\x86\x92 " + MetricValue(MetricOf(f), f.new_value));
    Set(r, "p_value", PValue(f.p_value));
    Set(r, "noise", f.noise_percent ? Num(*f.noise_percent, "%.1f") + "%" : Dash());
    Append(rows, std::move(r));
  }
  return rows;
}

// The time rows' runs, in the alert's order (largest first).
std::vector<std::pair<std::string, std::string>> TrendRuns(const Alert& a) {
  std::vector<std::pair<std::string, std::string>> runs;
  for (const auto& f : a.rows) {
    if (f.metric != a.geomean_metric) continue;
    std::pair<std::string, std::string> key{f.model, Config(f)};
    if (std::find(runs.begin(), runs.end(), key) == runs.end()) runs.push_back(key);
  }
  return runs;
}

// The trend around the step: a table (builds x runs, medians in ms; "not
// measured" where a build has no median of the run) and the chart's points.
void SetTrend(mu::data& d, const AlertPageInputs& in, Figures& figures, const Target& page) {
  const Alert& a = in.alert.alert;
  const auto runs = TrendRuns(a);
  size_t at = in.history.size();
  for (size_t i = 0; i < in.history.size(); ++i) {
    if (in.history[i].id == a.build) at = i;
  }
  std::vector<TrendPoint> points;
  // Nightly builds can start hours apart, so the start time, not only the date.
  std::string header = "| Build | Started (UTC) |", rule = "|---|---|";
  for (const auto& [model, config] : runs) {
    header += " " + MarkdownEscape(model + " " + config) + " |";
    rule += "--:|";
  }
  std::string table = header + "\n" + rule + "\n";
  const size_t k = static_cast<size_t>(kAlertTrendBuilds);
  const size_t from = at == in.history.size() ? at : (at >= k ? at - k : 0);
  const size_t to = at == in.history.size() ? at : std::min(in.history.size(), at + k);
  for (size_t i = from; i < to; ++i) {
    const BuildSummary& b = in.history[i];
    std::string line = "| " + MarkdownEscape(b.id) + (b.id == a.build ? " (the step)" : "") + " | " +
                       MarkdownEscape(StartedMinute(b.started_at)) + " |";
    for (const auto& [model, config] : runs) {
      std::optional<double> v;
      for (const auto& p : b.platforms) {
        if (p.id != a.platform) continue;
        for (const auto& m : p.medians) {
          if (m.model != model || m.config != config) continue;
          v = m.median_ms;
          points.push_back({b.id, b.started_at, model + " " + config, m.median_ms, "", m.noisy});
        }
      }
      line += " " + (v ? MetricValue(core::Metric::kTime, *v) : std::string("not measured")) + " |";
    }
    table += line + "\n";
  }
  Set(d, "trend_table", table);
  Set(d, "has_trend", !points.empty());
  if (!points.empty()) {
    const std::string title = "Median time around " + a.build + " on " + a.platform;
    Set(d, "trend_chart",
        figures.Place(page, {Kind::kIndexFigure, "", "alert-" + a.id, ""}, TrendChart(points, title, "median ms"),
                      title));
  }
}

void SetIdentities(mu::data& d, const AlertPageInputs& in) {
  const Alert& a = in.alert.alert;
  const auto& base = IdentityOf(ChangesOf(in.changes, a.base_build), a.platform);
  const auto& now = IdentityOf(ChangesOf(in.changes, a.build), a.platform);
  mu::data rows = List();
  int changed = 0;
  for (const auto& r : IdentityDiff(base, now)) {
    mu::data x;
    Set(x, "field", r.field);
    Set(x, "base", r.base.empty() ? std::string("not recorded") : r.base);
    Set(x, "now", r.now.empty() ? std::string("not recorded") : r.now);
    Set(x, "changed", r.changed ? std::string("yes") : std::string(""));
    changed += r.changed;
    Append(rows, std::move(x));
  }
  Set(d, "has_identities", !base.empty() || !now.empty());
  Set(d, "identities", std::move(rows));
  Set(d, "identities_changed", std::to_string(changed));
  mu::data cmds = List();
  for (const auto& c : ReproduceCommands(a, AlertDevice(now))) Append(cmds, mu::data(c));
  Set(d, "reproduce", std::move(cmds));
  mu::data bis = List();
  for (const auto& c : BisectCommands(a, Revision(base, a.base_build), Revision(now, a.build), AlertDevice(now)))
    Append(bis, mu::data(c));
  Set(d, "bisect", std::move(bis));
}

void SetTriage(mu::data& d, const TriagedAlert& t) {
  Set(d, "state", TriageStateLabel(t.state));
  Set(d, "owner", t.entry && !t.entry->owner.empty() ? t.entry->owner : Dash());
  Set(d, "note", t.entry && !t.entry->note.empty() ? t.entry->note : Dash());
  mu::data links = List();
  if (t.entry) {
    for (const auto& l : t.entry->links) Append(links, mu::data(MarkdownUrlLink(l)));  // Markdown: {{{.}}}
  }
  Set(d, "links", std::move(links));
  Set(d, "recovered", t.state == TriageState::kRecovered);
  Set(d, "recovered_in", t.alert.recovered_in);
}

void SetCulprit(mu::data& d, const core::Culprit* c) {
  Set(d, "has_culprit", c != nullptr);
  if (!c) return;
  Set(d, "culprit_found", !c->first_bad.empty());
  Set(d, "culprit_first_bad", c->first_bad);
  Set(d, "culprit_last_good", c->last_good);
  Set(d, "culprit_found_at", c->found_at.empty() ? Dash() : c->found_at);
  std::string skipped;
  for (const auto& s : c->skipped_before) skipped += (skipped.empty() ? "" : ", ") + s;
  Set(d, "culprit_skipped", skipped);
  mu::data steps = List();
  for (const auto& [rev, verdict] : c->steps) {
    mu::data x;
    Set(x, "revision", rev);
    Set(x, "verdict", verdict);
    Append(steps, std::move(x));
  }
  Set(d, "culprit_steps", std::move(steps));
}

void SetChangePoints(mu::data& d, const AlertPageInputs& in) {
  mu::data rows = List();
  for (const auto& c : in.change_points) {
    if (c.alert_id != in.alert.alert.id) continue;
    mu::data r;
    Set(r, "model", c.model);
    Set(r, "config", c.config);
    Set(r, "range", c.build_before + ".." + c.build);
    Set(r, "factor", Num(c.Factor(), "%.2f") + "\xC3\x97");
    Set(r, "raised_in", c.raised_in.empty() ? c.build : c.raised_in);
    Append(rows, std::move(r));
  }
  Set(d, "change_points", std::move(rows));
}

}  // namespace

std::vector<IdentityRow> IdentityDiff(const std::map<std::string, std::string>& base,
                                      const std::map<std::string, std::string>& now) {
  std::set<std::string> fields;
  for (const auto& [k, v] : base) fields.insert(k);
  for (const auto& [k, v] : now) fields.insert(k);
  std::vector<IdentityRow> out;
  for (const auto& f : fields) {
    IdentityRow r;
    r.field = f;
    if (auto it = base.find(f); it != base.end()) r.base = it->second;
    if (auto it = now.find(f); it != now.end()) r.now = it->second;
    r.changed = r.base != r.now;
    out.push_back(std::move(r));
  }
  return out;
}

std::string StartedMinute(const std::string& iso) {
  if (iso.size() < 16 || iso[10] != 'T' || iso[13] != ':') return iso;
  return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

std::string AlertDevice(const std::map<std::string, std::string>& identity) {
  if (auto it = identity.find("vendor"); it != identity.end()) return it->second == "CPU" ? "cpu" : "cuda";
  if (auto d = identity.find("device"), c = identity.find("CPU model");
      d != identity.end() && c != identity.end() && d->second == c->second) {
    return "cpu";
  }
  return identity.count("CUDA runtime") || identity.count("HIP runtime") ? "cuda" : "cpu";
}

std::vector<std::string> ReproduceCommands(const Alert& a, const std::string& device) {
  std::vector<std::string> out;
  for (const auto& [side, build] : {std::pair{"base", a.base_build}, std::pair{"new", a.build}}) {
    out.push_back(std::string("# with the collector built against the ") + side + " build's LibTorch (" + build + ")");
    for (const auto& [sel, models] : Selections(a)) {
      const auto& [mode, backend, precision] = sel;
      out.push_back("torchgauge-collect run --build-id " + build + "-repro --out repro --device " + device +
                    " --model " + Quote(ModelRegex(models)) + " --mode " + mode + " --backend " + backend +
                    " --precision " + precision + " --processes 5 --resume");
    }
  }
  out.push_back("torchgauge-report compare --results repro --base " + a.base_build + "-repro --new " + a.build +
                "-repro --markdown repro.md");
  return out;
}

std::vector<std::string> BisectCommands(const Alert& a, const std::string& good, const std::string& bad,
                                        const std::string& device) {
  std::vector<std::string> out;
  if (good == bad) {
    out.push_back("# both builds ran the same torch (" + good +
                  "): the change is not in torch but in the machine, the collector or the suite, and bisecting "
                  "torch revisions cannot find it; measure both builds again side by side (above)");
    return out;
  }
  out.push_back("# candidates.txt: the revisions between " + good + " and " + bad +
                ", oldest first, ending with the bad one (docs/nightly.md, \"bisect over builds\")");
  for (const auto& [sel, models] : Selections(a)) {
    const auto& [mode, backend, precision] = sel;
    out.push_back("torchgauge-collect bisect --good " + Quote(good) + " --bad " + Quote(bad) +
                  " --candidates candidates.txt --command '<build or install {rev}>' --collector "
                  "'<the collector built against {rev}>' --model " +
                  Quote(ModelRegex(models)) + " --mode " + mode + " --backend " + backend + " --precision " +
                  precision + " --device " + device);
  }
  // --alert alone would take the build ids as its endpoints; the same good
  // and bad as above keep one candidates.txt (torch revisions) for both.
  out.push_back(
      "# or from the alert itself: its runs from the site's alerts.json, the same candidates.txt, the culprit "
      "recorded in RESULTS/culprits.json");
  out.push_back("torchgauge-collect bisect --alert " + a.id + " --alerts SITE/alerts.json --good " + Quote(good) +
                " --bad " + Quote(bad) +
                " --candidates candidates.txt --command '<build or install {rev}>' "
                "--collector '<the collector built against {rev}>' --device " +
                device + " --results RESULTS");
  return out;
}

mu::data AlertPageData(const AlertPageInputs& in, Figures& figures) {
  const Alert& a = in.alert.alert;
  const Target md{Kind::kAlertPage, "", a.id, "md"};
  mu::data d;
  Set(d, "home", Href(md, {Kind::kIndexPage, "", "", "md"}));
  Set(d, "regressions_href", Href(md, {Kind::kRegressionsPage, "", "", "md"}) + "#" + a.id);
  const bool pruned = in.pruned && in.pruned->Has(a.build);
  Set(d, "has_compare", !pruned);
  Set(d, "compare_href", pruned ? std::string() : Href(md, {Kind::kComparePage, a.build, "", "md"}));
  Set(d, "id", a.id);
  Set(d, "kind", a.regression ? "regression" : "improvement");
  Set(d, "platform", a.platform);
  Set(d, "base_build", a.base_build);
  Set(d, "build", a.build);
  Set(d, "date", a.started_at.substr(0, 10));
  Set(d, "runs", std::to_string(a.runs));
  Set(d, "geomean", Num(a.geomean, "%.3f") + "\xC3\x97");
  Set(d, "geomean_metric", a.geomean_metric);
  Set(d, "geomean_runs", std::to_string(a.geomean_runs));
  Set(d, "rows", RunRows(a));
  Set(d, "has_still_present", a.regression && !a.newest_build.empty());
  mu::data related = List();
  for (const auto& id : a.related) {
    mu::data r;
    Set(r, "id", id);
    Set(r, "href", Href(md, {Kind::kAlertPage, "", id, "md"}));
    Append(related, std::move(r));
  }
  Set(d, "has_related", !a.related.empty());
  Set(d, "related", std::move(related));
  Set(d, "still_present", StillPresent(a));
  Set(d, "newest_build", a.newest_build);
  SetTriage(d, in.alert);
  SetTrend(d, in, figures, md);
  SetIdentities(d, in);
  SetChangePoints(d, in);
  SetCulprit(d, in.culprit);
  return d;
}

}  // namespace torchgauge::reporter
