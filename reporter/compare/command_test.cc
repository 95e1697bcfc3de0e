// Tests of `torchgauge-report compare`: the golden Markdown report, the
// HTML escaping, the size limit, the JSON, the inconclusive verdict, and the
// CLI's exit codes.
// Regenerate the golden file with TORCHGAUGE_UPDATE_GOLDEN=1.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/io/json_io.h"
#include "reporter/compare/command.h"
#include "reporter/compare/report.h"
#include "reporter/testing/fixtures.h"

using namespace torchgauge;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/compare_golden";
const std::string kBase = "2.11.0-20261121", kNew = "2.11.0-20261122";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

reporter::CompareCommandOptions Fixture() {
  reporter::CompareCommandOptions o;
  o.results = (kGolden / "results").string();
  o.new_build = kNew;
  o.site_url = "https://torchgauge.example/site";
  return o;
}

// A comparison of build `next` against `base` on one platform "cpu", with
// the changes the test adds.
core::Comparison OnePlatform(const std::string& next, const std::string& base) {
  core::Comparison c;
  c.new_build = next;
  c.base_label = base;
  core::PlatformComparison p;
  p.platform_id = "cpu";
  p.new_build = next;
  p.base_builds = {base};
  p.streak = {next};
  c.platforms = {p};
  return c;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("tg_compare_cmd_" + std::to_string(std::random_device{}()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("golden Markdown report") {
  TempDir tmp;
  auto o = Fixture();
  o.markdown = (tmp.path / "issue.md").string();
  std::ostringstream out, err;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  CHECK(err.str().empty());
  const std::string md = Slurp(o.markdown);
  const fs::path expected = kGolden / "expected.md";
  if (std::getenv("TORCHGAUGE_UPDATE_GOLDEN")) {
    core::WriteFileAtomic(expected, md);
  }
  CHECK(md == Slurp(expected));
  // What the golden file must show, stated outright. resnet50 eval slowed
  // once, on three metrics (time, the throughput from the same samples, CPU
  // memory): one regression, not three (issue 36, item 5).
  CHECK(md.rfind("# \\[TorchGauge\\] 1 regression, 1 broken run in 2.11.0-20261122 vs 2.11.0-20261121", 0) == 0);
  CHECK(md.find("### Regressions (1 run, 3 metrics)") != std::string::npos);
  CHECK(md.find("[resnet50](https://torchgauge.example/site/models/resnet50.html#build=2.11.0-20261122)") !=
        std::string::npos);
  CHECK(md.find("torchgauge-collect run --model '^resnet50$' --mode eval --precision fp32 --batch-size 8 "
                "--device cpu") != std::string::npos);
  CHECK(md.find("too few samples to tell") != std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(out.str().rfind("[TorchGauge] 1 regression,", 0) == 0);
}

TEST_CASE("a build against itself, and bad input") {
  std::ostringstream out, err;
  auto o = Fixture();
  o.base = kNew;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareBadInput);  // same build
  o.base = kNew;
  o.new_build = kBase;  // reversed: hf_bert is slower there
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  o = Fixture();
  o.results = "/nonexistent/results";
  err.str("");
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareBadInput);
  CHECK(err.str().find("/nonexistent/results") != std::string::npos);
  o = Fixture();
  o.compare.threshold_percent = -1;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareBadInput);
  o = Fixture();
  // Every change is now under the thresholds.
  o.compare.rules = {core::ParseThresholdRule("*:.*=50"), core::ParseThresholdRule("cpu_memory:.*=50")};
  out.str("");
  // dlrm still stopped working: a status change is always flagged.
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  CHECK(out.str().find("0 regressions, 1 broken run") != std::string::npos);
}

TEST_CASE("JSON and HTML carry the same content, escaped") {
  TempDir tmp;
  auto o = Fixture();
  o.json = (tmp.path / "c.json").string();
  o.html = (tmp.path / "c.html").string();
  std::ostringstream out, err;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  auto j = core::ReadJsonFile(o.json);
  CHECK(j["kind"] == "torchgauge.comparison");
  // Counted per run, as the Markdown's title and first line count them
  // (issue 62, item 4): resnet50 eval is one regressed run of three metrics
  // (time, throughput, cpu_memory), one run improved on two.
  CHECK(j["regressions"] == 1);
  CHECK(j["regressed_metrics"] == 3);
  CHECK(j["improvements"] == 1);
  CHECK(j["improved_metrics"] == 2);
  CHECK(j["has_regression"] == true);
  int flagged = 0;
  for (const auto& c : j["platforms"][0]["changes"]) {
    if (c["verdict"] == "regression") {
      CHECK(c["model"] == "resnet50");
      ++flagged;
    }
  }
  CHECK(flagged == 3);
  const std::string html = Slurp(o.html);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("href=\"https://torchgauge.example/site/models/resnet50.html#build=2.11.0-20261122\"") !=
        std::string::npos);
  // A hostile site url is dropped rather than linked.
  core::CompareRequest req{kGolden / "results", std::nullopt, kNew, std::nullopt, {}};
  auto c = core::CompareBuilds(req);
  reporter::ReportOptions hostile;
  hostile.site_url = "javascript:alert(1)";
  auto bad = reporter::RenderCompareHtml(c, hostile);
  CHECK(bad.find("javascript:") == std::string::npos);
}

