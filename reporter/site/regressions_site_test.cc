// Integration tests of the reader pages over the whole history: the
// regressions page and its Atom feed (validated with feedparser), their
// agreement with `torchgauge-report compare`, incremental updates (a new
// build recovers an old regression without re-rendering it), and the model
// grid.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "reporter/pages/regressions_page.h"
#include "reporter/site/site.h"
#include "reporter/site/test_support.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;
using namespace torchgauge::reporter::test;

namespace {
FixtureSpec Planted(int builds) {
  FixtureSpec spec;
  spec.builds = builds;
  spec.models = 4;
  spec.configs = 2;
  spec.plant_at = 1;
  return spec;
}
const std::string kGpu = "nvidia-a100-40gb-cu130";

// The Markdown row of a regression of `model`'s eval/eager/fp32 time.
std::string RowOf(const std::string& page, const std::string& build, const std::string& model) {
  const std::string start = "| [" + build + "](builds/" + build + "/compare.md) | ";
  for (size_t at = 0; (at = page.find(start, at)) != std::string::npos; ++at) {
    std::string line = page.substr(at, page.find('\n', at) - at);
    if (line.find("[" + model + "]") != std::string::npos && line.find(" | time | ") != std::string::npos) return line;
  }
  return "";
}

bool HavePython(const char* module) {
  const std::string python = TORCHGAUGE_PYTHON;
  return !python.empty() && std::system((python + " -c 'import " + module + "' 2>/dev/null").c_str()) == 0;
}

// feedparser's reading of the feed: "version bozo n" then one entry id per line.
std::string ParseFeed(const fs::path& feed, const fs::path& work) {
  const fs::path script = work / "feed.py", out = work / "feed.txt";
  std::ofstream(script) << "import sys, feedparser\n"
                           "d = feedparser.parse(sys.argv[1])\n"
                           "print(d.version, int(bool(d.bozo)), len(d.entries))\n"
                           "if d.bozo: print(d.bozo_exception)\n"
                           "for e in d.entries: print(e.id, e.updated, e.title)\n";
  const std::string cmd =
      std::string(TORCHGAUGE_PYTHON) + " " + script.string() + " " + feed.string() + " >" + out.string() + " 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  return ReadText(out);
}
}  // namespace

TEST_CASE("regressions page: the planted step stays open, the planted spike recovers, as compare counts them") {
  fs::path root = ScratchDir("regressions_page");
  const FixtureSpec spec = Planted(3);
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string b1 = FixtureBuildId(spec, 1), b2 = FixtureBuildId(spec, 2);
  const std::string page = ReadText(root / "site" / "regressions.md");
  const std::string step = RowOf(page, b1, "hf\\_bert"), spike = RowOf(page, b1, "dlrm");
  INFO(page);
  REQUIRE(!step.empty());
  REQUIRE(!spike.empty());
  CHECK(step.ends_with("| open |"));
  CHECK(spike.ends_with("| recovered in " + b2 + " |"));
  // The factors and p-values are those of `compare` on the same builds.
  core::CompareRequest req;
  req.results = root / "results";
  req.new_build = b1;
  req.platform = kGpu;
  const core::Comparison c = core::CompareBuilds(req);
  int regressions = 0;
  for (const auto& ch : c.platforms.at(0).changes) {
    if (ch.verdict != core::Verdict::kRegression) continue;
    ++regressions;
    if (ch.metric != core::Metric::kTime) continue;
    char factor[32];
    std::snprintf(factor, sizeof factor, "| %.2f\xC3\x97 |", ch.ratio);
    CHECK((ch.key.model == "hf_bert" ? step : spike).find(factor) != std::string::npos);
  }
  CHECK(regressions == 4);  // time and throughput of both planted runs
  CHECK(page.find("4 in all (2 runs, as compare counts them), 2 open, 2 recovered, 0 persisting") != std::string::npos);
  // The HTML table carries what the filters read.
  const std::string html = ReadText(root / "site" / "regressions.html");
  CHECK(html.find("data-platform=\"" + kGpu + "\" data-domain=\"nlp\" data-state=\"open\"") != std::string::npos);
  CHECK(html.find("data-domain=\"recommendation\" data-state=\"recovered\"") != std::string::npos);
  CHECK(html.find("<select data-filter=\"state\">") != std::string::npos);
  // The index and the build pages link the page and the feed.
  for (const fs::path& p : {root / "site" / "index.md", root / "site" / "builds" / b2 / "summary.md"}) {
    const std::string text = ReadText(p);
    CHECK(text.find("regressions.md)") != std::string::npos);
    CHECK(text.find("regressions.atom)") != std::string::npos);
    CHECK(text.find("models.md)") != std::string::npos);
  }
}

TEST_CASE("regressions page: with --compare-persist 2 the step is persisting and the spike recovers later") {
  fs::path root = ScratchDir("regressions_persist");
  const FixtureSpec spec = Planted(4);
  GenerateFixtureTree(root / "results", spec);
  SiteOptions o = TestSiteOptions(root / "results", root / "site");
  o.compare_options.persist = 2;
  BuildSite(o);
  const std::string page = ReadText(root / "site" / "regressions.md");
  INFO(page);
  const std::string b1 = FixtureBuildId(spec, 1);
  CHECK(RowOf(page, b1, "hf\\_bert").ends_with("| persisting (confirmed in " + FixtureBuildId(spec, 2) + ") |"));
  // Build 2 is compared with build 0 (the spike is gone: no change); build 3
  // with build 1, which flags the reverse change.
  CHECK(RowOf(page, b1, "dlrm").ends_with("| recovered in " + FixtureBuildId(spec, 3) + " |"));
  CHECK(RowOf(page, FixtureBuildId(spec, 2), "hf\\_bert").empty());  // one event per streak
}

