// Integration tests of the retention policy (build --max-builds, --since;
// site/retention.h) on fixture sites: the old snapshots go, the history
// stays, no page links a deleted file, re-renders are no-ops, and bad
// values are refused naming the option.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter/output/paths.h"
#include "reporter/site/retention.h"
#include "reporter/site/site.h"
#include "reporter/site/test_support.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;
using namespace torchgauge::reporter::test;

namespace {
// 6 daily builds from 2026-01-01, with a regression planted in build 2 (one
// the policies below prune) so the regressions history has pruned rows.
FixtureSpec SixBuilds() {
  FixtureSpec spec;
  spec.builds = 6;
  spec.models = 3;
  spec.configs = 2;
  spec.plant_at = 2;
  return spec;
}
std::string Id(int i) { return FixtureBuildId(SixBuilds(), i); }
fs::path BuildDir(const fs::path& site, int i) { return site / SitePath({Kind::kBuildDir, Id(i), "", ""}); }

// Published files (not the .torchgauge cache), relative path -> bytes.
std::map<std::string, std::string> Published(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).generic_string();
    if (e.is_regular_file() && !rel.starts_with(".torchgauge/")) out[rel] = ReadText(e.path());
  }
  return out;
}

// Every relative link of the site's pages (href/src in .html, link targets
// in .md) whose file is missing, as "page -> link". SVGs are left out: these
// sites are rendered with --no-svg, which leaves them unmade by design.
std::vector<std::string> DeadLinks(const fs::path& site) {
  static const std::regex html_link(R"re((?:href|src)="([^"]*)")re"), md_link(R"(\]\(([^)\s]+)\))");
  std::vector<std::string> dead;
  for (const auto& e : fs::recursive_directory_iterator(site)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".html" && ext != ".md")) continue;
    const std::string text = ReadText(e.path());
    const std::regex& re = ext == ".html" ? html_link : md_link;
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
      std::string link = (*it)[1].str();
      if (link.empty() || link[0] == '#' || link[0] == '/' || link.find("://") != std::string::npos ||
          link.starts_with("mailto:") || link.starts_with("data:")) {
        continue;
      }
      link = link.substr(0, link.find_first_of("#?"));
      if (link.empty() || link.ends_with(".svg")) continue;
      if (!fs::exists(e.path().parent_path() / link)) {
        dead.push_back(fs::relative(e.path(), site).generic_string() + " -> " + link);
      }
    }
  }
  return dead;
}

// The history files the model pages draw their trends from: the build
// list and every model's medians.
std::string TrendData(const fs::path& site) {
  std::string all;
  for (const auto& e : fs::directory_iterator(site / "history")) all += ReadText(e.path());
  return all;
}

