#include "collector/supervisor.h"

#include "core/io/remove_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "collector/counted.h"
#include "collector/worker.h"
#include "core/contract/layout.h"
#include "core/io/json_io.h"

namespace torchgauge::collector {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

// SIGINT and SIGTERM set g_interrupted while a plan runs; the previous
// handlers come back afterwards.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

std::string Tail(const std::filesystem::path& file, size_t max_chars = 1500) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_chars) s = "…" + s.substr(s.size() - max_chars);
  return s;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// An existing result for --resume; a missing or broken file is none.
std::optional<core::RunResult> ReadExisting(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return core::RunResultFromJson(core::ReadJsonFile(path, core::JsonKind::kRunResult), path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

ChildOutcome RunChild(const std::vector<std::string>& argv, const std::filesystem::path& log_file, double timeout_s,
                      bool no_aslr, const std::filesystem::path& cwd) {
  if (argv.empty()) throw std::invalid_argument("RunChild: empty command line");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::optional<int64_t> oom_before = KernelOomKills();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Own process group: the terminal's Ctrl-C reaches only the supervisor,
    // which then stops the child itself; a timeout kills the whole group.
    setpgid(0, 0);
    int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    if (no_aslr) personality(ADDR_NO_RANDOMIZE);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "cannot change to %s: %s\n", cwd.c_str(), std::strerror(errno));
      _exit(127);
    }
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  ChildOutcome out;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      out.status = status;
      const std::optional<int64_t> oom_after = KernelOomKills();
      if (oom_before && oom_after) out.oom_kills = *oom_after - *oom_before;
      return out;
    }
    if (g_interrupted || Clock::now() >= deadline) {
      out.timed_out = !g_interrupted;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      out.status = status;  // our own SIGKILL: oom_kills stays unset
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<int64_t> KernelOomKills() {
  std::ifstream in("/proc/vmstat");
  std::string name;
  int64_t value = 0;
  while (in >> name >> value) {
    if (name == "oom_kill") return value;
  }
  return std::nullopt;
}

bool KilledByOomKiller(const ChildOutcome& child) {
  return !child.timed_out && WIFSIGNALED(child.status) && WTERMSIG(child.status) == SIGKILL && child.oom_kills &&
         *child.oom_kills > 0;
}

namespace {

// The result recorded for a worker that wrote none: timeout, crash or error.
core::RunResult FailedProcessResult(const RunSpec& spec, const ChildOutcome& child, const std::string& started_at,
                                    const std::filesystem::path& log_file) {
  core::RunResult r = ResultSkeleton(spec);
  r.started_at = started_at;
  if (child.timed_out) {
    r.status = "timeout";
    r.reason = "exceeded the timeout of " + FormatDuration(spec.settings.timeout_s) + " and was killed";
  } else if (WIFSIGNALED(child.status)) {
    const int sig = WTERMSIG(child.status);
    r.signal = sig;
    if (KilledByOomKiller(child)) {
      r.status = "oom";
      r.reason = "worker killed by the kernel's out-of-memory killer (SIGKILL while /proc/vmstat oom_kill rose by " +
                 std::to_string(*child.oom_kills) + "): the run needs more memory than the machine has";
    } else {
      r.status = "crashed";
      r.reason = "worker killed by " + SignalName(sig) + " (" + strsignal(sig) + ")";
    }
    const auto tail = Tail(log_file, 600);
    if (!tail.empty()) *r.reason += "; log tail: " + tail;
  } else {
    r.status = "error";
    r.reason = "worker exited with code " + std::to_string(WEXITSTATUS(child.status)) +
               " without a result; log tail: " + Tail(log_file);
  }
  return r;
}

// One run's progress through its worker processes.
struct RunState {
  const RunSpec* spec = nullptr;
  int processes = 1;  // spec->settings.processes, at least 1
  std::string label;
  std::filesystem::path result_path;
  std::vector<core::RunResult> parts;  // "ok" process results, in order
  bool finished = false;
  // --retry-failed measures this run again: its earlier, failed result stays
  // until the new one replaces it (Finish), so an interrupted retry loses
  // nothing that was collected.
  bool retrying = false;

  // Process p's file names (core/contract/layout.h): its .spec.json, .result.json, .log.
  std::string PartStem(int p) const { return core::ProcessStem(spec->key(), p, processes); }
};

struct ProcessOutcome {
  core::RunResult result;  // duration_s: the process's wall time
  bool reused = false;     // taken from an interrupted collection's .work
};

// A process result left in .work by an interrupted collection, for --resume.
std::optional<core::RunResult> ReusablePart(const std::filesystem::path& part_file) {
  if (!std::filesystem::exists(part_file)) return std::nullopt;
  try {
    auto r = core::RunResultFromJson(core::ReadJsonFile(part_file, core::JsonKind::kRunResult), part_file);
    if (r.status == "ok") return r;
  } catch (const std::exception&) {
    // Measured again.
  }
  return std::nullopt;
}

// Callgrind's files of one worker that the worker did not take: the dump at
// its exit (nothing collected after the last step) and, after a crash, the
// steps' dumps.
void RemoveCallgrindDumps(const std::filesystem::path& out) {
  std::filesystem::remove(out);
  std::error_code ec;
  for (int n = 1; std::filesystem::remove(out.string() + "." + std::to_string(n), ec); ++n) {
  }
}

// The build and platform ids a counted worker is given in place of the real
// ones (RunProcess).
constexpr const char* kCountedIdPlaceholder = "counted";

core::RunResult WithIds(core::RunResult r, const RunSpec& spec) {
  r.build_id = spec.build_id;
  r.platform_id = spec.platform_id;
  return r;
}

// Runs process `p` of a run and returns its result (a skeleton with the
// failure for a child that did not write one). A part already on disk from
// an interrupted collection is reused under --resume.
ProcessOutcome RunProcess(const RunState& st, int p, const SupervisorOptions& options) {
  const RunSpec& spec = *st.spec;
  const auto& dir = options.platform_dir;
  RunSpec part = spec;
  const auto part_file = core::PartResultPath(dir, st.PartStem(p));
  part.result_file = part_file.string();
  if (p > 0) {
    part.settings.profile_iterations = 0;  // the first process profiles; the others only time
    part.trace = false;
  }
  if (options.resume && st.processes > 1) {
    if (auto r = ReusablePart(part_file)) return {WithIds(std::move(*r), spec), true};
  }
  const auto spec_file = core::SpecPath(dir, st.PartStem(p));
  const auto log_file = core::LogPath(dir, st.PartStem(p));
  std::filesystem::remove(part_file);
  const bool counted = spec.settings.measure == "counted";
  const auto callgrind_out = core::CallgrindOutPath(dir, st.PartStem(p));
  // A counted worker runs in the platform folder and is given its paths
  // relative to it, and placeholders for the build and platform ids (the
  // result gets the real ones below), so the strings it allocates before the
  // counted steps are the same whatever the folder and the build are called:
  // their lengths move the heap, and with it the counts (docs/counted.md,
  // "Paths").
  const auto worker_path = [&](const std::filesystem::path& f) { return counted ? f.lexically_relative(dir) : f; };
  std::vector<std::string> argv = {options.self_exe.string(), "worker", "--spec", worker_path(spec_file).string()};
  if (counted) {
    part.result_file = worker_path(part_file).string();
    part.platform_dir = ".";
    part.build_id = kCountedIdPlaceholder;
    part.platform_id = kCountedIdPlaceholder;
    part.callgrind_out = worker_path(callgrind_out).string();
    part.valgrind_version = options.valgrind_version;
    if (p == 0) part.keep_profile = worker_path(core::ProfilePath(dir, spec.key())).string();
    const std::vector<std::string> prefix = CountedCommand(worker_path(callgrind_out));
    argv.insert(argv.begin(), prefix.begin(), prefix.end());
  }
  core::WriteJsonAtomic(spec_file, part.ToJson());
  const auto t0 = Clock::now();
  const auto started_at = core::NowUtc();
  auto child = RunChild(argv, log_file, spec.settings.timeout_s, counted, counted ? dir : std::filesystem::path());
  if (counted) RemoveCallgrindDumps(callgrind_out);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::filesystem::remove(spec_file);
  core::RunResult r;
  if (!child.timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 &&
      std::filesystem::exists(part_file)) {
    try {
      r = core::RunResultFromJson(core::ReadJsonFile(part_file, core::JsonKind::kRunResult), part_file);
    } catch (const std::exception& e) {
      r = ResultSkeleton(spec);
      r.status = "error";
      r.reason = std::string("worker wrote an unreadable result: ") + e.what();
    }
  } else {
    r = FailedProcessResult(spec, child, started_at, log_file);
  }
  // A single-process run's part is the result; a multi-process run's parts
  // stay in .work until the run is pooled, so --resume can reuse them.
  if (st.processes == 1 || r.status != "ok") std::filesystem::remove(part_file);
  if (st.processes > 1 && p > 0 && r.reason) {
    *r.reason = "process " + std::to_string(p + 1) + " of " + std::to_string(st.processes) + ": " + *r.reason;
  }
  r.duration_s = seconds;
  return {WithIds(std::move(r), spec), false};
}

// Runs a plan's processes in rounds and keeps the books: which runs are
// finished, the counts, the results and the progress events.
class Scheduler {
 public:
  Scheduler(const std::vector<RunSpec>& plan, const SupervisorOptions& options) : options_(options) {
    for (const auto& spec : plan) {
      RunState st;
      st.spec = &spec;
      st.processes = std::max(1, spec.settings.processes);
      st.label = spec.model + " " + spec.mode + " " + spec.backend + " " + spec.precision;
      st.result_path = core::RunPath(options.platform_dir, spec.key());
      rounds_ = std::max(rounds_, st.processes);
      total_ += st.processes;
      runs_.push_back(std::move(st));
    }
  }

  // Runs measured in several processes go in interleaved rounds, as asv
  // does: round k runs process k of every such run, so each run's processes
  // are spread over the whole collection and its pooled samples see the
  // machine's drift over that time rather than one quiet or busy minute.
  SuiteOutcome Run() {
    for (int round = 0; round < rounds_ && !g_interrupted; ++round) {
      for (auto& st : runs_) {
        if (g_interrupted) break;
        if (st.finished || round >= st.processes) continue;
        if (round == 0 && KeepExisting(st)) continue;
        if (!Step(st, round)) break;
      }
    }
    options_.progress->End();
    outcome_.interrupted = g_interrupted;
    return std::move(outcome_);
  }

 private:
  ProgressEvent Event(const RunState& st, int process) const {
    return {done_, total_, st.label, st.spec->batch_size, process, st.processes};
  }

  // Before a run's first process: under --resume, keeps its existing result
  // (read once) and returns true, unless --retry-failed measures a failed one
  // again. That one stays until the new result replaces it (Finish), so an
  // interrupted retry loses nothing; any other run starts with no result
  // file, so an interrupted one leaves none for --resume to keep.
  bool KeepExisting(RunState& st) {
    std::optional<core::RunResult> r = options_.resume ? ReadExisting(st.result_path) : std::nullopt;
    const bool failed = r && r->status != "ok" && r->status != "unsupported";
    if (r && !(failed && options_.retry_failed)) {
      done_ += st.processes;
      ++outcome_.skipped;
      outcome_.counts[r->status]++;
      outcome_.results.push_back(std::move(*r));
      st.finished = true;
      options_.progress->Kept(Event(st, 0));
      return true;
    }
    st.retrying = r.has_value();
    if (!st.retrying) std::filesystem::remove(st.result_path);
    return false;
  }

  // Runs process `round` of a run; false when the collection was interrupted.
  bool Step(RunState& st, int round) {
    ++done_;
    options_.progress->Started(Event(st, round));
    auto [r, reused] = RunProcess(st, round, options_);
    if (g_interrupted) {
      // The interrupted process has no result: --resume measures it again
      // (and reuses this run's finished processes). A retried run keeps its
      // earlier result.
      if (!st.retrying) std::filesystem::remove(st.result_path);
      return false;
    }
    options_.progress->ProcessFinished(Event(st, round), r, reused);
    if (r.status != "ok") {
      done_ += st.processes - round - 1;
      Finish(st, std::move(r));  // a failed process ends the run, whatever came before
    } else {
      st.parts.push_back(std::move(r));
      if (static_cast<int>(st.parts.size()) == st.processes) Finish(st, core::PoolProcesses(st.parts));
    }
    return true;
  }

  // `result` is the pooled parts or, when a process failed, that process's
  // result; duration_s becomes the wall time of all the run's processes.
  void Finish(RunState& st, core::RunResult result) {
    st.finished = true;
    if (result.status != "ok") {
      double seconds = result.duration_s.value_or(0);
      for (const auto& part : st.parts) seconds += part.duration_s.value_or(0);
      result.duration_s = seconds;
    }
    core::WriteJsonAtomic(st.result_path, core::ToJson(result));
    for (int p = 0; p < st.processes; ++p) {
      std::error_code ec;
      std::filesystem::remove(core::PartResultPath(options_.platform_dir, st.PartStem(p)), ec);
    }
    outcome_.counts[result.status]++;
    options_.progress->RunFinished(Event(st, 0), result, static_cast<int>(st.parts.size()));
    outcome_.results.push_back(std::move(result));
  }

  const SupervisorOptions& options_;
  std::vector<RunState> runs_;
  int rounds_ = 1, total_ = 0, done_ = 0;
  SuiteOutcome outcome_;
};

}  // namespace

SuiteOutcome RunPlan(const std::vector<RunSpec>& plan, const SupervisorOptions& options) {
  if (!options.progress) throw std::invalid_argument("RunPlan: no progress reporter");
  InterruptGuard guard;
  const auto& dir = options.platform_dir;
  std::filesystem::create_directories(core::WorkDir(dir));
  std::filesystem::create_directories(core::LogsDir(dir));
  std::filesystem::create_directories(core::RunsDir(dir));
  SuiteOutcome outcome = Scheduler(plan, options).Run();
  if (!outcome.interrupted) core::RemoveTree(core::WorkDir(dir));
  return outcome;
}

}  // namespace torchgauge::collector
