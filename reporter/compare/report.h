// Reports of a build comparison (core/analysis/compare.h): a Markdown body ready for
// a GitHub issue, a self-contained HTML page for the site, and the JSON for
// tools (core::ToJson). Markdown and HTML are rendered from one document
// model so they carry the same content; only the syntax differs.
//
// Markdown stays under ReportOptions::max_markdown_chars (GitHub's issue
// body limit is 65,536): long tables are cut with a link to the full page.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"
#include "reporter/output/paths.h"

namespace torchgauge::reporter {

struct ReportOptions {
  // The published site's URL, for links to its pages (output/paths.h computes
  // them). Empty: links are relative from `page`, or there are none.
  std::string site_url;
  // The site page this report is written as (builds/<build>/compare.html),
  // when the site writes it.
  std::optional<Target> page;
  std::size_t max_markdown_chars = 65536 - 536;  // headroom under GitHub's limit
};

// The site URL a report links under: `url` when it is http(s) or a path
// ("/...", "./..."), else "" (no links; a javascript: URL never becomes one).
std::string SafeSiteUrl(const std::string& url);

// One line, no markup: "[TorchGauge] 2 regressions in b2 vs b1 (cpu-x86_64-2c)".
std::string ComparisonTitle(const core::Comparison& c);

// torchgauge-collect run --model '^<model>$' --mode <mode> --precision <p> --batch-size <b> --device <dev>
// (plus --backend when it is not eager).
// The collector command that measures one run again with the new run's
// settings (suite sizes, warm-up, repetitions, processes, threads).
std::string ReproduceCommand(const core::RunKey& key, int64_t batch_size, const std::string& device,
                             const std::optional<core::RunSettings>& settings);

// The "Builds and environments" rows of a platform's manifest (ToJson of the
// typed manifest), in the order of EnvironmentNames(): started, collector,
// LibTorch, torch commit, runtime, device, driver, CPU, host; "" where unknown. The site's
// compare page (compare/browser_page.h) carries them, so its report reads the
// same as this one.
std::vector<std::string> EnvironmentValues(const nlohmann::json& manifest);
const std::vector<std::string>& EnvironmentNames();

std::string RenderCompareMarkdown(const core::Comparison& c, const ReportOptions& options);
std::string RenderCompareHtml(const core::Comparison& c, const ReportOptions& options);

}  // namespace torchgauge::reporter
