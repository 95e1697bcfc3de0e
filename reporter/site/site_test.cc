// Integration tests of the whole pipeline on fixture trees: golden files,
// determinism, incremental rendering, hostile input, --strict, and schema
// validity of the generated fixtures.
//
// Regenerate the goldens after an intended output change:
//   TORCHGAUGE_UPDATE_GOLDEN=1 ./build/reporter/reporter_site_test -tc='golden*'
// then review `git diff tests/data/golden` and commit.
#include "reporter/site/site.h"
#include "reporter/output/paths.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/layout.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;

namespace {
// Joins its parts by appending: GCC 12's -Wrestrict misreads `"x" + s` as an
// overlapping copy, so the tests build long strings this way.
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string s;
  (s += ... += parts);
  return s;
}
fs::path Tmp(const std::string& name) {
  fs::path p = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
SiteOptions Options(const fs::path& results, const fs::path& out, bool svg = false) {
  SiteOptions o;
  o.results = results;
  o.out = out;
  o.templates = fs::path(TORCHGAUGE_SOURCE_DIR) / "templates";
  o.static_dir = fs::path(TORCHGAUGE_SOURCE_DIR) / "site";
  o.helper = fs::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "output" / "vl_render.py";
  o.python = TORCHGAUGE_PYTHON;
  o.svg = svg;
  o.threads = 2;
  return o;
}
// Every regular file under root, relative path -> bytes; without the change
// detection cache (.torchgauge/), which depends on file times by design.
std::map<std::string, std::string> Snapshot(const fs::path& root, bool with_bundle = false) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), root).generic_string();
    if (rel.starts_with(".torchgauge/")) continue;
    if (!with_bundle && rel == "assets/vega-bundle.js") continue;
    out[rel] = Read(e.path());
  }
  return out;
}
// The small fixture behind the goldens: 3 builds x 4 models x 4 configs on a
// GPU-style and a CPU platform, plus one truncated result file.
fs::path SmallTree(const std::string& name) {
  fs::path root = Tmp(name);
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 4;
  spec.configs = 6;
  GenerateFixtureTree(root / "results", spec);
  fs::path bad = core::RunPath(core::PlatformDir(root / "results", FixtureBuildId(spec, 2), "cpu-x86_64-2c"),
                               {"dlrm", "eval", "eager", "fp32"});
  std::string text = Read(bad);
  Write(bad, text.substr(0, text.size() / 3));
  return root;
}
}  // namespace

TEST_CASE("golden: a small fixture tree renders byte-for-byte as tests/data/golden") {
  fs::path root = SmallTree("golden");
  SiteOptions o = Options(root / "results", root / "site");
  SiteReport r = BuildSite(o);
  CHECK(r.builds_rendered == 3);
  CHECK(r.problems.size() == 1);
  auto got = Snapshot(root / "site");
  // Problem paths name the results dir; make them independent of the build dir.
  fs::path golden = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests" / "data" / "golden" / "site";
  const std::string prefix = (root / "results").string();
  for (auto& [rel, text] : got) {
    for (size_t pos; (pos = text.find(prefix)) != std::string::npos;) text.replace(pos, prefix.size(), "RESULTS");
  }
  if (std::getenv("TORCHGAUGE_UPDATE_GOLDEN")) {
    fs::remove_all(golden);
    for (const auto& [rel, text] : got) {
      if (rel.starts_with("assets/vega-bundle")) continue;
      Write(golden / rel, text);
    }
    MESSAGE("goldens regenerated under " << golden.string());
  }
  auto want = Snapshot(golden);
  for (const auto& entry : want) {
    // Not a structured binding: clang 14 cannot capture one in INFO's lambda.
    const std::string& rel = entry.first;
    const auto& text = entry.second;
    INFO("file: " << rel);
    REQUIRE(got.count(rel));
    CHECK(got[rel] == text);
  }
  for (const auto& entry : got) {
    // Not a structured binding: clang 14 cannot capture one in INFO's lambda.
    const std::string& rel = entry.first;
    if (rel.starts_with("assets/vega-bundle")) continue;
    INFO("unexpected file: " << rel);
    CHECK(want.count(rel));
  }
}

TEST_CASE("determinism: rendering twice gives identical bytes, and the second writes nothing") {
  fs::path root = SmallTree("determinism");
  BuildSite(Options(root / "results", root / "a"));
  BuildSite(Options(root / "results", root / "b"));
  CHECK(Snapshot(root / "a") == Snapshot(root / "b"));
  SiteReport again = BuildSite(Options(root / "results", root / "a"));
  CHECK(again.files_written == 0);
}

TEST_CASE("determinism: the thread count does not change a byte") {
  fs::path root = SmallTree("threads");
  SiteOptions one = Options(root / "results", root / "one");
  one.threads = 1;
  SiteOptions many = Options(root / "results", root / "many");
  many.threads = 5;  // more threads than cores, to interleave the model pages
  SiteReport a = BuildSite(one);
  SiteReport b = BuildSite(many);
  CHECK(Snapshot(root / "one") == Snapshot(root / "many"));
  CHECK(a.files_written == b.files_written);
  CHECK(a.figures == b.figures);
}

