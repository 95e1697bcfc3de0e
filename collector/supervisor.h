// The supervisor runs a plan: one child process per run (this same binary,
// `torchgauge-collect worker`), each with a timeout. A child that is killed,
// crashes or hangs gets a result written for it (crashed/timeout) and the
// suite goes on. Results are written atomically; --resume skips runs that
// already have a result; Ctrl-C stops the current child and keeps every
// finished result. Progress goes to a Progress (collector/progress.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collector/progress.h"
#include "collector/run_spec.h"
#include "core/contract/result.h"

namespace torchgauge::collector {

struct SupervisorOptions {
  std::filesystem::path platform_dir;
  std::filesystem::path self_exe;  // the collector binary, re-executed as the worker
  bool resume = false;
  bool retry_failed = false;     // with resume: re-run results that are not ok/unsupported
  Progress* progress = nullptr;  // required
  // Counted runs (settings.measure "counted"): the Valgrind that runs them
  // (collector/counted.h), recorded in each result.
  std::string valgrind_version;
};

struct SuiteOutcome {
  std::map<std::string, int> counts;  // status -> runs
  std::vector<core::RunResult> results;
  int skipped = 0;
  bool interrupted = false;
};

SuiteOutcome RunPlan(const std::vector<RunSpec>& plan, const SupervisorOptions& options);

struct ChildOutcome {
  bool timed_out = false;  // killed by us at the timeout (or on interrupt: see RunChild)
  int status = 0;          // waitpid status
  // How many processes the kernel's out-of-memory killer killed, machine-wide
  // (/proc/vmstat oom_kill), while the child ran; nullopt where unreadable.
  std::optional<int64_t> oom_kills;
};
// /proc/vmstat's oom_kill: processes the kernel's OOM killer has killed
// since boot (Linux 4.13+); nullopt where the counter is not there.
std::optional<int64_t> KernelOomKills();
// Whether a child that died by SIGKILL was killed by the kernel's OOM killer
// rather than by itself, by us (timeout, interrupt) or by a person: the OOM
// killer sends SIGKILL, and the machine-wide count rose while it ran. Linux
// overcommits memory, so a CPU run that outgrows RAM ends this way, not with
// a failed allocation the worker could report as oom itself.
bool KilledByOomKiller(const ChildOutcome& child);
// Runs `argv` (argv[0]: the executable's path) as a child in its own process
// group, stdout and stderr to `log_file`, killed (the whole group) after
// `timeout_s` or when a running plan is interrupted. The workers and the
// per-collection probe both run this way, so a crash loses nothing.
// argv[0] without a slash is looked up on PATH. With no_aslr the child runs
// with address-space randomisation off (personality ADDR_NO_RANDOMIZE), so
// that a counted run's layout, and with it its cache simulation, repeats.
// A non-empty `cwd` is the child's working directory (log_file is opened
// before the change, so a relative one is the caller's).
ChildOutcome RunChild(const std::vector<std::string>& argv, const std::filesystem::path& log_file, double timeout_s,
                      bool no_aslr = false, const std::filesystem::path& cwd = {});

}  // namespace torchgauge::collector
