// Browser test: headless Chromium loads the index and a build page from the
// `serve` server and checks that every chart rendered (an SVG with marks in
// each chart container) and that the console stayed silent. The reader pages
// (regressions, model grid, model page, compare.html) are checked from serve
// and from file://. Screenshots are
// kept in the build dir as artifacts:
//   <build>/reporter/browser_test_index.png, browser_test_build.png
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/alerts_file.h"
#include "core/stats/mann_whitney.h"
#include "reporter/compare/report.h"
#include "reporter/output/format.h"
#include "reporter/site/site.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge::reporter;

namespace {
std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

// The `serve` subcommand as a child process; killed (by its pid) on scope exit.
class Server {
 public:
  explicit Server(const fs::path& site) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::execl(TORCHGAUGE_REPORT_EXE, TORCHGAUGE_REPORT_EXE, "serve", site.c_str(), "--port", "0", nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    char c;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(fds[0]);
    auto pos = line.find("http://127.0.0.1:");
    REQUIRE_MESSAGE(pos != std::string::npos, "serve said: " << line);
    url_ = line.substr(pos, line.find('/', pos + 17) - pos + 1);
  }
  ~Server() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  std::string url_;
};

struct PageResult {
  std::string dom, log;
};
PageResult Load(const std::string& url, const fs::path& work, const std::string& name, bool screenshot = true) {
  fs::path dom = work / (name + ".dom.html"), log = work / (name + ".log");
  fs::path shot = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter" / ("browser_test_" + name + ".png");
  const std::string common =
      "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 "
      "--user-data-dir=" +
      (work / ("profile-" + name)).string() + " --virtual-time-budget=20000 ";
  std::string cmd = "timeout 180 " + common + "--dump-dom '" + url + "' >" + dom.string() + " 2>" + log.string();
  CHECK_MESSAGE(std::system(cmd.c_str()) == 0, "chromium failed: " << cmd);
  if (!screenshot) return {Read(dom), Read(log)};
  std::string shot_cmd = "timeout 180 " + common + "--window-size=1280,2400 --screenshot=" + shot.string() + " '" +
                         url + "' >/dev/null 2>&1";
  CHECK(std::system(shot_cmd.c_str()) == 0);
  MESSAGE("screenshot: " << shot.string());
  return {Read(dom), Read(log)};
}
// work/results rendered into work/site, without SVG (the browser draws the charts).
SiteOptions BrowserSiteOptions(const fs::path& work) {
  SiteOptions o;
  o.results = work / "results";
  o.out = work / "site";
  o.templates = fs::path(TORCHGAUGE_SOURCE_DIR) / "templates";
  o.static_dir = fs::path(TORCHGAUGE_SOURCE_DIR) / "site";
  o.helper = fs::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "output" / "vl_render.py";
  o.python = TORCHGAUGE_PYTHON;
  o.svg = false;
  return o;
}
// Whether the site's history files name `build` (they were appended to).
bool ReadHistoryMentions(const fs::path& site, const std::string& build) {
  return Read(site / "history" / "builds.js").find(build) != std::string::npos;
}
// Whether chromium is installed; says so when it is not (the test is then skipped).
bool HaveChromium() {
  if (std::system("command -v chromium >/dev/null 2>&1") == 0) return true;
  MESSAGE("skipped: chromium not installed");
  return false;
}
// Console messages (including uncaught exceptions) appear in Chromium's log
// as "CONSOLE" lines; the pages are expected to log nothing at all.
std::string ConsoleLines(const std::string& log) {
  std::string out, line;
  std::istringstream in(log);
  while (std::getline(in, line)) {
    if (line.find(":CONSOLE") != std::string::npos) out += line + "\n";
  }
  return out;
}
}  // namespace

