// The paper kit's tables, each as CSV (full precision, for scripts) and as
// LaTeX (rounded as the pages round them; every string through TexEscape):
//   Table 1: the paper's models (models/paper_table1.json) with our
//            implementation and what the build ran of it;
//   Table 2: the breakdown by domain from the platform's BreakdownSource,
//            beside the paper's A100 columns, labelled as the paper's GPU
//            figures (with a host breakdown they are not comparable parts);
//   Table 3: the platforms and their measured peaks (core/contract/peaks.h,
//            "attainable through LibTorch"), with the CPU frequency policy.
// Tables 2 and 3 are a tabular; Table 1 is a longtable (84 rows do not fit a
// page) with its caption inside.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/contract/paper_table1.h"
#include "reporter/paper/build_tables.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

// Table 1's model list is core's (core/contract/paper_table1.h).
using PaperModels = core::PaperTable1;

// Per model id: its runs over `platforms`, how many ended ok, and its domain
// and task as the runs record them (Table 1's state column, the Table 1 page).
struct ModelRuns {
  int runs = 0, ok = 0;
  std::string domain, task;
};
std::map<std::string, ModelRuns> RunsByModel(const std::vector<const PlatformView*>& platforms);

// `platforms`: the kit's platforms, whose runs give each model's state.
// `caption` goes into the longtable.
CsvTex PaperTable1(const PaperModels& models, const std::vector<const PlatformView*>& platforms,
                   const PaperTable2& paper, const std::string& caption);
// Throws std::invalid_argument when `p` has no breakdown (kNone).
CsvTex PaperTable2Tables(const PlatformView& p, const PaperTable2& paper);
// The platforms with measured peaks; the caller leaves Table 3 out when none has.
CsvTex PaperTable3(const std::vector<const PlatformView*>& platforms);

}  // namespace torchgauge::reporter
