// Helpers shared by the site integration tests (reporter_site_test): a fresh
// scratch directory, a file's bytes, and the options of a test render.
#pragma once

#include <filesystem>
#include <string>

#include "reporter/output/writer.h"
#include "reporter/site/site.h"

namespace torchgauge::reporter::test {

// build/reporter_test_tmp/<name>, emptied.
inline std::filesystem::path ScratchDir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

// A render of `results` into `out` with the source tree's templates, assets
// and helper, without SVG, on two threads.
inline SiteOptions TestSiteOptions(const std::filesystem::path& results, const std::filesystem::path& out) {
  SiteOptions o;
  o.results = results;
  o.out = out;
  o.templates = std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "templates";
  o.static_dir = std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "site";
  o.helper = std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "output" / "vl_render.py";
  o.python = TORCHGAUGE_PYTHON;
  o.svg = false;
  o.threads = 2;
  return o;
}

}  // namespace torchgauge::reporter::test
