#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/io/json_io.h"
#include "core/stats/system_load.h"

using namespace torchgauge::core;

namespace {

constexpr const char* kStat =
    "cpu  1000 50 300 8000 100 10 20 5 0 0\n"
    "cpu0 500 25 150 4000 50 5 10 3 0 0\n"
    "cpu1 500 25 150 4000 50 5 10 2 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

SystemSample Sample(double wall, uint64_t busy, uint64_t idle, double own, uint64_t steal = 0) {
  SystemSample s;
  s.wall_s = wall;
  s.ticks = CpuTicks{busy, idle, steal, 2};
  s.own_cpu_s = own;
  s.ticks_per_s = 100;
  return s;
}

void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("/proc/stat: busy, idle and steal ticks and the CPU count") {
  auto t = ParseProcStat(kStat);
  REQUIRE(t);
  CHECK(t->busy == 1000 + 50 + 300 + 10 + 20);
  CHECK(t->idle == 8000 + 100);
  CHECK(t->steal == 5);
  CHECK(t->cpus == 2);
  CHECK(!ParseProcStat("intr 1 2 3\n"));
  CHECK(!ParseProcStat("cpu  1 2\n"));
  CHECK(*ParseLoadavg1m("13.09 12.45 8.84 3/512 4242\n") == doctest::Approx(13.09));
  CHECK(!ParseLoadavg1m(""));
}

TEST_CASE("outside CPU is the machine's busy time less the run's own") {
  // 2 s window; the machine was busy 300 ticks = 3 CPU s; the run used 1 s.
  auto before = Sample(10.0, 1000, 5000, 4.0, 10);
  auto after = Sample(12.0, 1300, 5100, 5.0, 30);
  before.loadavg_1m = 1.5;
  after.loadavg_1m = 2.5;
  auto l = LoadBetween(before, after);
  REQUIRE(l);
  CHECK(l->window_s == doctest::Approx(2.0));
  CHECK(l->own_cpu_cores == doctest::Approx(0.5));
  CHECK(l->outside_cpu_cores == doctest::Approx(1.0));
  CHECK(*l->steal_cores == doctest::Approx(0.1));
  CHECK(l->resolution_cores == doctest::Approx(2.0 * 2 / (100 * 2.0)));
  CHECK(*l->loadavg_1m_before == 1.5);
  CHECK(*l->loadavg_1m_after == 2.5);
  // Tick rounding can put the machine's busy time under the run's own: clamp.
  auto rounded = LoadBetween(Sample(0, 0, 0, 0), Sample(1, 99, 0, 1.0));
  CHECK(rounded->outside_cpu_cores == 0);
  // Nothing to compare: no /proc/stat, or an empty window.
  SystemSample none;
  CHECK(!LoadBetween(none, after));
  CHECK(!LoadBetween(after, after));
}

TEST_CASE("a real sample sees this process's own CPU time") {
  auto before = SampleSystem();
  REQUIRE(before.ticks);  // Linux
  CHECK(before.ticks->cpus >= 1);
  volatile double x = 1;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) x = x * 1.0000001 + 1e-9;
  auto after = SampleSystem();
  auto l = LoadBetween(before, after);
  REQUIRE(l);
  CHECK(l->own_cpu_cores > 0.0);
  CHECK(l->own_cpu_cores <= 1.05);  // one thread spinning
  CHECK(l->outside_cpu_cores >= 0.0);
  CHECK(l->outside_cpu_cores <= l->cpus + l->resolution_cores);
}

TEST_CASE("noise verdicts: CoV, outside CPU beyond the resolution, steal") {
  const NoiseThresholds t{0.10, 0.25};
  CHECK(!ClassifyNoise(0.05, std::nullopt, t).noisy);
  auto high = ClassifyNoise(0.10, std::nullopt, t);
  CHECK(high.noisy);
  CHECK(high.cov_high);
  CHECK(high.reason == "CoV 10 % >= 10 %");

  SystemLoad l;
  l.window_s = 2;
  l.cpus = 2;
  l.outside_cpu_cores = 0.3;
  l.resolution_cores = 0.1;  // 0.3 - 0.1 = 0.2: not beyond 0.25
  CHECK(!ClassifyNoise(0.01, l, t).noisy);
  l.steal_cores = 0.2;  // steal counts: 0.5 - 0.1 > 0.25
  auto busy = ClassifyNoise(0.01, l, t);
  CHECK(busy.noisy);
  CHECK(busy.machine_busy);
  CHECK(!busy.cov_high);
  CHECK(*busy.outside_cpu_cores == doctest::Approx(0.5));
  CHECK(busy.reason == "other processes used 0.5 cores");
  auto both = ClassifyNoise(0.4, l, t);
  CHECK(both.reason == "CoV 40 % >= 10 %; other processes used 0.5 cores");
  // Missing or unusable CoV judges nothing.
  CHECK(!ClassifyNoise(std::nullopt, std::nullopt, t).noisy);
}

