#include "reporter/results/v3_export.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge::reporter;
using nlohmann::json;

namespace {
// The columns of pytorch/test-infra's clickhouse_db_schema/oss_ci_benchmark_v3/schema.sql
// that have no DEFAULT and are not the replicator's (_meta), with their
// tuples' members, written out here from the schema itself, so that the
// exporter's own list is checked against it, not against itself.
const char* const kSchemaColumns[] = {"timestamp",
                                      "name",
                                      "head_branch",
                                      "head_sha",
                                      "workflow_id",
                                      "run_attempt",
                                      "job_id",
                                      "runners",
                                      "runners[].name",
                                      "runners[].type",
                                      "runners[].cpu_info",
                                      "runners[].cpu_count",
                                      "runners[].gpu_info",
                                      "runners[].gpu_count",
                                      "runners[].extra_info",
                                      "benchmark.name",
                                      "benchmark.mode",
                                      "benchmark.dtype",
                                      "benchmark.extra_info",
                                      "model.name",
                                      "model.type",
                                      "model.backend",
                                      "model.origins",
                                      "model.extra_info",
                                      "inputs",
                                      "dependencies",
                                      "metric.name",
                                      "metric.benchmark_values",
                                      "metric.target_value",
                                      "metric.extra_info"};

fs::path FreshDir(const std::string& name) {
  fs::path p = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
}  // namespace

TEST_CASE("v3 export: every record carries the schema's required fields; not measured means no record") {
  for (const char* c : kSchemaColumns) {
    CHECK_MESSAGE(std::find(V3RequiredFields().begin(), V3RequiredFields().end(), c) != V3RequiredFields().end(), c);
  }
  const fs::path root = FreshDir("v3_export");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 3;
  spec.configs = 2;
  GenerateFixtureTree(root, spec);
  LoadOptions lo;
  const LoadedResults loaded = LoadResults(root, lo);
  REQUIRE(loaded.builds.size() == 1);
  const BuildResults& b = loaded.builds[0];
  const json records = V3Records(b);
  REQUIRE(records.is_array());
  size_t ok_runs = 0;
  for (const auto& p : b.platforms)
    for (const auto& r : p.runs) ok_runs += r.status == "ok";
  std::map<std::string, int> by_metric;
  for (const auto& r : records) {
    const auto problems = V3Problems(r);
    CHECK_MESSAGE(problems.empty(), r.dump() << "\n" << (problems.empty() ? "" : problems.front()));
    by_metric[r["metric"]["name"]]++;
    CHECK(r["schema_version"] == "v3");
    CHECK(r["timestamp"].get<uint64_t>() > 1767225600u);  // after 2026-01-01
    CHECK(r["dependencies"]["pytorch"]["version"] == "2.11.0");
    CHECK(r["dependencies"]["pytorch"]["sha"].get<std::string>().size() == 40);
    CHECK((r["benchmark"]["mode"] == "training" || r["benchmark"]["mode"] == "inference"));
    for (const auto& v : r["metric"]["benchmark_values"]) CHECK(v.get<double>() > 0);  // never a 0 for "not measured"
  }
  CHECK(by_metric["step_time_ms"] == static_cast<int>(ok_runs));
  CHECK(by_metric["peak_cpu_memory_mb"] == static_cast<int>(ok_runs));
  // Only the GPU platform measures GPU memory: the CPU platform's runs have no such record.
  int gpu_ok = 0;
  for (const auto& p : b.platforms)
    for (const auto& r : p.runs) gpu_ok += r.status == "ok" && r.device != "cpu";
  CHECK(gpu_ok > 0);
  CHECK(by_metric["peak_gpu_memory_mb"] == gpu_ok);
  for (const auto& r : records) {
    if (r["metric"]["name"] == "step_time_ms") CHECK(r["metric"]["benchmark_values"].size() >= 2);  // every sample
    if (r["runners"][0]["gpu_count"] == 0u) CHECK(r["metric"]["name"] != "peak_gpu_memory_mb");
  }
}

TEST_CASE("v3 export: the validator refuses a record missing a field or with one of the wrong type") {
  json good = {
      {"timestamp", 1u},
      {"schema_version", "v3"},
      {"name", "TorchGauge"},
      {"repo", "pytorch/pytorch"},
      {"head_branch", ""},
      {"head_sha", "abc"},
      {"workflow_id", 0u},
      {"run_attempt", 0u},
      {"job_id", 0u},
      {"runners",
       {{{"name", "h"},
         {"type", "cpu"},
         {"cpu_info", "x"},
         {"cpu_count", 2u},
         {"gpu_info", ""},
         {"gpu_count", 0u},
         {"extra_info", json::object()}}}},
      {"benchmark", {{"name", "b"}, {"mode", "inference"}, {"dtype", "fp32"}, {"extra_info", json::object()}}},
      {"model",
       {{"name", "m"},
        {"type", "t"},
        {"backend", "eager"},
        {"origins", {"torchbench"}},
        {"extra_info", json::object()}}},
      {"inputs", json::object()},
      {"dependencies", json::object()},
      {"metric",
       {{"name", "step_time_ms"}, {"benchmark_values", {1.5}}, {"target_value", 0.0}, {"extra_info", json::object()}}}};
  CHECK(V3Problems(good).empty());
  json bad = good;
  bad["metric"].erase("benchmark_values");
  REQUIRE(V3Problems(bad).size() == 1);
  CHECK(V3Problems(bad)[0].rfind("metric.benchmark_values", 0) == 0);
  bad = good;
  bad["runners"][0]["cpu_count"] = "two";
  REQUIRE(V3Problems(bad).size() == 1);
  CHECK(V3Problems(bad)[0].rfind("runners[0].cpu_count", 0) == 0);
  bad = good;
  bad["schema_version"] = "v2";
  CHECK(V3Problems(bad).size() == 1);
  bad = good;
  bad["metric"]["benchmark_values"] = json::array();
  CHECK(V3Problems(bad).size() == 1);
}

TEST_CASE("v3 export: a generative run's TTFT and TPOT samples, p90, tokens per second and KV cache") {
  LoadOptions lo;
  const LoadedResults loaded =
      LoadResults(fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/compare_generation/results", lo);
  REQUIRE(!loaded.builds.empty());
  std::map<std::string, json> by_metric;
  for (const auto& r : V3Records(loaded.builds[0])) {
    CHECK(V3Problems(r).empty());
    by_metric[r["metric"]["name"]] = r["metric"];
  }
  CHECK(by_metric["ttft_ms"]["benchmark_values"].size() == 5);   // one per generation
  CHECK(by_metric["tpot_ms"]["benchmark_values"].size() == 80);  // every decode step
  CHECK(by_metric["p90_tpot_ms"]["benchmark_values"].size() == 1);
  CHECK(by_metric["tokens_per_second"]["extra_info"]["unit"] == "tokens/s");
  CHECK(by_metric.count("kv_cache_mb"));
}
