// Comparing any two builds in the browser (compare.html#base=<a>&new=<b>):
// the page's data and its shell. The rules run in site/compare.js, a port of
// core/analysis/compare.h's CompareRunSets for a baseline of one build (window 1,
// persist 1, as `torchgauge-report compare --base A --new B`), and its
// report is the one reporter/compare/report.h renders, in Markdown and as
// HTML tables. The browser test compares the page's result and Markdown with
// CompareBuilds and RenderCompareMarkdown on the same pair, field by field
// and line by line, so the two implementations cannot drift apart unseen.
//
//   builds/<id>/data/compare.js  per platform of the build: the manifest's
//       environment rows (EnvironmentValues) and every run as the rules read
//       it: the step-time samples at full precision (the test ranks them, so
//       no rounding), the per-process medians, samples per step where the
//       run reports throughput, peak memory, status, reason, noise verdict
//       and the settings the reproduction command repeats.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/analysis/compare.h"
#include "reporter/output/mustache_fwd.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

// builds/<id>/data/compare.js's content.
nlohmann::json BuildCompareData(const BuildView& v);
// "build/<id>/compare": the key the page looks the data up by.
std::string BuildCompareKey(const std::string& build);

// The template data of compare.html (templates/compare.md.mustache): the
// site's comparison options (threshold, rules, alpha, memory floor), its
// public URL for the Markdown's links ("" gives none, as `compare` without
// --site-url), and the reporter's version for the report's footer.
mu::data ComparePageData(const core::CompareOptions& options, const std::string& site_url);

}  // namespace torchgauge::reporter
