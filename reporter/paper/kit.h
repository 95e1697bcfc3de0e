// The paper kit: one build's figures and tables as publication files in one
// folder (`torchgauge-report paper`, paper/command.h):
//   fig1_train_breakdown, fig2_eval_breakdown   (Figures 1/2)
//   fig3_train_compilers, fig4_eval_compilers   (Figures 3/4)
//   fig5_platform_ratios                        (Figure 5; one per compared pair)
//     each as .vl.json (the restylable spec) and .pdf (vl-convert);
//   table1_models, table2_breakdown, table3_peaks as .tex and .csv;
//   paper.tex, which includes them all with captions, and MANIFEST.json,
//   which lists every file with its SHA-256 and the kit's provenance.
// Figures 1-4 and Table 2 show one platform (the first --platform, or the
// first with a GPU breakdown); it is Figure 5's reference. A figure or table
// whose data the build did not measure is left out, with the reason.
// Everything is a function of the results and the options: the same inputs
// give byte-identical files (the PDFs' dates are the build's start).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "reporter/paper/theme.h"

namespace torchgauge::reporter {

struct PaperKitOptions {
  std::filesystem::path results, out;
  std::string build;
  std::vector<std::string> platforms;  // empty: every platform of the build
  PaperWidth width = PaperWidth::kSingle;
  std::string python;            // a Python with vl-convert-python
  std::filesystem::path helper;  // reporter/paper/paper_render.py
  bool pdf = true;               // false: write the specs only
};

struct KitLeftOut {
  std::string item, reason;  // "Figure 5 (fig5_platform_ratios)", "needs two platforms ..."
};

struct PaperKitReport {
  std::string primary;             // the platform of Figures 1-4 and Table 2
  std::vector<std::string> files;  // written, relative to `out`, sorted (MANIFEST.json last)
  std::vector<KitLeftOut> left_out;
  std::vector<std::string> pdf_skipped;  // PDFs not rendered (their specs are written)
  std::string pdf_note;                  // why they were not
};

// Throws std::invalid_argument naming an unknown build or platform (and the
// ones there are), std::runtime_error when a file cannot be written.
PaperKitReport WritePaperKit(const PaperKitOptions& options);

}  // namespace torchgauge::reporter
