// The tables a paper author pastes: per platform of a build, the runs, the
// Table 2 reproduction (where a GPU or host breakdown exists) and the API coverage, each as CSV (full
// precision, for scripts) and as a LaTeX tabular (as the pages round them).
// Written under builds/<id>/tables/ (output/paths.h).
#pragma once

#include <string>

#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

class SiteWriter;

struct CsvTex {
  std::string csv, tex;
};

CsvTex RunsTable(const std::string& build, const PlatformView& p);
CsvTex Table2Table(const std::string& build, const PlatformView& p, const PaperTable2& paper);
CsvTex CoverageTable(const PlatformView& p, const PaperTable2& paper);

// Writes every table of every platform of `v`.
void WriteTables(SiteWriter& w, const BuildView& v, const PaperTable2& paper);

}  // namespace torchgauge::reporter
