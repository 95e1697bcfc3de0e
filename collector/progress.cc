#include "collector/progress.h"

#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>

namespace torchgauge::collector {

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return buf;
}

std::string NoiseMark(const core::RunResult& r) {
  if (r.status != "ok") return {};
  const auto v = core::RunNoise(r);
  return v.noisy ? " NOISY (" + v.reason + ")" : std::string();
}

std::string NoiseSummary(const std::vector<core::RunResult>& results) {
  std::vector<core::NoiseVerdict> verdicts;
  for (const auto& r : results) {
    if (r.status == "ok") verdicts.push_back(core::RunNoise(r));
  }
  const std::string warning = core::NoiseWarning(verdicts);
  if (warning.empty()) return {};
  return "warning: " + warning + ". Their times are not clean measurements: collect again on a quieter machine.";
}

namespace {

std::string Prefix(const ProgressEvent& e) {
  std::ostringstream s;
  s << "[" << e.done << "/" << e.total << "] " << e.label;
  return s.str();
}

std::string Median(const core::RunResult& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "median %.2f ms", r.timing ? r.timing->median_ms : 0.0);
  return buf;
}

// One line per finished process and run: the format CI logs and the
// integration tests read.
class LineProgress : public Progress {
 public:
  explicit LineProgress(std::ostream& out) : out_(out) {}
  void Kept(const ProgressEvent& e) override { out_ << Prefix(e) << ": kept existing result\n"; }
  void Started(const ProgressEvent&) override {}
  void ProcessFinished(const ProgressEvent& e, const core::RunResult& part, bool reused) override {
    // A run's last process, and a failed one, are reported by RunFinished.
    if (part.status != "ok" || e.process + 1 >= e.processes) return;
    out_ << Prefix(e) << " bs=" << e.batch_size << " process " << e.process + 1 << "/" << e.processes << ": "
         << (reused ? "kept from an earlier collection" : Median(part)) << " ["
         << FormatDuration(part.duration_s.value_or(0)) << "]\n";
  }
  void RunFinished(const ProgressEvent& e, const core::RunResult& result, int processes_ok) override {
    std::ostringstream line;
    line << Prefix(e) << " bs=" << e.batch_size;
    if (e.processes > 1) {
      if (result.status == "ok")
        line << " (" << processes_ok << " processes)";
      else
        line << " (process " << processes_ok + 1 << " of " << e.processes << ")";
    }
    line << ": " << result.status;
    if (result.timing) {
      line << " " << Median(result) << NoiseMark(result);
    } else if (result.reason) {
      std::string reason = *result.reason;
      if (reason.size() > 160) reason = reason.substr(0, 160) + "…";
      line << " (" << reason << ")";
    }
    line << " [" << FormatDuration(result.duration_s.value_or(0)) << "]";
    out_ << line.str() << "\n";
  }
  void End() override {}

 private:
  std::ostream& out_;
};

// One line rewritten in place: the process now running, elapsed time and an
// ETA from the mean wall time of the processes measured so far.
class TtyProgress : public Progress {
 public:
  explicit TtyProgress(std::ostream& out) : out_(out), start_(std::chrono::steady_clock::now()) {}
  void Kept(const ProgressEvent&) override {}
  void Started(const ProgressEvent& e) override {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string eta =
        measured_ > 0 ? FormatDuration(measured_seconds_ / measured_ * (e.total - e.done + 1)) : "?";
    out_ << "\r\033[K" << Prefix(e) << " bs=" << e.batch_size;
    if (e.processes > 1) out_ << " process " << e.process + 1 << "/" << e.processes;
    out_ << "  elapsed " << FormatDuration(elapsed) << "  ETA " << eta << std::flush;
  }
  void ProcessFinished(const ProgressEvent&, const core::RunResult& part, bool reused) override {
    if (reused) return;
    ++measured_;
    measured_seconds_ += part.duration_s.value_or(0);
  }
  void RunFinished(const ProgressEvent&, const core::RunResult&, int) override {}
  void End() override { out_ << "\r\033[K"; }

 private:
  std::ostream& out_;
  std::chrono::steady_clock::time_point start_;
  int measured_ = 0;
  double measured_seconds_ = 0;
};

}  // namespace

std::unique_ptr<Progress> MakeLineProgress(std::ostream& out) { return std::make_unique<LineProgress>(out); }
std::unique_ptr<Progress> MakeTtyProgress(std::ostream& out) { return std::make_unique<TtyProgress>(out); }

}  // namespace torchgauge::collector