TEST_CASE("incremental: rendering one build leaves other published builds untouched") {
  fs::path root = Tmp("incremental");
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 3;
  spec.configs = 2;
  GenerateFixtureTree(root / "results", spec);
  BuildSite(Options(root / "results", root / "site"));
  auto before = Snapshot(root / "site");
  auto mtime = fs::last_write_time(root / "site" / "builds" / FixtureBuildId(spec, 0) / "index.html");
  // A new build arrives; render only it.
  FixtureSpec next = spec;
  next.builds = 1;
  next.first_day = 3;
  GenerateFixtureTree(root / "results", next);
  SiteOptions o = Options(root / "results", root / "site");
  o.builds = {FixtureBuildId(next, 0)};
  SiteReport r = BuildSite(o);
  CHECK(r.builds_rendered == 1);
  auto after = Snapshot(root / "site");
  for (const auto& entry : before) {
    // Not a structured binding: clang 14 cannot capture one in INFO's lambda.
    const std::string& rel = entry.first;
    const auto& text = entry.second;
    if (rel.starts_with("builds/")) {
      INFO(rel);
      CHECK(after[rel] == text);
    }
  }
  CHECK(fs::last_write_time(root / "site" / "builds" / FixtureBuildId(spec, 0) / "index.html") == mtime);
  CHECK(after["index.md"].find(FixtureBuildId(next, 0)) != std::string::npos);
  // The same site rendered in full from scratch is identical.
  BuildSite(Options(root / "results", root / "full"));
  CHECK(Snapshot(root / "full") == after);
}

TEST_CASE("change detection: a full render redoes exactly the builds whose inputs changed") {
  fs::path root = Tmp("change");
  FixtureSpec spec;
  spec.builds = 5;
  spec.models = 2;
  spec.configs = 2;
  GenerateFixtureTree(root / "results", spec);
  fs::path site = root / "site";
  auto options = [&] {
    SiteOptions o = Options(root / "results", site);
    o.trend_builds = 2;  // build k reads build k-1 (trend and comparison)
    return o;
  };
  SiteReport first = BuildSite(options());
  CHECK(first.builds_rendered == 5);
  CHECK(first.builds_unchanged == 0);
  for (int i = 0; i < 5; ++i) CHECK(fs::exists(site / ".torchgauge" / (FixtureBuildId(spec, i) + ".fingerprint")));

  SiteReport again = BuildSite(options());
  CHECK(again.builds_rendered == 0);
  CHECK(again.builds_unchanged == 5);
  CHECK(again.files_written == 0);

  // A result of build 1 disappears: build 1 and build 2 (which reads it)
  // are rendered again, and the site equals a fresh render.
  fs::path runs = core::RunsDir(core::PlatformDir(root / "results", FixtureBuildId(spec, 1), "cpu-x86_64-2c"));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(runs)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 1);
  fs::remove(files.front());
  SiteReport changed = BuildSite(options());
  CHECK(changed.builds_rendered == 2);
  CHECK(changed.builds_unchanged == 3);
  SiteOptions fresh = options();
  fresh.out = root / "fresh";
  BuildSite(fresh);
  CHECK(Snapshot(site) == Snapshot(root / "fresh"));

  // Rewriting a file with the same bytes still counts as a change (the
  // fingerprint reads times, not contents): build 3 and its reader, build 4.
  fs::path f3 = core::RunsDir(core::PlatformDir(root / "results", FixtureBuildId(spec, 3), "cpu-x86_64-2c"));
  fs::path one = fs::directory_iterator(f3)->path();
  std::string text = Read(one);
  fs::remove(one);
  Write(one, text);
  CHECK(BuildSite(options()).builds_rendered == 2);

  // A lost fingerprint (an interrupted render) redoes that build only.
  fs::remove(site / ".torchgauge" / (FixtureBuildId(spec, 0) + ".fingerprint"));
  SiteReport lost = BuildSite(options());
  CHECK(lost.builds_rendered == 1);
  CHECK(lost.files_written == 0);

  // A template or an option that changes output redoes every build;
  // --force too.
  fs::path templates = root / "templates";
  fs::copy(fs::path(TORCHGAUGE_SOURCE_DIR) / "templates", templates);
  Write(templates / "model.md.mustache", Read(templates / "model.md.mustache") + "\n");
  SiteOptions restyled = options();
  restyled.templates = templates;
  CHECK(BuildSite(restyled).builds_rendered == 5);
  SiteOptions wider = restyled;
  wider.trend_builds = 3;
  CHECK(BuildSite(wider).builds_rendered == 5);
  CHECK(BuildSite(wider).builds_rendered == 0);
  wider.force = true;
  CHECK(BuildSite(wider).builds_rendered == 5);

  // Rendering named builds still renders them, and records their fingerprints.
  wider.force = false;
  wider.builds = {FixtureBuildId(spec, 2)};
  fs::remove(site / ".torchgauge" / (FixtureBuildId(spec, 2) + ".fingerprint"));
  CHECK(BuildSite(wider).builds_rendered == 1);
  wider.builds.clear();
  CHECK(BuildSite(wider).builds_rendered == 0);
}

TEST_CASE("svg: a figure is rendered again only when its spec changed or its SVG is missing") {
  fs::path root = Tmp("svg-reuse");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 1;
  spec.configs = 1;
  GenerateFixtureTree(root / "results", spec);
  SiteOptions o = Options(root / "results", root / "site", /*svg=*/true);
  SiteReport first = BuildSite(o);
  REQUIRE(first.skipped.empty());  // vl-convert is part of the bootstrap
  CHECK(first.svg_rendered == first.figures);
  CHECK(first.svg_rendered > 3);
  o.force = true;  // every page again: the specs are unchanged, so no SVG is
  CHECK(BuildSite(o).svg_rendered == 0);
  fs::path fig = root / "site" / "builds" / FixtureBuildId(spec, 1) / "figures";
  std::vector<fs::path> svgs;
  for (const auto& e : fs::directory_iterator(fig)) {
    if (e.path().extension() == ".svg") svgs.push_back(e.path());
  }
  REQUIRE(!svgs.empty());
  fs::remove(svgs.front());
  CHECK(BuildSite(o).svg_rendered == 1);
  CHECK(fs::exists(svgs.front()));
}

