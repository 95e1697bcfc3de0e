#include "reporter/alerts/tracking.h"

#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

#include "core/contract/alerts_file.h"
#include "core/io/json_fields.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"
#include "reporter/output/format.h"
#include "reporter/output/paths.h"
#include "reporter/results/aggregate.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {
constexpr const char* kTrackingKind = "torchgauge.tracking";
constexpr size_t kRunsListed = 3;  // the largest runs a comment names per new alert

json RowJson(const FlaggedChange& f) {
  return {{"model", f.model},           {"mode", f.mode},
          {"backend", f.backend},       {"precision", f.precision},
          {"batch_size", f.batch_size}, {"config", ConfigLabel(f.mode, f.backend, f.precision, f.batch_size)},
          {"metric", f.metric},         {"before", f.base_value},
          {"after", f.new_value},       {"factor", f.ratio}};
}

// A table cell: no pipe or line break can leave it.
std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? Dash() : out;
}

// `text` linked to the site's page `t`. Without a site URL there is nothing
// a comment on GitHub can link to (a path relative to the site resolves
// against github.com), so the text stays plain.
std::string Linked(const std::string& text, const std::string& site_url, const Target& t) {
  return site_url.empty() ? text : "[" + text + "](" + SiteUrl(site_url, t) + ")";
}

std::string Factor(double f) { return Num(f, "%.2f") + "\xC3\x97"; }  // "1.30×"

}  // namespace

static json CulpritJson(const core::Culprit& c) {
  return {{"last_good", c.last_good},
          {"first_bad", c.first_bad.empty() ? json(nullptr) : json(c.first_bad)},
          {"skipped_before", c.skipped_before},
          {"found_at", c.found_at}};
}

json AlertsJson(const std::vector<TriagedAlert>& alerts, const std::vector<HealthAlert>& health,
                const std::map<std::string, core::Culprit>& culprits, const TriageFile& triage, const json& rules) {
  json a = json::array();
  for (const auto& t : alerts) {
    const Alert& x = t.alert;
    json rows = json::array();
    for (const auto& f : x.rows) rows.push_back(RowJson(f));
    a.push_back({{"id", x.id},
                 {"kind", x.regression ? "regression" : "improvement"},
                 {"platform", x.platform},
                 {"base_build", x.base_build},
                 {"build", x.build},
                 {"started_at", x.started_at},
                 {"raised_in", x.raised_in.empty() ? json(x.build) : json(x.raised_in)},
                 {"found_by", x.history_runs > 0 ? "history" : "comparison"},
                 {"reverts", x.reverts.empty() ? json(nullptr) : json(x.reverts)},
                 {"related", x.related},
                 {"state", TriageStateName(t.state)},
                 {"owner", t.entry ? t.entry->owner : ""},
                 {"note", t.entry ? t.entry->note : ""},
                 {"links", t.entry ? t.entry->links : std::vector<std::string>{}},
                 {"runs", x.runs},
                 {"geomean_metric", x.geomean_metric},
                 {"geomean", x.geomean},
                 {"geomean_runs", x.geomean_runs},
                 {"recovered_in", x.recovered ? json(x.recovered_in) : json(nullptr)},
                 {"still_present", x.still_present ? json(*x.still_present) : json(nullptr)},
                 {"newest_build", x.newest_build},
                 {"domains", x.domains},
                 {"page", SitePath({Kind::kAlertPage, "", x.id, "html"})},
                 {"culprit", culprits.count(x.id) ? CulpritJson(culprits.at(x.id)) : json(nullptr)},
                 {"rows", std::move(rows)}});
  }
  json h = json::array();
  for (const auto& x : health) {
    const TriageEntry* e = triage.Find(x.id);
    h.push_back({{"id", x.id},
                 {"kind", x.kind},
                 {"platform", x.platform},
                 {"build_before", x.build_before},
                 {"build", x.build},
                 {"started_at", x.started_at},
                 {"detail", x.detail},
                 {"state", TriageStateName(e ? e->state : TriageState::kUntriaged)},
                 {"owner", e ? e->owner : ""},
                 {"note", e ? e->note : ""}});
  }
  json out = {{"schema_version", core::kAlertsFileVersion}, {"kind", core::kAlertsFileKind}};
  if (!rules.is_null()) out["rules"] = rules;
  out["alerts"] = std::move(a);
  out["health"] = std::move(h);
  return out;
}

json RulesJson(const core::CompareOptions& o) {
  json per = json::array();
  for (const auto& r : o.rules) per.push_back(r.metric + ":" + r.model_regex + "=" + Num(r.percent, "%g"));
  return {{"threshold_percent", o.threshold_percent},
          {"threshold_for", std::move(per)},
          {"alpha", o.alpha},
          {"window", o.window},
          {"persist", o.persist},
          {"max_noisy_percent", o.max_noisy_percent}};
}

