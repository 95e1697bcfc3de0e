#include "reporter/alerts/triage.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/json_io.h"

using namespace torchgauge::reporter;
namespace fs = std::filesystem;

namespace {
fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("tg_triage_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
std::string ErrorOf(const fs::path& p) {
  try {
    ReadTriage(p);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("triage: states round-trip through the file; an absent file is empty") {
  const fs::path dir = TempDir("roundtrip");
  const fs::path file = TriagePath(dir);
  CHECK(file == dir / "triage.json");
  CHECK(ReadTriage(file).alerts.empty());
  TriageFile t;
  TriageEntry e;
  e.state = TriageState::kWontFix;
  e.owner = "@perf-oncall";
  e.note = "accepted: the new kernel is slower on small batches";
  e.links = {"https://github.com/pytorch/pytorch/pull/1"};
  e.updated_at = "2026-11-28T12:00:00Z";
  t.alerts["A-0123456789ab"] = e;
  WriteTriage(file, t);
  const TriageFile back = ReadTriage(file);
  REQUIRE(back.Find("A-0123456789ab"));
  CHECK(back.Find("A-0123456789ab")->state == TriageState::kWontFix);
  CHECK(back.Find("A-0123456789ab")->owner == "@perf-oncall");
  CHECK(back.Find("A-0123456789ab")->links.size() == 1);
  CHECK(back.Find("A-0123456789ab")->updated_at == "2026-11-28T12:00:00Z");
  CHECK(ToJson(back) == ToJson(t));
  fs::remove_all(dir);
}

TEST_CASE("triage: a malformed file is refused naming the file and the field") {
  const fs::path dir = TempDir("errors");
  const fs::path file = dir / "triage.json";
  Write(file, R"({"schema_version":1,"kind":"torchgauge.triage","alerts":{"A-0123456789ab":{"state":"done"}}})");
  std::string err = ErrorOf(file);
  CHECK(err.find(file.string()) != std::string::npos);
  CHECK(err.find("alerts.A-0123456789ab.state") != std::string::npos);
  Write(file, R"({"schema_version":1,"kind":"torchgauge.triage","alerts":{"my-alert":{"state":"fixed"}}})");
  CHECK(ErrorOf(file).find("alerts.my-alert") != std::string::npos);
  Write(file, R"({"schema_version":2,"kind":"torchgauge.triage","alerts":{}})");
  CHECK(ErrorOf(file).find("newer") != std::string::npos);
  Write(file,
        R"({"schema_version":1,"kind":"torchgauge.triage","alerts":{"A-0123456789ab":{"state":"fixed","owner":3}}})");
  CHECK(ErrorOf(file).find("alerts.A-0123456789ab.owner") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("triage: the effective state; recovered closes only open ones; recovered cannot be set") {
  Alert a;
  a.regression = true;
  CHECK(EffectiveState(a, nullptr) == TriageState::kUntriaged);
  a.recovered = true;
  CHECK(EffectiveState(a, nullptr) == TriageState::kRecovered);
  TriageEntry e;
  e.state = TriageState::kInvestigating;
  CHECK(EffectiveState(a, &e) == TriageState::kRecovered);
  e.state = TriageState::kBackedOut;
  CHECK(EffectiveState(a, &e) == TriageState::kBackedOut);
  a.recovered = false;
  a.regression = false;
  CHECK(EffectiveState(a, nullptr) == TriageState::kImprovement);
  CHECK(SettableTriageState("infra-or-noise") == TriageState::kInfraOrNoise);
  CHECK_FALSE(SettableTriageState("recovered"));
  CHECK(std::string(TriageStateLabel(TriageState::kWontFix)) == "won't fix");
  CHECK(IsAlertId(AlertId("p", "a", "b", true)));
  CHECK_FALSE(IsAlertId("A-0123456789AB"));
}

TEST_CASE("triage: an entry's fields this version does not know survive a write") {
  const fs::path dir = TempDir("extra");
  const fs::path file = dir / "triage.json";
  Write(file, R"({"schema_version": 1, "kind": "torchgauge.triage", "alerts": {
    "A-0123456789ab": {"state": "investigating", "owner": "@a", "assignee": "@bob", "ticket": {"n": 3}}}})");
  TriageFile t = ReadTriage(file);
  t.alerts["A-0123456789ab"].note = "bisecting";
  WriteTriage(file, t);
  const nlohmann::json j = torchgauge::core::ReadJsonFile(file);
  const nlohmann::json& e = j["alerts"]["A-0123456789ab"];
  CHECK(e.value("assignee", "") == "@bob");
  CHECK(e["ticket"] == nlohmann::json{{"n", 3}});
  CHECK(e.value("note", "") == "bisecting");
  CHECK(e.value("state", "") == "investigating");
}

TEST_CASE("triage: a pipeline health alert can be acknowledged") {
  const fs::path dir = TempDir("health");
  Write(dir / "triage.json", R"({"schema_version": 1, "kind": "torchgauge.triage", "alerts": {
    "H-0123456789ab": {"state": "expected", "note": "new runner pool"}}})");
  const TriageFile t = ReadTriage(dir / "triage.json");
  REQUIRE(t.Find("H-0123456789ab") != nullptr);
  CHECK(t.Find("H-0123456789ab")->state == TriageState::kExpected);
}
