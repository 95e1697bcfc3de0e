// API surface coverage (the paper's headline property): the distinct ATen
// operators, with overloads, exercised per domain and in total, from the
// "operators" lists of run results.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"

namespace torchgauge::core {

struct Coverage {
  std::map<std::string, std::set<std::string>> by_domain;  // domain -> operators
  std::set<std::string> all;
  int runs_with_operators = 0;
  int runs_without = 0;  // failed or not profiled: not counted
};

Coverage ComputeCoverage(const std::vector<RunResult>& results);

// Every run result under `root` (any depth: a results root, a build or a
// platform directory), sorted by path. Unreadable files are reported in
// `problems` (file: message) and skipped.
std::vector<RunResult> LoadRunsUnder(const std::filesystem::path& root, std::vector<std::string>* problems);

}  // namespace torchgauge::core
