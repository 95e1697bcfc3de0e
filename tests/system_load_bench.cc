// The measurements behind the noise thresholds (core/stats/system_load.cc): a small
// single-threaded CPU loop timed N times, with core::SampleSystem around each
// repetition, once as the machine is and once with a busy-loop process that
// this bench starts beside it (one spinning process per CPU). Prints the CoV
// and the outside CPU use of each condition and the verdict. Asserts nothing
// about time (label bench).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/stats/stats.h"
#include "core/stats/system_load.h"

using namespace torchgauge::core;

namespace {

volatile double g_sink = 0;

// About `ms` milliseconds of arithmetic on a quiet core.
double Loop(long iterations) {
  double x = 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

// This thread's CPU time in ms: what the loop costs without the waits a
// busy machine adds, so calibration holds under load, and its CoV is the
// floor that wall-clock CoV reaches on a quiet machine.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

long Calibrate(double ms) {
  long n = 1 << 16;
  for (;;) {
    const double t0 = ThreadCpuMs();
    g_sink = Loop(n);
    const double took = ThreadCpuMs() - t0;
    if (took > ms / 4) return static_cast<long>(static_cast<double>(n) * ms / took);
    n *= 2;
  }
}

void Measure(const char* label, long iterations, int reps) {
  std::vector<double> samples, cpu_samples;
  double outside_sum = 0, outside_max = 0;
  auto first = SampleSystem();
  for (int i = 0; i < reps; ++i) {
    auto before = SampleSystem();
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuMs();
    g_sink = Loop(iterations);
    cpu_samples.push_back(ThreadCpuMs() - c0);
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    auto after = SampleSystem();
    if (auto l = LoadBetween(before, after)) {
      outside_sum += l->outside_cpu_cores;
      outside_max = std::max(outside_max, l->outside_cpu_cores);
    }
  }
  auto whole = LoadBetween(first, SampleSystem());
  Summary s = Summarize(samples);
  auto verdict = ClassifyNoise(s.cov, whole);
  const double cpu_cov = Summarize(cpu_samples).cov;
  std::printf(
      "%-26s reps %d  median %.2f ms  CoV %.1f %% (thread CPU time CoV %.1f %%)  outside CPU (whole window %.2f s): "
      "%.2f cores "
      "(+-%.2f), steal %.2f; per rep mean %.2f max %.2f; loadavg %.1f -> %.1f; %s%s\n",
      label, reps, s.median, s.cov * 100, cpu_cov * 100, whole ? whole->window_s : 0,
      whole ? whole->outside_cpu_cores : -1, whole ? whole->resolution_cores : 0,
      whole ? whole->steal_cores.value_or(0) : 0, outside_sum / reps, outside_max,
      whole ? whole->loadavg_1m_before.value_or(-1) : -1, whole ? whole->loadavg_1m_after.value_or(-1) : -1,
      verdict.noisy ? "NOISY: " : "clean", verdict.reason.c_str());
}

}  // namespace

int main() {
  const long iterations = Calibrate(20.0);
  const int reps = 50;
  Measure("as the machine is", iterations, reps);
  const int cpus = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  std::vector<pid_t> spinners;
  for (int i = 0; i < cpus; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      for (;;) g_sink = Loop(1 << 20);
    }
    if (pid > 0) spinners.push_back(pid);
  }
  Measure("with a busy loop per CPU", iterations, reps);
  for (pid_t pid : spinners) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return 0;
}
