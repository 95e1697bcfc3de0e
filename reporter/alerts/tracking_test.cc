#include "reporter/alerts/tracking.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/contract/alerts_file.h"
#include "core/io/json_io.h"

using namespace torchgauge::reporter;
namespace fs = std::filesystem;

namespace {
fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("tg_tracking_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TriagedAlert MakeAlert(const std::string& platform, const std::string& base, const std::string& build, int runs) {
  TriagedAlert t;
  Alert& a = t.alert;
  a.id = AlertId(platform, base, build, true);
  a.platform = platform;
  a.base_build = base;
  a.build = build;
  a.started_at = "2026-11-20T02:00:00Z";
  a.runs = runs;
  a.geomean_metric = "time";
  a.geomean = 1.3;
  a.geomean_runs = runs;
  for (int i = 0; i < runs; ++i) {
    FlaggedChange f;
    f.platform = platform;
    f.model = "m" + std::to_string(i);
    f.mode = "eval";
    f.backend = "eager";
    f.precision = "default";
    f.metric = "time";
    f.batch_size = 4;
    f.base_value = 10;
    f.new_value = 13;
    f.ratio = 1.3;
    a.rows.push_back(f);
  }
  t.state = TriageState::kUntriaged;
  return t;
}
}  // namespace

TEST_CASE("tracking: a night's comment lists new alerts once; a changed state is posted again") {
  const fs::path dir = TempDir("comment");
  std::vector<TriagedAlert> alerts = {MakeAlert("cpu", "b1", "b2", 6), MakeAlert("gpu", "b1", "b2", 2)};
  const std::vector<HealthAlert> health = {
      {"H-0123456789ab", "machine", "cpu", "b1", "b2", "2026-11-20T02:00:00Z", "CPU model: Xeon \xE2\x86\x92 EPYC"}};
  // Through the file, as `track` reads it: the reader accepts what the site writes.
  torchgauge::core::WriteJsonAtomic(dir / "alerts.json", AlertsJson(alerts, health));
  const auto j = torchgauge::core::ReadAlertsFile(dir / "alerts.json");
  const auto record = torchgauge::core::FindAlertRecord(j, dir / "alerts.json", alerts[0].alert.id);
  CHECK(record.base_build == "b1");
  CHECK(record.rows.size() == 6);
  CHECK(record.rows[0].model == "m0");

  TrackingLedger ledger;
  auto comments = ComposeTrackingComments(j, ledger, "https://perf.example.org", "b2");
  REQUIRE(comments.size() == 2);  // cpu, gpu
  CHECK(comments[0].platform == "cpu");
  CHECK(comments[0].fresh == 1);
  CHECK(comments[0].health == 1);
  const std::string& md = comments[0].markdown;
  CHECK(md.find("## TorchGauge build b2 on cpu") == 0);
  CHECK(md.find("1 new and 0 changed alert(s)") != std::string::npos);
  CHECK(md.find("[" + alerts[0].alert.id + "](https://perf.example.org/alerts/" + alerts[0].alert.id + ".html)") !=
        std::string::npos);
  CHECK(md.find("| 6 | 1.30\xC3\x97 time | untriaged |") != std::string::npos);
  CHECK(md.find("H-0123456789ab | machine | b1 \xE2\x86\x92 b2 | CPU model") != std::string::npos);
  CHECK(md.find("m0 eval/eager/default/bs4 time 1.30\xC3\x97; m1") != std::string::npos);
  CHECK(comments[1].markdown.find("0 pipeline health alert(s)") != std::string::npos);

  // Posted: the same alerts say nothing the next night.
  for (const auto& c : comments) RecordPosted(ledger, c, "2026-11-20T03:00:00Z");
  WriteTracking(TrackingPath(dir), ledger);
  ledger = ReadTracking(TrackingPath(dir));
  for (const auto& c : ComposeTrackingComments(j, ledger, "", "b2")) CHECK(c.markdown.empty());

  // A triage changes one alert's state: only it is posted, as changed.
  alerts[0].state = TriageState::kInvestigating;
  alerts[0].entry = TriageEntry{TriageState::kInvestigating, "alice", "", {}, ""};
  const auto j2 = AlertsJson(alerts, health);
  comments = ComposeTrackingComments(j2, ledger, "", "b3");
  CHECK(comments[0].fresh == 0);
  CHECK(comments[0].changed == 1);
  CHECK(comments[0].health == 0);
  CHECK(comments[0].markdown.find("regression (was untriaged)") != std::string::npos);
  CHECK(comments[0].markdown.find("| investigating | alice |") != std::string::npos);
  CHECK(comments[1].markdown.empty());

  // Only the platforms asked for.
  CHECK(ComposeTrackingComments(j2, ledger, "", "b3", {"gpu"}).size() == 1);
}

