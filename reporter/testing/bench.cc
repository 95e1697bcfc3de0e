// Render benchmark (ctest label bench; prints figures, asserts nothing but
// that the asv comparison, when asv is importable, converts and publishes):
//   1. full render of N builds x M models x K configs (default 365 x 50 x 8)
//      without SVG (vl-convert is ~1 s per figure here; timed separately),
//      into an empty directory (cold);
//   1b. beside asv: when the venv's Python imports asv, the same fixture is
//      converted to asv's format first (tools/asv_convert.py, timed on its
//      own and not counted), and `asv publish` is timed into a new html
//      directory (cold; asv has no incremental mode) right after each cold
//      render. The two alternate TORCHGAUGE_BENCH_ROUNDS times (default 2),
//      after a sync so neither pays for the fixture's writeback; the best
//      time of each side, their ratio and both outputs' size and file count
//      are printed. asv draws its graphs in the browser, so the like-for-like
//      TorchGauge figure is the render without SVG;
//   2. the same full render again, nothing changed: every build is skipped
//      by its fingerprint (warm);
//   3. incremental: one new build rendered with --build;
//   4. another new build, then a full render without --build (the nightly
//      flow: the new build and the index are rendered, the rest skipped);
//   5. a cold render of the whole history with the reporter's defaults (SVG
//      on where vl-convert is present) into a new directory, and what it
//      publishes (the .torchgauge/ cache is counted apart: it is not published).
// The allocator the render runs on (jemalloc where found) is printed first.
// Override the size with TORCHGAUGE_BENCH_BUILDS / _MODELS / _CONFIGS; set
// TORCHGAUGE_BENCH_NO_SVG=1 to stop before step 5, TORCHGAUGE_BENCH_NO_ASV=1
// to leave out step 1b, TORCHGAUGE_BENCH_KEEP=1 to keep the work directory.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "core/io/shell.h"
#include "reporter/output/parallel.h"
#include "reporter/site/site.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge::reporter;
using torchgauge::core::RunCapture;
using torchgauge::core::ShellQuote;

namespace {
using Clock = std::chrono::steady_clock;

int Env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct DirSize {
  uintmax_t bytes = 0;
  size_t files = 0;
};
// What a directory publishes: every file but the site's .torchgauge/ cache
// (fingerprints, pruned records, the SVGs' spec files), which is kept
// between renders and never published (docs/site.md). `cache` gets that.
DirSize SizeOf(const fs::path& p, DirSize* cache = nullptr) {
  DirSize s;
  for (auto it = fs::recursive_directory_iterator(p); it != fs::recursive_directory_iterator(); ++it) {
    const bool in_cache = it->path().lexically_relative(p).begin()->string() == ".torchgauge";
    if (!it->is_regular_file()) continue;
    DirSize& into = in_cache ? (cache ? *cache : s) : s;
    if (in_cache && !cache) continue;
    into.bytes += it->file_size();
    ++into.files;
  }
  return s;
}
std::string Describe(const DirSize& s) {
  std::ostringstream out;
  out << s.files << " files, " << s.bytes / 1e6 << " MB";
  return out.str();
}

// The last non-empty line of a command's output, for one-line reasons.
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "(no output)";
  const size_t newline = text.rfind('\n', end);
  const size_t begin = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(begin, end - begin + 1);
}