TEST_CASE("the default thresholds are the documented ones") {
  CHECK(kDefaultNoiseThresholds.max_cov == 0.25);
  CHECK(kDefaultNoiseThresholds.max_outside_cpu_cores == 0.25);
}

TEST_CASE("the summary warning names the cause and counts runs") {
  const NoiseThresholds t{0.10, 0.25};
  std::vector<NoiseVerdict> v(100);
  CHECK(NoiseWarning(v, t).empty());
  SystemLoad l;
  l.window_s = 10;
  l.cpus = 2;
  l.resolution_cores = 0.02;
  for (int i = 0; i < 41; ++i) {
    l.outside_cpu_cores = i % 2 ? 1.6 : 1.8;
    v[i] = ClassifyNoise(0.05, l, t);
  }
  v[50] = ClassifyNoise(0.2, std::nullopt, t);
  const auto w = NoiseWarning(v, t);
  CHECK(w ==
        "42 of 100 runs are noisy: another process used 1.7 cores during 41 of 100 runs; "
        "the timing CoV was at or above 10 % in 1 of 100 runs");
  std::vector<NoiseVerdict> one{ClassifyNoise(0.5, std::nullopt, t)};
  CHECK(NoiseWarning(one, t) == "1 of 1 runs is noisy: the timing CoV was at or above 10 % in 1 of 1 runs");
}

TEST_CASE("governor and turbo from a sysfs tree; null where absent") {
  const auto root = std::filesystem::temp_directory_path() / ("tg_sysfs_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  auto none = ReadCpuFrequencyPolicy(root);
  CHECK(!none.governor);
  CHECK(!none.turbo);

  WriteFile(root / "cpu0/cpufreq/scaling_governor", "performance\n");
  WriteFile(root / "cpu1/cpufreq/scaling_governor", "performance\n");
  WriteFile(root / "cpufreq/boost", "1\n");
  WriteFile(root / "cpuidle/x", "");  // not a cpuN directory
  auto p = ReadCpuFrequencyPolicy(root);
  CHECK(*p.governor == "performance");
  CHECK(*p.turbo == true);
  CHECK(p.turbo_source->find("cpufreq/boost") != std::string::npos);

  WriteFile(root / "cpu1/cpufreq/scaling_governor", "powersave\n");
  WriteFile(root / "intel_pstate/no_turbo", "1\n");  // intel_pstate wins over boost
  p = ReadCpuFrequencyPolicy(root);
  CHECK(*p.governor == "mixed: performance, powersave");
  CHECK(*p.turbo == false);
  std::filesystem::remove_all(root);
}

TEST_CASE("system load and frequency policy JSON round trips") {
  SystemLoad l;
  l.window_s = 2;
  l.cpus = 2;
  l.own_cpu_cores = 0.9;
  l.outside_cpu_cores = 1.1;
  l.steal_cores = 0.0;
  l.resolution_cores = 0.02;
  l.loadavg_1m_before = 3.5;
  auto j = ToJson(l);
  CHECK(j.at("loadavg_1m_after").is_null());
  auto back = SystemLoadFromJson(j, "r.json");
  CHECK(ToJson(back) == j);
  auto bad = j;
  bad["outside_cpu_cores"] = "lots";
  try {
    SystemLoadFromJson(bad, "r.json");
    FAIL("expected a FileError");
  } catch (const FileError& e) {
    CHECK(e.field() == "system_load.outside_cpu_cores");
  }

  CpuFrequencyPolicy c;
  c.governor = "schedutil";
  auto cj = ToJson(c);
  CHECK(cj.at("turbo").is_null());
  CHECK(ToJson(CpuFrequencyPolicyFromJson(cj, "m.json")) == cj);
  cj["turbo"] = "yes";
  CHECK_THROWS_AS(CpuFrequencyPolicyFromJson(cj, "m.json"), FileError);
}