TEST_CASE("browser: charts render in headless Chromium with no console output") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 8;
  spec.configs = 6;
  spec.plant_at = 1;  // a step regression that stays and a spike that recovers
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  SiteReport report = BuildSite(o);
  if (!fs::exists(o.out / "assets" / "vega-bundle.js")) {
    MESSAGE("skipped: no vega bundle (vl-convert-python not available to " << o.python << ")");
    return;
  }
  Server server(o.out);
  const std::string build = FixtureBuildId(spec, 2);
  struct Case {
    std::string name, path;
    size_t min_charts;
  };
  for (const Case& c : {Case{"index", "index.html", 1}, Case{"build", "builds/" + build + "/index.html", 3},
                        Case{"model", "models/resnet50.html#build=" + build, 3}}) {
    SUBCASE(c.name.c_str()) {
      PageResult r = Load(server.url() + c.path, work, c.name);
      size_t containers = Count(r.dom, "class=\"vega-chart");
      size_t svgs = Count(r.dom, "class=\"marks\"");
      INFO("page " << c.path << ": " << containers << " chart containers, " << svgs << " rendered SVGs");
      CHECK(containers >= c.min_charts);
      CHECK(svgs == containers);
      CHECK(r.dom.find("Chart failed") == std::string::npos);
      // Vega cuts a label that outgrows its limit to "…"; none may be cut.
      CHECK(r.dom.find("\xE2\x80\xA6</text>") == std::string::npos);
      if (c.name == "model") {
        CHECK(r.dom.find("Log scale") != std::string::npos);  // the toggles are bound
        // The build's detail, loaded from builds/<id>/data/models.js: a
        // section per platform with its runs.
        CHECK(r.dom.find("Platform cpu-x86_64-2c (") != std::string::npos);
        CHECK(r.dom.find("<th>Median (ms)</th>") != std::string::npos);
        CHECK(r.dom.find("image classification") != std::string::npos);  // resnet50's task
      }
      if (c.name == "build") {
        CHECK(Count(r.dom, "mark-rect") >= 2);  // Figures 1 and 2 bars
        CHECK(r.dom.find("Paper: A100 GPU active") != std::string::npos);
        // The CPU platform: Figures 1/2 from the host breakdown, rendered.
        CHECK(r.dom.find("data-spec=\"spec-fig1-train.cpu-x86_64-2c\"") != std::string::npos);
        CHECK(r.dom.find("Shown: <strong>host (CPU) time") != std::string::npos);
        CHECK(r.dom.find("attainable through LibTorch") != std::string::npos);  // the peaks table
        CHECK(r.dom.find("<span class=\"noisy\" title=\"other processes used") != std::string::npos);
        CHECK(r.dom.find("data-spec=\"spec-fig5-ratio.nvidia-a100-40gb-cu130\"") != std::string::npos);  // Figure 5
      }
      CHECK_MESSAGE(ConsoleLines(r.log).empty(), "console output:\n" << ConsoleLines(r.log));
    }
  }
}

namespace {
// The data-change values of the grid's rows, in page order.
std::vector<double> Changes(const std::string& dom) {
  std::vector<double> out;
  const std::string key = "data-change=\"";
  for (size_t at = 0; (at = dom.find(key, at)) != std::string::npos; ++at) {
    const size_t start = at + key.size();
    const std::string v = dom.substr(start, dom.find('"', start) - start);
    if (!v.empty()) out.push_back(std::stod(v));
  }
  return out;
}
}  // namespace

TEST_CASE("browser: the regressions page and the model grid, from serve and from file://") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_readers";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 6;
  spec.configs = 2;
  spec.plant_at = 1;
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  BuildSite(o);
  Server server(o.out);
  const std::string file = "file://" + fs::absolute(o.out).lexically_normal().string() + "/";
  const std::string gpu = "nvidia-a100-40gb-cu130";
  SUBCASE("regressions, served: the planted regressions and the planted recovery") {
    PageResult r = Load(server.url() + "regressions.html", work, "regressions");
    CHECK(Count(r.dom, "data-state=\"open\"") == 2);       // hf_bert's step: time and throughput
    CHECK(Count(r.dom, "data-state=\"recovered\"") == 2);  // dlrm's spike
    CHECK(r.dom.find("recovered in " + FixtureBuildId(spec, 2)) != std::string::npos);
    CHECK(r.dom.find(">hf_bert</a>") != std::string::npos);
    CHECK(r.dom.find("4 of 4 shown") != std::string::npos);  // the script ran
    CHECK_MESSAGE(ConsoleLines(r.log).empty(), "console output:\n" << ConsoleLines(r.log));
  }
  SUBCASE("regressions, file://: the filters hide what they leave out") {
    PageResult r = Load(file + "regressions.html#state=recovered&platform=" + gpu, work, "regressions-filtered", false);
    CHECK(r.dom.find("2 of 4 shown") != std::string::npos);
    CHECK(Count(r.dom, "data-state=\"open\" id=") == 2);
    CHECK(Count(r.dom, "hidden=\"\"") == 2);
    PageResult d = Load(file + "regressions.html#domain=nlp", work, "regressions-domain", false);
    CHECK(d.dom.find("2 of 4 shown") != std::string::npos);
    PageResult none = Load(file + "regressions.html#platform=cpu-x86_64-2c", work, "regressions-cpu", false);
    CHECK(none.dom.find("4 of 4 shown") != std::string::npos);  // a platform not offered leaves "all"
    for (const auto* p : {&r, &d, &none}) CHECK_MESSAGE(ConsoleLines(p->log).empty(), ConsoleLines(p->log));
  }
  SUBCASE("model grid, served and file://: every model, sparklines, sorting by change") {
    PageResult r = Load(server.url() + "models.html", work, "models");
    CHECK(Count(r.dom, "<tr data-name=") == 6);
    CHECK(Count(r.dom, "class=\"spark\"") == 12);  // 6 models x 2 platforms
    CHECK_MESSAGE(ConsoleLines(r.log).empty(), ConsoleLines(r.log));
    PageResult sorted = Load(file + "models.html#sort=change", work, "models-sorted", false);
    CHECK(sorted.dom.find("data-sorted-by=\"change\"") != std::string::npos);
    const std::vector<double> changes = Changes(sorted.dom);
    REQUIRE(changes.size() == 6);
    CHECK(std::is_sorted(changes.rbegin(), changes.rend()));
    CHECK_MESSAGE(ConsoleLines(sorted.log).empty(), ConsoleLines(sorted.log));
  }
  SUBCASE("model page, file://: the faceted trend renders with no label cut") {
    if (!fs::exists(o.out / "assets" / "vega-bundle.js")) {
      MESSAGE("skipped: no vega bundle (vl-convert-python not available to " << o.python << ")");
      return;
    }
    PageResult r = Load(file + "models/hf_bert.html#build=" + FixtureBuildId(spec, 2), work, "model-file", false);
    CHECK(Count(r.dom, "class=\"marks\"") == Count(r.dom, "class=\"vega-chart"));
    CHECK(Count(r.dom, "class=\"marks\"") == 3);                       // the trend and both platforms' samples
    CHECK(r.dom.find("Platform " + gpu + " (") != std::string::npos);  // the detail loaded from file://
    CHECK(r.dom.find("\xE2\x80\xA6</text>") == std::string::npos);
    CHECK_MESSAGE(ConsoleLines(r.log).empty(), ConsoleLines(r.log));
  }
}