TEST_CASE("hostile strings are escaped in every context and ids cannot escape the site") {
  fs::path root = Tmp("hostile");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 1;
  spec.configs = 2;
  spec.cpu_platform = false;
  GenerateFixtureTree(root / "results", spec);
  fs::path dir = core::PlatformDir(root / "results", FixtureBuildId(spec, 0), "nvidia-a100-40gb-cu130");
  fs::path f = core::RunPath(dir, {"resnet50", "train", "eager", "fp32"});
  auto j = nlohmann::json::parse(Read(f));
  const std::string evil =
      "<script>alert(\"x\")</script> | ../../etc/passwd ' \" ` *em* [a](javascript:alert(1)) ünï©ødé \xE2\x80\xA8";
  j["model"]["paper_name"] = evil;
  j["model"]["task"] = evil;
  j["status"] = "error";
  j["reason"] = evil + "\n# heading\n</script><img src=x onerror=alert(1)>";
  j["gpu_breakdown"]["top_kernels"][0]["name"] = evil;
  Write(f, j.dump());
  // A result whose model id tries to climb out of the site.
  auto k = j;
  k["model"]["id"] = "../../../pwned";
  Write(dir / "runs" / "pwned.json", k.dump());
  // A platform directory that is not a safe id.
  fs::create_directories(root / "results" / FixtureBuildId(spec, 0) / "bad platform" / "runs");
  SiteReport r = BuildSite(Options(root / "results", root / "site"));
  CHECK(r.problems.size() == 2);
  for (const auto& entry : Snapshot(root / "site")) {
    // Not a structured binding: clang 14 cannot capture one in INFO's lambda.
    const std::string& rel = entry.first;
    const auto& text = entry.second;
    INFO(rel);
    CHECK(rel.find("pwned") == std::string::npos);
    if (rel.ends_with(".html")) {
      // Only our own script elements: the bundle, the page script, the
      // reader pages' script (readers.js), and specs.
      size_t scripts = 0;
      for (size_t pos = 0; (pos = text.find("<script", pos)) != std::string::npos; ++pos) ++scripts;
      size_t specs = 0;
      for (size_t pos = 0; (pos = text.find("<script type=\"application/json\"", pos)) != std::string::npos; ++pos)
        ++specs;
      // Model pages also load their history files (history/builds.js and
      // history/<model>.js), build pages their data (data/models.js), the
      // compare page history/builds.js and assets/compare.js.
      CHECK(scripts == specs + 2 + (text.find("assets/readers.js\"") != std::string::npos ? 1 : 0) +
                           (rel.starts_with("models/") ? 2 : 0) +
                           (text.find("data/models.js\"></script>") != std::string::npos ? 1 : 0) +
                           (rel == "compare.html" ? 2 : 0));
      CHECK(text.find("<img") == std::string::npos);
      CHECK(text.find("href=\"javascript:") == std::string::npos);
      CHECK(text.find("<em>em</em>") == std::string::npos);
    }
    if (rel.ends_with(".md")) {
      CHECK(text.find("<script>") == std::string::npos);
      CHECK(text.find("\n# heading") == std::string::npos);
    }
    if (rel.ends_with(".vl.json") || rel.ends_with(".json")) {
      CHECK(nlohmann::json::accept(text));
    }
  }
  CHECK(!fs::exists(root / "pwned.html"));
  CHECK(!fs::exists(root / "site" / ".." / "pwned.html"));
}

TEST_CASE("--strict fails on a bad file; default skips it and the build page says so") {
  fs::path root = SmallTree("strict");
  SiteOptions o = Options(root / "results", root / "site");
  o.strict = true;
  CHECK_THROWS_AS(BuildSite(o), StrictError);
  o.strict = false;
  SiteReport r = BuildSite(o);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].file.find("dlrm.eval.eager.fp32.json") != std::string::npos);
  std::string page = Read(root / "site" / "builds" / FixtureBuildId(FixtureSpec{}, 2) / "summary.md");
  CHECK(page.find("could not be read") != std::string::npos);
  CHECK(page.find("dlrm.eval.eager.fp32.json") != std::string::npos);
  // The lenient render left fingerprints; a strict render must not take
  // the build with the bad file as unchanged.
  o.strict = true;
  CHECK_THROWS_AS(BuildSite(o), StrictError);
}

TEST_CASE("no input crashes the reporter: garbage files of every kind") {
  fs::path root = Tmp("garbage");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 1;
  spec.configs = 1;
  GenerateFixtureTree(root / "results", spec);
  fs::path dir = core::PlatformDir(root / "results", FixtureBuildId(spec, 0), "cpu-x86_64-2c");
  const char* bodies[] = {"",
                          "null",
                          "[]",
                          "42",
                          "{",
                          "{\"schema_version\": 99, \"kind\": \"torchgauge.run\"}",
                          "{\"schema_version\": 1, \"kind\": \"torchgauge.run\", \"model\": 3}",
                          "\xFF\xFE garbage"};
  int i = 0;
  for (const char* b : bodies) Write(dir / "runs" / Cat("g", std::to_string(i++), ".json"), b);
  Write(core::ManifestPath(dir), "{\"schema_version\": 1}");
  SiteReport r;
  CHECK_NOTHROW(r = BuildSite(Options(root / "results", root / "site")));
  CHECK(r.problems.size() == std::size(bodies) + 1);
  CHECK(fs::exists(root / "site" / "index.html"));
}

