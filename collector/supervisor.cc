#include "collector/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

  const auto suite_start = Clock::now();
  int done = 0, measured = 0;
  double measured_seconds = 0;
  const int total = static_cast<int>(plan.size());
  for (const auto& spec : plan) {
    if (g_interrupted) break;
    ++done;
    const auto key = spec.key();
    const auto result_path = core::RunPath(options.platform_dir, key);
    const std::string label = spec.model + " " + spec.mode + " " + spec.backend + " " + spec.precision;
    if (options.resume && HasResult(result_path, options.retry_failed)) {
      ++outcome.skipped;
      auto r = core::RunResultFromJson(core::ReadJsonFile(result_path), result_path);
      outcome.counts[r.status]++;
      outcome.results.push_back(std::move(r));
      if (!options.progress_tty) std::cerr << "[" << done << "/" << total << "] " << label << ": kept existing result\n";
      continue;
    }
    if (options.progress_tty) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - suite_start).count();
      std::string eta = measured > 0 ? FormatDuration(measured_seconds / measured * (total - done + 1)) : "?";
      std::cerr << "\r\033[K[" << done << "/" << total << "] " << label << " bs=" << spec.batch_size << "  elapsed "
                << FormatDuration(elapsed) << "  ETA " << eta << std::flush;
    }

    const auto stem = key.FileStem();
    const auto spec_file = work_dir / (stem + ".spec.json");
    const auto log_file = log_dir / (stem + ".log");
    core::WriteJsonAtomic(spec_file, spec.ToJson());
    std::filesystem::remove(result_path);
    const auto run_start = Clock::now();
    const auto started_at = core::NowUtc();
    auto child = RunChild(options.self_exe, spec_file, log_file, spec.timeout_s);
    const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
    std::filesystem::remove(spec_file);
    if (g_interrupted) {
      // The interrupted run has no result: --resume will measure it again.
      std::filesystem::remove(result_path);
      break;
    }

    core::RunResult result;
    if (!child.timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 &&
        std::filesystem::exists(result_path)) {
      try {
        result = core::RunResultFromJson(core::ReadJsonFile(result_path), result_path);
      } catch (const std::exception& e) {
        result = ResultSkeleton(spec);
        result.status = "error";
        result.reason = std::string("worker wrote an unreadable result: ") + e.what();
      }
    } else {
      result = ResultSkeleton(spec);
      result.started_at = started_at;
      if (child.timed_out) {
        result.status = "timeout";
        result.reason = "exceeded the timeout of " + FormatDuration(spec.timeout_s) + " and was killed";
      } else if (WIFSIGNALED(child.status)) {
        const int sig = WTERMSIG(child.status);
        result.status = "crashed";
        result.signal = sig;
        result.reason = "worker killed by " + SignalName(sig) + " (" + strsignal(sig) + ")";
        const auto tail = Tail(log_file, 600);
        if (!tail.empty()) *result.reason += "; log tail: " + tail;
      } else {
        result.status = "error";
        result.reason = "worker exited with code " + std::to_string(WEXITSTATUS(child.status)) +
                        " without a result; log tail: " + Tail(log_file);
      }
    }
    result.duration_s = seconds;
    core::WriteJsonAtomic(result_path, core::ToJson(result));
    ++measured;
    measured_seconds += seconds;
    outcome.counts[result.status]++;
    if (!options.progress_tty) {
      std::ostringstream line;
      line << "[" << done << "/" << total << "] " << label << " bs=" << spec.batch_size << ": " << result.status;
      if (result.timing) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " median %.2f ms", result.timing->median_ms);
        line << buf;
      } else if (result.reason) {
        std::string reason = *result.reason;
        if (reason.size() > 160) reason = reason.substr(0, 160) + "…";
        line << " (" << reason << ")";
      }
      line << " [" << FormatDuration(seconds) << "]";
      std::cerr << line.str() << "\n";
    }
    outcome.results.push_back(std::move(result));
  }
  if (options.progress_tty) std::cerr << "\r\033[K";
  outcome.interrupted = g_interrupted;
  std::error_code ec;
  std::filesystem::remove(work_dir, ec);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return outcome;
}

int WorkerMain(const std::filesystem::path& spec_file) {
  auto spec = RunSpec::FromJson(core::ReadJsonFile(spec_file));
  auto result = RunWorker(spec);
  const auto path = core::RunPath(spec.platform_dir, spec.key());
  core::WriteJsonAtomic(path, core::ToJson(result));
  return 0;
}

}  // namespace torchgauge::collector
