// The noise marks of the terminal output: a noisy ok run's progress line and
// summary status carry the reason, and the summary's last line names the
// cause over every ok run.
#include <doctest/doctest.h>

#include <sstream>

#include "collector/progress.h"

using namespace torchgauge;

namespace {

core::RunResult Run(std::vector<double> samples, std::optional<double> outside_cores, std::string status = "ok") {
  core::RunResult r;
  r.status = std::move(status);
  if (r.status == "ok") {
    core::Timing t;
    t.samples_ms = std::move(samples);
    t.repetitions = static_cast<int>(t.samples_ms.size());
    core::SummarizeTiming(t);
    r.timing = t;
  }
  if (outside_cores) {
    core::SystemLoad l;
    l.window_s = 5;
    l.cpus = 2;
    l.own_cpu_cores = 1;
    l.outside_cpu_cores = *outside_cores;
    l.resolution_cores = 0.004;
    r.system_load = l;
  }
  return r;
}

const std::vector<double> kSteady{10, 10.1, 9.9, 10.05};
const std::vector<double> kScattered{5, 10, 20, 40};

}  // namespace

TEST_CASE("NoiseMark marks only noisy ok runs, with the reason") {
  CHECK(collector::NoiseMark(Run(kSteady, 0.01)).empty());
  CHECK(collector::NoiseMark(Run(kSteady, std::nullopt)).empty());
  const auto busy = collector::NoiseMark(Run(kSteady, 1.7));
  CHECK(busy.find(" NOISY (") == 0);
  CHECK(busy.find("other processes used 1.7 cores") != std::string::npos);
  CHECK(collector::NoiseMark(Run(kScattered, 0.0)).find("CoV") != std::string::npos);
  // A failed run has no figures to distrust.
  CHECK(collector::NoiseMark(Run({}, 1.7, "error")).empty());
}

TEST_CASE("NoiseSummary counts the noisy ok runs and names each cause") {
  CHECK(collector::NoiseSummary({Run(kSteady, 0.01), Run(kSteady, std::nullopt)}).empty());
  const auto w = collector::NoiseSummary(
      {Run(kSteady, 1.6), Run(kSteady, 1.8), Run(kSteady, 0.0), Run(kScattered, 0.0), Run({}, 1.9, "crashed")});
  CHECK(w.rfind("warning: 3 of 4 runs are noisy", 0) == 0);
  CHECK(w.find("another process used 1.7 cores during 2 of 4 runs") != std::string::npos);
  CHECK(w.find("the timing CoV was at or above 25 % in 1 of 4 runs") != std::string::npos);
}

TEST_CASE("the line progress marks a noisy run where it reports it") {
  std::ostringstream out;
  auto progress = collector::MakeLineProgress(out);
  collector::ProgressEvent e{1, 2, "m train eager default", 8, 0, 1};
  progress->RunFinished(e, Run(kSteady, 1.7), 1);
  progress->RunFinished(e, Run(kSteady, 0.0), 1);
  const std::string text = out.str();
  const auto first_end = text.find('\n');
  CHECK(text.substr(0, first_end).find("NOISY (other processes used 1.7 cores)") != std::string::npos);
  CHECK(text.substr(first_end + 1).find("NOISY") == std::string::npos);
}
