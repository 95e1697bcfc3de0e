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
// The columns of pytorch/test-infra's
// clickhouse_db_schema/benchmark.oss_ci_benchmark_v3/schema.sql (vendored in
// tests/data/hud, which hud_upload_test parses) that have no DEFAULT and are
// not the replicator's (_meta), with their tuples' members, written out here
// so that the exporter's own list is checked against it, not against itself.
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
    if (r["metric"]["name"] == "step_time_ms") {  // the median of every sample, not the samples
      CHECK(r["metric"]["benchmark_values"].size() == 1);
      CHECK(std::stoi(r["metric"]["extra_info"]["samples"].get<std::string>()) >= 2);
    }
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
      {"workflow_id", 12u},
      {"run_attempt", 1u},
      {"job_id", 34u},
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
  // The uploader's --metadata supplies the change and the ids; a 0 id would
  // override it and make the uploader skip the file.
  json partial = good;
  for (const char* k : {"repo", "head_branch", "head_sha", "workflow_id", "run_attempt", "job_id"}) partial.erase(k);
  CHECK(V3Problems(partial).empty());
  bad = good;
  bad["job_id"] = 0u;
  REQUIRE(V3Problems(bad).size() == 1);
  CHECK(V3Problems(bad)[0].rfind("job_id", 0) == 0);
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
  // The medians TorchGauge reports, of one TTFT per generation and every decode step's TPOT.
  const torchgauge::core::Generation* g = nullptr;
  for (const auto& p : loaded.builds[0].platforms)
    for (const auto& r : p.runs)
      if (r.generation && !g) g = &*r.generation;
  REQUIRE(g);
  CHECK(by_metric["ttft_ms"]["benchmark_values"] == json::array({g->ttft_ms}));
  CHECK(by_metric["ttft_ms"]["extra_info"]["samples"] == "5");
  CHECK(by_metric["tpot_ms"]["benchmark_values"][0].get<double>() == doctest::Approx(g->tpot_median_ms));
  CHECK(by_metric["tpot_ms"]["extra_info"]["samples"] == "80");
  CHECK(by_metric["p90_tpot_ms"]["benchmark_values"].size() == 1);
  CHECK(by_metric["tokens_per_second"]["extra_info"]["unit"] == "tokens/s");
  CHECK(by_metric.count("kv_cache_mb"));
}

namespace {
// One fixture build with a two-process CPU platform (6 samples split in two)
// and all eight configurations, loaded.
BuildResults HudFixture(const std::string& name) {
  const fs::path root = FreshDir(name);
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 2;
  spec.configs = 8;
  spec.samples = 6;
  GenerateFixtureTree(root, spec);
  LoadOptions lo;
  LoadedResults loaded = LoadResults(root, lo);
  REQUIRE(loaded.builds.size() == 1);
  return loaded.builds[0];
}

// The run a record came from: platform, model, mode, backend and TorchGauge's precision.
const torchgauge::core::RunResult* RunOf(const BuildResults& b, const json& rec) {
  for (const auto& p : b.platforms) {
    if (p.manifest.platform_id != rec["benchmark"]["extra_info"]["platform_id"]) continue;
    for (const auto& r : p.runs) {
      if (r.model.id == rec["model"]["name"] && r.backend == rec["model"]["backend"] &&
          (r.mode == "train") == (rec["benchmark"]["mode"] == "training") &&
          r.precision ==
              rec["benchmark"]["extra_info"].value("precision", rec["benchmark"]["dtype"].get<std::string>()))
        return &r;
    }
  }
  return nullptr;
}
}  // namespace

TEST_CASE("v3 export: no placeholder ids; repo and branch only where known") {
  const BuildResults b = HudFixture("v3_ids");
  const json records = V3Records(b);
  REQUIRE(!records.empty());
  for (const auto& r : records) {
    // A 0 overrides the uploader's --metadata ids ({**metadata, **result}) and
    // the file is skipped: an id the export does not know is left out.
    for (const char* id : {"workflow_id", "run_attempt", "job_id", "repo", "head_branch"})
      CHECK_MESSAGE(!r.contains(id), id << " = " << r.value(id, json()).dump());
  }
}

TEST_CASE("v3 export: runner fields as the HUD reads them") {
  const BuildResults b = HudFixture("v3_runners");
  for (const auto& r : V3Records(b)) {
    const json& runner = r["runners"][0];
    const bool gpu = runner["gpu_count"].get<int>() > 0;
    // The HUD's device is runners[0].name and its arch runners[0].type
    // (torchci benchmarkDataQueryBuilder.ts), as gather_runners_info.py fills them.
    CHECK(runner["name"] == (gpu ? "cuda" : "cpu"));
    CHECK(runner["type"] == (gpu ? "NVIDIA A100-SXM4-40GB" : "Synthetic CPU @ 2.0GHz"));
    CHECK(runner["extra_info"]["hostname"] == "fixture-host");
  }
}