std::string RulesLine(const json& r) {
  if (!r.is_object()) return "";
  std::string s = "threshold " + Num(r.value("threshold_percent", 0.0), "%g") + "%";
  for (const auto& x : r.value("threshold_for", json::array())) s += " (" + x.get<std::string>() + ")";
  return s + ", alpha " + Num(r.value("alpha", 0.0), "%g") + ", window " + std::to_string(r.value("window", 0)) +
         ", persist " + std::to_string(r.value("persist", 0));
}

bool HealthOpen(const json& h) {
  const std::string s = h.value("state", "untriaged");
  return s == "untriaged" || s == "investigating";
}

std::filesystem::path TrackingPath(const std::filesystem::path& results_root) { return results_root / "tracking.json"; }

TrackingLedger ReadTracking(const std::filesystem::path& file) {
  TrackingLedger t;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return t;
  const json j = core::ReadJsonFile(file);
  if (!j.is_object()) throw core::FileError(file, "", "must be a JSON object");
  const core::JsonFields f(j, file);
  core::CheckVersionedHeader(f, kTrackingSchemaVersion, kTrackingKind);
  const core::JsonFields platforms = f.Object("platforms");
  for (auto p = platforms.raw().begin(); p != platforms.raw().end(); ++p) {
    if (!p->is_object()) throw core::FileError(file, "platforms." + p.key(), "must be an object");
    for (auto a = p->begin(); a != p->end(); ++a) {
      const std::string at = "platforms." + p.key() + "." + a.key();
      if (!a->is_object()) throw core::FileError(file, at, "must be an object");
      const core::JsonFields af(*a, file, at);
      PostedAlert x;
      x.state = af.Get<std::string>("state");
      x.runs = af.GetOr<int>("runs", 0);
      x.posted_at = af.GetOr<std::string>("posted_at", "");
      t.platforms[p.key()][a.key()] = x;
    }
  }
  return t;
}

void WriteTracking(const std::filesystem::path& file, const TrackingLedger& ledger) {
  json platforms = json::object();
  for (const auto& [platform, posted] : ledger.platforms) {
    json p = json::object();
    for (const auto& [id, x] : posted) p[id] = {{"state", x.state}, {"runs", x.runs}, {"posted_at", x.posted_at}};
    platforms[platform] = std::move(p);
  }
  core::WriteJsonAtomic(
      file, {{"schema_version", kTrackingSchemaVersion}, {"kind", kTrackingKind}, {"platforms", std::move(platforms)}});
}

