#include "reporter/results/load.h"

#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/layout.h"
#include "core/io/json_io.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;

namespace {
fs::path FreshDir(const std::string& name) {
  fs::path p = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
void Write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
}  // namespace

TEST_CASE("LoadResults orders builds and skips bad files with file and field") {
  fs::path root = FreshDir("load");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 2;
  spec.configs = 2;
  GenerateFixtureTree(root, spec);
  fs::path dir = core::PlatformDir(root, FixtureBuildId(spec, 1), "cpu-x86_64-2c");
  fs::path victim = core::RunPath(dir, {"resnet50", "train", "eager", "fp32"});
  // Truncated file.
  std::string text;
  {
    std::ifstream in(victim);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  Write(victim, text.substr(0, text.size() / 2));
  // Schema violation in another file.
  fs::path other = core::RunPath(dir, {"resnet50", "eval", "eager", "fp32"});
  auto j = nlohmann::json::parse(std::ifstream(other));
  j["timing"]["median_ms"] = -1;
  Write(other, j.dump());
  // A directory that is not a safe id is ignored with a problem.
  fs::create_directories(root / "bad build");

  LoadedResults r = LoadResults(root, {});
  REQUIRE(r.builds.size() == 2);
  CHECK(r.builds[0].id == FixtureBuildId(spec, 0));
  CHECK(r.builds[1].problems.size() == 2);
  bool saw_truncated = false, saw_field = false;
  for (const auto& p : r.builds[1].problems) {
    if (p.file == victim.string() && p.message.find("not valid JSON") != std::string::npos) saw_truncated = true;
    if (p.file == other.string() && p.field == "timing.median_ms") saw_field = true;
  }
  CHECK(saw_truncated);
  CHECK(saw_field);
  CHECK(r.problems.size() == 1);
  LoadOptions strict;
  strict.strict = true;
  CHECK_THROWS_AS(LoadResults(root, strict), StrictError);
}

TEST_CASE("LoadRunFile checks that a file sits in its own build and platform") {
  fs::path root = FreshDir("mismatch");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 1;
  spec.configs = 1;
  spec.cpu_platform = false;
  GenerateFixtureTree(root, spec);
  fs::path dir = core::PlatformDir(root, FixtureBuildId(spec, 0), "nvidia-a100-40gb-cu130");
  fs::path f = core::RunPath(dir, {"resnet50", "train", "eager", "fp32"});
  try {
    LoadRunFile(f, "other-build", "nvidia-a100-40gb-cu130");
    FAIL("expected an error");
  } catch (const core::FileError& e) {
    CHECK(e.field() == "build_id");
  }
  auto j = nlohmann::json::parse(std::ifstream(f));
  j["model"]["id"] = "../../evil";
  Write(f, j.dump());
  try {
    LoadRunFile(f, FixtureBuildId(spec, 0), "nvidia-a100-40gb-cu130");
    FAIL("expected an error");
  } catch (const core::FileError& e) {
    CHECK(e.field() == "model.id");
  }
  // Found by the fuzzer (tests/fuzz/corpus/run_result/regress-number-overflow.json):
  // a number no double holds escaped as a raw JSON exception, naming no file.
  Write(f, "{\"schema_version\": 1, \"timing\": {\"mean_ms\": 2.00491e3083}}");
  const std::string name = f.string();
  CHECK_THROWS_WITH_AS(LoadRunFile(f, FixtureBuildId(spec, 0), "nvidia-a100-40gb-cu130"),
                       doctest::Contains(name.c_str()), core::FileError);
}

TEST_CASE("LoadResults on a scanned tree reads what LoadResults on the root reads") {
  fs::path root = FreshDir("scan");
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 1;
  spec.configs = 1;
  GenerateFixtureTree(root, spec);
  core::TreeScan scan = core::ScanTree(root);
  REQUIRE(scan.builds.size() == 3);
  LoadOptions lo;
  lo.only_builds = {FixtureBuildId(spec, 1)};
  LoadedResults a = LoadResults(scan, lo), b = LoadResults(root, lo);
  REQUIRE(a.builds.size() == 1);
  REQUIRE(b.builds.size() == 1);
  CHECK(a.builds[0].id == FixtureBuildId(spec, 1));
  CHECK(a.builds[0].started_at == b.builds[0].started_at);
  REQUIRE(a.builds[0].platforms.size() == b.builds[0].platforms.size());
  for (size_t i = 0; i < a.builds[0].platforms.size(); ++i) {
    CHECK(a.builds[0].platforms[i].manifest == b.builds[0].platforms[i].manifest);
    CHECK(a.builds[0].platforms[i].runs.size() == b.builds[0].platforms[i].runs.size());
  }
  // The site's comparison sees the loaded platform without reading it again.
  const auto& p = a.builds[0].platforms[0];
  core::RunSet set = core::MakeRunSet(a.builds[0].id, p);
  CHECK(set.platform_id == p.manifest.platform_id);
  CHECK(set.runs.size() == p.runs.size());
  CHECK(set.manifest == core::ToJson(p.manifest));
}
