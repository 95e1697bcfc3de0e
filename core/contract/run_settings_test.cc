#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/contract/run_settings.h"
#include "core/io/json_fields.h"

using namespace torchgauge::core;

TEST_CASE("run settings round-trip through JSON with the schema's field names") {
  RunSettings s;
  s.warmup = 1;
  s.repeat = 7;
  s.processes = 3;
  s.profile_iterations = 0;
  s.timeout_s = 12.5;
  s.seed = 42;
  s.threads = 2;
  s.smoke = true;
  s.prompt_tokens = 32;
  s.decode_steps = 8;
  s.generations = 2;
  const auto j = ToJson(s);
  CHECK(j.at("repeat") == 7);
  CHECK(j.at("decode_steps") == 8);
  CHECK(j.at("profile_iterations") == 0);
  CHECK(RunSettingsFromJson(j) == s);
  // A missing field keeps the one default.
  CHECK(RunSettingsFromJson(nlohmann::json::object()) == RunSettings{});
}

TEST_CASE("threads not set are null in JSON, never 0; an older file's 0 reads the same") {
  const auto j = ToJson(RunSettings{});
  REQUIRE(j.contains("threads"));
  CHECK(j.at("threads").is_null());
  CHECK(RunSettingsFromJson(j).threads == 0);
  CHECK(RunSettingsFromJson(nlohmann::json{{"threads", 0}}).threads == 0);
  RunSettings one;
  one.threads = 1;
  CHECK(ToJson(one).at("threads") == 1);
}

TEST_CASE("run settings range checks name the field") {
  CHECK_FALSE(CheckRunSettings(RunSettings{}));
  RunSettings s;
  s.repeat = 0;
  REQUIRE(CheckRunSettings(s));
  CHECK(CheckRunSettings(s)->field == "repeat");
  s = RunSettings{};
  s.processes = 101;
  CHECK(CheckRunSettings(s)->field == "processes");
  s = RunSettings{};
  s.timeout_s = 0;
  CHECK(CheckRunSettings(s)->field == "timeout_s");
  s = RunSettings{};
  s.decode_steps = 0;
  CHECK(CheckRunSettings(s)->field == "decode_steps");
  s = RunSettings{};
  s.prompt_tokens = 0;
  CHECK(CheckRunSettings(s)->field == "prompt_tokens");
}

TEST_CASE("run settings are read with the suite's rules wherever they come from") {
  // A result, a run spec and a suite file read them alike: "repeat": 0 loads
  // nowhere, and the error names the file and the field.
  const nlohmann::json result = {{"settings", {{"repeat", 0}}}};
  try {
    (void)RunSettingsFromJson(JsonFields(result, "r.json").Object("settings"));
    FAIL("repeat 0 was accepted");
  } catch (const FileError& e) {
    CHECK(e.field() == "settings.repeat");
    CHECK(std::string(e.what()) == "r.json: field 'settings.repeat': must be >= 1");
  }
  CHECK_THROWS_WITH_AS(RunSettingsFromJson(nlohmann::json{{"processes", 0}}), doctest::Contains("settings.processes"),
                       FileError);
  const nlohmann::json suite = {{"timeout_s", 0}};
  CHECK_THROWS_WITH_AS(RunSettingsFromJson(JsonFields(suite, "s.json")), "s.json: field 'timeout_s': must be > 0",
                       FileError);
  // Types and ranges as every reader checks them.
  CHECK_THROWS_WITH_AS(RunSettingsFromJson(nlohmann::json{{"seed", -1}}), doctest::Contains("settings.seed"),
                       FileError);
  CHECK_THROWS_WITH_AS(RunSettingsFromJson(nlohmann::json{{"warmup", 1.5}}), doctest::Contains("must be an integer"),
                       FileError);
  CHECK_THROWS_WITH_AS(RunSettingsFromJson(nlohmann::json{{"pairing", "sometimes"}}),
                       doctest::Contains("settings.pairing"), FileError);
  // Null is absent: the default stands.
  CHECK(RunSettingsFromJson(nlohmann::json{{"repeat", nullptr}}).repeat == RunSettings{}.repeat);
}
