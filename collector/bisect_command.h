// `torchgauge-collect bisect`: finds the first bad revision in an ordered
// candidate list. At each step it runs the user's command for a revision
// (build or install it), measures only the affected runs with a collector,
// and compares them with the good endpoint by core/analysis/compare.h's
// rules. The search itself is core/analysis/bisect.h.
//
// Each step's verdict has three values, as Pinpoint's: *different* (a
// regression: the revision is bad), *same* (every compared metric under
// its threshold, or better: good) and *unknown* (over the threshold but not
// significant, or too few samples to reach alpha). Unknown measures both the
// revision and the good endpoint again with twice the worker processes, up
// to --max-processes; a revision still unknown then is skipped.
//
// With --alert ID and the site's alerts.json (core/contract/alerts_file.h),
// the range and the runs come from the alert: good = the alert's baseline
// build, bad = its build, the models, mode, backend and precision of its
// largest run's configuration. With --results, the culprit is recorded in
// <results>/culprits.json, where the reporter shows it on the alert page.
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
  // Worker processes per measurement at first: the comparison's unit is the
  // process, and 4 against 4 is the fewest that can reach p < 0.05.
  int processes = 4;
  int max_processes = 16;  // an unknown verdict doubles them up to this
  std::string metric;      // judge only this metric (--metric, or an alert's); empty: every one
  // --improvement: look for the first revision that is better than --good
  // (a speed-up, a smaller peak), where bisect otherwise looks for the first
  // that is worse. A release history's improvements are bisected this way.
  bool improvement = false;
  std::string alert_id;                // --alert: the culprit is recorded under this id
  std::filesystem::path results_root;  // --results: where culprits.json goes
};

// Fills the options an alert decides (core::AlertRecord): good and bad
// where empty, the model regex, and the mode, backend and precision of its
// largest run unless `keep_selection` (the user gave them).
void ApplyAlert(BisectCommandOptions& o, const std::string& alert_id, const std::filesystem::path& alerts_file,
                bool keep_selection);

// The `run` arguments that measure o.runs (then o.collect_args).
std::vector<std::string> CollectArgs(const BisectCommandOptions& o);

// Returns the process exit code: 0 found, 1 not found, 2 bad input.
int RunBisect(const BisectCommandOptions& options);

}  // namespace torchgauge::collector
