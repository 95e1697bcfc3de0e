// `torchgauge-collect bisect`: finds the first bad revision in an ordered
// candidate list. At each step it runs the user's command for a revision
// (build or install it), measures only the affected runs with a collector,
// and judges good or bad with core/analysis/compare.h's rules against the good
// endpoint. The search itself is core/analysis/bisect.h.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"

namespace torchgauge::collector {

// The runs a bisection measures at each revision.
struct BisectRuns {
  std::string model;  // regex
  std::string mode = "train";
  std::string backend = "eager";
  std::string precision;  // empty: the suite's
  std::string device = "auto";
  std::optional<int> repeat;  // empty: core::RunSettings' default
};

struct BisectCommandOptions {
  std::string good, bad;
  std::filesystem::path candidates_file;  // one revision per line, oldest first
  std::string command;                    // shell command with {rev}
  std::string collector;                  // collector to measure with; {rev} allowed
  BisectRuns runs;
  std::vector<std::string> collect_args;           // extra arguments for `run`
  std::filesystem::path work_dir = "bisect-work";  // results of every step and the log
  core::CompareOptions compare;
  bool verify_bad = false;
};

// The `run` arguments that measure o.runs (then o.collect_args).
std::vector<std::string> CollectArgs(const BisectCommandOptions& o);

// Returns the process exit code: 0 found, 1 not found, 2 bad input.
int RunBisect(const BisectCommandOptions& options);

}  // namespace torchgauge::collector