TEST_CASE("summary.md stays under GitHub's comment limit") {
  // 60 models fit whole: the per-run ratio rows of Figures 3-5 are on the
  // HTML page only, the summary links it. 400 models are cut at the limit.
  for (int models : {60, 400}) {
    INFO(models << " models");
    fs::path root = Tmp("summary-" + std::to_string(models));
    FixtureSpec spec;
    spec.builds = 1;
    spec.models = models;
    spec.configs = 8;
    GenerateFixtureTree(root / "results", spec);
    SiteOptions o = Options(root / "results", root / "site");
    o.site_url = "https://example.org/torchgauge";
    BuildSite(o);
    fs::path b = root / "site" / "builds" / FixtureBuildId(spec, 0);
    // The build page is HTML only; its Markdown, cut to the limit, is summary.md.
    std::string full = Read(b / "index.html"), summary = Read(b / "summary.md");
    CHECK(full.size() > 65536);
    CHECK(summary.size() < 65536);
    const bool cut = summary.find("**This summary was truncated to fit GitHub's comment limit.**") != std::string::npos;
    CHECK(cut == (models > 60));
    CHECK(summary.find("https://example.org/torchgauge/builds/" + FixtureBuildId(spec, 0) + "/index.html") !=
          std::string::npos);
    if (models == 60) {
      CHECK(summary.find("per-run ratios behind these geomeans are on the [HTML build page]") != std::string::npos);
      CHECK(summary.find("## Platforms compared (Figure 5)") != std::string::npos);
      CHECK(full.find(">Eager (ms)</th>") != std::string::npos);  // the rows stay on the page
    }
  }
}

TEST_CASE("generated fixtures are valid against the JSON schemas (jsonschema)") {
  std::string python = TORCHGAUGE_PYTHON;
  if (python.empty() || std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) != 0) {
    MESSAGE("skipped: no python with jsonschema (set TORCHGAUGE_PYTHON)");
    return;
  }
  fs::path root = Tmp("schema");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 6;
  spec.configs = 8;
  GenerateFixtureTree(root / "results", spec);
  fs::path script = root / "validate.py";
  Write(script, R"py(
import json, pathlib, sys
import jsonschema
schemas = pathlib.Path(sys.argv[1])
run = json.loads((schemas / "run_result.schema.json").read_text())
man = json.loads((schemas / "manifest.schema.json").read_text())
cls = jsonschema.Draft202012Validator
n = 0
bad = 0
for p in sorted(pathlib.Path(sys.argv[2]).rglob("*.json")):
    schema = man if p.name == "manifest.json" else run
    for e in cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(json.loads(p.read_text())):
        print(p, "/".join(map(str, e.absolute_path)), e.message)
        bad += 1
    n += 1
print(n, "files,", bad, "errors")
sys.exit(1 if bad or n == 0 else 0)
)py");
  std::string cmd = python + " " + script.string() + " " + (fs::path(TORCHGAUGE_SOURCE_DIR) / "schemas").string() +
                    " " + (root / "results").string();
  CHECK(std::system(cmd.c_str()) == 0);
}

