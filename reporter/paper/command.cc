#include "reporter/paper/command.h"

#include <exception>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "reporter/output/assets.h"
#include "reporter/paper/kit.h"

namespace torchgauge::reporter {

int RunPaperCommand(const PaperKitOptions& o, std::ostream& out, std::ostream& err) {
  PaperKitReport r;
  try {
    r = WritePaperKit(o);
  } catch (const std::exception& e) {
    err << "torchgauge-report paper: " << e.what() << "\n";
    return kPaperBadInput;
  }
  out << "Paper kit for build " << o.build << " in " << o.out.string() << ": " << r.files.size()
      << " files. Figures 1-4 and Table 2: platform " << r.primary << ".\n";
  for (const auto& f : r.files) out << "  " << f << "\n";
  for (const auto& l : r.left_out) out << "Left out: " << l.item << ": " << l.reason << ".\n";
  if (!r.pdf_skipped.empty()) {
    out << "PDFs not rendered (" << r.pdf_note << "); their Vega-Lite specs are written and paper.tex leaves them out:";
    for (const auto& p : r.pdf_skipped) out << " " << p;
    out << "\n";
  }
  return kPaperOk;
}

void AddPaperCommand(CLI::App& app) {
  auto opts = std::make_shared<PaperKitOptions>();
  auto width = std::make_shared<std::string>("single");
  auto no_pdf = std::make_shared<bool>(false);
  opts->python = DefaultPython();
  opts->helper = DefaultPaperHelper();
  CLI::App* cmd = app.add_subcommand(
      "paper",
      "Write one build's paper kit: Figures 1-5 as PDF + Vega-Lite, Tables 1-3 as LaTeX + CSV, paper.tex "
      "and MANIFEST.json; exit 0 ok, 2 bad input");
  cmd->add_option("--results", opts->results, "The results tree")->required();
  cmd->add_option("--build", opts->build, "The build id")->required();
  cmd->add_option("--platform", opts->platforms,
                  "Platforms to include (repeatable; default all). The first gives Figures 1-4 and Table 2 and is "
                  "Figure 5's reference (default: the first with a GPU breakdown)");
  cmd->add_option("--width", *width, "Figure width: single (3.3 in column) or double (7 in)")
      ->check(CLI::IsMember({"single", "double"}))
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "Output folder (created; earlier kit files not written again are removed)")
      ->required();
  cmd->add_option("--python", opts->python, "Python with vl-convert-python (env TORCHGAUGE_PYTHON)")
      ->capture_default_str();
  cmd->add_flag("--no-pdf", *no_pdf, "Write the Vega-Lite specs without rendering PDFs");
  cmd->callback([opts, width, no_pdf] {
    opts->width = PaperWidthFromName(*width);
    opts->pdf = !*no_pdf;
    const int code = RunPaperCommand(*opts, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace torchgauge::reporter