TEST_CASE("browser: an alert's page and the triage states, from serve and from file://") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_alerts";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 12;
  spec.models = 7;
  spec.configs = 2;
  spec.cpu_platform = false;
  spec.step_at = 8;
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  BuildSite(o);
  const std::string md = Read(o.out / "regressions.md");
  const size_t at = md.find("| [A-");
  REQUIRE(at != std::string::npos);
  const std::string id = md.substr(at + 3, 14);
  const std::string cmd = std::string(TORCHGAUGE_REPORT_EXE) + " triage " + id + " --results " +
                          (work / "results").string() + " --state investigating --owner @oncall >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  // What `torchgauge-collect bisect --alert` records when it finds the culprit.
  torchgauge::core::Culprit culprit;
  culprit.last_good = "2f0d7b1";
  culprit.first_bad = "5a1e0c9";
  culprit.skipped_before = {"44be7d0"};
  culprit.found_at = "2026-11-28T03:10:00Z";
  culprit.steps = {{"3c9e2aa", "good"}, {"44be7d0", "skip"}, {"5a1e0c9", "bad"}};
  torchgauge::core::WriteCulprit(torchgauge::core::CulpritsPath(work / "results"), id, culprit);
  BuildSite(o);
  {
    const auto alerts = nlohmann::json::parse(Read(o.out / "alerts.json"));
    bool found = false;
    for (const auto& a : alerts.at("alerts"))
      if (a.at("id") == id) found = a.at("culprit").at("first_bad") == "5a1e0c9";
    CHECK_MESSAGE(found, "alerts.json carries the culprit of " << id);
  }
  Server server(o.out);
  const std::string file = "file://" + fs::absolute(o.out).lexically_normal().string() + "/";
  SUBCASE("regressions, served: the alert under its state, each row with it") {
    PageResult r = Load(server.url() + "regressions.html", work, "regressions-alerts");
    CHECK(r.dom.find("investigating (1)</h3>") != std::string::npos);
    CHECK(r.dom.find("@oncall") != std::string::npos);
    CHECK(Count(r.dom, "data-alert-state=\"investigating\"") == 12);  // 6 runs x time and throughput
    CHECK(r.dom.find("href=\"alerts/" + id + ".html\"") != std::string::npos);
    CHECK_MESSAGE(ConsoleLines(r.log).empty(), ConsoleLines(r.log));
  }
  for (const std::string& base : {server.url(), file}) {
    SUBCASE(("alert page from " + base.substr(0, 4)).c_str()) {
      PageResult r = Load(base + "alerts/" + id + ".html", work, "alert-" + base.substr(0, 4));
      CHECK(r.dom.find("Alert " + id + ": regression on nvidia-a100-40gb-cu130") != std::string::npos);
      CHECK(r.dom.find("<strong>investigating</strong>") != std::string::npos);
      CHECK(r.dom.find("(the step)") != std::string::npos);
      CHECK(r.dom.find("torchgauge-collect bisect --good") != std::string::npos);
      CHECK(r.dom.find("the first bad revision is <strong>5a1e0c9</strong>, after 2f0d7b1") != std::string::npos);
      CHECK(r.dom.find("untestable just before it: 44be7d0") != std::string::npos);
      CHECK(r.dom.find("3c9e2aa good; 44be7d0 skip; 5a1e0c9 bad;") != std::string::npos);
      CHECK(r.dom.find("href=\"../regressions.html#" + id + "\"") != std::string::npos);
      if (fs::exists(o.out / "assets" / "vega-bundle.js")) CHECK(Count(r.dom, "class=\"marks\"") == 1);
      CHECK_MESSAGE(ConsoleLines(r.log).empty(), ConsoleLines(r.log));
    }
  }
}

