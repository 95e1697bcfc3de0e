#include "core/contract/manifest.h"

#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/json_io.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace torchgauge::core;

namespace {

// A manifest as collector/main.cc and collector/environment.cc write it at
// the end of a GPU suite: every field they write today.
json CollectorGpuManifest() {
  json clocks = {
      {"sm_clock_mhz", 1980.0}, {"sm_clock_max_mhz", 1980.0}, {"mem_clock_mhz", 2619.0},     {"pstate", "P0"},
      {"power_draw_w", 72.5},   {"temperature_c", 31.0},      {"at", "2026-11-22T10:00:00Z"}};
  json end = clocks;
  end["power_draw_w"] = nullptr;  // an unreadable number
  end["at"] = "2026-11-22T11:00:00Z";
  return {
      {"schema_version", 1},
      {"kind", "torchgauge.manifest"},
      {"build_id", "2.11.0-cu130-20261122"},
      {"platform_id", "nvidia-h100-80gb-hbm3-cu130"},
      {"collector", {{"version", "0.1.0"}, {"git_sha", "abc123"}}},
      {"libtorch",
       {{"version", "2.11.0"},
        {"cuda_available", true},
        {"cuda_runtime", "13.0"},
        {"cudnn", "9.10.2"},
        {"hip_runtime", nullptr},
        {"miopen", nullptr},
        {"git_commit", "70d99e998b4955e0049d13a98d77ae1b14db1f45"},
        {"build_version", "2.11.0+cu130"},
        {"cuda_build", "13.0"},
        {"origin", {{"kind", "python-package"}, {"path", "/venv/lib/python3.11/site-packages/torch"}}}}},
      {"device",
       {{"vendor", "NVIDIA"},
        {"name", "NVIDIA H100 80GB HBM3"},
        {"compute_capability", "9.0"},
        {"gcn_arch", nullptr},
        {"memory_bytes", 85520809984LL},
        {"driver", "580.82"},
        {"multiprocessor_count", 132},
        {"clocks_start", clocks},
        {"clocks_end", end}}},
      {"cpu", {{"model", "Intel Xeon"}, {"logical_cores", 16}, {"torch_threads", 8}, {"memory_bytes", 134217728000LL}}},
      {"host", {{"hostname", "gpu-01"}, {"os", "Ubuntu 24.04"}, {"kernel", "6.8.0"}, {"arch", "x86_64"}}},
      {"started_at", "2026-11-22T10:00:00Z"},
      {"finished_at", "2026-11-22T11:00:00Z"},
      {"suite",
       {{"name", "smoke"},
        {"warmup", 3},
        {"repeat", 10},
        {"device", "cuda"},
        {"threads", "default"},
        {"models", json::array({{{"id", "resnet50"}, {"batch_size", 8}}})},
        {"filters",
         {{"model", ""},
          {"domains", json::array()},
          {"modes", {"eval"}},
          {"precisions", json::array()},
          {"backends", json::array()},
          {"batch_size", 0}}}}},
      {"requested", {{"argv", {"run", "--suite", "smoke"}}, {"config_file", ""}, {"suite", "smoke"}}},
      {"interrupted", false},
      {"runs", {{"ok", 5}, {"unsupported", 1}}}};
}

// The same suite on CPU as first written, before the first run.
json CollectorCpuManifestAtStart() {
  json m = CollectorGpuManifest();
  m["platform_id"] = "cpu-x86_64-16c";
  m["libtorch"] = {{"version", "2.11.0"}, {"cuda_available", false}, {"cuda_runtime", nullptr},
                   {"cudnn", nullptr},    {"hip_runtime", nullptr},  {"miopen", nullptr}};
  m["device"] = {
      {"vendor", "CPU"},         {"name", "Intel Xeon"}, {"compute_capability", nullptr},   {"gcn_arch", nullptr},
      {"memory_bytes", nullptr}, {"driver", nullptr},    {"multiprocessor_count", nullptr}, {"clocks_start", nullptr}};
  m["finished_at"] = nullptr;
  m.erase("interrupted");
  m.erase("runs");
  return m;
}

json RoundTrip(const json& j) { return ToJson(ManifestFromJson(j, "m.json")); }

std::string FieldOf(const json& j) {
  try {
    ManifestFromJson(j, "m.json");
  } catch (const FileError& e) {
    CHECK(e.file() == "m.json");
    return e.field();
  }
  return "<accepted>";
}

// Every value of `in` that is not null is in `out`, unchanged.
void CheckKept(const json& in, const json& out, const std::string& at) {
  INFO(at);
  if (in.is_object()) {
    REQUIRE(out.is_object());
    for (const auto& [k, v] : in.items()) {
      if (v.is_null()) continue;
      REQUIRE(out.contains(k));
      CheckKept(v, out.at(k), at + "." + k);
    }
    return;
  }
  CHECK(in == out);
}

}  // namespace

