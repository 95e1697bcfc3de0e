// `torchgauge-report ratio` on a fixture tree: its exit codes, errors and
// Markdown/JSON outputs.
#include "reporter/compare/ratio_command.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge::reporter;

namespace {

struct Tree {
  fs::path root = fs::temp_directory_path() / ("tg_ratio_cmd_" + std::to_string(std::random_device{}()));
  std::string build;
  Tree() {
    FixtureSpec spec;
    spec.builds = 1;
    spec.models = 3;
    spec.configs = 2;
    GenerateFixtureTree(root / "results", spec);
    build = FixtureBuildId(spec, 0);
  }
  ~Tree() { fs::remove_all(root); }
};

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* kGpu = "nvidia-a100-40gb-cu130";
constexpr const char* kCpu = "cpu-x86_64-2c";

}  // namespace

TEST_CASE("ratio: Markdown to a file, to stdout, and JSON") {
  Tree t;
  RatioCommandOptions o;
  o.results = (t.root / "results").string();
  o.build = t.build;
  o.a = kCpu;
  o.b = kGpu;
  std::ostringstream out, err;
  REQUIRE(RunRatioCommand(o, out, err) == kRatioOk);
  const std::string md = out.str();
  CHECK(md.starts_with("## Synthetic CPU vs NVIDIA A100-SXM4-40GB: time ratio\n"));
  CHECK(md.find("| train | 3 | 0.025 | 0 (3 not recorded) |") != std::string::npos);  // the fixture's GPU is 40x faster
  CHECK(md.find("| resnet50 | eval | eager | fp32 | 64 |") != std::string::npos);
  CHECK(md.find("| Effective precision differs | With a noisy run |") != std::string::npos);
  CHECK(err.str().empty());

  o.markdown = (t.root / "ratio.md").string();
  std::ostringstream out2, err2;
  REQUIRE(RunRatioCommand(o, out2, err2) == kRatioOk);
  CHECK(Read(o.markdown) == md);
  CHECK(out2.str() == "Synthetic CPU vs NVIDIA A100-SXM4-40GB: time ratio\n");

  o.markdown.clear();
  o.json = true;
  std::ostringstream out3, err3;
  REQUIRE(RunRatioCommand(o, out3, err3) == kRatioOk);
  nlohmann::json j = nlohmann::json::parse(out3.str());
  CHECK(j["reference"] == kCpu);
  CHECK(j["other"] == kGpu);
  CHECK(j["rows"].size() == 6);
  CHECK(j["rows"][0]["ratio"].get<double>() == doctest::Approx(0.025).epsilon(0.05));
}

TEST_CASE("ratio: bad input exits 2 naming what is missing and what there is") {
  Tree t;
  RatioCommandOptions o;
  o.results = (t.root / "results").string();
  o.build = t.build;
  o.a = kCpu;
  o.b = "amd-mi250";
  std::ostringstream out, err;
  CHECK(RunRatioCommand(o, out, err) == kRatioBadInput);
  CHECK(err.str().find("--b 'amd-mi250': no such platform in build " + t.build) != std::string::npos);
  CHECK(err.str().find(std::string("available: ") + kCpu + ", " + kGpu) != std::string::npos);
  CHECK(out.str().empty());

  o.b = kGpu;
  o.build = "no-such-build";
  std::ostringstream out2, err2;
  CHECK(RunRatioCommand(o, out2, err2) == kRatioBadInput);
  CHECK(err2.str().find("--build 'no-such-build'") != std::string::npos);
  CHECK(err2.str().find(t.build) != std::string::npos);

  o.build = t.build;
  o.b = kCpu;
  std::ostringstream out3, err3;
  CHECK(RunRatioCommand(o, out3, err3) == kRatioBadInput);
  CHECK(err3.str().find("same platform") != std::string::npos);
}

TEST_CASE("ratio: the CLI subcommand returns the exit code through CLI11") {
  Tree t;
  auto run = [](std::vector<std::string> args) {
    CLI::App app("test");
    AddRatioCommand(app);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return 0;
  };
  const std::string results = (t.root / "results").string();
  const std::string md = (t.root / "x.md").string();
  CHECK(run({"ratio", "--results", results, "--build", t.build, "--a", kGpu, "--b", kCpu, "--markdown", md}) == 0);
  CHECK(Read(md).starts_with("## NVIDIA A100-SXM4-40GB vs Synthetic CPU: time ratio"));
  CHECK(run({"ratio", "--results", results, "--build", t.build, "--a", kGpu, "--b", "nope", "--markdown", md}) == 2);
}
