// Render benchmark (ctest label bench; prints figures, asserts nothing):
//   1. full render of N builds x M models x K configs (default 365 x 50 x 8)
//      without SVG (vl-convert is ~1 s per figure here; timed separately),
//      into an empty directory (cold);
//   2. the same full render again, nothing changed: every build is skipped
//      by its fingerprint (warm);
//   3. incremental: one new build rendered with --build;
//   4. another new build, then a full render without --build (the nightly
//      flow: the new build and the index are rendered, the rest skipped);
//   5. SVG rendering of one build's figures through one vl-convert process.
// Override the size with TORCHGAUGE_BENCH_BUILDS / _MODELS / _CONFIGS; set
// TORCHGAUGE_BENCH_NO_SVG=1 to stop before step 3.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "reporter/fixtures.h"
#include "reporter/site.h"

namespace fs = std::filesystem;
using namespace torchgauge::reporter;

namespace {
int Env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
uintmax_t DirBytes(const fs::path& p, size_t* files) {
  uintmax_t n = 0;
  *files = 0;
  for (const auto& e : fs::recursive_directory_iterator(p)) {
    if (e.is_regular_file()) {
      n += e.file_size();
      ++*files;
    }
  }
  return n;
}
}  // namespace

int main() {
  FixtureSpec spec;
  spec.builds = Env("TORCHGAUGE_BENCH_BUILDS", 365);
  spec.models = Env("TORCHGAUGE_BENCH_MODELS", 50);
  spec.configs = Env("TORCHGAUGE_BENCH_CONFIGS", 8);
  fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_bench";
  fs::remove_all(work);
  auto t0 = std::chrono::steady_clock::now();
  size_t runs = GenerateFixtureTree(work / "results", spec);
  size_t result_files = 0;
  uintmax_t result_bytes = DirBytes(work / "results", &result_files);
  std::cout << "fixture: " << spec.builds << " builds x " << spec.models << " models x " << spec.configs
            << " configs x 2 platforms = " << runs << " run files, " << result_bytes / 1e6 << " MB, generated in "
            << Since(t0) << " s" << std::endl;

  SiteOptions o;
  o.results = work / "results";
  o.out = work / "site";
  o.templates = fs::path(TORCHGAUGE_SOURCE_DIR) / "templates";
  o.static_dir = fs::path(TORCHGAUGE_SOURCE_DIR) / "site";
  o.helper = fs::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "vl_render.py";
  o.python = TORCHGAUGE_PYTHON;
  o.svg = false;
  t0 = std::chrono::steady_clock::now();
  SiteReport full = BuildSite(o);
  double full_s = Since(t0);
  size_t site_files = 0;
  uintmax_t site_bytes = DirBytes(o.out, &site_files);
  std::cout << "full render (no SVG): " << full_s << " s, " << full.builds_rendered << " builds, " << site_files
            << " files, " << site_bytes / 1e6 << " MB, " << full.figures << " figure specs" << std::endl;

  t0 = std::chrono::steady_clock::now();
  SiteReport warm = BuildSite(o);
  std::cout << "full render again, nothing changed (no SVG): " << Since(t0) << " s, " << warm.builds_rendered
            << " builds rendered, " << warm.builds_unchanged << " skipped as unchanged, " << warm.files_written
            << " files written" << std::endl;

  FixtureSpec next = spec;
  next.builds = 1;
  next.first_day = spec.builds;
  GenerateFixtureTree(work / "results", next);
  o.builds = {FixtureBuildId(next, 0)};
  t0 = std::chrono::steady_clock::now();
  SiteReport inc = BuildSite(o);
  double inc_s = Since(t0);
  std::cout << "incremental render of one new build with --build (no SVG): " << inc_s << " s, " << inc.files_written
            << " files written, " << inc.files_unchanged << " unchanged" << std::endl;

  FixtureSpec after = spec;
  after.builds = 1;
  after.first_day = spec.builds + 1;
  GenerateFixtureTree(work / "results", after);
  o.builds.clear();
  t0 = std::chrono::steady_clock::now();
  SiteReport nightly = BuildSite(o);
  std::cout << "full render after one more new build, without --build (no SVG): " << Since(t0) << " s, "
            << nightly.builds_rendered << " builds rendered, " << nightly.builds_unchanged << " skipped as unchanged, "
            << nightly.files_written << " files written" << std::endl;
  o.builds = {FixtureBuildId(after, 0)};

  if (std::getenv("TORCHGAUGE_BENCH_NO_SVG")) {
    if (!std::getenv("TORCHGAUGE_BENCH_KEEP")) fs::remove_all(work);
    return 0;
  }
  o.svg = true;
  t0 = std::chrono::steady_clock::now();
  SiteReport svg = BuildSite(o);
  double svg_s = Since(t0);
  std::cout << "incremental render of one build with SVG: " << svg_s << " s, " << svg.svg_rendered << " SVGs";
  for (const auto& s : svg.skipped) std::cout << " (skipped: " << s << ")";
  std::cout << "\n";
  if (!std::getenv("TORCHGAUGE_BENCH_KEEP")) fs::remove_all(work);
  return 0;
}