TEST_CASE("the Markdown stays under the issue size limit") {
  core::Comparison c = OnePlatform("big", "small");
  auto& p = c.platforms[0];
  for (int i = 0; i < 4000; ++i) {
    core::MetricChange m;
    m.key = {"model_" + std::to_string(i), "train", "eager", "fp32"};
    m.verdict = core::Verdict::kRegression;
    m.base_value = 10;
    m.new_value = 11 + i * 0.001;
    m.ratio = m.new_value / m.base_value;
    m.delta_percent = (m.ratio - 1) * 100;
    m.p_value = 1e-4;
    m.n_base = m.n_new = 10;
    m.device = "cuda:0";
    p.changes.push_back(m);
  }
  reporter::ReportOptions linked;
  linked.site_url = "https://x.example";
  const std::string md = reporter::RenderCompareMarkdown(c, linked);
  CHECK(md.size() <= 65536);
  CHECK(md.find("more rows in the [full report](https://x.example/builds/big/compare.html)") != std::string::npos);
  // Sorted by magnitude: the largest change comes first.
  CHECK(md.find("model\\_3999") < md.find("model\\_3998"));
  // A fence is never left open.
  std::size_t fences = 0;
  for (auto at = md.find("```"); at != std::string::npos; at = md.find("```", at + 3)) ++fences;
  CHECK(fences % 2 == 0);
}

TEST_CASE("an inconclusive comparison says so in its title and its first lines") {
  core::Comparison c = OnePlatform("b2", "b1");
  auto& p = c.platforms[0];
  for (int i = 0; i < 4; ++i) {
    core::MetricChange m;
    m.key = {"model_" + std::to_string(i), "eval", "eager", "fp32"};
    m.base_value = m.new_value = 10;
    m.n_base = m.n_new = 10;
    m.p_value = 0.5;
    m.device = "cpu";
    m.verdict = core::Verdict::kUnchanged;
    if (i < 2) m.noisy = "new build b2: other processes used 1.6 cores";
    p.changes.push_back(m);
  }
  REQUIRE(c.Inconclusive());
  const std::string md = reporter::RenderCompareMarkdown(c, {});
  CHECK(md.rfind("# \\[TorchGauge\\] Inconclusive: 2 of 4 runs noisy in b2 vs b1 (cpu)\n", 0) == 0);
  CHECK(md.find("cannot say that nothing regressed") != std::string::npos);
  CHECK(reporter::ComparisonTitle(c).find("No regressions") == std::string::npos);
}

TEST_CASE("the CLI subcommand returns the exit code through CLI11") {
  auto run = [](std::vector<std::string> args) {
    CLI::App app("test");
    reporter::AddCompareCommand(app);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return 0;
  };
  TempDir tmp;
  const std::string results = (kGolden / "results").string();
  const std::string md = (tmp.path / "x.md").string();
  CHECK(run({"compare", "--results", results, "--new", kNew, "--markdown", md}) == 1);
  CHECK(fs::exists(md));
  CHECK(run({"compare", "--results", results, "--new", kNew, "--threshold-for", "*:.*=80", "--markdown", md, "--base",
             kBase}) == 1);  // dlrm's status change
  CHECK(run({"compare", "--results", results, "--new", kNew, "--platform", "no-such-platform", "--markdown", md}) == 2);
  // A malformed --threshold-for is a usage error, named by the option.
  CHECK(run({"compare", "--results", results, "--new", kNew, "--threshold-for", "speed:.*=3"}) != 0);
  CHECK(run({"compare", "--results", results, "--new", kBase}) == 2);  // the first build: nothing before it
}

TEST_CASE("the reproduction command carries the run's settings") {
  core::RunKey key{"resnet18", "train", "eager", "default"};
  using reporter::ReproduceCommand;
  CHECK(ReproduceCommand(key, 16, "cuda:0", std::nullopt) ==
        "torchgauge-collect run --model '^resnet18$' --mode train --precision default --batch-size 16 --device cuda");
  core::RunSettings s;
  s.smoke = true;
  s.warmup = 2;
  s.repeat = 6;
  s.processes = 5;
  s.threads = 1;
  CHECK(ReproduceCommand(key, 1, "cpu", s) ==
        "torchgauge-collect run --suite smoke --model '^resnet18$' --mode train --precision default --batch-size 1 "
        "--device cpu --warmup 2 --repeat 6 --processes 5 --threads 1");
}