SiteOptions BenchOptions(const fs::path& work) {
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

void GenerateFixture(const fs::path& work, const FixtureSpec& spec) {
  auto t0 = Clock::now();
  size_t runs = GenerateFixtureTree(work / "results", spec);
  double gen_s = Since(t0);
  std::cout << "fixture: " << spec.builds << " builds x " << spec.models << " models x " << spec.configs
            << " configs x 2 platforms = " << runs << " run files, " << SizeOf(work / "results").bytes / 1e6
            << " MB, generated in " << gen_s << " s" << std::endl;
}

// Step 1. Returns the render's seconds; `size` gets the site's size.
double ColdRender(const SiteOptions& o, DirSize* size) {
  auto t0 = Clock::now();
  SiteReport full = BuildSite(o);
  double full_s = Since(t0);
  *size = SizeOf(o.out);
  std::cout << "full render (no SVG, cold, into " << o.out.filename().string() << "/): " << full_s << " s, "
            << full.builds_rendered << " builds, " << Describe(*size) << ", " << full.figures << " figure specs"
            << std::endl;
  return full_s;
}

// Runs `command` and times it; prints its output and returns false when it fails.
bool Timed(const std::string& what, const std::string& command, double* seconds) {
  auto t0 = Clock::now();
  auto r = RunCapture(command, true);
  *seconds = Since(t0);
  if (r.exit_code == 0) return true;
  std::cout << what << " failed (exit " << r.exit_code << "):\n" << r.output << std::endl;
  return false;
}

// Step 1b: whether asv is importable; `why` says why not.
bool AsvAvailable(std::string* why) {
  const std::string python = TORCHGAUGE_PYTHON;
  if (std::getenv("TORCHGAUGE_BENCH_NO_ASV")) {
    *why = "TORCHGAUGE_BENCH_NO_ASV is set";
    return false;
  }
  if (python.empty()) {
    *why = "no TORCHGAUGE_PYTHON configured";
    return false;
  }
  auto probe = RunCapture(ShellQuote(python) + " -c 'import asv'", true);
  if (probe.exit_code != 0) {
    *why = python + " cannot import asv (" + LastLine(probe.output) + "); tools/requirements.txt installs it";
    return false;
  }
  return true;
}

// Converts the fixture to asv's format (timed on its own, not counted).
bool AsvConvert(const fs::path& work) {
  double convert_s = 0;
  if (!Timed("asv_convert",
             ShellQuote(TORCHGAUGE_PYTHON) + " " + ShellQuote(TORCHGAUGE_ASV_CONVERT) + " --results " +
                 ShellQuote((work / "results").string()) + " --out " + ShellQuote((work / "asv").string()) + " --force",
             &convert_s)) {
    return false;
  }
  std::cout << "asv: fixture converted in " << convert_s << " s (tools/asv_convert.py; not counted)" << std::endl;
  return true;
}

// `asv publish` into a new html dir (cold: asv has no incremental mode), as
// the cold render writes into a new directory. Returns its seconds, or a
// negative number when it failed.
double AsvPublish(const fs::path& work, int round, DirSize* size) {
  const fs::path html = work / "asv" / ("html-round" + std::to_string(round));
  double publish_s = 0;
  if (!Timed("asv publish",
             ShellQuote(TORCHGAUGE_PYTHON) + " -m asv --config " +
                 ShellQuote((work / "asv" / "asv.conf.json").string()) + " publish --html-dir " +
                 ShellQuote(html.string()),
             &publish_s)) {
    return -1;
  }
  *size = SizeOf(html);
  std::cout << "asv publish (cold, into " << html.filename().string() << "/): " << publish_s << " s, "
            << Describe(*size) << std::endl;
  return publish_s;
}

// Steps 2-4.
void WarmAndIncremental(const fs::path& work, const FixtureSpec& spec, SiteOptions& o) {
  auto t0 = Clock::now();
  SiteReport warm = BuildSite(o);
  std::cout << "full render again, nothing changed (no SVG): " << Since(t0) << " s, " << warm.builds_rendered
            << " builds rendered, " << warm.builds_unchanged << " skipped as unchanged, " << warm.files_written
            << " files written" << std::endl;

  FixtureSpec next = spec;
  next.builds = 1;
  next.first_day = spec.builds;
  GenerateFixtureTree(work / "results", next);
  o.builds = {FixtureBuildId(next, 0)};
  t0 = Clock::now();
  SiteReport inc = BuildSite(o);
  double inc_s = Since(t0);
  std::cout << "incremental render of one new build with --build (no SVG): " << inc_s << " s, " << inc.files_written
            << " files written, " << inc.files_unchanged << " unchanged" << std::endl;

  FixtureSpec after = spec;
  after.builds = 1;
  after.first_day = spec.builds + 1;
  GenerateFixtureTree(work / "results", after);
  o.builds.clear();
  t0 = Clock::now();
  SiteReport nightly = BuildSite(o);
  std::cout << "full render after one more new build, without --build (no SVG): " << Since(t0) << " s, "
            << nightly.builds_rendered << " builds rendered, " << nightly.builds_unchanged << " skipped as unchanged, "
            << nightly.files_written << " files written" << std::endl;
  o.builds = {FixtureBuildId(after, 0)};
}

// Step 5: the whole history rendered cold with the reporter's defaults (SVG
// on where vl-convert is present), into a new directory: what a site of
// this size publishes.
void DefaultsStep(const fs::path& work, const SiteOptions& base) {
  SiteOptions o = base;
  o.builds.clear();
  o.out = work / "site-defaults";
  o.svg = true;
  auto t0 = Clock::now();
  SiteReport r = BuildSite(o);
  const double s = Since(t0);
  DirSize cache;
  const DirSize published = SizeOf(o.out, &cache);
  std::cout << "cold render with the defaults (SVG on): " << s << " s, " << r.builds_rendered << " builds, "
            << r.svg_rendered << " SVGs";
  for (const auto& k : r.skipped) std::cout << " (skipped: " << k << ")";
  std::cout << "\n";
  std::cout << "site with the defaults: " << Describe(published) << " published (limit 1000 MB and 30000 files; "
            << "target 400 MB), " << published.bytes / 1e6 / std::max<size_t>(r.builds_rendered, 1)
            << " MB per build; cache .torchgauge/ beside it: " << Describe(cache) << std::endl;
}
}  // namespace

