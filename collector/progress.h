// How a collection reports its progress on stderr: one line per event when
// stderr is a file or a pipe (CI logs), one live line with elapsed time and
// ETA when it is a terminal. The supervisor (RunPlan) only schedules and
// reports events; the wording lives here.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/contract/result.h"

namespace torchgauge::collector {

// Where a collection stands when an event happens.
struct ProgressEvent {
  int done = 0, total = 0;  // worker processes started or accounted for / planned
  std::string label;        // "model mode backend precision"
  int64_t batch_size = 0;
  int process = 0;    // 0-based, of the run's processes
  int processes = 1;  // the run's
};

class Progress {
 public:
  virtual ~Progress() = default;
  // --resume kept a run's existing result.
  virtual void Kept(const ProgressEvent& e) = 0;
  // A worker process is about to start.
  virtual void Started(const ProgressEvent& e) = 0;
  // A worker process ended with `part` (duration_s: its wall time); `reused`:
  // taken from an interrupted collection instead of measured.
  virtual void ProcessFinished(const ProgressEvent& e, const core::RunResult& part, bool reused) = 0;
  // A run ended with `result` (pooled, or the failed process's), after
  // `processes_ok` successful processes.
  virtual void RunFinished(const ProgressEvent& e, const core::RunResult& result, int processes_ok) = 0;
  // The collection stopped (finished or interrupted).
  virtual void End() = 0;
};

std::unique_ptr<Progress> MakeLineProgress(std::ostream& out);
std::unique_ptr<Progress> MakeTtyProgress(std::ostream& out);

// "12.3s", "4m05s", "2h10m".
std::string FormatDuration(double seconds);

// " NOISY (CoV 23 % >= 10 %)" for an ok run that core::RunNoise judges
// noisy, "" otherwise: the mark a progress line and the summary table carry.
std::string NoiseMark(const core::RunResult& r);

// The line that ends a collection's terminal summary when any ok run is
// noisy: "warning: 3 of 20 runs are noisy: another process used 1.7 cores
// during 3 of 20 runs ...; their figures are not to be trusted ...".
// Empty when none is. Runs that are not ok are not judged.
std::string NoiseSummary(const std::vector<core::RunResult>& results);

}  // namespace torchgauge::collector
