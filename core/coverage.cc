#include "core/coverage.h"

#include "core/results_tree.h"

namespace torchgauge::core {

Coverage ComputeCoverage(const std::vector<const RunResult*>& results) {
  Coverage c;
  for (const RunResult* r : results) {
    if (!r->operators || r->operators->empty()) {
      ++c.runs_without;
      continue;
    }
    ++c.runs_with_operators;
    auto& set = c.by_domain[r->model.domain];
    set.insert(r->operators->begin(), r->operators->end());
    c.all.insert(r->operators->begin(), r->operators->end());
    c.models_by_domain[r->model.domain].insert(r->model.id);
    c.all_models.insert(r->model.id);
  }
  return c;
}

Coverage ComputeCoverage(const std::vector<RunResult>& results) {
  std::vector<const RunResult*> ptrs;
  ptrs.reserve(results.size());
  for (const auto& r : results) ptrs.push_back(&r);
  return ComputeCoverage(ptrs);
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