namespace {

// The alerts and health alerts of one platform that are new or changed.
struct PlatformNews {
  std::vector<std::pair<const json*, const PostedAlert*>> alerts;  // the alert, what was posted before (or null)
  std::vector<const json*> health;
};

std::string AlertRow(const json& a, const PostedAlert* before, const std::string& site_url) {
  const std::string id = a["id"].get<std::string>();
  const std::string what = a["kind"].get<std::string>() + (before ? " (was " + before->state + ")" : " (new)");
  std::string recovered;
  if (a.contains("recovered_in") && a["recovered_in"].is_string())
    recovered = ", recovered in " + a["recovered_in"].get<std::string>();
  return "| " + Linked(id, site_url, {Kind::kAlertPage, "", id, "html"}) + " | " + Cell(what) + " | " +
         Cell(a["base_build"].get<std::string>()) + " \xE2\x86\x92 " + Cell(a["build"].get<std::string>()) + " | " +
         std::to_string(a["runs"].get<int>()) + " | " + Factor(a["geomean"].get<double>()) + " " +
         Cell(a.value("geomean_metric", "")) + " | " + Cell(a["state"].get<std::string>() + recovered) + " | " +
         Cell(a.value("owner", "")) + " |\n";
}

// The alert's largest runs, one row each (its rows are largest first, those
// of its metric first), and how many runs are left: a run's time and
// throughput rows are one run, not two.
std::string LargestRuns(const json& a) {
  std::string out;
  std::set<std::string> runs;
  size_t listed = 0;
  for (const json& r : a["rows"]) {
    if (!runs.insert(r.value("model", "") + " " + r.value("config", "")).second) continue;
    if (listed == kRunsListed) continue;
    out += std::string(listed++ ? "; " : "") + r.value("model", "") + " " + r.value("config", "") + " " +
           r.value("metric", "") + " " + Factor(r.value("factor", 1.0));
  }
  if (runs.size() > listed) out += "; and " + std::to_string(runs.size() - listed) + " more run(s)";
  return out;
}

std::string Compose(const std::string& platform, const PlatformNews& n, const std::string& site_url,
                    const std::string& build, const std::string& rules) {
  int fresh = 0;
  for (const auto& [a, before] : n.alerts) fresh += before == nullptr;
  std::string md =
      "## TorchGauge " + (build.empty() ? std::string("nightly") : "build " + build) + " on " + platform + "\n\n";
  md += std::to_string(fresh) + " new and " + std::to_string(n.alerts.size() - fresh) +
        " changed alert(s) since the last comment; " + std::to_string(n.health.size()) + " pipeline health alert(s)." +
        (site_url.empty() ? "" : " " + Linked("All alerts", site_url, {Kind::kRegressionsPage, "", "", "html"})) +
        "\n\n";
  if (site_url.empty())
    md +=
        "> No site URL was given (`--site-url`): the alerts are not linked; each has its page at "
        "`alerts/<id>.html` in the site.\n\n";
  if (!n.alerts.empty()) {
    md += "| alert | kind | builds | runs | geomean | state | owner |\n|---|---|---|---|---|---|---|\n";
    for (const auto& [a, before] : n.alerts) md += AlertRow(*a, before, site_url);
    md += "\n";
    for (const auto& [a, before] : n.alerts) {
      if (!before) md += "- **" + (*a)["id"].get<std::string>() + "**: " + LargestRuns(*a) + "\n";
    }
    md += "\n";
  }
  if (!n.health.empty()) {
    md += "### Pipeline health\n\n| alert | kind | builds | detail |\n|---|---|---|---|\n";
    for (const json* h : n.health) {
      const std::string before = h->value("build_before", "");
      md += "| " + (*h)["id"].get<std::string>() + " | " + Cell((*h)["kind"].get<std::string>()) + " | " +
            (before.empty() ? "" : Cell(before) + " \xE2\x86\x92 ") + Cell((*h)["build"].get<std::string>()) + " | " +
            Cell(h->value("detail", "")) + " |\n";
    }
    md += "\n";
  }
  // The rules the site flagged under: the night's `compare` ran under the same.
  if (!rules.empty()) md += "Flagged under the comparison rules: " + rules + ".\n\n";
  md += "Set a state with `torchgauge-report triage ALERT --results RESULTS --state investigating --owner NAME`.\n";
  return md;
}

// GitHub refuses a comment over 65,536 characters. A UTF-8 byte is at most
// a character, so a comment cut to this many bytes at a line end always
// fits, with room for the note that says it was cut.
constexpr size_t kMaxCommentBytes = 65536 - 1024;

std::string FitComment(std::string md, const std::string& site_url) {
  if (md.size() <= kMaxCommentBytes) return md;
  const size_t cut = md.rfind('\n', kMaxCommentBytes - 1);
  md.resize(cut == std::string::npos ? 0 : cut + 1);
  md += "\n**Cut here**: the rest of this comment was over GitHub's 65,536-character limit. Every alert is on " +
        Linked("the regressions page", site_url, {Kind::kRegressionsPage, "", "", "html"}) + ".\n";
  return md;
}

}  // namespace

std::vector<TrackingComment> ComposeTrackingComments(const json& alerts_json, const TrackingLedger& ledger,
                                                     const std::string& site_url, const std::string& build,
                                                     const std::vector<std::string>& platforms) {
  std::set<std::string> names(platforms.begin(), platforms.end());
  if (names.empty()) {
    for (const char* list : {"alerts", "health"}) {
      for (const auto& a : alerts_json[list]) names.insert(a["platform"].get<std::string>());
    }
  }
  std::vector<TrackingComment> out;
  static const std::map<std::string, PostedAlert> kNone;
  const std::string rules = RulesLine(alerts_json.value("rules", json()));
  for (const auto& platform : names) {
    auto lp = ledger.platforms.find(platform);
    const auto& posted = lp == ledger.platforms.end() ? kNone : lp->second;
    PlatformNews news;
    TrackingComment c;
    c.platform = platform;
    for (const auto& a : alerts_json["alerts"]) {
      if (a["platform"] != platform) continue;
      PostedAlert now{a["state"].get<std::string>(), a["runs"].get<int>(), ""};
      const std::string id = a["id"].get<std::string>();
      auto it = posted.find(id);
      if (it != posted.end() && it->second == now) continue;
      news.alerts.push_back({&a, it == posted.end() ? nullptr : &it->second});
      (it == posted.end() ? c.fresh : c.changed)++;
      c.now[id] = now;
    }
    for (const auto& h : alerts_json["health"]) {
      if (h["platform"] != platform) continue;
      const std::string id = h["id"].get<std::string>();
      if (posted.count(id)) continue;  // a health alert does not change: posted once
      news.health.push_back(&h);
      c.health++;
      c.now[id] = PostedAlert{h["kind"].get<std::string>(), 0, ""};
    }
    if (!c.now.empty()) c.markdown = FitComment(Compose(platform, news, site_url, build, rules), site_url);
    out.push_back(std::move(c));
  }
  return out;
}

