// Integration tests of the alerts (alerts/alerts.h) and their triage
// (alerts/triage.h) on a rendered site: the acceptance history of issue 37
// (30 builds; a step in 6 models at one build, a slow drift in one, a
// machine change and a missing night), the triage round trip through
// `torchgauge-report triage` and a re-render, concurrent triage commands,
// and a render over a malformed triage.json.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter/alerts/triage.h"
#include "reporter/site/site.h"
#include "reporter/site/test_support.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;
using namespace torchgauge::reporter::test;

namespace {
const std::string kGpu = "nvidia-a100-40gb-cu130";

FixtureSpec Acceptance() {
  FixtureSpec spec;
  spec.builds = 30;
  spec.models = 8;
  spec.configs = 2;
  spec.cpu_platform = false;
  spec.step_at = 20;
  spec.step_models = 6;
  spec.drift_model = 7;
  spec.drift_from = 5;
  spec.drift_builds = 10;
  spec.machine_change_at = 12;
  spec.missing_build = 25;
  return spec;
}

// The acceptance history cut to 24 builds, without the drift: one
// regression alert (the step), as the triage cases need.
FixtureSpec OneAlert() {
  FixtureSpec spec = Acceptance();
  spec.builds = 24;
  spec.drift_model = -1;
  return spec;
}

// The rows of the alerts tables ("| A-... | range | ..."), as lines.
std::vector<std::string> Lines(const std::string& text);
std::vector<std::string> AlertRows(const std::string& page) {
  std::vector<std::string> rows;
  static const std::regex row(R"(^\| \[(A-[0-9a-f]{12})\]\(alerts/A-[0-9a-f]{12}\.md\) \|.*$)");
  for (const auto& line : Lines(page)) {
    if (std::regex_match(line, row)) rows.push_back(line);
  }
  return rows;
}

std::string IdOf(const std::string& row) { return row.substr(3, 14); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The lines of `page` from the heading "<prefix><state> (" (or the heading
// itself) to the next heading.
std::string StateSection(const std::string& page, const std::string& state, const std::string& prefix = "### ") {
  size_t at = page.find(prefix + state + " (");
  if (at == std::string::npos) at = page.find(prefix + state + "\n");
  if (at == std::string::npos) return "";
  const size_t end = page.find("\n#", at + 1);
  return page.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

void CheckHealthAlerts(const std::string& page, const FixtureSpec& spec) {
  // Pipeline health: the machine change and the missing night, nothing else.
  const auto health = Lines(StateSection(page, "Pipeline health", "## "));
  int machine = 0, missing = 0, other_health = 0;
  for (const auto& line : health) {
    if (line.rfind("| H-", 0) != 0) continue;
    if (line.find(" | machine | " + kGpu + " | " + FixtureBuildId(spec, 12) + " | ") != std::string::npos &&
        line.find("CPU model: Synthetic CPU @ 2.0GHz \xE2\x86\x92 Other Synthetic CPU @ 3.1GHz; CPU cores: 2 "
                  "\xE2\x86\x92 8") != std::string::npos) {
      ++machine;
    } else if (line.find(" | missing | " + kGpu + " | " + FixtureBuildId(spec, 26) + " | ") != std::string::npos &&
               line.find("no build for 48 h") != std::string::npos) {
      ++missing;
    } else {
      ++other_health;
      MESSAGE("unexpected health alert: " << line);
    }
  }
  CHECK(machine == 1);
  CHECK(missing == 1);
  CHECK(other_health == 0);
}

int Triage(const fs::path& results, const std::string& args) {
  const std::string cmd = std::string(TORCHGAUGE_REPORT_EXE) + " triage " + args + " --results " + results.string();
  return std::system(cmd.c_str());
}
// The history search's section: the step's six runs, covered by its alert
// `step_id`, and the drift (hf_gpt2, builds 6-15), each an alert's row;
// nothing else.
void CheckStepsSection(const std::string& page, const FixtureSpec& spec, const std::string& step_id) {
  int step_points = 0, drift_points = 0, other_points = 0;
  static const std::regex cp(
      R"(^\| (\S+)\.\.(\S+) \| .* \| (\S+) \| eval/eager/fp32/bs64 \| .* \| \[?(A-[0-9a-f]{12}|none)(?:\]\(alerts/A-[0-9a-f]{12}\.md\))? \|$)");
  for (const auto& line : Lines(StateSection(page, "Steps over the whole history", "## "))) {
    std::smatch m;
    if (!std::regex_match(line, m, cp)) continue;
    if (m[4] == step_id && m[2] == FixtureBuildId(spec, 20)) {
      ++step_points;
    } else if (m[3] == "hf\\_gpt2" && m[4].str().starts_with("A-") && m[2] > FixtureBuildId(spec, 5) &&
               m[2] <= FixtureBuildId(spec, 16)) {
      ++drift_points;  // every change the history search raised is an alert's
    } else {
      ++other_points;
      MESSAGE("unexpected change point: " << line);
    }
  }
  CHECK(step_points == 6);
  CHECK(drift_points >= 1);
  CHECK(other_points == 0);
}
}  // namespace

TEST_CASE("alerts acceptance: one regression alert of 6 runs for the planted step, the drift's from the history") {
  fs::path root = ScratchDir("alerts_acceptance");
  const FixtureSpec spec = Acceptance();
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string page = ReadText(root / "site" / "regressions.md");
  INFO(page);
  const auto rows = AlertRows(page);
  // The step: builds 19..20 (the missing night is 25), 6 runs, 1.3x. The
  // drift (hf_gpt2, +3 % a build over builds 6-15, each build under the
  // threshold), which no comparison flags, is raised by the history search
  // (issue 60: alerts from the whole history), in parts of one run each;
  // nothing else is an alert.
  int steps = 0, drift = 0, other = 0;
  std::string step_id;
  for (const auto& r : rows) {
    const std::string six = " | " + kGpu + " | regression | 6 | ";
    const size_t at = r.find(six);
    if (r.find(" | " + FixtureBuildId(spec, 19) + ".." + FixtureBuildId(spec, 20) + " | ") != std::string::npos &&
        at != std::string::npos && std::abs(std::stod(r.substr(at + six.size())) - 1.30) < 0.01) {
      ++steps;
      step_id = IdOf(r);
    } else if (r.find(" | " + kGpu + " | regression | 1 | ") != std::string::npos &&
               r.find("| hf\\_gpt2 eval/eager/fp32/bs64 time 1.") != std::string::npos) {
      ++drift;
    } else {
      ++other;
      MESSAGE("unexpected alert: " << r);
    }
  }
  CHECK(steps == 1);
  CHECK(drift >= 1);
  CHECK(other == 0);
  CHECK(StateSection(page, "untriaged").find(" | regression | 6 | ") != std::string::npos);
  CheckHealthAlerts(page, spec);
  CheckStepsSection(page, spec, step_id);

  // The alert's page: its runs, the trend around the step, both builds'
  // identities, the commands, and operators said to be not measured.
  const std::string alert = ReadText(root / "site" / "alerts" / (step_id + ".md"));
  INFO(alert);
  CHECK(alert.find("# Alert " + step_id + ": regression on " + kGpu) != std::string::npos);
  CHECK(alert.find("**6 runs** changed between builds **" + FixtureBuildId(spec, 19) + "** and **" +
                   FixtureBuildId(spec, 20) + "**") != std::string::npos);
  for (const char* m :
       {"resnet50", "hf\\_bert", "dlrm", "soft\\_actor\\_critic", "speech\\_transformer", "pyhpc\\_eos"})
    CHECK(alert.find("| " + std::string(m) + " | eval/eager/fp32/bs64 | time | 1.") != std::string::npos);
  CHECK(alert.find("| " + FixtureBuildId(spec, 20) + " (the step) | ") != std::string::npos);
  CHECK(alert.find("| torch commit | ") != std::string::npos);
  CHECK(alert.find("| Field | " + FixtureBuildId(spec, 19) + " | " + FixtureBuildId(spec, 20) + " | Changed |") !=
        std::string::npos);
  CHECK(alert.find(" | yes |") != std::string::npos);
  // The builds of the trend table by their start time (UTC), not only the date.
  CHECK(alert.find("| Build | Started (UTC) |") != std::string::npos);
  CHECK(alert.find("| CPU model | Other Synthetic CPU @ 3.1GHz | Other Synthetic CPU @ 3.1GHz |  |") !=
        std::string::npos);
  CHECK(alert.find("torchgauge-collect bisect --good '") != std::string::npos);
  CHECK(alert.find("--model '^(dlrm|hf_bert|pyhpc_eos|resnet50|soft_actor_critic|speech_transformer)$' --mode eval "
                   "--backend eager --precision fp32 --device cuda") != std::string::npos);
  CHECK(alert.find("torchgauge-report compare --results repro --base " + FixtureBuildId(spec, 19) + "-repro") !=
        std::string::npos);
  CHECK(alert.find("## Operators whose self time moved\n\nNot measured") != std::string::npos);
  CHECK(fs::exists(root / "site" / "alerts" / (step_id + ".html")));
}

TEST_CASE("triage round trip: a state set by the command shows after a re-render; the id does not change") {
  fs::path root = ScratchDir("alerts_triage");
  GenerateFixtureTree(root / "results", OneAlert());
  const SiteOptions o = TestSiteOptions(root / "results", root / "site");
  BuildSite(o);
  const auto before = AlertRows(ReadText(root / "site" / "regressions.md"));
  REQUIRE(before.size() == 1);
  const std::string id = IdOf(before[0]);
  CHECK(IsAlertId(id));

  CHECK(Triage(root / "results", id + " --state investigating --owner @perf-oncall --note 'bisecting the range'" +
                                     " --link https://github.com/pytorch/pytorch/issues/1") == 0);
  CHECK(fs::exists(TriagePath(root / "results")));
  BuildSite(o);
  std::string md = ReadText(root / "site" / "regressions.md");
  INFO(md);
  const auto after = AlertRows(md);
  REQUIRE(after.size() == 1);
  CHECK(IdOf(after[0]) == id);
  const std::string investigating = StateSection(md, "investigating");
  CHECK(investigating.find(id) != std::string::npos);
  CHECK(investigating.find("@perf-oncall") != std::string::npos);
  CHECK(investigating.find("bisecting the range") != std::string::npos);
  CHECK(StateSection(md, "untriaged").empty());
  // The regression rows and the feed carry it too; the HTML page shows it.
  CHECK(md.find("| " + id + " \xC2\xB7 investigating | open |") != std::string::npos);
  CHECK(ReadText(root / "site" / "regressions.atom").find("alert-state:investigating") != std::string::npos);
  const std::string html = ReadText(root / "site" / "regressions.html");
  CHECK(html.find("id=\"" + id + "\"") != std::string::npos);
  CHECK(html.find("data-alert-state=\"investigating\"") != std::string::npos);

  CHECK(Triage(root / "results", id + " --state wont-fix") == 0);
  BuildSite(o);
  md = ReadText(root / "site" / "regressions.md");
  CHECK(StateSection(md, "won't fix").find("@perf-oncall") != std::string::npos);  // the owner is kept
  CHECK(IdOf(AlertRows(md)[0]) == id);

  // Refusals name what is wrong, and leave the file alone.
  const std::string file = ReadText(TriagePath(root / "results"));
  CHECK(Triage(root / "results", id + " --state recovered 2>/dev/null") == 2 * 256);
  CHECK(Triage(root / "results", "A-nothex --state fixed 2>/dev/null") == 2 * 256);
  CHECK(ReadText(TriagePath(root / "results")) == file);
}

TEST_CASE("alerts: a step that goes away closes its alert as recovered by itself") {
  fs::path root = ScratchDir("alerts_recovered");
  // The fixture's runs have one process each, so the history search learns
  // their noise from the series: 8 builds of it, before the 3 it tests.
  FixtureSpec spec = Acceptance();
  spec.builds = 20;
  spec.step_at = 12;
  spec.step_until = 15;
  spec.drift_model = -1;
  spec.machine_change_at = -1;
  spec.missing_build = -1;
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string md = ReadText(root / "site" / "regressions.md");
  INFO(md);
  const std::string recovered = StateSection(md, "recovered");
  CHECK(recovered.find(" | regression | 6 | ") != std::string::npos);
  CHECK(recovered.find("(recovered in " + FixtureBuildId(spec, 15) + ")") != std::string::npos);
  const std::string back = StateSection(md, "improvement");  // the way back, linked to the regression
  CHECK(back.find(" | improvement | 6 | ") != std::string::npos);
  CHECK(back.find("(reverts A-") != std::string::npos);
  CHECK(StateSection(md, "untriaged").empty());
}

TEST_CASE("triage: two commands at once both land, in every one of 20 trials") {
  // Issue 60: without a lock, the second command's read preceded the first's
  // write in 19 of 20 trials and one entry was lost.
  fs::path root = ScratchDir("alerts_triage_race");
  fs::create_directories(root / "results");
  const std::string exe = TORCHGAUGE_REPORT_EXE;
  const std::string results = (root / "results").string();
  int lost = 0;
  for (int trial = 0; trial < 20; ++trial) {
    fs::remove(TriagePath(root / "results"));
    std::string cmd = "(";
    for (const char* id : {"A-00000000000a", "A-00000000000b", "A-00000000000c"}) {
      cmd += exe + " triage " + id + " --state investigating --results " + results + " >/dev/null & ";
    }
    cmd += "wait)";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const TriageFile t = ReadTriage(TriagePath(root / "results"));
    lost += 3 - static_cast<int>(t.alerts.size());
  }
  CHECK(lost == 0);
}

TEST_CASE("build: a triage.json with git conflict markers still renders, keeps the last good triage, exits 5") {
  fs::path root = ScratchDir("alerts_triage_conflict");
  GenerateFixtureTree(root / "results", OneAlert());
  const fs::path site = root / "site";
  const std::string build = std::string(TORCHGAUGE_REPORT_EXE) + " build --no-svg --results " +
                            (root / "results").string() + " --out " + site.string();
  REQUIRE(std::system((build + " >/dev/null").c_str()) == 0);
  const auto rows = AlertRows(ReadText(site / "regressions.md"));
  REQUIRE(rows.size() == 1);
  const std::string id = IdOf(rows[0]);
  REQUIRE(Triage(root / "results", id + " --state investigating --owner @perf-oncall >/dev/null") == 0);
  REQUIRE(std::system((build + " >/dev/null").c_str()) == 0);

  // A merge left both sides in the file; the next render must still happen.
  const fs::path file = TriagePath(root / "results");
  const std::string conflict = "<<<<<<< HEAD\n" + ReadText(file) + "=======\n{}\n>>>>>>> theirs\n";
  { std::ofstream(file) << conflict; }
  fs::remove(site / "regressions.md");
  const int rc = std::system((build + " >" + (root / "out").string() + " 2>&1").c_str());
  const std::string out = ReadText(root / "out");
  INFO(out);
  CHECK(rc == 5 * 256);                                 // kExitTriageMalformed
  CHECK(out.find(file.string()) != std::string::npos);  // the warning names the file
  CHECK(ReadText(file) == conflict);                    // and leaves it to the team
  const std::string md = ReadText(site / "regressions.md");
  CHECK(StateSection(md, "investigating").find("@perf-oncall") != std::string::npos);
  CHECK(ReadText(site / "alerts.json").find("\"investigating\"") != std::string::npos);
}

TEST_CASE("regressions page: links clickable, a long note folded, alerts counted by state in the header") {
  fs::path root = ScratchDir("alerts_triage_page");
  GenerateFixtureTree(root / "results", OneAlert());
  const SiteOptions o = TestSiteOptions(root / "results", root / "site");
  BuildSite(o);
  const std::string id = IdOf(AlertRows(ReadText(root / "site" / "regressions.md")).at(0));
  std::string note;
  while (note.size() < 5000) note += "bisected r01..r05, r03 unbuildable; ";
  CHECK(
      Triage(root / "results", id + " --state investigating --note '" + note + "'" +
                                   " --link https://github.com/pytorch/pytorch/issues/1 --link 'javascript:alert(1)'" +
                                   " >/dev/null") == 0);
  BuildSite(o);
  const std::string md = ReadText(root / "site" / "regressions.md");
  const std::string html = ReadText(root / "site" / "regressions.html");
  INFO(md);
  // The header counts alerts by state, not metric rows.
  CHECK(md.find("**1 alert(s)**, one per cause (a platform, a build range, a direction), by triage state: "
                "1 investigating.") != std::string::npos);
  // The link is a link; the javascript: one is text.
  const std::string link = "<a href=\"https://github.com/pytorch/pytorch/issues/1\">";
  CHECK(html.find(link) != std::string::npos);
  CHECK(html.find("href=\"javascript:") == std::string::npos);
  CHECK(ReadText(root / "site" / "alerts" / (id + ".html")).find(link) != std::string::npos);
  // The 5 KB note folds: its start in the row, the rest behind <details> or on the alert's page.
  CHECK(html.find("<details><summary>bisected r01..r05") != std::string::npos);
  CHECK(md.find("([the whole note](alerts/" + id + ".md))") != std::string::npos);
  CHECK(md.find(note.substr(0, 400)) == std::string::npos);
}

// Issue 60: "still present in the newest build: yes/no" per alert, on the
// regressions page, the alert's page and alerts.json. Model 0 slower from
// build 8, reverted at build 14; model 1 slower for good from build 18.
TEST_CASE("alerts: still present in the newest build, yes for the one that stays and no for the reverted one") {
  fs::path root = ScratchDir("alerts_still_present");
  FixtureSpec spec = OneAlert();
  spec.step_at = 8;
  spec.step_until = 14;
  spec.step_models = 1;
  spec.plant_at = 18;
  spec.machine_change_at = -1;
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string page = ReadText(root / "site" / "regressions.md");
  INFO(page);
  CHECK(page.find("| Largest | Still present | Owner |") != std::string::npos);
  std::string reverted, stays;
  for (const auto& r : AlertRows(page)) {
    if (r.find(" | regression | ") == std::string::npos) continue;
    if (r.find(" | " + FixtureBuildId(spec, 7) + ".." + FixtureBuildId(spec, 8) + " | ") != std::string::npos) {
      reverted = IdOf(r);
      CHECK(r.find(" | no | ") != std::string::npos);
    } else if (r.find(" | " + FixtureBuildId(spec, 17) + ".." + FixtureBuildId(spec, 18) + " | ") !=
               std::string::npos) {
      stays = IdOf(r);
      CHECK(r.find(" | yes | ") != std::string::npos);
    }
  }
  REQUIRE(!reverted.empty());
  REQUIRE(!stays.empty());
  const std::string newest = FixtureBuildId(spec, spec.builds - 1);
  CHECK(ReadText(root / "site" / "alerts" / (reverted + ".md"))
            .find("Still present in the newest build of " + kGpu + " (" + newest + "): **no**") != std::string::npos);
  CHECK(ReadText(root / "site" / "alerts" / (stays + ".md"))
            .find("Still present in the newest build of " + kGpu + " (" + newest + "): **yes**") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(ReadText(root / "site" / "alerts.json"));
  int judged = 0;
  for (const auto& a : j.at("alerts")) {
    if (a.at("id") != reverted && a.at("id") != stays) continue;
    ++judged;
    CHECK(a.at("still_present") == (a.at("id") == stays));
    CHECK(a.at("newest_build") == newest);
  }
  CHECK(judged == 2);
}

// Issue 60: a platform that stops reporting while another goes on. The CPU
// platform's last build is 3 (started 03:00); the GPU platform's build 5
// (02:00, two days on) is the first past the 36 h rule.
TEST_CASE("health: a platform that stops while the other goes on is a silent alert on the site") {
  fs::path root = ScratchDir("health_silent");
  FixtureSpec spec;
  spec.builds = 8;
  spec.models = 2;
  spec.configs = 1;
  spec.cpu_stops_after = 3;
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string page = ReadText(root / "site" / "regressions.md");
  INFO(page);
  int silent = 0, other = 0;
  for (const auto& line : Lines(StateSection(page, "Pipeline health", "## "))) {
    // The fixture's random busy runs may make a build noisy: not this case.
    if (line.rfind("| H-", 0) != 0 || line.find(" | noisy | ") != std::string::npos) continue;
    if (line.find(" | silent | cpu-x86\\_64-2c | " + FixtureBuildId(spec, 5) + " | ") != std::string::npos &&
        line.find("no build of cpu-x86\\_64-2c since " + FixtureBuildId(spec, 3)) != std::string::npos) {
      ++silent;
    } else {
      ++other;
      MESSAGE("unexpected health alert: " << line);
    }
  }
  CHECK(silent == 1);
  CHECK(other == 0);
  const nlohmann::json j = nlohmann::json::parse(ReadText(root / "site" / "alerts.json"));
  int in_json = 0;
  for (const auto& h : j.at("health")) {
    if (h.at("kind") != "silent") continue;
    ++in_json;
    CHECK(h.at("platform") == "cpu-x86_64-2c");
    CHECK(h.at("build_before") == FixtureBuildId(spec, 3));
  }
  CHECK(in_json == 1);
}
