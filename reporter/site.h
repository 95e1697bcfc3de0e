// Stage 3 of the pipeline and its driver: render a results tree into a static
// site (see site_paths.h for the layout). Builds are streamed oldest first, so
// memory holds one build's results at a time and each build's trend charts
// see exactly the builds up to it: a published snapshot does not change when
// later builds arrive. Only the builds selected are written; the others are
// read from their cached summaries (builds/<id>/data/summary.json) for the
// index and trends, and their files are left untouched. Files are written only
// when their bytes change, so re-rendering the same inputs is a no-op on disk.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/aggregate.h"
#include "reporter/load.h"

namespace torchgauge::reporter {

// Extra data for the build page's "Regressions and improvements" section.
// The compare stage returns, per build, a JSON object:
//   {"baseline": "<build id>", "summary": "text",
//    "rows": [{"platform","model","config","baseline_ms","current_ms","ratio","verdict"}]}
// (all values strings or numbers; they are escaped here) or nullopt for none.
using RegressionProvider = std::function<std::optional<nlohmann::json>(const BuildView&)>;

struct SiteOptions {
  std::filesystem::path results, out;
  std::filesystem::path templates;  // Mustache templates
  std::filesystem::path static_dir; // CSS and JS copied to assets/
  std::set<std::string> builds;     // empty: every build
  bool strict = false;
  std::string site_url;             // absolute base for links in summary.md; may be empty
  bool svg = true;                  // render SVG via vl-convert
  std::string python;               // interpreter with vl-convert-python
  std::filesystem::path helper;     // reporter/vl_render.py
  int threads = 0;
  int trend_builds = 30;            // builds shown in per-model trend charts
  RegressionProvider regressions;
};

struct SiteReport {
  int builds_rendered = 0;
  size_t files_written = 0, files_unchanged = 0, bytes = 0;
  size_t figures = 0, svg_rendered = 0;
  std::vector<Problem> problems;     // skipped inputs (warnings)
  std::vector<std::string> skipped;  // outputs not produced, with why
  std::filesystem::path index;
};

// Throws StrictError (strict mode), std::runtime_error for unusable options.
SiteReport BuildSite(const SiteOptions& options);

// Defaults baked in at build time, overridable by the environment
// (TORCHGAUGE_PYTHON, TORCHGAUGE_TEMPLATES) and the command line.
std::string DefaultPython();
std::filesystem::path DefaultTemplatesDir();
std::filesystem::path DefaultStaticDir();
std::filesystem::path DefaultHelper();

}  // namespace torchgauge::reporter
