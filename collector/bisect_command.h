// `torchgauge-collect bisect`: finds the first bad revision in an ordered
// candidate list. At each step it runs the user's command for a revision
// (build or install it), measures only the affected runs with a collector,
// and judges good or bad with core/compare.h's rules against the good
// endpoint. The search itself is core/bisect.h.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/compare.h"

namespace torchgauge::collector {

struct BisectCommandOptions {
  std::string good, bad;
  std::filesystem::path candidates_file;  // one revision per line, oldest first
  std::string command;                    // shell command with {rev}
  std::string collector;                  // collector to measure with; {rev} allowed; default: this binary
  std::vector<std::string> collect_args;  // run filters: --model ... --mode ... etc.
  std::filesystem::path work_dir;         // results of every step and the log
  core::CompareOptions compare;
  bool verify_bad = false;
};

// Returns the process exit code: 0 found, 1 not found, 2 bad input.
int RunBisect(const BisectCommandOptions& options);

}  // namespace torchgauge::collector
