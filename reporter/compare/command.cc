#include "reporter/compare/command.h"

#include <exception>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/analysis/compare_cli.h"
#include "core/io/json_io.h"
#include "reporter/compare/report.h"

namespace torchgauge::reporter {

int RunCompareCommand(const CompareCommandOptions& o, std::ostream& out, std::ostream& err) {
  core::Comparison c;
  try {
    core::CompareRequest req;
    req.results = o.results;
    req.base = o.base;
    req.new_build = o.new_build;
    req.platform = o.platform;
    req.options = o.compare;
    c = core::CompareBuilds(req);
  } catch (const core::FileError& e) {
    err << "torchgauge-report compare: " << e.file().string() << (e.field().empty() ? "" : " (" + e.field() + ")")
        << ": " << e.what() << "\n";
    return kCompareBadInput;
  } catch (const std::exception& e) {
    err << "torchgauge-report compare: " << e.what() << "\n";
    return kCompareBadInput;
  }
  ReportOptions ro;
  ro.site_url = o.site_url;
  while (!ro.site_url.empty() && ro.site_url.back() == '/') ro.site_url.pop_back();
  try {
    if (!o.markdown.empty()) core::WriteFileAtomic(o.markdown, RenderCompareMarkdown(c, ro));
    if (!o.json.empty()) core::WriteFileAtomic(o.json, core::ToJson(c).dump(2) + "\n");
    if (!o.html.empty()) core::WriteFileAtomic(o.html, RenderCompareHtml(c, ro));
  } catch (const std::exception& e) {
    err << "torchgauge-report compare: cannot write a report: " << e.what() << "\n";
    return kCompareBadInput;
  }
  if (o.markdown.empty() && o.json.empty() && o.html.empty()) {
    out << RenderCompareMarkdown(c, ro);
  } else {
    out << ComparisonTitle(c) << "\n";
  }
  if (c.HasRegression()) return kCompareRegressed;
  // Too many noisy runs, or counts that cannot reach alpha: either way the
  // comparison cannot say that nothing regressed; the JSON's outcome says which.
  return c.Inconclusive() || c.CannotTell() ? kCompareInconclusive : kCompareOk;
}

void AddCompareCommand(CLI::App& app) {
  auto opts = std::make_shared<CompareCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("compare",
                         "Compare a build with a baseline; exit 0 nothing regressed, 1 regression, 2 bad input, "
                         "3 no regression but the comparison cannot say that nothing regressed: inconclusive (too "
                         "many noisy runs) or cannot tell (too few processes or samples to reach --alpha: a change "
                         "past its threshold untestable, or every run untestable); the JSON's outcome says which");
  cmd->add_option("--new", opts->new_build, "The new build id")->required();
  cmd->add_option("--base", opts->base,
                  "The baseline build id (default: the previous build by manifest started_at, then id)");
  cmd->add_option("--results", opts->results, "The results tree")->capture_default_str();
  cmd->add_option("--platform", opts->platform, "Platform id (default: every platform of the new build)");
  core::AddCompareOptions(*cmd, opts->compare);
  cmd->add_option("--site-url", opts->site_url, "Base URL of the published site, for links");
  cmd->add_option("--markdown", opts->markdown, "Write the GitHub issue body here");
  cmd->add_option("--json", opts->json, "Write the comparison as JSON here");
  cmd->add_option("--html", opts->html, "Write a self-contained HTML page here");
  cmd->callback([opts] {
    const int code = RunCompareCommand(*opts, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace torchgauge::reporter
