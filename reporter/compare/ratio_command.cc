#include "reporter/compare/ratio_command.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/io/json_io.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/results/load.h"
#include "reporter/results/platform_ratio.h"

namespace torchgauge::reporter {

namespace {

std::string Cell(const std::string& s) { return MarkdownEscape(s); }

std::string RowNote(const RatioRow& r, const PlatformRatios& p) {
  const std::string note = RatioNote(r, p.reference, p.other);
  if (note.empty()) return Dash();
  return r.precision_check == PrecisionCheck::kDiffers ? "**" + Cell(note) + "**" : Cell(note);
}

std::string SummaryTable(const PlatformRatios& r) {
  const std::string a = Cell(r.reference), b = Cell(r.other);
  std::string md = "| Mode | Runs compared | " + b + " / " + a +
                   " (geomean) | Effective precision differs | With a noisy run |\n"
                   "|---|--:|--:|--:|--:|\n";
  for (const auto& s : r.summaries) {
    md += "| " + Cell(s.mode) + " | " + std::to_string(s.pairs) + " | " + Num(s.geomean, "%.3f") + " | " +
          PrecisionDiffersText(s) + " | " + std::to_string(s.noisy) + " |\n";
  }
  return md + "\n";
}

std::string RowsTable(const PlatformRatios& r) {
  const std::string a = Cell(r.reference), b = Cell(r.other);
  std::string md = "| Model | Mode | Backend | Precision | Batch | " + a + " (ms) | " + b + " (ms) | " + b + " / " + a +
                   " | Effective precision, " + a + " | Effective precision, " + b +
                   " | Note |\n"
                   "|---|---|---|---|--:|--:|--:|--:|---|---|---|\n";
  for (const auto& x : r.rows) {
    md += "| " + Cell(x.model) + " | " + Cell(x.mode) + " | " + Cell(x.backend) + " | " + Cell(x.precision) + " | " +
          std::to_string(x.batch_size) + " | " + OptMs(x.reference_ms) + " | " + OptMs(x.other_ms) + " | " +
          (x.ratio ? Num(*x.ratio, "%.3f") : Dash()) + " | " + Cell(x.reference_precision.value_or("not recorded")) +
          " | " + Cell(x.other_precision.value_or("not recorded")) + " | " + RowNote(x, r) + " |\n";
  }
  return md;
}

}  // namespace

std::string RenderRatioMarkdown(const PlatformRatios& r, const std::string& build) {
  std::string md = "## " + Cell(r.title) + "\n\n";
  md += "Build " + Cell(build) + ": median step time on " + Cell(r.other) + " (" + Cell(r.other_label) +
        ") over the median on " + Cell(r.reference) + " (" + Cell(r.reference_label) +
        ") for the same model, mode, backend, requested precision and batch size; below 1, " + Cell(r.other) +
        " is faster. The effective precision is what each run's precision flags say the step ran in (parameter "
        "dtype, autocast, TF32 allowed for matmuls and convolutions on a GPU); where the two differ, the ratio "
        "compares precisions as much as platforms.\n\n";
  if (r.summaries.empty()) {
    md += "No run was measured on both platforms.\n\n";
  } else {
    md += SummaryTable(r);
  }
  if (!r.rows.empty()) md += RowsTable(r) + "\n";
  if (r.only_reference + r.only_other > 0) {
    md += "Not compared: " + std::to_string(r.only_reference) + " run(s) on " + Cell(r.reference) + " only, " +
          std::to_string(r.only_other) + " on " + Cell(r.other) + " only.\n";
  }
  while (md.size() >= 2 && md.ends_with("\n\n")) md.pop_back();
  return md;
}

namespace {

// The build's two platforms, loaded; throws std::invalid_argument naming
// what is missing and what there is.
BuildResults LoadBuild(const RatioCommandOptions& o, std::ostream& err) {
  if (o.a == o.b) throw std::invalid_argument("--a and --b are the same platform '" + o.a + "'");
  std::vector<Problem> scan;
  const std::vector<std::string> ids = ListBuildIds(o.results, &scan);
  const std::set<std::string> builds(ids.begin(), ids.end());
  if (!core::IsSafeId(o.build) || !builds.count(o.build)) {
    std::string have;
    for (const auto& b : builds) have += (have.empty() ? "" : ", ") + b;
    throw std::invalid_argument("--build '" + o.build + "': no such build in " + o.results +
                                " (available: " + (have.empty() ? "none" : have) + ")");
  }
  LoadOptions lo;
  lo.only_builds = {o.build};
  LoadedResults loaded = LoadResults(o.results, lo);
  BuildResults b = std::move(loaded.builds.at(0));
  std::set<std::string> platforms;
  for (const auto& p : b.platforms) platforms.insert(p.manifest.platform_id);
  const std::string where = "build " + o.build;
  RequirePlatform("--a", o.a, platforms, where);
  RequirePlatform("--b", o.b, platforms, where);
  for (const auto& p : b.platforms) {
    if (p.manifest.platform_id != o.a && p.manifest.platform_id != o.b) continue;
    for (const auto& pr : p.problems) err << "torchgauge-report ratio: warning: skipped " << pr.ToString() << "\n";
  }
  return b;
}

std::vector<const core::RunResult*> Runs(const PlatformResults& p) {
  std::vector<const core::RunResult*> runs;
  for (const auto& r : p.runs) runs.push_back(&r);
  return runs;
}

}  // namespace

int RunRatioCommand(const RatioCommandOptions& o, std::ostream& out, std::ostream& err) {
  PlatformRatios r;
  try {
    const BuildResults b = LoadBuild(o, err);
    auto find = [&](const std::string& id) -> const PlatformResults& {
      return *std::find_if(b.platforms.begin(), b.platforms.end(),
                           [&](const PlatformResults& p) { return p.manifest.platform_id == id; });
    };
    const PlatformResults& a = find(o.a);
    const PlatformResults& other = find(o.b);
    r = ComparePlatforms(a.manifest, Runs(a), other.manifest, Runs(other));
  } catch (const std::exception& e) {
    err << "torchgauge-report ratio: " << e.what() << "\n";
    return kRatioBadInput;
  }
  const std::string md = RenderRatioMarkdown(r, o.build);
  try {
    if (!o.markdown.empty()) core::WriteFileAtomic(o.markdown, md);
  } catch (const std::exception& e) {
    err << "torchgauge-report ratio: cannot write " << o.markdown << ": " << e.what() << "\n";
    return kRatioBadInput;
  }
  if (o.json) {
    out << ToJson(r).dump(2) << "\n";
  } else if (o.markdown.empty()) {
    out << md;
  } else {
    out << r.title << "\n";
  }
  return kRatioOk;
}

void AddRatioCommand(CLI::App& app) {
  auto opts = std::make_shared<RatioCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("ratio",
                         "Compare two platforms of a build: per run, the time ratio B / A with each side's effective "
                         "precision (the paper's Figure 5); exit 0 ok, 2 bad input");
  cmd->add_option("--results", opts->results, "The results tree")->capture_default_str();
  cmd->add_option("--build", opts->build, "The build id")->required();
  cmd->add_option("--a", opts->a, "The reference platform id (the ratio's denominator)")->required();
  cmd->add_option("--b", opts->b, "The platform compared with it (the numerator)")->required();
  cmd->add_option("--markdown", opts->markdown, "Write the Markdown table here (default: print it)");
  cmd->add_flag("--json", opts->json, "Print the comparison as JSON");
  cmd->callback([opts] {
    const int code = RunRatioCommand(*opts, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace torchgauge::reporter
