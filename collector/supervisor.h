// The supervisor runs a plan: one child process per run (this same binary,
// `torchgauge-collect worker`), each with a timeout. A child that is killed,
// crashes or hangs gets a result written for it (crashed/timeout) and the
// suite goes on. Results are written atomically; --resume skips runs that
// already have a result; Ctrl-C stops the current child and keeps every
// finished result. Progress goes to a Progress (collector/progress.h).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collector/progress.h"
#include "collector/run_spec.h"
#include "core/result.h"

namespace torchgauge::collector {

struct SupervisorOptions {
  std::filesystem::path platform_dir;
  std::filesystem::path self_exe;  // the collector binary, re-executed as the worker
  bool resume = false;
  bool retry_failed = false;       // with resume: re-run results that are not ok/unsupported
  Progress* progress = nullptr;    // required
};

struct SuiteOutcome {
  std::map<std::string, int> counts;  // status -> runs
  std::vector<core::RunResult> results;
  int skipped = 0;
  bool interrupted = false;
};

SuiteOutcome RunPlan(const std::vector<RunSpec>& plan, const SupervisorOptions& options);

struct ChildOutcome {
  bool timed_out = false;
  int status = 0;  // waitpid status
};
// Runs `argv` (argv[0]: the executable's path) as a child in its own process
// group, stdout and stderr to `log_file`, killed (the whole group) after
// `timeout_s` or when a running plan is interrupted. The workers and the
// per-collection probe both run this way, so a crash loses nothing.
ChildOutcome RunChild(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                      double timeout_s);

}  // namespace torchgauge::collector