TEST_CASE("v3 export: benchmark_values hold the statistic TorchGauge reports, the median") {
  const BuildResults b = HudFixture("v3_values");
  int checked = 0, several = 0;
  for (const auto& rec : V3Records(b)) {
    if (rec["metric"]["name"] != "step_time_ms") continue;
    const auto* run = RunOf(b, rec);
    REQUIRE_MESSAGE(run, rec.dump());
    // The HUD shows arrayAvg(benchmark_values): one value, the median.
    REQUIRE(rec["metric"]["benchmark_values"].size() == 1);
    CHECK(rec["metric"]["benchmark_values"][0].get<double>() == doctest::Approx(run->timing->median_ms));
    several += !run->timing->process_medians_ms.empty();
    ++checked;
  }
  CHECK(checked > 0);
  CHECK(several > 0);
}

TEST_CASE("v3 export: dtype and origin words from the HUD's vocabulary") {
  BuildResults b = HudFixture("v3_words");
  // One of the project's own test models: from no suite the HUD names.
  b.platforms[0].runs[0].model.domain = "test";
  const std::string test_model = b.platforms[0].runs[0].model.id;
  const std::string test_platform = b.platforms[0].manifest.platform_id;
  // torchci components/benchmark/compilers/common.tsx (DTYPES, COMPILERS_DTYPES_V2)
  // and the suites of lib/benchmark/compliers/CompilerSuites.ts.
  const std::vector<std::string> dtypes = {"float32", "float16", "bfloat16", "amp", "notset"};
  std::map<std::string, std::string> seen;
  for (const auto& r : V3Records(b)) {
    const std::string d = r["benchmark"]["dtype"];
    CHECK_MESSAGE(std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end(), d);
    seen[r["benchmark"]["extra_info"].value("precision", std::string("?"))] = d;
    const bool own = r["model"]["name"] == test_model && r["runners"][0]["extra_info"]["platform_id"] == test_platform;
    if (own && r["model"]["backend"] == b.platforms[0].runs[0].backend &&
        r["benchmark"]["extra_info"].value("precision", "") == b.platforms[0].runs[0].precision &&
        (r["benchmark"]["mode"] == "training") == (b.platforms[0].runs[0].mode == "train"))
      CHECK(r["model"]["origins"] == json::array());
    else if (!own)
      CHECK(r["model"]["origins"] == json::array({"torchbench"}));
  }
  CHECK(seen["fp32"] == "float32");
  CHECK(seen["tf32"] == "float32");
  CHECK(seen["amp-bf16"] == "amp");
  for (const char* p : torchgauge::core::kPrecisions)
    CHECK_MESSAGE(std::find(dtypes.begin(), dtypes.end(), HudDtype(p)) != dtypes.end(), p);
  CHECK(HudDtype("bf16") == "bfloat16");
  CHECK(HudDtype("fp16") == "float16");
  CHECK(HudDtype("default") == "notset");
}

TEST_CASE("v3 export: the change and the job from the caller or GitHub Actions' environment") {
  const BuildResults b = HudFixture("v3_context");
  V3Context ctx;
  ctx.repo = "pytorch/pytorch";
  ctx.head_branch = "main";
  ctx.job_id = 5678;
  std::map<std::string, std::string> env = {{"GITHUB_RUN_ID", "1234"}, {"GITHUB_RUN_ATTEMPT", "2"}};
  auto lookup = [&env](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const V3Context full = WithCiEnvironment(ctx, lookup);
  for (const auto& r : V3Records(b, full)) {
    CHECK(r["repo"] == "pytorch/pytorch");
    CHECK(r["head_branch"] == "main");
    CHECK(r["workflow_id"] == 1234u);
    CHECK(r["run_attempt"] == 2u);
    CHECK(r["job_id"] == 5678u);
    CHECK(r["head_sha"].get<std::string>().size() == 40);  // the torch build's commit
    CHECK(V3Problems(r).empty());
  }
  ctx.workflow_id = 99;  // the caller's id wins over the environment's
  CHECK(*WithCiEnvironment(ctx, lookup).workflow_id == 99u);
  env["GITHUB_RUN_ATTEMPT"] = "0";
  CHECK_THROWS_AS(WithCiEnvironment(V3Context{}, lookup), std::invalid_argument);
  env["GITHUB_RUN_ATTEMPT"] = "2x";
  CHECK_THROWS_AS(WithCiEnvironment(V3Context{}, lookup), std::invalid_argument);
  CHECK(!WithCiEnvironment(V3Context{}, [](const char*) -> const char* { return nullptr; }).workflow_id);
}