// Issue 60: pages an on-call person can act on, at 1400 px. A page served
// from the site is loaded in a 1400 px frame of a measuring page of the same
// origin, which writes into its own DOM every table wider than its box (cut,
// or scrolled), every element past the frame's right edge, and every <a>
// without an href.
TEST_CASE("browser: at 1400 px nothing on the regressions page or an alert page is cut; every link is one") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_1400";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 30;
  spec.models = 8;
  spec.configs = 2;
  spec.plant_at = 20;
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  BuildSite(o);
  const std::string md = Read(o.out / "regressions.md");
  const size_t at = md.find("| [A-");
  REQUIRE(at != std::string::npos);
  const std::string id = md.substr(at + 3, 14);
  // A long note and two links, as triage leaves them.
  std::string note;
  for (int i = 0; i < 40; ++i) note += "Bisecting the range on the A100 runner; first suspect is the cuDNN change. ";
  const std::string cmd = std::string(TORCHGAUGE_REPORT_EXE) + " triage " + id + " --results " +
                          (work / "results").string() + " --state investigating --owner @perf-oncall --note '" + note +
                          "' --link https://github.com/pytorch/pytorch/issues/1 --link "
                          "https://github.com/pytorch/pytorch/pull/2 >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  BuildSite(o);
  std::ofstream(o.out / "measure-1400.html") << R"(<!doctype html><html><body style="margin:0">
<iframe id="f" style="width:1400px;height:3000px;border:0"></iframe><pre id="out">pending</pre>
<script>
const f = document.getElementById('f');
f.onload = () => {
  const d = f.contentDocument, w = d.documentElement.clientWidth, found = [];
  d.querySelectorAll('table').forEach((t, i) => {
    if (t.scrollWidth > t.clientWidth + 1) found.push('table ' + i + ' cut: ' + t.scrollWidth + ' > ' + t.clientWidth);
  });
  d.querySelectorAll('main *').forEach(e => {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1 && !e.closest('pre') && !e.closest('.vega-chart'))
      found.push('past the edge: <' + e.tagName + '> ' + (e.textContent || '').slice(0, 40));
  });
  d.querySelectorAll('a:not([href])').forEach(a => { if (a.textContent.trim()) found.push('a link without href: ' + a.textContent); });
  document.getElementById('out').textContent = 'links ' + d.querySelectorAll('a[href]').length + '\n' + found.join('\n') + '\nmeasured';
};
f.src = location.search.slice(1);
</script></body></html>)";
  Server server(o.out);
  for (const std::string& page : {std::string("regressions.html"), "alerts/" + id + ".html"}) {
    CAPTURE(page);
    PageResult r = Load(server.url() + "measure-1400.html?" + page, work,
                        "measure-" + std::to_string(page.size()), false);
    const size_t from = r.dom.find("<pre id=\"out\">");
    REQUIRE(from != std::string::npos);
    const std::string out = r.dom.substr(from + 14, r.dom.find("</pre>", from) - from - 14);
    INFO(out);
    CHECK(out.find("measured") != std::string::npos);
    CHECK(out.find(" cut: ") == std::string::npos);
    CHECK(out.find("past the edge") == std::string::npos);
    CHECK(out.find("without href") == std::string::npos);
    MESSAGE(page << ": " << out);
  }
}

namespace {
// The build ids the model page's trend charted (its data-builds attribute).
std::string ChartedBuilds(const std::string& dom) {
  const std::string key = "data-source=\"trend\"";
  const size_t at = dom.find(key);
  if (at == std::string::npos) return "(no trend chart)";
  const size_t tag_end = dom.find('>', at);
  const size_t attr = dom.find("data-builds=\"", at);
  if (attr == std::string::npos || attr > tag_end) return "(no data-builds)";
  const size_t start = attr + 13;
  return dom.substr(start, dom.find('"', start) - start);
}
}  // namespace