TEST_CASE(
    "regressions feed: valid Atom 1.0, one entry per alert; a new build adds its alert, old ones keep their ids") {
  fs::path root = ScratchDir("regressions_feed");
  // Two builds first: both planted regressions are open.
  GenerateFixtureTree(root / "results", Planted(2));
  const fs::path site = root / "site";
  BuildSite(TestSiteOptions(root / "results", site));
  const std::string feed1 = ReadText(site / "regressions.atom");
  const std::string b0 = FixtureBuildId(Planted(3), 0), b1 = FixtureBuildId(Planted(3), 1);
  const std::string cache1 = ReadText(site / "builds" / b1 / "data" / "regressions.json");
  CHECK(feed1.find("<category term=\"improvement\"/>") == std::string::npos);
  CHECK(feed1.find("<category term=\"alert-state:untriaged\"/>") != std::string::npos);
  // The third build arrives (the generator's builds do not depend on how
  // many follow them).
  fs::path more = root / "more";
  GenerateFixtureTree(more, Planted(3));
  const std::string b2 = FixtureBuildId(Planted(3), 2);
  fs::copy(more / b2, root / "results" / b2, fs::copy_options::recursive);
  SiteReport r = BuildSite(TestSiteOptions(root / "results", site));
  CHECK(r.builds_rendered == 1);
  CHECK(r.builds_unchanged == 2);
  CHECK(ReadText(site / "builds" / b1 / "data" / "regressions.json") == cache1);
  const std::string feed2 = ReadText(site / "regressions.atom");
  // Build 3 flags the spike's reverse change: an improvement alert of its own.
  CHECK(feed2.find("<category term=\"improvement\"/>") != std::string::npos);
  CHECK(feed2.find("<link rel=\"alternate\" type=\"text/html\" href=\"alerts/A-") != std::string::npos);
  CHECK(RowOf(ReadText(site / "regressions.md"), b1, "dlrm").ends_with("| recovered in " + b2 + " |"));
  // Re-rendering everything changes no byte of the feed: no render time in it.
  SiteOptions force = TestSiteOptions(root / "results", site);
  force.force = true;
  BuildSite(force);
  CHECK(ReadText(site / "regressions.atom") == feed2);
  (void)b0;
  if (!HavePython("feedparser")) {
    MESSAGE("skipped the feedparser check: no python with feedparser (set TORCHGAUGE_PYTHON)");
    return;
  }
  fs::path first = root / "first.atom";
  std::ofstream(first, std::ios::binary) << feed1;
  const std::string parsed1 = ParseFeed(first, root), parsed2 = ParseFeed(site / "regressions.atom", root);
  INFO(parsed1 << "\n---\n" << parsed2);
  CHECK(parsed1.starts_with("atom10 0 1\n"));  // the planted regressions of build 1: one alert
  CHECK(parsed2.starts_with("atom10 0 2\n"));  // and build 3's improvement, newest first
  CHECK(parsed2.find("Improvement alert A-") < parsed2.find("Regression alert A-"));
  // Every entry keeps its id.
  std::istringstream in1(parsed1);
  std::string line;
  std::getline(in1, line);
  while (std::getline(in1, line)) {
    const std::string id = line.substr(0, line.find(' '));
    CHECK(id.starts_with("urn:uuid:"));
    CHECK(parsed2.find(id + " ") != std::string::npos);
  }
}

TEST_CASE("model grid: every model of the newest build on every platform, with its history and change") {
  fs::path root = ScratchDir("model_grid");
  const FixtureSpec spec = Planted(3);
  GenerateFixtureTree(root / "results", spec);
  BuildSite(TestSiteOptions(root / "results", root / "site"));
  const std::string md = ReadText(root / "site" / "models.md"), html = ReadText(root / "site" / "models.html");
  const std::string last = FixtureBuildId(spec, 2);
  INFO(md);
  CHECK(md.find("| Model | Domain | cpu-x86\\_64-2c | " + kGpu + " |") != std::string::npos);
  for (const char* model : {"resnet50", "hf_bert", "dlrm", "soft_actor_critic"}) {
    CHECK(html.find("data-name=\"" + std::string(model) + "\"") != std::string::npos);
    CHECK(html.find("models/" + std::string(model) + ".html#build=" + last) != std::string::npos);
  }
  CHECK(html.find("<svg class=\"spark\"") != std::string::npos);
  CHECK(html.find("data-sort=\"change\"") != std::string::npos);
  // dlrm's spike came back in the last build: about 1/1.3 - 1 = -23%.
  const size_t dlrm = md.find("| dlrm |");
  REQUIRE(dlrm != std::string::npos);
  const std::string line = md.substr(dlrm, md.find('\n', dlrm) - dlrm);
  CHECK(line.substr(line.rfind("](models/")).find(" -2") != std::string::npos);  // the GPU column, the last
}

TEST_CASE("regressions feed: entry ids depend on the build, run key and metric alone") {
  CHECK(NameUuid("a") == NameUuid("a"));
  CHECK(NameUuid("a") != NameUuid("b"));
  CHECK(NameUuid("b1/cpu/m.eval.eager.fp32/time").size() == std::string("urn:uuid:").size() + 36);
}
