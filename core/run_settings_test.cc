#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/run_settings.h"

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
  const auto j = ToJson(s);
  CHECK(j.at("repeat") == 7);
  CHECK(j.at("profile_iterations") == 0);
  CHECK(RunSettingsFromJson(j) == s);
  // A missing field keeps the one default.
  CHECK(RunSettingsFromJson(nlohmann::json::object()) == RunSettings{});
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
}
