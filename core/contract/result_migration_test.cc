#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/contract/result.h"
#include "core/contract/result_migration.h"
#include "core/io/json_io.h"

using namespace torchgauge::core;
using nlohmann::json;

namespace {
const std::filesystem::path kOld = std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/migration";
}  // namespace

TEST_CASE("migration: an aotinductor result of schema 1 is read as the inductor backend's") {
  // As the collector wrote it before the inductor backend ran (73955a6).
  const json raw = ReadJsonFile(kOld / "run_v1_aotinductor.json", JsonKind::kRunResult);
  const auto current = MigrateRunResult(raw);
  REQUIRE(current);
  CHECK(current->at("backend") == "inductor");
  json expected = raw;
  expected["backend"] = "inductor";
  CHECK(*current == expected);         // nothing else changes
  CHECK(!MigrateRunResult(*current));  // migrated once is current

  const RunResult r = RunResultFromJson(raw, "old.json");
  CHECK(r.backend == "inductor");
  CHECK(r.status == "unsupported");
  CHECK(r.reason->find("aotinductor") != std::string::npos);  // the reason is the file's own words
  CHECK(r.settings->timeout_s == 600);                        // that collector's default, as recorded
  CHECK(r.settings->pairing == RunSettings{}.pairing);        // absent then: the default
  CHECK(ToJson(r).at("backend") == "inductor");
}

TEST_CASE("migration: a current result is left alone and not copied") {
  RunResult r;
  r.build_id = "b";
  r.platform_id = "p";
  r.model = {"m", "m", "vision", "t", "r"};
  r.mode = "eval";
  r.started_at = "2026-11-22T10:00:00Z";
  const json j = ToJson(r);
  CHECK(!MigrateRunResult(j));
  json odd = j;
  odd["schema_version"] = "one";  // CheckSchema's to refuse, not the migration's
  CHECK(!MigrateRunResult(odd));
}
