#include "core/coverage.h"

#include "core/results_tree.h"

namespace torchgauge::core {

Coverage ComputeCoverage(const std::vector<RunResult>& results) {
  Coverage c;
  for (const auto& r : results) {
    if (!r.operators || r.operators->empty()) {
      ++c.runs_without;
      continue;
    }
    ++c.runs_with_operators;
    auto& set = c.by_domain[r.model.domain];
    for (const auto& op : *r.operators) {
      set.insert(op);
      c.all.insert(op);
    }
  }
  return c;
}

std::vector<RunResult> LoadRunsUnder(const std::filesystem::path& root, std::vector<std::string>* problems) {
  std::vector<Problem> found;
  std::vector<RunResult> runs = LoadRunsIn(root, &found);
  if (problems) {
    for (const auto& p : found) problems->push_back(p.ToString());
  }
  return runs;
}

}  // namespace torchgauge::core