std::string ErrorOf(const SiteOptions& o) {
  try {
    BuildSite(o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("retention: --max-builds 3 of 6 deletes the 3 oldest snapshots and keeps the whole history") {
  const fs::path root = ScratchDir("retention_max");
  GenerateFixtureTree(root / "results", SixBuilds());
  const fs::path site = root / "site";
  BuildSite(TestSiteOptions(root / "results", site));
  for (int i = 0; i < 6; ++i) REQUIRE(fs::is_directory(BuildDir(site, i)));

  SiteOptions o = TestSiteOptions(root / "results", site);
  o.max_builds = 3;
  const SiteReport r = BuildSite(o);
  CHECK(r.builds_pruned == 3);
  CHECK(r.snapshots_deleted == 3);
  CHECK(r.pruned_reloaded == 0);  // their cached summaries were current
  CHECK(r.builds_rendered == 0);  // the policy is not in the kept builds' fingerprints
  for (int i = 0; i < 3; ++i) {
    INFO("pruned build " << Id(i));
    CHECK_FALSE(fs::exists(BuildDir(site, i)));
    CHECK_FALSE(fs::exists(site / SitePath({Kind::kFingerprint, Id(i), "", ""})));
    CHECK(fs::exists(site / SitePath({Kind::kPrunedRecord, Id(i), "", ""})));
  }
  for (int i = 3; i < 6; ++i) CHECK(fs::is_regular_file(site / SitePath({Kind::kBuildPage, Id(i), "", "html"})));

  const std::string index = ReadText(site / "index.md");
  for (int i = 0; i < 6; ++i) CHECK(index.find(Id(i)) != std::string::npos);
  for (int i = 0; i < 3; ++i) {
    CHECK(index.find("| " + Id(i) + " (pruned) |") != std::string::npos);
    CHECK(index.find("builds/" + Id(i) + "/") == std::string::npos);
  }
  CHECK(index.find("[" + Id(3) + "](builds/" + Id(3) + "/index.html)") != std::string::npos);
  CHECK(index.find("Retention policy `--max-builds 3`: the pages of the 3 builds " + Id(0) + " to " + Id(2) +
                   " were pruned") != std::string::npos);
  CHECK(ReadText(site / "index.html").find("Retention policy") != std::string::npos);

  // The model pages' trends still reach back to the oldest build, and know
  // which builds' detail is gone.
  const std::string trend = TrendData(site);
  REQUIRE_FALSE(trend.empty());
  CHECK(trend.find(Id(0)) != std::string::npos);
  CHECK(trend.find("\"pruned\":[0,1,2]") != std::string::npos);
  CHECK(trend.find("\"b\":[0,1,2,3,4,5]") != std::string::npos);

  // The regressions history keeps the pruned build's regression, unlinked.
  const std::string regressions = ReadText(site / "regressions.md");
  CHECK(regressions.find("| " + Id(2) + " (pruned) |") != std::string::npos);
  CHECK(ReadText(site / "regressions.html").find("<td>" + Id(2) + " (pruned)</td>") != std::string::npos);
  const std::string atom = ReadText(site / "regressions.atom");
  CHECK(atom.find("builds/" + Id(2) + "/") == std::string::npos);
  CHECK(atom.find("href=\"alerts/A-") != std::string::npos);  // an alert's entry links its page, never pruned

  const std::vector<std::string> dead = DeadLinks(site);
  for (size_t k = 0; k < dead.size() && k < 5; ++k) MESSAGE("dead link: " << dead[k]);
  CHECK(dead.empty());

  // An unchanged re-render writes nothing and reads no pruned build's results.
  const SiteReport again = BuildSite(o);
  CHECK(again.files_written == 0);
  CHECK(again.builds_rendered == 0);
  CHECK(again.builds_pruned == 3);
  CHECK(again.snapshots_deleted == 0);
  CHECK(again.pruned_reloaded == 0);

  // Pruning before the first render gives the same published bytes.
  const fs::path direct = root / "direct";
  SiteOptions fresh = o;
  fresh.out = direct;
  const SiteReport first = BuildSite(fresh);
  CHECK(first.pruned_reloaded == 3);
  CHECK(first.snapshots_deleted == 0);
  CHECK(Published(direct) == Published(site));

  // Relaxing the policy brings the snapshots back.
  o.max_builds = 5;
  const SiteReport relaxed = BuildSite(o);
  CHECK(relaxed.builds_rendered == 2);
  CHECK(relaxed.builds_pruned == 1);
  CHECK(fs::is_directory(BuildDir(site, 1)));
  CHECK(fs::is_directory(BuildDir(site, 2)));
  CHECK_FALSE(fs::exists(BuildDir(site, 0)));
  CHECK(DeadLinks(site).empty());
}

TEST_CASE("retention: --since keeps the builds started on or after the date, and the newest always") {
  const fs::path root = ScratchDir("retention_since");
  GenerateFixtureTree(root / "results", SixBuilds());
  SiteOptions o = TestSiteOptions(root / "results", root / "site");
  o.since = "2026-01-04";  // builds 3, 4 and 5 started that day or later
  const SiteReport r = BuildSite(o);
  CHECK(r.builds_pruned == 3);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(fs::exists(BuildDir(o.out, i)));
  for (int i = 3; i < 6; ++i) CHECK(fs::is_directory(BuildDir(o.out, i)));
  const std::string index = ReadText(o.out / "index.md");
  CHECK(index.find("Retention policy `--since 2026-01-04`: the pages of the 3 builds " + Id(0) + " to " + Id(2)) !=
        std::string::npos);
  CHECK(DeadLinks(o.out).empty());
  CHECK(BuildSite(o).files_written == 0);

  // Both options: a build is kept only when both keep it.
  o.max_builds = 2;
  CHECK(BuildSite(o).builds_pruned == 4);
  CHECK(ReadText(o.out / "index.md").find("`--max-builds 2 --since 2026-01-04`: the pages of the 4 builds") !=
        std::string::npos);

  // A date after every build still keeps the newest build's pages.
  o.max_builds.reset();
  o.since = "2030-01-01";
  CHECK(BuildSite(o).builds_pruned == 5);
  CHECK(fs::is_directory(BuildDir(o.out, 5)));
  CHECK(DeadLinks(o.out).empty());

  // A policy that prunes nothing says so.
  o.since = "2025-12-31";
  CHECK(BuildSite(o).builds_pruned == 0);
  CHECK(ReadText(o.out / "index.md").find("Retention policy `--since 2025-12-31`: no build pruned yet.") !=
        std::string::npos);
  for (int i = 0; i < 6; ++i) CHECK(fs::is_directory(BuildDir(o.out, i)));
}

TEST_CASE("retention: bad values and rendering a pruned build are refused, naming the option") {
  const fs::path root = ScratchDir("retention_bad");
  FixtureSpec spec = SixBuilds();
  spec.builds = 3;
  GenerateFixtureTree(root / "results", spec);
  SiteOptions o = TestSiteOptions(root / "results", root / "site");
  for (int n : {0, -2}) {
    o.max_builds = n;
    CHECK(ErrorOf(o).find("--max-builds " + std::to_string(n) + ": must be at least 1") != std::string::npos);
  }
  o.max_builds.reset();
  for (const char* d : {"2026-1-05", "2026-02-30", "2026-13-01", "tomorrow", "", "2026-01-05T00:00:00Z"}) {
    o.since = d;
    INFO("--since " << d);
    CHECK(ErrorOf(o).find("--since '" + std::string(d) + "': not a date") != std::string::npos);
  }
  o.since = "2024-02-29";  // a leap day is a date
  CHECK(ErrorOf(o).empty());
  o.since.reset();
  o.max_builds = 1;
  o.builds = {Id(0)};
  CHECK(ErrorOf(o).find("--build '" + Id(0) + "': pruned by the retention policy --max-builds 1") != std::string::npos);
  o.builds = {Id(2)};
  CHECK(ErrorOf(o).empty());
  CHECK_FALSE(fs::exists(BuildDir(o.out, 0)));
}