namespace {
// The header comment, as the bench's --help: it takes no arguments, only the
// environment variables named there.
const char* const kUsage =
    "reporter_bench: times the site renderer on a synthetic history and prints the figures\n"
    "(issue 17's acceptance: cold render beside asv publish, +1 build, unchanged re-render, site size).\n"
    "Takes no arguments. Environment:\n"
    "  TORCHGAUGE_BENCH_BUILDS / _MODELS / _CONFIGS  fixture size (default 365 x 50 x 8, 2 platforms)\n"
    "  TORCHGAUGE_BENCH_NO_ASV=1   leave out the asv publish comparison\n"
    "  TORCHGAUGE_BENCH_ROUNDS=N   cold render and asv publish, alternately, N times (default 2; best of each)\n"
    "  TORCHGAUGE_BENCH_NO_SVG=1   stop before the cold render with the defaults (SVG on)\n"
    "  TORCHGAUGE_BENCH_KEEP=1     keep the work directory (<build>/reporter_bench)\n";
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string a = argv[1];
    std::cout << kUsage;
    if (a == "-h" || a == "--help") return 0;
    std::cerr << "reporter_bench: unknown argument '" << a << "'\n";
    return 2;
  }
  FixtureSpec spec;
  spec.builds = Env("TORCHGAUGE_BENCH_BUILDS", 365);
  spec.models = Env("TORCHGAUGE_BENCH_MODELS", 50);
  spec.configs = Env("TORCHGAUGE_BENCH_CONFIGS", 8);
  const fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_bench";
  fs::remove_all(work);
  GenerateFixture(work, spec);

  SiteOptions o = BenchOptions(work);
  std::string no_asv;
  const bool asv = AsvAvailable(&no_asv);
  bool asv_ok = !asv || AsvConvert(work);
  // The fixture's (and the conversion's) dirty pages are written back before
  // anything is timed, so neither side pays for the fixture's writeback.
  ::sync();
  std::cout << "allocator: " << TORCHGAUGE_RENDER_ALLOCATOR << "; threads: " << ThreadCount(o.threads, 1 << 20)
            << std::endl;
  // Step 1 (and 1b): the cold render and asv publish, alternately, `rounds`
  // times; each round renders into a new directory. The best of each side
  // is compared, since noise only ever adds time.
  const int rounds = std::max(1, Env("TORCHGAUGE_BENCH_ROUNDS", 2));
  double ours_best = 0, theirs_best = 0;
  DirSize ours, theirs;
  for (int r = 0; r < rounds && asv_ok; ++r) {
    SiteOptions cold = o;
    if (r > 0) cold.out = work / ("site-round" + std::to_string(r + 1));
    const double s = ColdRender(cold, &ours);
    ours_best = r == 0 ? s : std::min(ours_best, s);
    if (r > 0) fs::remove_all(cold.out);
    if (!asv) continue;
    const double a = AsvPublish(work, r + 1, &theirs);
    if (a < 0) asv_ok = false;
    theirs_best = r == 0 ? a : std::min(theirs_best, a);
    ::sync();
  }
  if (!asv) {
    std::cout << "best of " << rounds << " cold renders (no SVG): " << ours_best << " s, " << Describe(ours)
              << "; asv comparison skipped: " << no_asv << std::endl;
  } else if (asv_ok) {
    std::cout << "best of " << rounds << " rounds, run alternately: TorchGauge cold render (no SVG) " << ours_best
              << " s, " << Describe(ours) << "; asv publish " << theirs_best << " s, " << Describe(theirs) << std::endl;
    std::cout << "ratio asv publish / TorchGauge cold render: " << theirs_best / ours_best
              << " (above 1: TorchGauge faster; target 2)" << std::endl;
  }
  WarmAndIncremental(work, spec, o);
  if (!std::getenv("TORCHGAUGE_BENCH_NO_SVG")) DefaultsStep(work, o);
  if (!std::getenv("TORCHGAUGE_BENCH_KEEP")) fs::remove_all(work);
  return asv_ok ? 0 : 1;
}
