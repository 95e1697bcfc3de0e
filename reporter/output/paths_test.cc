#include "reporter/output/paths.h"
#include "reporter/output/render.h"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace torchgauge::reporter;

TEST_CASE("SitePath computes every output path") {
  CHECK(SitePath({Kind::kIndexPage, "", "", "html"}) == "index.html");
  CHECK(SitePath({Kind::kBuildPage, "2.11.0-20261122", "", "md"}) == "builds/2.11.0-20261122/index.md");
  // One page per model across builds: the build is the URL's fragment.
  CHECK(SitePath({Kind::kModelPage, "b1", "resnet50", "html"}) == "models/resnet50.html");
  CHECK(SitePath({Kind::kModelPage, "", "resnet50", ""}) == "models/resnet50.html");
  CHECK(Href({Kind::kIndexPage, "", "", "html"}, {Kind::kModelPage, "b1", "resnet50", "html"}) ==
        "models/resnet50.html#build=b1");
  CHECK(SitePath({Kind::kHistory, "", "resnet50", ""}) == "history/resnet50.js");
  CHECK(SitePath({Kind::kBuildData, "b1", "models", ""}) == "builds/b1/data/models.js");
  // Spec files are the SVGs' input, in the cache beside the site; the pages inline the specs.
  CHECK(SitePath({Kind::kFigure, "b1", "fig1-train.cpu", "vl.json"}) ==
        ".torchgauge/specs/builds/b1/figures/fig1-train.cpu.vl.json");
  CHECK(SitePath({Kind::kIndexFigure, "", "index-trend", "vl.json"}) ==
        ".torchgauge/specs/figures/index-trend.vl.json");
  CHECK(SitePath({Kind::kIndexFigure, "", "index-trend", "svg"}) == "figures/index-trend.svg");
  CHECK(SitePath({Kind::kFigure, "b1", "fig1-train.nvidia-a100", "svg"}) ==
        "builds/b1/figures/fig1-train.nvidia-a100.svg");
  CHECK(SitePath({Kind::kTable, "b1", "runs.cpu", "tex"}) == "builds/b1/tables/runs.cpu.tex");
  CHECK(SitePath({Kind::kData, "b1", "summary", ""}) == "builds/b1/data/summary.json");
  CHECK(SitePath({Kind::kAsset, "", "vega-bundle.js", ""}) == "assets/vega-bundle.js");
  CHECK(SitePath({Kind::kPaperKit, "b1", "", ""}) == "builds/b1/paper-kit-b1.zip");
  CHECK(Href({Kind::kBuildPage, "b1", "", "md"}, {Kind::kPaperKit, "b1", "", ""}) == "paper-kit-b1.zip");
  CHECK(SitePath({Kind::kBuildDir, "b1", "", ""}) == "builds/b1");
  CHECK(SitePath({Kind::kFingerprint, "b1", "", ""}) == ".torchgauge/b1.fingerprint");
  CHECK(SitePath({Kind::kPrunedRecord, "b1", "", ""}) == ".torchgauge/pruned/b1.json");
  CHECK_THROWS_AS(SitePath({Kind::kBuildDir, "..", "", ""}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kPrunedRecord, "../x", "", ""}), std::invalid_argument);
}

TEST_CASE("SitePath refuses ids that could escape the site") {
  CHECK_THROWS_AS(SitePath({Kind::kBuildPage, "../etc", "", "html"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kBuildPage, "..", "", "html"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kModelPage, "b", "a/b", "html"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kModelPage, "b", "m", "exe"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kModelPage, "b", "m", "md"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kModelPage, "../b", "m", "html"}), std::invalid_argument);
  CHECK_THROWS_AS(SitePath({Kind::kHistory, "", "../m", ""}), std::invalid_argument);
}