namespace {

// resnet50 train gets 50% slower in build `last` on both platforms (the
// CPU platform's runs were measured in two processes each).
void PlantSlowdown(const fs::path& results, const std::string& last, const std::string& gpu) {
  for (const std::string& platform : {gpu, std::string("cpu-x86_64-2c")}) {
    fs::path f = core::RunPath(core::PlatformDir(results, last, platform), {"resnet50", "train", "eager", "fp32"});
    auto j = nlohmann::json::parse(Read(f));
    auto& t = j["timing"];
    for (auto& s : t["samples_ms"]) s = s.get<double>() * 1.5;
    for (auto& [k, v] : t.items()) {
      if (k.ends_with("_ms") && v.is_number()) v = v.get<double>() * 1.5;
    }
    if (t.contains("process_medians_ms")) {
      for (auto& m : t["process_medians_ms"]) m = m.get<double>() * 1.5;
    }
    if (t.contains("throughput_per_s")) t["throughput_per_s"] = t["throughput_per_s"].get<double>() / 1.5;
    Write(f, j.dump());
  }
}

// The build page lists every change `torchgauge-report compare` flags on the
// same tree, with the comparison's noise band.
void CheckAgreesWithCompare(const fs::path& results, const std::string& last, const std::string& gpu,
                            const std::string& page) {
  core::CompareRequest req;
  req.results = results;
  req.new_build = last;
  core::Comparison c = core::CompareBuilds(req);
  for (const auto& p : c.platforms) {
    for (const auto& ch : p.changes) {
      if (ch.verdict != core::Verdict::kRegression && ch.verdict != core::Verdict::kImprovement) continue;
      // A backslash before each '_': MarkdownEscape's only change to these ids.
      auto esc = [](const std::string& s) {
        std::string out;
        for (char letter : s) {
          if (letter == '_') out += '\\';
          out += letter;
        }
        return out;
      };
      const std::string want = Cat("| ", esc(p.platform_id), " | [", esc(ch.key.model), "](../../models/", ch.key.model,
                                   ".html#build=", last, ") | ", ch.key.mode, "/", ch.key.backend, "/",
                                   ch.key.precision, " | ", esc(core::MetricName(ch.metric)), " |");
      INFO(want);
      size_t at = page.find(want);
      REQUIRE(at != std::string::npos);
      // The noise band column shows the comparison's band, where it has one.
      std::string line = page.substr(at, page.find('\n', at) - at);
      char band[32] = "—";
      if (ch.noise_percent) std::snprintf(band, sizeof band, "%.1f", *ch.noise_percent);
      INFO(line);
      CHECK(line.find(std::string(" | ") + band + " | ") != std::string::npos);
      if (p.platform_id == "cpu-x86_64-2c" && ch.metric == core::Metric::kTime) CHECK(ch.noise_percent.has_value());
      if (p.platform_id == gpu) CHECK(!ch.noise_percent.has_value());
    }
  }
}

// The CPU platform's runs have two worker processes a side, and the rank
// test compares processes: 2 against 2 cannot reach alpha, so the planted
// +50 % is "too few samples to tell" there, not a regression.
void CheckTwoProcessPlantUntold(const fs::path& results, const std::string& last) {
  core::CompareRequest req;
  req.results = results;
  req.new_build = last;
  req.platform = "cpu-x86_64-2c";
  const core::Comparison c = core::CompareBuilds(req);
  bool seen = false;
  for (const auto& ch : c.platforms.at(0).changes) {
    if (ch.key.model != "resnet50" || ch.key.mode != "train" || ch.metric != core::Metric::kTime) continue;
    seen = true;
    CHECK(ch.delta_percent > 40);
    CHECK(ch.test_unit == core::TestUnit::kProcessMedians);
    CHECK(ch.n_base == 2);
    CHECK(ch.verdict == core::Verdict::kTooFewSamples);
  }
  CHECK(seen);
}

// One slowed run is one regression, on the index row `entry_row`, on the
// build page's section `section` and on the regressions page, as in
// compare's title and JSON (issue 62, item 4): resnet50 train moved on time
// and on the throughput of the same samples. The CPU platform's +50 % could
// not be tested (2 processes against 2): the build page says it cannot
// tell, as compare does (issue 62, item 5).
void CheckRunCountsAndCannotTell(const fs::path& site, const std::string& entry_row, const std::string& section,
                                 const std::string& prev, const std::string& gpu) {
  INFO(entry_row);
  CHECK(entry_row.find(" | " + prev + " | 1 | ") != std::string::npos);
  CHECK(section.find("| " + gpu + " | " + prev + " | 1 | ") != std::string::npos);
  const size_t cpu_at = section.find("| cpu-x86\\_64-2c | " + prev + " | 0 | ");
  REQUIRE(cpu_at != std::string::npos);
  CHECK(section.substr(cpu_at, section.find('\n', cpu_at) - cpu_at).find("cannot tell") != std::string::npos);
  // The regressions page lists a row per metric, and counts the run once.
  CHECK(Read(site / "regressions.md").find(" 2 in all (1 run, as compare counts them), ") != std::string::npos);
}

}  // namespace

TEST_CASE("regressions: a planted slowdown is flagged on the build page and in the index history") {
  fs::path root = Tmp("regression");
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 3;
  spec.configs = 2;
  GenerateFixtureTree(root / "results", spec);
  const std::string prev = FixtureBuildId(spec, 1), last = FixtureBuildId(spec, 2);
  const std::string gpu = "nvidia-a100-40gb-cu130";
  PlantSlowdown(root / "results", last, gpu);

  SiteReport r = BuildSite(Options(root / "results", root / "site"));
  CHECK(r.problems.empty());
  const fs::path site = root / "site";
  std::string page = Read(site / "builds" / last / "summary.md");
  size_t sec = page.find("## Regressions and improvements");
  REQUIRE(sec != std::string::npos);
  size_t row = page.find("| regression | " + gpu + " | [resnet50](../../models/resnet50.html#build=" + last +
                             ") | train/eager/fp32 | time | ",
                         sec);
  REQUIRE(row != std::string::npos);
  std::string line = page.substr(row, page.find('\n', row) - row);
  INFO(line);
  CHECK(line.find("| +5") != std::string::npos);  // +50% on top of the fixture's drift
  CHECK(line.find("| yes |") != std::string::npos);
  // Regressions come first, sorted by magnitude (|log ratio|): resnet50's
  // time +50% and throughput -33% are the largest changes.
  size_t first = page.find("| regression |", sec);
  REQUIRE(first != std::string::npos);
  CHECK(page.substr(first, page.find('\n', first) - first)
            .find("[resnet50](../../models/resnet50.html#build=" + last + ") | train/eager/fp32 |") !=
        std::string::npos);
  size_t imp = page.find("| improvement |", sec);
  if (imp != std::string::npos) CHECK(imp > row);
  CHECK(page.find("[HTML](compare.html)", sec) != std::string::npos);
  CHECK(Read(site / "builds" / last / "compare.html").find("resnet50") != std::string::npos);
  // The previous build's page does not flag resnet50's time.
  std::string before = Read(site / "builds" / prev / "summary.md");
  CHECK(before.find("| regression | " + gpu + " | [resnet50](../../models/resnet50.html#build=" + prev +
                    ") | train/eager/fp32 | time |") == std::string::npos);
  // The first build has nothing to compare with.
  CHECK(Read(site / "builds" / FixtureBuildId(spec, 0) / "summary.md").find("## Regressions and improvements") ==
        std::string::npos);

  // The index history lists it, newest first, with a link to the report.
  std::string index = Read(site / "index.md");
  size_t hist = index.find("## History of flagged changes");
  REQUIRE(hist != std::string::npos);
  size_t entry = index.find("| [" + last + "](builds/" + last + "/index.html) | " + gpu + " | " + prev + " | ", hist);
  REQUIRE(entry != std::string::npos);
  CHECK(index.find("(builds/" + last + "/compare.html)", entry) != std::string::npos);
  CheckRunCountsAndCannotTell(site, index.substr(entry, index.find('\n', entry) - entry), page.substr(sec), prev, gpu);
  CHECK(index.find("## Builds (newest first)") > entry);

  // The site agrees with `torchgauge-report compare` on the same tree.
  CheckAgreesWithCompare(root / "results", last, gpu, page);
  // Not a regression on the CPU platform (CheckTwoProcessPlantUntold).
  CHECK(page.find("| regression | cpu-x86\\_64-2c | [resnet50](../../models/resnet50.html#build=" + last +
                      ") | train/eager/fp32 | time | ",
                  sec) == std::string::npos);
  CheckTwoProcessPlantUntold(root / "results", last);

  // Rendering only the last build again reads the predecessors from the
  // results and the other summaries from the cache: the same bytes.
  auto full = Snapshot(site);
  SiteOptions o = Options(root / "results", site);
  o.builds = {last};
  SiteReport again = BuildSite(o);
  CHECK(again.files_written == 0);
  CHECK(Snapshot(site) == full);
}

