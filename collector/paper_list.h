// `torchgauge-collect list --paper`: the paper's Table 1 (core/contract/paper_table1.h)
// with our state per model, checked against the model registry so that the
// table and the code cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/contract/paper_table1.h"
#include "models/workload.h"

namespace torchgauge::collector {

// Every disagreement between the table and the registry, one sentence each:
// a native entry whose id is not registered (or is hidden, or in another
// domain, or registered under another paper name), a registered model the
// table does not list, a planned entry that a registered model already
// implements. Empty when they agree.
std::vector<std::string> PaperTableProblems(const core::PaperTable1& table,
                                            const std::vector<models::ModelInfo>& registry);

// The table with per-domain counts, as text (printed) or JSON.
std::string PaperTableText(const core::PaperTable1& table);
nlohmann::json PaperTableJson(const core::PaperTable1& table);

}  // namespace torchgauge::collector