TEST_CASE("manifest: ToJson writes back every field the collector writes, unchanged") {
  const json gpu = CollectorGpuManifest();
  CHECK(RoundTrip(gpu) == gpu);
  const json cpu = CollectorCpuManifestAtStart();
  CHECK(RoundTrip(cpu) == cpu);
  // Typed, not passed through.
  Manifest m = ManifestFromJson(gpu, "m.json");
  CHECK(m.present);
  CHECK(m.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(m.multiprocessor_count == 132);
  REQUIRE(m.clocks_end);
  CHECK(!m.clocks_end->power_draw_w);
  CHECK(m.clocks_start->sm_clock_mhz == 1980.0);
  CHECK(m.run_counts->at("ok") == 5);
  CHECK(m.suite == "smoke");
  CHECK(m.cuda_runtime == "13.0");
  CHECK(ManifestFromJson(cpu, "m.json").cuda_runtime.empty());
}

TEST_CASE("manifest: the fixture manifests round-trip (ToJson -> FromJson -> ToJson) and lose nothing") {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data")) {
    if (e.path().filename() != "manifest.json") continue;
    INFO(e.path().string());
    const json raw = ReadJsonFile(e.path(), JsonKind::kManifest);
    const Manifest m = ManifestFromJson(raw, e.path());
    const json once = ToJson(m);
    CHECK(ManifestFromJson(once, e.path()) == m);
    CHECK(ToJson(ManifestFromJson(once, e.path())) == once);
    CheckKept(raw, once, "");
    ++n;
  }
  CHECK(n >= 2);
}

TEST_CASE("manifest: every check names the field") {
  json j = CollectorGpuManifest();
  CHECK(FieldOf(j) == "<accepted>");
  auto with = [&](const char* pointer, const json& v) {
    json k = j;
    k[json::json_pointer(pointer)] = v;
    return FieldOf(k);
  };
  auto without = [&](const char* key) {
    json k = j;
    k.erase(key);
    return FieldOf(k);
  };
  CHECK(with("/device/vendor", "Intel") == "device.vendor");
  CHECK(with("/device/name", 3) == "device.name");
  CHECK(with("/device/multiprocessor_count", -1) == "device.multiprocessor_count");
  CHECK(with("/device/clocks_start", "fast") == "device.clocks_start");
  CHECK(with("/device/clocks_start/sm_clock_mhz", "fast") == "device.clocks_start.sm_clock_mhz");
  CHECK(with("/cpu/logical_cores", 0) == "cpu.logical_cores");
  // Parsed from text, 0 is an unsigned JSON number: the same check applies.
  json parsed = json::parse(j.dump());
  parsed["cpu"]["logical_cores"] = json::parse("0");
  CHECK(FieldOf(parsed) == "cpu.logical_cores");
  parsed["cpu"]["logical_cores"] = json::parse("18446744073709551615");
  CHECK(FieldOf(parsed) == "cpu.logical_cores");
  CHECK(with("/cpu/logical_cores", 2.5) == "cpu.logical_cores");
  CHECK(with("/build_id", "../up") == "build_id");
  CHECK(with("/platform_id", "a b") == "platform_id");
  CHECK(with("/libtorch/cuda_available", "yes") == "libtorch.cuda_available");
  CHECK(with("/suite", "smoke") == "suite");
  CHECK(with("/suite/name", nullptr) == "suite.name");
  // The recorded suite's run settings pass the one RunSettings check.
  CHECK(with("/suite/repeat", 0) == "suite.repeat");
  CHECK(with("/suite/processes", "two") == "suite.processes");
  CHECK(with("/suite/threads", "many") == "suite.threads");  // "default" or a count
  CHECK(with("/suite/threads", 4) == "<accepted>");
  CHECK(with("/runs/ok", -2) == "runs.ok");
  CHECK(with("/runs/ok", nullptr) == "runs.ok");
  CHECK(with("/interrupted", "no") == "interrupted");
  CHECK(with("/requested", 7) == "requested");
  CHECK(with("/schema_version", 99) == "schema_version");
  CHECK(with("/kind", "torchgauge.run") == "kind");
  CHECK(without("host") == "host");
  CHECK(without("started_at") == "started_at");
}