TEST_CASE("a night of noisy runs is inconclusive on the index and the build page, as in compare (issue 62, item 6)") {
  fs::path root = Tmp("all_noisy");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 4;
  spec.configs = 3;
  spec.cpu_platform = false;
  spec.busy_from = 1;  // every run of the second build is noisy
  GenerateFixtureTree(root / "results", spec);
  const std::string prev = FixtureBuildId(spec, 0), last = FixtureBuildId(spec, 1);
  const std::string gpu = "nvidia-a100-40gb-cu130";
  core::CompareRequest req;
  req.results = root / "results";
  req.new_build = last;
  const core::Comparison c = core::CompareBuilds(req);
  REQUIRE(c.Inconclusive());  // what `compare` exits 3 on
  REQUIRE(c.ComparedRuns() >= 10);
  REQUIRE(c.NoisyRuns() == c.ComparedRuns());
  const std::string verdict =
      Cat("inconclusive: ", std::to_string(c.NoisyRuns()), " of ", std::to_string(c.ComparedRuns()), " runs noisy");

  SiteReport r = BuildSite(Options(root / "results", root / "site"));
  CHECK(r.problems.empty());
  const std::string index = Read(root / "site" / "index.md");
  CHECK(index.find("No build has a flagged change.") == std::string::npos);
  const size_t entry = index.find("| [" + last + "](builds/" + last + "/index.html) | " + gpu + " | " + prev + " | ");
  REQUIRE(entry != std::string::npos);
  const std::string entry_row = index.substr(entry, index.find('\n', entry) - entry);
  INFO(entry_row);
  CHECK(entry_row.find(verdict) != std::string::npos);
  const std::string page = Read(root / "site" / "builds" / last / "summary.md");
  const size_t row = page.find("| " + gpu + " | " + prev + " | 0 | ");
  REQUIRE(row != std::string::npos);
  CHECK(page.substr(row, page.find('\n', row) - row).find(verdict) != std::string::npos);
}

TEST_CASE("--reference-platform: the build pages compare the others with it; an unknown id is an error") {
  fs::path root = Tmp("reference");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 2;
  spec.configs = 2;
  GenerateFixtureTree(root / "results", spec);
  const std::string page = "builds/" + FixtureBuildId(spec, 0) + "/summary.md";
  BuildSite(Options(root / "results", root / "default"));
  const std::string by_default = Read(root / "default" / page);
  // Default: the first platform id in sorted order (the CPU one).
  CHECK(by_default.find("reference platform **cpu-x86\\_64-2c**") != std::string::npos);
  CHECK(by_default.find("### Synthetic CPU vs NVIDIA A100-SXM4-40GB: time ratio") != std::string::npos);
  SiteOptions o = Options(root / "results", root / "gpu");
  o.reference_platform = "nvidia-a100-40gb-cu130";
  BuildSite(o);
  const std::string gpu = Read(root / "gpu" / page);
  CHECK(gpu.find("reference platform **nvidia-a100-40gb-cu130**") != std::string::npos);
  CHECK(gpu.find("### NVIDIA A100-SXM4-40GB vs Synthetic CPU: time ratio") != std::string::npos);
  CHECK(fs::exists(root / "gpu" /
                   SitePath({Kind::kFigure, FixtureBuildId(spec, 0), "fig5-ratio.cpu-x86_64-2c", "vl.json"})));
  o.reference_platform = "amd-mi250";
  try {
    BuildSite(o);
    FAIL("an unknown reference platform was accepted");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("--reference-platform 'amd-mi250'") != std::string::npos);
    CHECK(what.find("available: cpu-x86_64-2c, nvidia-a100-40gb-cu130") != std::string::npos);
  }
}

