#include "core/analysis/coverage.h"

#include <string_view>
#include <unordered_set>

#include "core/contract/results_tree.h"

namespace torchgauge::core {

Coverage ComputeCoverage(const std::vector<const RunResult*>& results) {
  // Hash sets of views into the results while counting (a run's ~30
  // operators each went into two ordered sets of strings, most of them
  // already there); the ordered sets are made once at the end.
  std::map<std::string, std::unordered_set<std::string_view>> by_domain;
  std::unordered_set<std::string_view> all;
  Coverage c;
  for (const RunResult* r : results) {
    if (!r->operators || r->operators->empty()) {
      ++c.runs_without;
      continue;
    }
    ++c.runs_with_operators;
    auto& set = by_domain[r->model.domain];
    for (const std::string& op : *r->operators) {
      set.insert(op);
      all.insert(op);
    }
    c.models_by_domain[r->model.domain].insert(r->model.id);
    c.all_models.insert(r->model.id);
  }
  for (const auto& [domain, ops] : by_domain) c.by_domain[domain] = std::set<std::string>(ops.begin(), ops.end());
  c.all = std::set<std::string>(all.begin(), all.end());
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