TEST_CASE("manifest: peaks and the CPU frequency policy round-trip; older manifests load without them") {
  json cpu = CollectorCpuManifestAtStart();
  CHECK(!ManifestFromJson(cpu, "m.json").peaks);
  Manifest m = ManifestFromJson(cpu, "m.json");
  ProbeResult p;
  p.threads = 2;
  MatmulPeak mm;
  mm.precision = "fp32";
  mm.n = 1024;
  mm.repeats = 5;
  mm.best_ms = 20;
  mm.tflops = 0.107;
  p.matmul.push_back(mm);
  m.peaks = p;
  CpuFrequencyPolicy f;
  f.governor = "performance";
  m.cpu_frequency = f;
  const Manifest back = ManifestFromJson(ToJson(m), "m.json");
  CHECK(back == m);
  REQUIRE(back.peaks);
  CHECK(*back.peaks->matmul.at(0).tflops == doctest::Approx(0.107));
  CHECK(*back.cpu_frequency->governor == "performance");
  json bad = ToJson(m);
  bad["peaks"]["matmul"][0]["tflops"] = "fast";
  CHECK_THROWS_WITH_AS(ManifestFromJson(bad, "m.json"), doctest::Contains("peaks"), FileError);
}

TEST_CASE("manifest: the shard block and the merged shards list round-trip and are checked") {
  json cpu = CollectorGpuManifest();
  const Manifest plain = ManifestFromJson(cpu, "m.json");
  CHECK(!plain.shard);
  CHECK(!plain.shards);
  CHECK(!ToJson(plain).contains("shard"));

  Manifest m = plain;
  ShardBlock s;
  s.index = 1;
  s.count = 2;
  s.host = "node-b";
  s.started_at = "2026-11-22T10:00:00Z";
  s.runs_assigned = 1;
  s.device = "cuda";
  s.cost_source = "static";
  s.plan = {{"a.train.eager.default", 8, 0, 12.5}, {"b.eval.eager.default", 4, 1, 3.25}};
  m.shard = s;
  const json once = ToJson(m);
  CHECK(once.at("shard").at("finished_at").is_null());
  CHECK(ManifestFromJson(once, "m.json") == m);
  m.shard->finished_at = "2026-11-22T11:00:00Z";
  CHECK(ManifestFromJson(ToJson(m), "m.json") == m);

  auto field = [&](const char* pointer, const json& v) {
    json k = ToJson(m);
    k[json::json_pointer(pointer)] = v;
    return FieldOf(k);
  };
  CHECK(field("/shard/index", 2) == "shard.index");  // not below count
  CHECK(field("/shard/count", 0) == "shard.count");
  CHECK(field("/shard/runs_assigned", 2) == "shard.runs_assigned");  // disagrees with the plan
  CHECK(field("/shard/plan/0/shard", 5) == "shard.plan[0].shard");
  CHECK(field("/shard/plan/1/cost", -1) == "shard.plan[1].cost");
  CHECK(field("/shard/plan", "all") == "shard.plan");
  CHECK(field("/shard/host", nullptr) == "shard.host");

  Manifest merged = plain;
  ShardSummary a;
  a.index = 0;
  a.host = "node-a";
  a.started_at = "2026-11-22T10:00:00Z";
  a.finished_at = "2026-11-22T10:30:00Z";
  a.wall_s = 1800;
  a.runs_assigned = a.runs_present = 3;
  a.planned_cost = 40;
  ShardSummary b;  // a shard that left nothing
  b.index = 1;
  b.runs_assigned = b.runs_missing = 2;
  b.planned_cost = 38.5;
  merged.shards = std::vector<ShardSummary>{a, b};
  const json mj = ToJson(merged);
  CHECK(mj.at("shards").at(1).at("host").is_null());
  CHECK(mj.at("shards").at(1).at("wall_s").is_null());
  CHECK(ManifestFromJson(mj, "m.json") == merged);
  json bad = mj;
  bad["shards"][1]["index"] = 3;
  CHECK(FieldOf(bad) == "shards[1].index");
  bad = mj;
  bad["shards"][0]["runs_missing"] = -1;
  CHECK(FieldOf(bad) == "shards[0].runs_missing");
}