namespace {
bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("issue 13: the CPU platform shows the host breakdown, its peaks, % of peak and its noisy runs") {
  fs::path root = Tmp("trust");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 4;
  spec.configs = 6;
  GenerateFixtureTree(root / "results", spec);
  BuildSite(Options(root / "results", root / "site"));
  const fs::path build = root / "site" / "builds" / FixtureBuildId(spec, 1);
  const std::string page = Read(build / "summary.md");
  const std::string cpu = page.substr(page.find("## Platform cpu-x86\\_64-2c"));
  // Figures 1/2 and Table 2 from the host breakdown, never in the paper's GPU words.
  CHECK(Has(cpu, "Shown: **host (CPU) time: compute / data movement / outside operators**"));
  CHECK(Has(cpu, "| Domain | Models | Host compute (ours) | Paper: A100 GPU active | Host data movement (ours) |"));
  CHECK(Has(cpu, " µs per recorded op (median over "));
  CHECK(Has(cpu, "aten::copy\\_"));
  const std::string fig1 =
      Read(root / "site" / SitePath({Kind::kFigure, FixtureBuildId(spec, 1), "fig1-train.cpu-x86_64-2c", "vl.json"}));
  CHECK(Has(fig1, "Figure 1 (train): host (CPU) time: compute / data movement / outside operators"));
  CHECK(Has(fig1, "\"Outside operators\""));
  CHECK_FALSE(Has(fig1, "GPU idle"));
  const std::string t2 = Read(build / "tables" / "table2.cpu-x86_64-2c.csv");
  CHECK(t2.rfind("mode,domain,models,noisy_runs,host_compute_pct,host_data_movement_pct,host_outside_operators_pct,"
                 "paper_a100_gpu_active_pct,",
                 0) == 0);
  // The GPU platform keeps the paper's parts.
  const std::string gpu_t2 = Read(build / "tables" / "table2.nvidia-a100-40gb-cu130.csv");
  CHECK(gpu_t2.rfind("mode,domain,models,noisy_runs,gpu_active_pct,", 0) == 0);
  // Peaks, the label, and % of peak per run with its basis.
  CHECK(Has(cpu, "**attainable through LibTorch**"));
  CHECK(Has(cpu, "| Matmul fp32 | 0.105 TFLOP/s |"));
  CHECK(Has(cpu, "| Matmul fp16 | unsupported | no fp16 matmul on this CPU |"));
  CHECK(Has(cpu, "| Suite (all runs) |"));
  // Every run's figures are in the build's data (the HTML page draws its runs
  // table from it): % of peak with its basis, the noise reason of a noisy run.
  const std::string models_js = Read(build / "data" / "models.js");
  CHECK(Has(models_js, " (analytic)\""));
  // tf32 on a CPU is measured against the fp32 peak; no run shows 0 for a missing one.
  CHECK_FALSE(Has(models_js, "\"0.0 (analytic)\""));
  // Noisy runs: a warning at the top, a badge in the runs table, a note on ratios.
  REQUIRE(Has(models_js, "\"ok\",\"other processes used"));
  CHECK(page.find("> **Warning: noisy runs.**") < page.find("## Platform"));
  CHECK(Has(page, "> - cpu-x86\\_64-2c: "));
  const std::string html = Read(build / "index.html");
  CHECK(Has(html, " run noisy: other processes used "));  // a ratio row's note, on the HTML page
  CHECK(Has(html, "<div class=\"tg-runs\" data-platform=\"cpu-x86_64-2c\""));
  const std::string runs_csv = Read(build / "tables" / "runs.cpu-x86_64-2c.csv");
  CHECK(Has(runs_csv,
            ",percent_of_peak,peak_basis,noisy,noise_reason,status,reason,ttft_ms,tpot_median_ms,tpot_p90_ms,tokens_"
            "per_s,instructions,est_cycles\n"));
  CHECK(Has(runs_csv, ",analytic,true,other processes used "));
  // The specs' spec files (the SVGs' input) and the page's inlined copies
  // mark a noisy run (data stored by column: "noisy":[..., true, ...]).
  auto noisy_marked = [](const std::string& text) {
    for (size_t at = 0; (at = text.find("\"noisy\":[", at)) != std::string::npos; ++at) {
      if (text.substr(at, text.find(']', at) - at).find("true") != std::string::npos) return true;
    }
    return false;
  };
  auto spec_of = [&](const std::string& name) {
    return Read(root / "site" / SitePath({Kind::kFigure, FixtureBuildId(spec, 1), name, "vl.json"}));
  };
  CHECK(noisy_marked(spec_of("fig1-train.cpu-x86_64-2c")) + noisy_marked(spec_of("fig2-eval.cpu-x86_64-2c")) +
        noisy_marked(spec_of("fig5-ratio.nvidia-a100-40gb-cu130")));
  CHECK(noisy_marked(html));
}

TEST_CASE("issue 13: results written before host_breakdown, system_load and peaks still render") {
  fs::path root = Tmp("old_results");
  FixtureSpec spec;
  spec.builds = 2;
  spec.models = 3;
  spec.configs = 2;
  GenerateFixtureTree(root / "results", spec);
  for (const auto& e : fs::recursive_directory_iterator(root / "results")) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    auto j = nlohmann::json::parse(Read(e.path()));
    for (const char* key : {"host_breakdown", "system_load", "peaks", "cpu_frequency"}) j.erase(key);
    Write(e.path(), j.dump(1) + "\n");
  }
  SiteReport r = BuildSite(Options(root / "results", root / "site"));
  CHECK(r.problems.empty());
  const fs::path build = root / "site" / "builds" / FixtureBuildId(spec, 1);
  const std::string page = Read(build / "summary.md");
  const std::string cpu = page.substr(page.find("## Platform cpu-x86\\_64-2c"));
  CHECK(Has(cpu, "Time breakdown: *not measured on this platform* (no run has a GPU or a host breakdown)."));
  CHECK(Has(cpu, "Peaks: *not probed* on this platform"));
  // The % of peak cell, then the empty TTFT / TPOT cell of a run that does
  // not generate, and the counts of a run that was not counted.
  CHECK(Has(Read(build / "data" / "models.js"), "\"not probed\",\"\",\"\xE2\x80\x94\",\"\xE2\x80\x94\"]"));
  CHECK_FALSE(Has(page, "run noisy:"));
  CHECK_FALSE(Has(page, "**noisy**"));
  CHECK_FALSE(Has(page, "Warning: noisy runs"));
  CHECK_FALSE(fs::exists(build / "tables" / "table2.cpu-x86_64-2c.csv"));
  // The GPU platform still has its GPU breakdown.
  CHECK(Has(page, "Shown: **GPU time: active / data movement / idle**"));
}