TEST_CASE("tracking: the gh commands find or open the issue and comment with each platform's file") {
  TrackingComment c;
  c.platform = "cpu-x86_64-2c";
  c.markdown = "x";
  TrackingComment quiet;
  quiet.platform = "gpu";
  const std::string s = GhCommands({c, quiet}, "example/bench", "/tmp/t");
  CHECK(s.find("repo='example/bench'") != std::string::npos);
  CHECK(s.find("gh issue comment \"$(tracking_issue 'TorchGauge tracking: cpu-x86_64-2c')\" -R \"$repo\" "
               "--body-file '/tmp/t/cpu-x86_64-2c.md'") != std::string::npos);
  CHECK(s.find("gpu.md") == std::string::npos);
  CHECK(GhCommands({quiet}, "", "/tmp/t").find("TORCHGAUGE_TRACKING_REPO") != std::string::npos);
  CHECK_THROWS_WITH_AS(GhCommands({c}, "no repo; rm -rf /", "/tmp/t"), doctest::Contains("not OWNER/NAME"),
                       std::invalid_argument);
}

TEST_CASE("tracking: a malformed alerts.json or ledger is refused naming the file and field") {
  const fs::path dir = TempDir("bad");
  std::ofstream(dir / "alerts.json") << R"({"schema_version": 1, "kind": "torchgauge.alerts", "health": [],
    "alerts": [{"id": "A-0123456789ab", "kind": "regression", "platform": "cpu", "build": "b2"}]})";
  CHECK_THROWS_WITH(torchgauge::core::ReadAlertsFile(dir / "alerts.json"), doctest::Contains("alerts[0].base_build"));
  CHECK_THROWS_WITH(torchgauge::core::ReadAlertsFile(dir / "none.json"), doctest::Contains("render the site first"));
  std::ofstream(dir / "tracking.json") << R"({"schema_version": 1, "kind": "torchgauge.tracking",
    "platforms": {"cpu": {"A-0123456789ab": {"runs": 3}}}})";
  CHECK_THROWS_WITH(ReadTracking(dir / "tracking.json"), doctest::Contains("platforms.cpu.A-0123456789ab.state"));
}

TEST_CASE("tracking: without a site URL a comment links nothing, and says why") {
  // A link relative to the site resolves against github.com: broken.
  const auto j = AlertsJson({MakeAlert("cpu", "b1", "b2", 2)}, {});
  const auto comments = ComposeTrackingComments(j, TrackingLedger{}, "", "b2");
  REQUIRE(comments.size() == 1);
  const std::string& md = comments[0].markdown;
  INFO(md);
  CHECK(md.find("](") == std::string::npos);
  CHECK(md.find("--site-url") != std::string::npos);
  const auto linked = ComposeTrackingComments(j, TrackingLedger{}, "https://perf.example.org", "b2");
  CHECK(linked[0].markdown.find("](https://perf.example.org/alerts/") != std::string::npos);
}

TEST_CASE("tracking: 'and N more' counts runs, not metric rows") {
  // Five runs, each with a time and a throughput row: ten rows, five runs.
  TriagedAlert t = MakeAlert("cpu", "b1", "b2", 5);
  std::vector<FlaggedChange> rows;
  for (const auto& f : t.alert.rows) {
    rows.push_back(f);
    FlaggedChange tp = f;
    tp.metric = "throughput";
    tp.ratio = 1 / f.ratio;
    rows.push_back(tp);
  }
  t.alert.rows = rows;
  const std::string md = ComposeTrackingComments(AlertsJson({t}, {}), TrackingLedger{}, "", "b2")[0].markdown;
  INFO(md);
  CHECK(md.find("m0 eval/eager/default/bs4 time 1.30\xC3\x97; m1") != std::string::npos);
  CHECK(md.find("and 2 more run(s)") != std::string::npos);
  CHECK(md.find("and 7 more") == std::string::npos);
}

TEST_CASE("tracking: a comment stays under GitHub's 65,536-character limit, with a note where it was cut") {
  std::vector<TriagedAlert> alerts;
  for (int i = 0; i < 800; ++i) {
    alerts.push_back(MakeAlert("cpu", "b" + std::to_string(i), "b" + std::to_string(i + 1), 4));
    alerts.back().entry = TriageEntry{};
    alerts.back().entry->owner = "@someone-with-a-rather-long-handle-" + std::to_string(i);
  }
  const auto c = ComposeTrackingComments(AlertsJson(alerts, {}), TrackingLedger{}, "https://perf.example.org", "b9");
  REQUIRE(c.size() == 1);
  CHECK(c[0].markdown.size() <= 65536);
  CHECK(c[0].markdown.find("65,536") != std::string::npos);
  CHECK(c[0].markdown.find("https://perf.example.org/regressions.html") != std::string::npos);
}

TEST_CASE("tracking: gh-commands.sh names absolute files and creates the label it needs") {
  TrackingComment c;
  c.platform = "cpu";
  c.markdown = "x";
  const std::string s = GhCommands({c}, "example/bench", "out/tracking");
  INFO(s);
  const std::string abs = (fs::current_path() / "out" / "tracking" / "cpu.md").string();
  CHECK(s.find("--body-file '" + abs + "'") != std::string::npos);
  // `gh issue create --label performance` fails where the label is missing.
  const size_t label = s.find("gh label create performance");
  REQUIRE(label != std::string::npos);
  CHECK(s.find("ensure_label") < s.find("gh issue create"));
}