// The snapshot-immutability test: the model page's view of build k shows
// the builds up to k only, and the same ones, after 10 later builds have
// appended to the shared history files.
TEST_CASE("browser: a published build's model view keeps showing builds <= k after 10 more builds") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_immutable";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 13;
  spec.models = 3;
  spec.configs = 2;
  GenerateFixtureTree(work / "all", spec);
  const int k = 2;
  auto add_builds = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      fs::create_directories(work / "results");
      fs::copy(work / "all" / FixtureBuildId(spec, i), work / "results" / FixtureBuildId(spec, i),
               fs::copy_options::recursive);
    }
  };
  SiteOptions o = BrowserSiteOptions(work);
  add_builds(0, k + 1);
  BuildSite(o);
  if (!fs::exists(o.out / "assets" / "vega-bundle.js")) {
    MESSAGE("skipped: no vega bundle (vl-convert-python not available to " << o.python << ")");
    return;
  }
  const std::string page = "file://" + fs::absolute(o.out).lexically_normal().string() +
                           "/models/resnet50.html#build=" + FixtureBuildId(spec, k);
  std::string want;
  for (int i = 0; i <= k; ++i) want += (i ? " " : "") + FixtureBuildId(spec, i);
  const PageResult before = Load(page, work, "immutable-before", false);
  CHECK(ChartedBuilds(before.dom) == want);

  add_builds(k + 1, k + 11);  // 10 more builds append to history/*.js
  const SiteReport r = BuildSite(o);
  CHECK(r.builds_rendered == 10);
  CHECK(ReadHistoryMentions(o.out, FixtureBuildId(spec, k + 10)));
  const PageResult after = Load(page, work, "immutable-after", false);
  CHECK(ChartedBuilds(after.dom) == want);
  // Nothing of a later build on the page: not in the chart's marks, not in the detail.
  for (int i = k + 1; i <= k + 10; ++i) {
    INFO("later build " << FixtureBuildId(spec, i));
    const size_t main_start = after.dom.find("<main>");
    const std::string body = after.dom.substr(main_start == std::string::npos ? 0 : main_start);
    // The build picker lists every build; the chart and the detail must not.
    const std::string picker_free =
        body.substr(body.find("</select>") == std::string::npos ? 0 : body.find("</select>"));
    CHECK(picker_free.find(FixtureBuildId(spec, i)) == std::string::npos);
  }
  CHECK(after.dom.find("build " + FixtureBuildId(spec, k)) != std::string::npos);  // the detail is build k's
  // What Vega drew: every time axis of the trend ends at build k's day.
  const std::string id = FixtureBuildId(spec, k), day = id.substr(id.size() - 8, 4) + "-" +
                                                        id.substr(id.size() - 4, 2) + "-" + id.substr(id.size() - 2);
  const std::string axis = "for a utc scale with values from ";
  int axes = 0;
  for (size_t at = 0; (at = after.dom.find(axis, at)) != std::string::npos; ++at, ++axes) {
    const size_t to = after.dom.find(" to ", at + axis.size()) + 4;
    CHECK(after.dom.substr(to, 10) <= day);
  }
  CHECK(axes > 0);
  // The newest build's view reaches the newest build.
  const PageResult newest = Load(page.substr(0, page.find('#')), work, "immutable-newest", false);
  CHECK(ChartedBuilds(newest.dom).ends_with(FixtureBuildId(spec, k + 10)));
  for (const auto* p : {&before, &after, &newest}) CHECK_MESSAGE(ConsoleLines(p->log).empty(), ConsoleLines(p->log));
}

namespace {
// The text of the element with `id` (a <textarea> or a <script>) in a dumped DOM, unescaped.
std::string ElementText(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = dom.find('>', at) + 1;
  const size_t end = dom.find("</", start);
  std::string text = dom.substr(start, end - start);
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xC2\xA0"}, {"&amp;", "&"}}) {
    for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
      text.replace(pos, from.size(), to);
  }
  return text;
}