// tests/data/compare_generation (make_fixture.py): llama_3_2_1b's generation
// in three builds: a base, the same build collected again, and one whose
// every decode step is 20 % slower.
TEST_CASE("compare flags a planted 20 % TPOT slowdown, and not a recollection of the same build") {
  const fs::path fixture = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/compare_generation/results";
  TempDir tmp;
  reporter::CompareCommandOptions o;
  o.results = fixture.string();
  o.base = "2.14.1-20261127";
  o.new_build = "2.14.1-20261128";  // the same build collected again
  o.json = (tmp.path / "same.json").string();
  std::ostringstream out, err;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareOk);
  auto same = core::ReadJsonFile(o.json);
  CHECK(same["regressions"] == 0);
  CHECK(same["improvements"] == 0);
  std::set<std::string> compared;
  for (const auto& c : same["platforms"][0]["changes"]) compared.insert(c["metric"].get<std::string>());
  CHECK(compared.count("ttft"));
  CHECK(compared.count("tpot"));
  CHECK(compared.count("tokens_per_s"));

  o.new_build = "2.14.1-20261129";  // TPOT +20 %
  o.json = (tmp.path / "slow.json").string();
  o.markdown = (tmp.path / "slow.md").string();
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  auto slow = core::ReadJsonFile(o.json);
  std::map<std::string, std::string> verdicts;
  std::map<std::string, double> deltas;
  for (const auto& c : slow["platforms"][0]["changes"]) {
    verdicts[c["metric"].get<std::string>()] = c["verdict"].get<std::string>();
    deltas[c["metric"].get<std::string>()] = c["delta_percent"].get<double>();
  }
  CHECK(verdicts["tpot"] == "regression");
  CHECK(deltas["tpot"] == doctest::Approx(20).epsilon(0.05));
  CHECK(verdicts["tokens_per_s"] == "regression");  // higher is better: it fell
  CHECK(deltas["tokens_per_s"] < 0);
  CHECK(verdicts["ttft"] == "unchanged");
  CHECK(verdicts["time"] == "unchanged");
  const std::string md = Slurp(o.markdown);
  CHECK(md.find("tpot") != std::string::npos);
}

namespace {
// The count of regressions a person reads: the number in the title
// "[TorchGauge] N regression(s) in ...", or 0 for "No regressions".
int TitleRegressions(const std::string& title) {
  const std::string head = "[TorchGauge] ";
  REQUIRE(title.rfind(head, 0) == 0);
  if (title.compare(head.size(), 14, "No regressions") == 0) return 0;
  return std::stoi(title.substr(head.size()));
}

// A synthetic tree (reporter/testing/fixtures.h) on the GPU-style platform
// only, whose second build plants +30 % in two runs (model 1's step and
// model 2's spike, eval/eager/fp32), each run measured in one process with
// `samples` samples.
fs::path PlantedTree(const fs::path& dir, int samples) {
  reporter::FixtureSpec spec;
  spec.builds = 2;
  spec.models = 3;
  spec.configs = 2;
  spec.cpu_platform = false;
  spec.samples = samples;
  spec.plant_at = 1;
  reporter::GenerateFixtureTree(dir / "results", spec);
  return dir / "results";
}
}  // namespace

TEST_CASE("one slowed run is one regression in the JSON, as in the title (issue 62, item 4)") {
  TempDir tmp;
  reporter::CompareCommandOptions o;
  o.results = PlantedTree(tmp.path, 10).string();
  o.new_build = reporter::FixtureBuildId(reporter::FixtureSpec{}, 1);
  o.json = (tmp.path / "c.json").string();
  std::ostringstream out, err;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  const auto j = core::ReadJsonFile(o.json);
  const int shown = TitleRegressions(out.str());
  CHECK(shown == 2);  // the two planted runs
  CHECK(j["regressions"] == shown);
  // Each slowed run moved on time and on the throughput of the same samples.
  CHECK(j["regressed_metrics"] == 4);
}

TEST_CASE("a night whose samples cannot reach alpha says it cannot tell, and exits 3 (issue 62, item 5)") {
  TempDir tmp;
  reporter::CompareCommandOptions o;
  o.results = PlantedTree(tmp.path, 3).string();  // 3 samples in 1 process a side: the smallest p is 0.1
  o.new_build = reporter::FixtureBuildId(reporter::FixtureSpec{}, 1);
  o.json = (tmp.path / "c.json").string();
  o.markdown = (tmp.path / "c.md").string();
  std::ostringstream out, err;
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareInconclusive);
  CHECK(out.str().rfind("[TorchGauge] Cannot tell: ", 0) == 0);
  CHECK(out.str().find("No regressions") == std::string::npos);
  const auto j = core::ReadJsonFile(o.json);
  CHECK(j["cannot_tell"] == true);
  CHECK(j["inconclusive"] == false);  // nothing was noisy: the protocol is what cannot tell
  CHECK(j["outcome"] == "cannot_tell");
  CHECK(j["regressions"] == 0);
  CHECK(j["untestable_runs"] == j["compared_runs"]);
  CHECK(j["too_few_samples_runs"] == 2);  // the planted +30 % runs
  const std::string md = Slurp(o.markdown);
  CHECK(md.find("cannot say that nothing regressed") != std::string::npos);

  // The same tree at 10 samples a side can tell: the planted runs regress.
  TempDir tmp10;
  o.results = PlantedTree(tmp10.path, 10).string();
  o.json = (tmp10.path / "c.json").string();
  o.markdown.clear();
  CHECK(reporter::RunCompareCommand(o, out, err) == reporter::kCompareRegressed);
  CHECK(core::ReadJsonFile(o.json)["cannot_tell"] == false);
}