TEST_CASE(
    "issue 16: a compiled run's paired pass is shown, and a range of process ratios that includes 1 is within noise") {
  fs::path root = Tmp("paired");
  FixtureSpec spec;
  spec.builds = 1;
  spec.models = 2;
  spec.configs = 6;
  GenerateFixtureTree(root / "results", spec);
  // Two compiled runs get a paired pass: one whose processes disagree about
  // the side of 1, one whose processes all find it faster.
  int edited = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "results")) {
    if (edited == 2 || e.path().extension() != ".json" || e.path().filename() == "manifest.json") continue;
    auto j = nlohmann::json::parse(Read(e.path()));
    if (j.value("kind", "") != "torchgauge.run" || j.value("backend", "eager") == "eager" ||
        j.value("status", "") != "ok")
      continue;
    const bool noisy = edited == 0;
    j["paired"] = {{"order", "interleaved"},
                   {"eager_samples_ms", {10.0, 11.0, 10.5}},
                   {"compiled_samples_ms", {9.0, 10.0, 9.5}},
                   {"eager_median_ms", 10.5},
                   {"compiled_median_ms", 9.5},
                   {"speedup", noisy ? 1.04 : 1.5},
                   {"process_speedups", noisy ? nlohmann::json{0.93, 1.04, 1.2} : nlohmann::json{1.4, 1.5, 1.6}},
                   {"speedup_low", noisy ? 0.93 : 1.4},
                   {"speedup_high", noisy ? 1.2 : 1.6}};
    Write(e.path(), j.dump());
    ++edited;
  }
  REQUIRE(edited == 2);
  BuildSite(Options(root / "results", root / "site"));
  const std::string page = Read(root / "site" / "builds" / FixtureBuildId(spec, 0) / "summary.md");
  CHECK(Has(page, "#### Eager and compiled in the same worker"));
  CHECK(Has(page, "| 1.04× | 0.93–1.20× (3 processes) | within noise |"));
  CHECK(Has(page, "| 1.50× | 1.40–1.60× (3 processes) | faster |"));
  // The chart of the same: its spec holds both runs, each with its range and verdict.
  bool found = false;
  for (const auto& e : fs::recursive_directory_iterator(root / "site")) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("paired.") || !name.ends_with(".vl.json")) continue;
    found = true;
    const auto chart = nlohmann::json::parse(Read(e.path()));
    const auto cols = chart["data"]["values"][0];
    CHECK(cols["verdict"] == nlohmann::json({"within noise", "faster"}));
    CHECK(cols["low"] == nlohmann::json({0.93, 1.4}));
    CHECK(cols["high"] == nlohmann::json({1.2, 1.6}));
  }
  CHECK(found);
}

TEST_CASE("generation: the runs table's TTFT / TPOT cell agrees with the build page's generation table") {
  // tests/data/compare_generation: llama_3_2_1b's eval runs with their
  // generation measured (make_fixture.py).
  fs::path root = Tmp("generation_cell");
  const fs::path results = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests" / "data" / "compare_generation" / "results";
  BuildSite(Options(results, root / "site"));
  const std::string build = "2.14.1-20261129";
  const std::string page = Read(root / "site" / "builds" / build / "summary.md");
  const std::string models_js = Read(root / "site" / "builds" / build / "data" / "models.js");
  // The generation table's rows: | model | config | lengths | TTFT | TPOT | ...
  const auto table = page.find("| Model | Configuration | Prompt → output tokens | TTFT (ms) |");
  REQUIRE(table != std::string::npos);
  std::istringstream lines(page.substr(table));
  std::string line;
  int rows = 0;
  while (std::getline(lines, line) && line.starts_with("|")) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    for (std::string c; std::getline(cs, c, '|');) cells.push_back(c);
    if (cells.size() < 6 || !cells[1].starts_with(" llama")) continue;
    auto trim = [](std::string s) { return s.substr(1, s.size() - 2); };
    INFO(line);
    CHECK(Has(models_js, Cat("\"", trim(cells[4]), " / ", trim(cells[5]), "\"")));
    ++rows;
  }
  CHECK(rows > 0);
  // A run without a generation gets an empty cell, not a 0.
  CHECK_FALSE(Has(models_js, "\"0.00 / "));
}