// The browser's comparison (#tg-compare-result) against core::CompareBuilds
// on the same pair: every change, status change, appearance and summary row.
void CheckSameComparison(const nlohmann::json& js, const nlohmann::json& cpp) {
  REQUIRE(js["platforms"].size() == cpp["platforms"].size());
  CHECK(js["base"] == cpp["base"]);
  CHECK(js["new"] == cpp["new"]);
  auto close = [](const nlohmann::json& a, const nlohmann::json& b) {
    if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-12 * std::max(1.0, std::abs(y));
  };
  for (size_t p = 0; p < cpp["platforms"].size(); ++p) {
    const auto &jp = js["platforms"][p], &cp = cpp["platforms"][p];
    INFO("platform " << cp["platform_id"]);
    CHECK(jp["platform_id"] == cp["platform_id"]);
    REQUIRE(jp["changes"].size() == cp["changes"].size());
    for (size_t i = 0; i < cp["changes"].size(); ++i) {
      const auto &a = jp["changes"][i], &b = cp["changes"][i];
      INFO("change " << b["model"] << " " << b["mode"] << " " << b["metric"]);
      for (const char* f : {"model", "mode", "backend", "precision", "metric", "unit", "verdict", "n_base", "n_new",
                            "exact_test", "test_unit", "noisy", "confirmed", "seen_in", "threshold_percent"}) {
        CHECK_MESSAGE(a[f] == b[f], f << ": browser " << a[f] << ", C++ " << b[f]);
      }
      for (const char* f : {"base", "new", "ratio", "delta_percent", "p_value", "noise_percent"}) {
        CHECK_MESSAGE(close(a[f], b[f]), f << ": browser " << a[f] << ", C++ " << b[f]);
      }
    }
    for (const char* list : {"status_changes", "presence"}) {
      REQUIRE(jp[list].size() == cp[list].size());
      for (size_t i = 0; i < cp[list].size(); ++i) {
        for (auto it = cp[list][i].begin(); it != cp[list][i].end(); ++it) {
          if (it.key() == "batch_size" || it.key() == "device") continue;
          CHECK_MESSAGE(jp[list][i][it.key()] == it.value(), list << "." << it.key());
        }
      }
    }
    REQUIRE(jp["summary"].size() == cp["summary"].size());
    for (size_t i = 0; i < cp["summary"].size(); ++i) {
      CHECK(jp["summary"][i]["runs"] == cp["summary"][i]["runs"]);
      CHECK(close(jp["summary"][i]["geomean_time_ratio"], cp["summary"][i]["geomean_time_ratio"]));
    }
  }
}
}  // namespace

// compare.html: two builds picked in the page, compared by site/compare.js.
// It must agree with `torchgauge-report compare --base A --new B` (the C++
// rules and report) on every number and every line of its Markdown, which is
// what keeps the JavaScript port from drifting.
TEST_CASE("browser: compare any two builds in the page, as compare --json and its Markdown do") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_compare";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 4;
  spec.models = 6;
  spec.configs = 3;
  spec.plant_at = 1;  // hf_bert's step regression from build 1 on; dlrm's spike in build 1 only
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  BuildSite(o);
  Server server(o.out);
  const std::string file = "file://" + fs::absolute(o.out).lexically_normal().string() + "/";
  struct Pair {
    int base, next;
    std::string via;
  };
  for (const Pair& pair : {Pair{0, 1, "serve"}, Pair{0, 3, "file"}, Pair{3, 1, "file"}}) {
    const std::string base = FixtureBuildId(spec, pair.base), next = FixtureBuildId(spec, pair.next);
    SUBCASE((base + " -> " + next + " via " + pair.via).c_str()) {
      const std::string url =
          (pair.via == "serve" ? server.url() : file) + "compare.html#base=" + base + "&new=" + next;
      const PageResult r = Load(url, work, "compare-" + std::to_string(pair.base) + "-" + std::to_string(pair.next),
                                pair.via == "serve");
      CHECK_MESSAGE(ConsoleLines(r.log).empty(), "console output:\n" << ConsoleLines(r.log));
      torchgauge::core::CompareRequest req;
      req.results = o.results;
      req.base = base;
      req.new_build = next;
      const torchgauge::core::Comparison cmp = torchgauge::core::CompareBuilds(req);
      const std::string result = ElementText(r.dom, "tg-compare-result");
      REQUIRE_MESSAGE(!result.empty(), "the page wrote no result");
      CheckSameComparison(nlohmann::json::parse(result), torchgauge::core::ToJson(cmp));
      // The Markdown the "Copy as Markdown" button copies is compare's, byte for byte.
      const std::string md = RenderCompareMarkdown(cmp, ReportOptions{});
      CHECK(ElementText(r.dom, "tg-compare-md") == md);
      if (pair.base == 0 && pair.next == 1) {
        // The planted step: hf_bert's time regression is in the page's Regressions table.
        CHECK(cmp.CountVerdict(torchgauge::core::Verdict::kRegression) > 0);
        std::string listed;  // the Regressions sections of every platform
        for (size_t at = 0; (at = r.dom.find("<h3>Regressions (", at)) != std::string::npos; ++at) {
          listed += r.dom.substr(at, r.dom.find("<h3>", at + 1) - at);
        }
        CHECK(listed.find(">hf_bert</a>") != std::string::npos);
        CHECK(listed.find(">resnet50</a>") == std::string::npos);  // nothing planted there
        CHECK(Count(r.dom, "class=\"marks\"") == 2);               // a ratio chart per platform
        CHECK(r.dom.find("\xE2\x80\xA6</text>") == std::string::npos);
      }
    }
  }
}

