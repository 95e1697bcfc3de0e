#include "core/contract/results_tree.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/analysis/coverage.h"
#include "core/contract/layout.h"
#include "core/io/json_io.h"

namespace fs = std::filesystem;
using namespace torchgauge::core;

namespace {

struct Tree {
  fs::path root = fs::temp_directory_path() / ("tg_results_tree_" + std::to_string(::getpid()));
  Tree() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Tree() { fs::remove_all(root); }
};

Manifest MakeManifest(const std::string& build, const std::string& platform, const std::string& started_at) {
  Manifest m;
  m.build_id = build;
  m.platform_id = platform;
  m.started_at = started_at;
  m.collector_version = "0.1.0";
  m.git_sha = "test";
  m.libtorch_version = "2.11.0";
  m.vendor = "CPU";
  m.device_name = m.cpu_model = "test CPU";
  m.logical_cores = 2;
  m.hostname = "test";
  m.os = "Linux";
  m.suite = "test";
  return m;
}

RunResult MakeRun(const std::string& build, const std::string& platform, const std::string& model) {
  RunResult r;
  r.build_id = build;
  r.platform_id = platform;
  r.model = {model, model, "vision", "t", "r"};
  r.mode = "eval";
  r.started_at = "2026-11-22T00:00:00Z";
  Timing t;
  t.samples_ms = {1, 2, 3};
  t.repetitions = 3;
  t.clock = "steady_clock";
  SummarizeTiming(t);
  r.timing = t;
  r.operators = std::vector<std::string>{"aten::mm"};
  return r;
}

void WritePlatform(const fs::path& root, const std::string& build, const std::string& platform,
                   const std::string& started_at, const std::vector<std::string>& models) {
  const fs::path dir = PlatformDir(root, build, platform);
  WriteJsonAtomic(ManifestPath(dir), ToJson(MakeManifest(build, platform, started_at)));
  for (const auto& m : models) {
    RunResult r = MakeRun(build, platform, m);
    WriteJsonAtomic(RunPath(dir, {r.model.id, r.mode, r.backend, r.precision}), ToJson(r));
  }
}

}  // namespace

TEST_CASE("results tree: one build order, the earliest start of a build, shared by compare") {
  Tree t;
  // b-late started first on the GPU platform, later on CPU: the earliest start counts.
  WritePlatform(t.root, "a-build", "cpu", "2026-11-20T00:00:00Z", {"m"});
  WritePlatform(t.root, "b-late", "cpu", "2026-11-21T00:00:00Z", {"m"});
  WritePlatform(t.root, "b-late", "gpu", "2026-11-19T00:00:00Z", {"m"});
  WritePlatform(t.root, "c-build", "cpu", "2026-11-20T00:00:00Z", {"m"});
  fs::create_directories(t.root / "not safe");
  fs::create_directories(t.root / ".hidden");
  TreeScan scan = ScanTree(t.root);
  REQUIRE(scan.builds.size() == 3);
  CHECK(scan.builds[0].id == "b-late");
  CHECK(scan.builds[0].started_at == "2026-11-19T00:00:00Z");
  CHECK(scan.builds[1].id == "a-build");
  CHECK(scan.builds[2].id == "c-build");
  REQUIRE(scan.problems.size() == 1);
  CHECK(scan.problems[0].file.find("not safe") != std::string::npos);
  // compare lists the CPU platform's builds in the same order.
  auto order = ListBuilds(t.root, "cpu");
  REQUIRE(order.size() == 3);
  CHECK(order[0].build_id == "b-late");
  CHECK(order[1].build_id == "a-build");
  CHECK(ListPlatforms(t.root, "b-late") == std::vector<std::string>{"cpu", "gpu"});
}

TEST_CASE("results tree: a platform loads as manifest, runs and problems; compare refuses what it refuses") {
  Tree t;
  WritePlatform(t.root, "b1", "cpu", "2026-11-20T00:00:00Z", {"m1", "m2"});
  const fs::path dir = PlatformDir(t.root, "b1", "cpu");
  auto j = nlohmann::json::parse(std::ifstream(RunPath(dir, {"m2", "eval", "eager", "fp32"})));
  j["timing"]["iqr_ms"] = -0.5;
  WriteJsonAtomic(RunPath(dir, {"m2", "eval", "eager", "fp32"}), j);
  TreeBuild b = ScanBuild(t.root, "b1");
  REQUIRE(b.platforms.size() == 1);
  LoadedPlatform p = LoadPlatform(b, b.platforms[0]);
  CHECK(p.manifest.present);
  REQUIRE(p.runs.size() == 1);
  CHECK(p.runs[0].model.id == "m1");
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0].field == "timing.iqr_ms");
  try {
    (void)LoadRunSet(t.root, "b1", "cpu");
    FAIL("expected a FileError");
  } catch (const FileError& e) {
    CHECK(e.field() == "timing.iqr_ms");
  }
  // Coverage skips the same file and names it.
  std::vector<std::string> problems;
  auto runs = LoadRunsUnder(t.root, &problems);
  CHECK(runs.size() == 1);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("field 'timing.iqr_ms'") != std::string::npos);
}

TEST_CASE("results tree: coverage reads a results root, one build or one platform") {
  Tree t;
  WritePlatform(t.root, "b1", "cpu", "2026-11-20T00:00:00Z", {"m1", "m2"});
  WritePlatform(t.root, "b1", "gpu", "2026-11-20T00:00:00Z", {"m1"});
  WritePlatform(t.root, "b2", "cpu", "2026-11-21T00:00:00Z", {"m1"});
  std::vector<Problem> problems;
  CHECK(LoadRunsIn(t.root, &problems).size() == 4);
  CHECK(LoadRunsIn(t.root / "b1", &problems).size() == 3);
  CHECK(LoadRunsIn(t.root / "b1" / "cpu", &problems).size() == 2);
  CHECK(LoadRunsIn(t.root / "b1" / "cpu" / "", &problems).size() == 2);
  CHECK(problems.empty());
  CHECK_THROWS_AS(LoadRunsIn(t.root / "nope", &problems), FileError);
}

TEST_CASE("results tree: a manifest that is not its directory's is refused, runs still load") {
  Tree t;
  WritePlatform(t.root, "b1", "cpu", "2026-11-20T00:00:00Z", {"m1"});
  WriteJsonAtomic(ManifestPath(PlatformDir(t.root, "b1", "cpu")),
                  ToJson(MakeManifest("b2", "cpu", "2026-11-20T00:00:00Z")));
  TreeBuild b = ScanBuild(t.root, "b1");
  REQUIRE(b.platforms.size() == 1);
  CHECK(!b.platforms[0].manifest);
  CHECK(b.platforms[0].has_manifest_file);
  REQUIRE(b.platforms[0].manifest_problem);
  CHECK(b.platforms[0].manifest_problem->field == "build_id");
  CHECK(b.started_at.empty());
  LoadedPlatform p = LoadPlatform(b, b.platforms[0]);
  CHECK(!p.manifest.present);
  CHECK(p.manifest.platform_id == "cpu");
  CHECK(p.runs.size() == 1);
  CHECK(p.problems.size() == 1);
}
