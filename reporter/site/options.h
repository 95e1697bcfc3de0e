// The options of one site render (torchgauge-report build): where the
// results and the output are, which builds, and every switch that changes
// the pages. Apart from the driver (site.h) so that the driver's parts
// (retention, change detection, the page writer, the paper kit download)
// can take the options without including the driver they serve.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "core/analysis/compare.h"

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
  std::filesystem::path helper;  // reporter/output/vl_render.py
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
  // results/platform_ratio.h); nullopt: the first platform id of each build. An id
  // that no build has is an error; a build without it uses its first.
  std::optional<std::string> reference_platform;
  // Each rendered build gets builds/<id>/paper-kit-<id>.zip (site/paper_kit_zip.h)
  // and its page links it; without it no kit is made and old zips of the
  // builds rendered are removed.
  bool paper_kit = false;
  // Retention (site/retention.h): keep the pages of the newest `max_builds`
  // builds and of those started on or after `since` (YYYY-MM-DD, UTC);
  // delete the older builds' snapshots but keep them in every history page.
  std::optional<int> max_builds;
  std::optional<std::string> since;
};

}  // namespace torchgauge::reporter