// The generative model's metrics (TTFT, TPOT, tokens/s) in the page, as
// compare judges them: tests/data/compare_generation (one worker process per
// run: the rank test reads the samples), then the same runs split into two
// processes' generations (the test reads the per-process medians).
TEST_CASE("browser: compare judges a generation's TTFT, TPOT and tokens/s in the page as compare does") {
  if (!HaveChromium()) return;
  for (const bool two_processes : {false, true}) {
    CAPTURE(two_processes);
    fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" /
                    (two_processes ? "browser_compare_generation_2p" : "browser_compare_generation");
    fs::remove_all(work);
    fs::create_directories(work);
    fs::copy(fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/compare_generation/results", work / "results",
             fs::copy_options::recursive);
    if (two_processes) {
      for (const auto& e : fs::recursive_directory_iterator(work / "results")) {
        if (e.path().filename() != "llama_3_2_1b.eval.eager.default.json") continue;
        nlohmann::json j = nlohmann::json::parse(Read(e.path()));
        j["generation"]["process_generations"] = {2, 3};
        std::ofstream(e.path()) << j.dump(1);
      }
    }
    SiteOptions o = BrowserSiteOptions(work);
    BuildSite(o);
    for (const char* next : {"2.14.1-20261128", "2.14.1-20261129"}) {
      const std::string base = "2.14.1-20261127";
      CAPTURE(next);
      torchgauge::core::CompareRequest req;
      req.results = o.results;
      req.base = base;
      req.new_build = next;
      const torchgauge::core::Comparison cmp = torchgauge::core::CompareBuilds(req);
      const nlohmann::json cpp = torchgauge::core::ToJson(cmp);
      int generation_changes = 0;
      for (const auto& c : cpp["platforms"][0]["changes"]) {
        const std::string m = c["metric"];
        generation_changes += m == "ttft" || m == "tpot" || m == "tokens_per_s";
        if (m == "tpot" && std::string(next) == "2.14.1-20261129") {
          CHECK(c["verdict"] == (two_processes ? "too_few_samples" : "regression"));
          CHECK(c["test_unit"] == (two_processes ? "process_medians" : "samples"));
        }
      }
      CHECK(generation_changes == 3);
      const std::string url =
          "file://" + fs::absolute(o.out).lexically_normal().string() + "/compare.html#base=" + base + "&new=" + next;
      const PageResult r = Load(url, work, std::string("compare-generation-") + next, false);
      CHECK_MESSAGE(ConsoleLines(r.log).empty(), "console output:\n" << ConsoleLines(r.log));
      const std::string result = ElementText(r.dom, "tg-compare-result");
      REQUIRE_MESSAGE(!result.empty(), "the page wrote no result");
      CheckSameComparison(nlohmann::json::parse(result), cpp);
      CHECK(ElementText(r.dom, "tg-compare-md") == RenderCompareMarkdown(cmp, ReportOptions{}));
    }
  }
}

TEST_CASE("browser: an inconclusive comparison reads in the page as compare writes it") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_inconclusive";
  fs::remove_all(work);
  FixtureSpec spec;
  spec.builds = 4;
  spec.models = 6;
  spec.configs = 3;
  spec.plant_at = 1;
  GenerateFixtureTree(work / "results", spec);
  SiteOptions o = BrowserSiteOptions(work);
  // Nothing over a 1000 % threshold regresses, and any noisy run makes such
  // a clean comparison inconclusive.
  o.compare_options.threshold_percent = 1000;
  o.compare_options.max_noisy_percent = 0;
  BuildSite(o);
  // The first pair of builds without a broken run (the fixture breaks some).
  std::string base, next;
  torchgauge::core::Comparison cmp;
  for (int a = 0; a < spec.builds && base.empty(); ++a) {
    for (int b = a + 1; b < spec.builds && base.empty(); ++b) {
      torchgauge::core::CompareRequest req;
      req.results = o.results;
      req.base = FixtureBuildId(spec, a);
      req.new_build = FixtureBuildId(spec, b);
      req.options = o.compare_options;
      cmp = torchgauge::core::CompareBuilds(req);
      if (cmp.Inconclusive()) base = *req.base, next = req.new_build;
    }
  }
  REQUIRE_MESSAGE(!base.empty(), "no pair of fixture builds compares as inconclusive");
  MESSAGE(base << " -> " << next << ": " << cmp.NoisyRuns() << " of " << cmp.ComparedRuns() << " runs noisy");
  const std::string url =
      "file://" + fs::absolute(o.out).lexically_normal().string() + "/compare.html#base=" + base + "&new=" + next;
  const PageResult r = Load(url, work, "compare-inconclusive", false);
  CHECK_MESSAGE(ConsoleLines(r.log).empty(), "console output:\n" << ConsoleLines(r.log));
  const std::string md = RenderCompareMarkdown(cmp, ReportOptions{});
  CHECK(md.find("Inconclusive: ") != std::string::npos);
  CHECK(ElementText(r.dom, "tg-compare-md") == md);
}

