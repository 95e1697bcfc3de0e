// Stage 3 of the pipeline and its driver: render a results tree into a static
// site (see site_paths.h for the layout). Builds are streamed oldest first, so
// memory holds one build's results at a time and each build's trend charts
// see exactly the builds up to it: a published snapshot does not change when
// later builds arrive. Only the builds selected are written; the others are
// read from their cached summaries (builds/<id>/data/summary.json) for the
// index and trends, and their files are left untouched. Files are written only
// when their bytes change, so re-rendering the same inputs is a no-op on disk.
// Each build is compared with the builds before it only, so that too is fixed
// once published. A retention policy (max_builds, since; site_retention.h)
// deletes the older snapshots but keeps them in every history page.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/compare.h"
#include "reporter/aggregate.h"
#include "reporter/load.h"

namespace torchgauge::reporter {

struct SiteOptions {
  std::filesystem::path results, out;
  std::filesystem::path templates;   // Mustache templates
  std::filesystem::path static_dir;  // CSS and JS copied to assets/
  std::set<std::string> builds;      // empty: every build
  bool strict = false;
  // A full render (no `builds`) skips a build whose fingerprint (its
  // results, the results its pages read, the reporter, templates and
  // options) matches the one stored when it was last rendered; `force`
  // renders every build regardless.
  bool force = false;
  std::string site_url;          // absolute base for links in summary.md; may be empty
  bool svg = true;               // render SVG via vl-convert
  std::string python;            // interpreter with vl-convert-python
  std::filesystem::path helper;  // reporter/vl_render.py
  int threads = 0;
  int trend_builds = 30;  // builds shown in per-model trend charts
  // Regressions and improvements: each rendered build is compared with the
  // previous build on the same platform (core::CompareWithHistory, the rules
  // of `torchgauge-report compare`). The build page shows the result and
  // builds/<id>/compare.{html,md} hold the full report; the index lists the
  // flagged changes of every build.
  bool compare = true;
  core::CompareOptions compare_options;
  // The platform each build page compares the others with (Figure 5,
  // platform_ratio.h); nullopt: the first platform id of each build. An id
  // that no build has is an error; a build without it uses its first.
  std::optional<std::string> reference_platform;
  // Each rendered build gets builds/<id>/paper-kit-<id>.zip (site_paper_kit.h)
  // and its page links it; without it no kit is made and old zips of the
  // builds rendered are removed.
  bool paper_kit = false;
  // Retention (site_retention.h): keep the pages of the newest `max_builds`
  // builds and of those started on or after `since` (YYYY-MM-DD, UTC);
  // delete the older builds' snapshots but keep them in every history page.
  std::optional<int> max_builds;
  std::optional<std::string> since;
};

struct SiteReport {
  int builds_rendered = 0;
  int builds_unchanged = 0;   // skipped: fingerprint unchanged
  int builds_pruned = 0;      // under the retention policy: no pages, history only
  int snapshots_deleted = 0;  // pruned builds whose builds/<id>/ this render deleted
  int pruned_reloaded = 0;    // pruned builds whose summary had to be made from their results
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
