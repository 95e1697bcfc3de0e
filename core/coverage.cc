#include "core/coverage.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/json_io.h"

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
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(root)) throw FileError(root, "", "no such directory");
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    if (e.path().parent_path().filename() != "runs") continue;
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<RunResult> out;
  for (const auto& f : files) {
    try {
      out.push_back(RunResultFromJson(ReadJsonFile(f), f));
    } catch (const std::exception& e) {
      if (problems) problems->push_back(e.what());
    }
  }
  return out;
}

}  // namespace torchgauge::core