namespace {
// Mann-Whitney cases the fixture lacks (ties, all tied, complete separation,
// 70 vs 70 samples: the normal approximation), with core's answers.
nlohmann::json MannWhitneyCases() {
  nlohmann::json cases = nlohmann::json::array();
  std::vector<std::pair<std::vector<double>, std::vector<double>>> samples = {{{1, 2, 2, 3}, {2, 3, 3, 4}},
                                                                              {{5, 5, 5}, {5, 5, 5}},
                                                                              {{1, 2, 3}, {4, 5, 6}},
                                                                              {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}};
  std::vector<double> big_a, big_b;
  uint64_t state = 42;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 40) / 1e6;
  };
  for (int i = 0; i < 70; ++i) {
    big_a.push_back(10 + next());
    big_b.push_back(10.5 + next());
  }
  samples.push_back({big_a, big_b});
  for (const auto& [a, b] : samples) {
    const auto t = torchgauge::core::MannWhitneyU(a, b);
    cases.push_back({{"a", a},
                     {"b", b},
                     {"p", t.p_value},
                     {"exact", t.exact},
                     {"min_p", torchgauge::core::MinAchievablePValue(a.size(), b.size())}});
  }
  return cases;
}
// printf formats as output/format.cc's Num writes them, rounding ties included.
nlohmann::json FormatCases() {
  nlohmann::json formats = nlohmann::json::array();
  for (double v : {0.125, 2.5, 3.5, -2.5, -0.04, 0.0, 1234.5, 12.3456, 99.95}) {
    for (const char* f : {"%.0f", "%.1f", "%.2f", "%.3f"}) {
      formats.push_back({{"v", v}, {"fn", "fixed"}, {"d", f[2] - '0'}, {"want", Num(v, f)}});
    }
  }
  for (double v : {1.5e-5, 2.25e-7, 9.96e-5})
    formats.push_back({{"v", v}, {"fn", "expo"}, {"d", 1}, {"want", Num(v, "%.1e")}});
  for (double v : {7.0, 0.05, 1.0, 12.5, 0.00001234, 1234567.0, 100000.0, 0.1}) {
    formats.push_back({{"v", v}, {"fn", "general"}, {"d", 0}, {"want", Num(v, "%g")}});
  }
  return formats;
}
}  // namespace

TEST_CASE("browser: compare.js's test and formats against core's, on cases the fixture lacks") {
  if (!HaveChromium()) return;
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "browser_compare_rules";
  fs::remove_all(work);
  fs::create_directories(work);
  fs::copy_file(fs::path(TORCHGAUGE_SOURCE_DIR) / "site" / "compare.js", work / "compare.js");
  const nlohmann::json cases = MannWhitneyCases(), formats = FormatCases();
  std::ofstream(work / "rules.html")
      << "<!doctype html><html><body><pre id=\"out\"></pre>\n<script src=\"compare.js\"></script>\n<script>\n"
      << "var R = window.TorchGaugeCompare, cases = " << cases.dump() << ", formats = " << formats.dump() << ";\n"
      << "var out = {p: cases.map(function (c) { var t = R.mannWhitney(c.a, c.b); "
      << "return [t.p_value, t.exact, R.minAchievableP(c.a.length, c.b.length)]; }),\n"
      << "  f: formats.map(function (f) { return R[f.fn](f.v, f.d); })};\n"
      << "document.getElementById('out').textContent = JSON.stringify(out);\n</script></body></html>\n";
  const PageResult r = Load("file://" + fs::absolute(work / "rules.html").string(), work, "compare-rules", false);
  CHECK_MESSAGE(ConsoleLines(r.log).empty(), ConsoleLines(r.log));
  const std::string text = ElementText(r.dom, "out");
  REQUIRE(!text.empty());
  const nlohmann::json got = nlohmann::json::parse(text);
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("Mann-Whitney case " << i);
    const double want = cases[i]["p"].get<double>(), p = got["p"][i][0].get<double>();
    CHECK(std::abs(p - want) <= 1e-9 * std::max(want, 1e-300));
    CHECK(got["p"][i][1] == cases[i]["exact"]);
    const double min_p = cases[i]["min_p"].get<double>();
    CHECK(std::abs(got["p"][i][2].get<double>() - min_p) <= 1e-9 * min_p);
  }
  for (size_t i = 0; i < formats.size(); ++i) {
    CHECK_MESSAGE(got["f"][i] == formats[i]["want"],
                  formats[i]["fn"] << "(" << formats[i]["v"] << ", " << formats[i]["d"] << ")");
  }
}
