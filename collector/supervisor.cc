#include "collector/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "collector/worker.h"
#include "core/json_io.h"
#include "core/layout.h"

namespace torchgauge::collector {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return buf;
}

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

// Loads an existing result for resume; a broken file does not count.
bool HasResult(const std::filesystem::path& path, bool retry_failed) {
  if (!std::filesystem::exists(path)) return false;
  try {
    auto r = core::RunResultFromJson(core::ReadJsonFile(path), path);
    if (retry_failed && r.status != "ok" && r.status != "unsupported") return false;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

struct ChildOutcome {
  bool timed_out = false;
  int status = 0;  // waitpid status
};

ChildOutcome RunChild(const std::filesystem::path& exe, const std::filesystem::path& spec_file,
                      const std::filesystem::path& log_file, double timeout_s) {
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
    execl(exe.c_str(), exe.c_str(), "worker", "--spec", spec_file.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "exec %s failed: %s\n", exe.c_str(), std::strerror(errno));
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
      return out;
    }
    if (g_interrupted || Clock::now() >= deadline) {
      out.timed_out = !g_interrupted;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      out.status = status;
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// One run's progress through its worker processes.
struct RunState {
  const RunSpec* spec = nullptr;
  int processes = 1;  // spec->processes, at least 1
  std::string label, stem;
  std::filesystem::path result_path;
  std::vector<core::RunResult> parts;  // "ok" process results, in order
  bool finished = false;

  // The name of process p's files: "<stem>" alone, or "<stem>.p<k>" when the
  // run has several processes (its .spec.json, .result.json and .log).
  std::string PartStem(int p) const { return processes > 1 ? stem + ".p" + std::to_string(p) : stem; }
};

struct ProcessOutcome {
  core::RunResult result;  // duration_s: the process's wall time
  bool reused = false;     // taken from an interrupted collection's .work
};

// Runs process `p` of a run and returns its result (a skeleton with the
// failure for a child that did not write one). A part already on disk from
// an interrupted collection is reused under --resume.
ProcessOutcome RunProcess(const RunState& st, int p, const std::filesystem::path& work_dir,
                          const std::filesystem::path& log_dir, const SupervisorOptions& options) {
  const RunSpec& spec = *st.spec;
  RunSpec part = spec;
  const auto part_file = work_dir / (st.PartStem(p) + ".result.json");
  part.result_file = part_file.string();
  if (p > 0) {
    part.profile_iterations = 0;  // the first process profiles; the others only time
    part.trace = false;
  }
  if (options.resume && st.processes > 1 && std::filesystem::exists(part_file)) {
    try {
      auto r = core::RunResultFromJson(core::ReadJsonFile(part_file), part_file);
      if (r.status == "ok") return {std::move(r), true};
    } catch (const std::exception&) {
      // Measured again below.
    }
  }
  const auto spec_file = work_dir / (st.PartStem(p) + ".spec.json");
  const auto log_file = log_dir / (st.PartStem(p) + ".log");
  std::filesystem::remove(part_file);
  core::WriteJsonAtomic(spec_file, part.ToJson());
  const auto t0 = Clock::now();
  const auto started_at = core::NowUtc();
  auto child = RunChild(options.self_exe, spec_file, log_file, spec.timeout_s);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::filesystem::remove(spec_file);
  core::RunResult r;
  if (!child.timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 &&
      std::filesystem::exists(part_file)) {
    try {
      r = core::RunResultFromJson(core::ReadJsonFile(part_file), part_file);
    } catch (const std::exception& e) {
      r = ResultSkeleton(spec);
      r.status = "error";
      r.reason = std::string("worker wrote an unreadable result: ") + e.what();
    }
  } else {
    r = ResultSkeleton(spec);
    r.started_at = started_at;
    if (child.timed_out) {
      r.status = "timeout";
      r.reason = "exceeded the timeout of " + FormatDuration(spec.timeout_s) + " and was killed";
    } else if (WIFSIGNALED(child.status)) {
      const int sig = WTERMSIG(child.status);
      r.status = "crashed";
      r.signal = sig;
      r.reason = "worker killed by " + SignalName(sig) + " (" + strsignal(sig) + ")";
      const auto tail = Tail(log_file, 600);
      if (!tail.empty()) *r.reason += "; log tail: " + tail;
    } else {
      r.status = "error";
      r.reason = "worker exited with code " + std::to_string(WEXITSTATUS(child.status)) +
                 " without a result; log tail: " + Tail(log_file);
    }
  }
  // A single-process run's part is the result; a multi-process run's parts
  // stay in .work until the run is pooled, so --resume can reuse them.
  if (st.processes == 1 || r.status != "ok") std::filesystem::remove(part_file);
  if (st.processes > 1 && p > 0 && r.reason) {
    *r.reason = "process " + std::to_string(p + 1) + " of " + std::to_string(st.processes) + ": " + *r.reason;
  }
  r.duration_s = seconds;
  return {std::move(r), false};
}

}  // namespace

SuiteOutcome RunPlan(const std::vector<RunSpec>& plan, const SupervisorOptions& options) {
  SuiteOutcome outcome;
  g_interrupted = false;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  const auto work_dir = options.platform_dir / ".work";
  const auto log_dir = options.platform_dir / "logs";
  std::filesystem::create_directories(work_dir);
  std::filesystem::create_directories(log_dir);
  std::filesystem::create_directories(core::RunsDir(options.platform_dir));

  // Runs measured in several processes go in interleaved rounds, as asv
  // does: round k runs process k of every such run, so each run's processes
  // are spread over the whole collection and its pooled samples see the
  // machine's drift over that time rather than one quiet or busy minute.
  std::vector<RunState> runs;
  int rounds = 1, total = 0;
  for (const auto& spec : plan) {
    RunState st;
    st.spec = &spec;
    st.processes = std::max(1, spec.processes);
    st.label = spec.model + " " + spec.mode + " " + spec.backend + " " + spec.precision;
    st.stem = spec.key().FileStem();
    st.result_path = core::RunPath(options.platform_dir, spec.key());
    rounds = std::max(rounds, st.processes);
    total += st.processes;
    runs.push_back(std::move(st));
  }

  const auto suite_start = Clock::now();
  int done = 0, measured = 0;
  double measured_seconds = 0;
  // `result` is the pooled parts or, when a process failed, that process's
  // result; duration_s becomes the wall time of all the run's processes.
  auto finish = [&](RunState& st, core::RunResult result) {
    st.finished = true;
    if (result.status != "ok") {
      double seconds = result.duration_s.value_or(0);
      for (const auto& part : st.parts) seconds += part.duration_s.value_or(0);
      result.duration_s = seconds;
    }
    core::WriteJsonAtomic(st.result_path, core::ToJson(result));
    for (int p = 0; p < st.processes; ++p) {
      std::error_code ec;
      std::filesystem::remove(work_dir / (st.PartStem(p) + ".result.json"), ec);
    }
    outcome.counts[result.status]++;
    if (!options.progress_tty) {
      std::ostringstream line;
      line << "[" << done << "/" << total << "] " << st.label << " bs=" << st.spec->batch_size;
      if (st.processes > 1) {
        if (result.status == "ok") line << " (" << st.parts.size() << " processes)";
        else line << " (process " << st.parts.size() + 1 << " of " << st.processes << ")";
      }
      line << ": " << result.status;
      if (result.timing) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " median %.2f ms", result.timing->median_ms);
        line << buf;
      } else if (result.reason) {
        std::string reason = *result.reason;
        if (reason.size() > 160) reason = reason.substr(0, 160) + "…";
        line << " (" << reason << ")";
      }
      line << " [" << FormatDuration(result.duration_s.value_or(0)) << "]";
      std::cerr << line.str() << "\n";
    }
    outcome.results.push_back(std::move(result));
  };

  for (int round = 0; round < rounds && !g_interrupted; ++round) {
    for (auto& st : runs) {
      if (g_interrupted) break;
      const RunSpec& spec = *st.spec;
      const int processes = st.processes;
      if (st.finished || round >= processes) continue;
      if (round == 0 && options.resume && HasResult(st.result_path, options.retry_failed)) {
        done += processes;
        ++outcome.skipped;
        auto r = core::RunResultFromJson(core::ReadJsonFile(st.result_path), st.result_path);
        outcome.counts[r.status]++;
        outcome.results.push_back(std::move(r));
        st.finished = true;
        if (!options.progress_tty) std::cerr << "[" << done << "/" << total << "] " << st.label << ": kept existing result\n";
        continue;
      }
      if (round == 0) std::filesystem::remove(st.result_path);
      ++done;
      if (options.progress_tty) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - suite_start).count();
        std::string eta = measured > 0 ? FormatDuration(measured_seconds / measured * (total - done + 1)) : "?";
        std::cerr << "\r\033[K[" << done << "/" << total << "] " << st.label << " bs=" << spec.batch_size;
        if (processes > 1) std::cerr << " process " << round + 1 << "/" << processes;
        std::cerr << "  elapsed " << FormatDuration(elapsed) << "  ETA " << eta << std::flush;
      }
      auto [r, reused] = RunProcess(st, round, work_dir, log_dir, options);
      const double seconds = r.duration_s.value_or(0);
      if (g_interrupted) {
        // The interrupted process has no result: --resume measures it again
        // (and reuses this run's finished processes).
        std::filesystem::remove(st.result_path);
        break;
      }
      if (!reused) {
        ++measured;
        measured_seconds += seconds;
      }
      if (r.status != "ok") {
        done += processes - round - 1;
        finish(st, std::move(r));  // a failed process ends the run, whatever came before
        continue;
      }
      st.parts.push_back(std::move(r));
      if (static_cast<int>(st.parts.size()) == processes) {
        finish(st, core::PoolProcesses(st.parts));
      } else if (!options.progress_tty) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "median %.2f ms", st.parts.back().timing ? st.parts.back().timing->median_ms : 0.0);
        std::cerr << "[" << done << "/" << total << "] " << st.label << " bs=" << spec.batch_size << " process "
                  << round + 1 << "/" << processes << ": " << (reused ? "kept from an earlier collection" : buf) << " ["
                  << FormatDuration(seconds) << "]\n";
      }
    }
  }
  if (options.progress_tty) std::cerr << "\r\033[K";
  outcome.interrupted = g_interrupted;
  std::error_code ec;
  if (!outcome.interrupted) std::filesystem::remove_all(work_dir, ec);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return outcome;
}

int WorkerMain(const std::filesystem::path& spec_file) {
  auto spec = RunSpec::FromJson(core::ReadJsonFile(spec_file));
  auto result = RunWorker(spec);
  const auto path = spec.result_file.empty() ? core::RunPath(spec.platform_dir, spec.key())
                                             : std::filesystem::path(spec.result_file);
  core::WriteJsonAtomic(path, core::ToJson(result));
  return 0;
}

}  // namespace torchgauge::collector