TEST_CASE("Href is relative between pages") {
  Target model{Kind::kModelPage, "b1", "m", "html"};
  CHECK(Href(model, {Kind::kAsset, "", "torchgauge.css", ""}) == "../assets/torchgauge.css");
  CHECK(Href(model, {Kind::kBuildPage, "b1", "", "html"}) == "../builds/b1/index.html");
  CHECK(Href({Kind::kBuildPage, "b1", "", "html"}, model) == "../../models/m.html#build=b1");
  CHECK(Href({Kind::kIndexPage, "", "", "html"}, {Kind::kBuildPage, "b2", "", "html"}) == "builds/b2/index.html");
  CHECK(Href({Kind::kBuildPage, "b1", "", "md"}, {Kind::kFigure, "b1", "f", "svg"}) == "figures/f.svg");
}

TEST_CASE("HrefPattern leaves one id for a script to fill in") {
  const Target model{Kind::kModelPage, "", "m", "html"};
  CHECK(HrefPattern(model, {Kind::kBuildData, "", "models", ""}, "build") == "../builds/{build}/data/models.js");
  CHECK(HrefPattern({Kind::kBuildPage, "b1", "", "html"}, {Kind::kModelPage, "b1", "", "html"}, "model") ==
        "../../models/{model}.html#build=b1");
  CHECK_THROWS_AS(HrefPattern(model, {Kind::kBuildPage, "", "", "html"}, "platform"), std::invalid_argument);
}

TEST_CASE("RootHref climbs from a page to the site root") {
  CHECK(RootHref({Kind::kIndexPage, "", "", "html"}) == ".");
  CHECK(RootHref({Kind::kComparePage, "b1", "", "html"}) == "../..");
  CHECK(RootHref({Kind::kModelPage, "b1", "m", "html"}) == "..");
}

TEST_CASE("SiteUrl puts a target under a public URL or a relative root") {
  Target model{Kind::kModelPage, "b1", "resnet50", "html"};
  CHECK(SiteUrl("https://x.example/site", model) == "https://x.example/site/models/resnet50.html#build=b1");
  CHECK(SiteUrl("https://x.example/site/", model) == "https://x.example/site/models/resnet50.html#build=b1");
  CHECK(SiteUrl("/", {Kind::kComparePage, "b1", "", "html"}) == "/builds/b1/compare.html");
  CHECK(SiteUrl("", model).empty());
  // From the compare page to a model page of its build, as the site's compare report links.
  CHECK(SiteUrl(RootHref({Kind::kComparePage, "b1", "", "html"}), model) == "../../models/resnet50.html#build=b1");
  CHECK_THROWS_AS(SiteUrl("https://x.example", {Kind::kModelPage, "b1", "../m", "html"}), std::invalid_argument);
}

TEST_CASE("compare.html sits at the root; SiteUrlPattern leaves the build and the model to its script") {
  const Target page{Kind::kCompareBuildsPage, "", "", "html"};
  CHECK(SitePath(page) == "compare.html");
  CHECK_THROWS_AS(SitePath({Kind::kCompareBuildsPage, "", "", "md"}), std::invalid_argument);
  CHECK(Href({Kind::kBuildPage, "b1", "", "html"}, page) == "../../compare.html");
  CHECK(SiteUrlPattern("https://x.example/site/", {Kind::kModelPage, "", "", "html"}) ==
        "https://x.example/site/models/{model}.html#build={build}");
  CHECK(SiteUrlPattern(RootHref(page), {Kind::kBuildPage, "", "", "html"}) == "./builds/{build}/index.html");
  CHECK(SiteUrlPattern("", {Kind::kModelPage, "", "", "html"}).empty());
}

TEST_CASE("HtmlLinks leads .md links to their HTML twins, except summary.md, which has none") {
  CHECK(HtmlLinks(R"(<a href="compare.md">c</a>)") == R"(<a href="compare.html">c</a>)");
  CHECK(HtmlLinks(R"(<a href="../../index.md#x">i</a>)") == R"(<a href="../../index.html#x">i</a>)");
  CHECK(HtmlLinks(R"(<a href="summary.md">s</a>)") == R"(<a href="summary.md">s</a>)");
  CHECK(HtmlLinks(R"(<a href="../b/summary.md">s</a>)") == R"(<a href="../b/summary.md">s</a>)");
  CHECK(HtmlLinks(R"(<a href="https://x/a.md">e</a>)") == R"(<a href="https://x/a.md">e</a>)");
}
