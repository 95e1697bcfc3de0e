// API surface coverage (the paper's headline property): the distinct ATen
// operators, with overloads, exercised per domain and in total, from the
// "operators" lists of run results.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/contract/result.h"

namespace torchgauge::core {

// The one coverage computation: `torchgauge-collect coverage` prints it and
// the site's API coverage table (reporter ApiCoverage) shows it. A run counts
// when it carries a non-empty operator list.
struct Coverage {
  std::map<std::string, std::set<std::string>> by_domain;         // domain -> operators
  std::map<std::string, std::set<std::string>> models_by_domain;  // domain -> model ids with operator data
  std::set<std::string> all;
  std::set<std::string> all_models;
  int runs_with_operators = 0;
  int runs_without = 0;  // failed or not profiled: not counted
};

Coverage ComputeCoverage(const std::vector<const RunResult*>& results);
Coverage ComputeCoverage(const std::vector<RunResult>& results);

// Every run result under `root` (a results root, a build or a platform
// directory), read by the one reader (core/contract/results_tree.h: LoadRunsIn), so
// coverage refuses exactly the files validate refuses. Each refused file is
// reported in `problems` ("file: field 'x': message") and skipped.
std::vector<RunResult> LoadRunsUnder(const std::filesystem::path& root, std::vector<std::string>* problems);

}  // namespace torchgauge::core
