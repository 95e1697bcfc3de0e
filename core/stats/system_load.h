// What the machine was doing while a run was measured, and whether that makes
// the run's figures noisy. A noisy number is never shown as a clean one.
//
// Who measures what: the supervisor runs one worker child per run, and the
// worker's timing pass is what must be clean. So the WORKER takes a
// SystemSample right before and right after its timing pass: /proc/stat's
// machine-wide busy ticks against the worker's own CPU time (getrusage of
// itself, every thread included, plus any children it reaped). What is left
// is other processes: the supervisor (asleep in waitpid), daemons, another
// build. Sampling in the supervisor around the child's whole life would also
// work (its own CPU time then being the child's, from wait4), but would
// dilute the timing pass with model construction and the profiling pass.
//
// The governor and turbo state are machine-wide: read once per collection
// for the manifest, as pyperf's system check does. LibTorch-free; the /proc
// and /sys parsing is split from the reading so it is tested on fixed text.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct CpuTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq (guest time is inside user)
  uint64_t idle = 0;   // idle + iowait
  uint64_t steal = 0;  // a hypervisor ran another guest on our virtual CPU
  int cpus = 0;        // "cpuN" lines: online CPUs
};
std::optional<CpuTicks> ParseProcStat(std::string_view text);
// The 1-minute load average from /proc/loadavg.
std::optional<double> ParseLoadavg1m(std::string_view text);

struct SystemSample {
  double wall_s = 0;              // steady clock
  std::optional<CpuTicks> ticks;  // unset where /proc/stat is unreadable
  double own_cpu_s = 0;           // this process (all threads) + its reaped children
  std::optional<double> loadavg_1m;
  long ticks_per_s = 100;  // sysconf(_SC_CLK_TCK)
};
SystemSample SampleSystem();

// Over one measured window, in cores (CPU seconds per wall second).
struct SystemLoad {
  double window_s = 0;
  int cpus = 0;
  double own_cpu_cores = 0;
  double outside_cpu_cores = 0;  // clamped at 0: tick rounding can make it slightly negative
  std::optional<double> steal_cores;
  // /proc/stat counts whole ticks, so each CPU's busy time is known to about
  // one tick at each end of the window: 2 * cpus / (ticks_per_s * window_s).
  double resolution_cores = 0;
  std::optional<double> loadavg_1m_before, loadavg_1m_after;
};
// Unset when either sample lacks /proc/stat or the window is empty.
std::optional<SystemLoad> LoadBetween(const SystemSample& before, const SystemSample& after);

// Thresholds for calling a run noisy. The numbers and how they were chosen
// are in system_load.cc beside their definition.
struct NoiseThresholds {
  double max_cov;                // timing CoV (stdev / mean) at or above this is noisy
  double max_outside_cpu_cores;  // other processes' CPU use above this (beyond the resolution) is noisy
};
extern const NoiseThresholds kDefaultNoiseThresholds;

struct NoiseVerdict {
  bool noisy = false;
  bool cov_high = false;
  bool machine_busy = false;
  std::optional<double> cov;
  std::optional<double> outside_cpu_cores;
  std::string reason;  // empty when not noisy: "CoV 23 % >= 10 %; other processes used 1.7 cores"
};
// The one place a run is judged noisy. Missing inputs judge nothing: a run
// without a system_load is judged on its CoV alone.
NoiseVerdict ClassifyNoise(std::optional<double> cov, const std::optional<SystemLoad>& load,
                           const NoiseThresholds& thresholds = kDefaultNoiseThresholds);

// The warning that ends a terminal summary, over all runs judged (one verdict
// per run): "41 of 100 runs are noisy: another process used 1.7 cores during
// 38 of 100 runs; the timing CoV was at or above 10 % in 12 of 100 runs".
// Empty when no run is noisy.
std::string NoiseWarning(const std::vector<NoiseVerdict>& verdicts,
                         const NoiseThresholds& thresholds = kDefaultNoiseThresholds);

// CPU frequency policy, null where the kernel does not expose it (virtual
// machines often do not).
struct CpuFrequencyPolicy {
  std::optional<std::string> governor;  // one value, or "mixed: a, b"
  std::optional<bool> turbo;
  std::optional<std::string> turbo_source;  // the file it was read from
  bool operator==(const CpuFrequencyPolicy&) const = default;
};
CpuFrequencyPolicy ReadCpuFrequencyPolicy(const std::filesystem::path& sys_cpu = "/sys/devices/system/cpu");

nlohmann::json ToJson(const SystemLoad& load);
SystemLoad SystemLoadFromJson(const nlohmann::json& j, const std::filesystem::path& file);
nlohmann::json ToJson(const CpuFrequencyPolicy& policy);
CpuFrequencyPolicy CpuFrequencyPolicyFromJson(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace torchgauge::core