void RecordPosted(TrackingLedger& ledger, const TrackingComment& c, const std::string& now_utc) {
  for (const auto& [id, x] : c.now) {
    PostedAlert p = x;
    p.posted_at = now_utc;
    ledger.platforms[c.platform][id] = p;
  }
}

std::string TrackingIssueTitle(const std::string& platform) { return "TorchGauge tracking: " + platform; }

std::string GhCommands(const std::vector<TrackingComment>& comments, const std::string& repo,
                       const std::filesystem::path& dir) {
  if (!repo.empty() && !std::regex_match(repo, std::regex("[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")))
    throw std::invalid_argument("--repo '" + repo + "': not OWNER/NAME");
  std::string s =
      "#!/usr/bin/env bash\n"
      "# Posts tonight's alerts on each platform's tracking issue (torchgauge-report track).\n"
      "set -euo pipefail\n";
  s += "repo=" +
       (repo.empty() ? std::string("\"${TORCHGAUGE_TRACKING_REPO:?set TORCHGAUGE_TRACKING_REPO=OWNER/NAME}\"")
                     : core::ShellQuote(repo)) +
       "\n";
  // `gh issue create --label` fails where the label does not exist: create
  // it first, only when missing, so a team's own colour is never reset.
  // Its output goes to stderr: the caller reads the issue number from stdout.
  s += "# The label the tracking issues carry, created where the repository lacks it.\n"
       "ensure_label() {\n"
       "  gh label list -R \"$repo\" --limit 1000 --json name --jq '.[].name' | grep -x performance >/dev/null ||\n"
       "    gh label create performance -R \"$repo\" --color D93F0B \\\n"
       "      --description 'Performance regressions found by TorchGauge' >&2\n"
       "}\n";
  s += "# The open issue titled exactly $1, else a new one; prints its number.\n"
       "tracking_issue() {\n"
       "  local n\n"
       "  n=$(gh issue list -R \"$repo\" --state open --search \"in:title \\\"$1\\\"\" --json number,title \\\n"
       "        --jq \".[] | select(.title == \\\"$1\\\") | .number\" | head -n 1)\n"
       "  if [ -z \"$n\" ]; then\n"
       "    ensure_label\n"
       "    n=$(gh issue create -R \"$repo\" --title \"$1\" --label performance \\\n"
       "          --body \"TorchGauge posts one comment per night here: the alerts that are new or changed.\" "
       "| sed 's#.*/##')\n"
       "  fi\n"
       "  echo \"$n\"\n"
       "}\n";
  int posts = 0;
  for (const auto& c : comments) {
    if (c.markdown.empty()) continue;
    // Absolute: the script is run from wherever the nightly (or a person) is.
    const std::string file = (std::filesystem::absolute(dir) / (c.platform + ".md")).lexically_normal().string();
    s += "gh issue comment \"$(tracking_issue " + core::ShellQuote(TrackingIssueTitle(c.platform)) +
         ")\" -R \"$repo\" --body-file " + core::ShellQuote(file) + "\n";
    ++posts;
  }
  if (posts == 0) s += "echo 'nothing new or changed: no comment'\n";
  return s;
}

std::string RaisedRegressions(const json& alerts_json, const std::string& build, const std::string& site_url) {
  std::string rows;
  int n = 0;
  for (const json& a : alerts_json["alerts"]) {
    const std::string raised = a.contains("raised_in") && a["raised_in"].is_string()
                                   ? a["raised_in"].get<std::string>()
                                   : a["build"].get<std::string>();
    const std::string state = a["state"].get<std::string>();
    if (a["kind"] != "regression" || raised != build || (state != "untriaged" && state != "investigating")) continue;
    ++n;
    const std::string id = a["id"].get<std::string>();
    rows += "| " + Linked(id, site_url, {Kind::kAlertPage, "", id, "html"}) + " | " +
            Cell(a["platform"].get<std::string>()) + " | " + Cell(a["base_build"].get<std::string>()) +
            " \xE2\x86\x92 " + Cell(a["build"].get<std::string>()) + " | " + std::to_string(a["runs"].get<int>()) +
            " | " + Factor(a["geomean"].get<double>()) + " " + Cell(a.value("geomean_metric", "")) + " | " +
            Cell(a.value("found_by", "comparison")) + " | " + Cell(LargestRuns(a)) + " |\n";
  }
  if (n == 0) return "";
  return "## Regression alerts raised in " + Cell(build) + "\n\n" + std::to_string(n) +
         " regression alert(s) raised tonight: by each run's history (a change needs about three builds at its "
         "new level, so it may have started a build or two before), or by the build comparison (memory, counted "
         "metrics, and time where the history is too young to judge).\n\n"
         "| Alert | Platform | Range | Runs | Geomean | Found by | Largest runs |\n|---|---|---|--:|---|---|---|\n" +
         rows;
}

}  // namespace torchgauge::reporter
