#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/contract/result.h"
#include "core/io/json_io.h"

using namespace torchgauge::core;

namespace {
RunResult Sample() {
  RunResult r;
  r.build_id = "b1";
  r.platform_id = "cpu-x86_64-2c";
  r.model = {"resnet50", "resnet50", "vision", "image classification", "torchvision.models.resnet50"};
  r.mode = "train";
  r.batch_size = 4;
  r.started_at = "2026-11-22T10:00:00Z";
  Timing t;
  t.samples_ms = {1, 2, 3};
  t.median_ms = 2;
  t.repetitions = 3;
  t.clock = "steady_clock";
  r.timing = t;
  Memory m;
  m.cpu_peak_rss_bytes = 1234;
  r.memory = m;
  return r;
}
}  // namespace

TEST_CASE("run result round-trips and keeps unmeasured values null") {
  auto j = ToJson(Sample());
  CHECK(j["gpu_breakdown"].is_null());
  CHECK(j["memory"]["gpu_peak_allocated_bytes"].is_null());
  auto back = RunResultFromJson(j, "x.json");
  CHECK(back.model.id == "resnet50");
  CHECK(back.timing->samples_ms.size() == 3);
  CHECK(!back.gpu_breakdown);
  CHECK(!back.memory->gpu_peak_allocated_bytes);
  CHECK(*back.memory->cpu_peak_rss_bytes == 1234);
}

TEST_CASE("a compiled backend's run keeps its setup time; eager has none") {
  RunResult eager = Sample();
  CHECK(ToJson(eager)["timing"].count("backend_setup_ms") == 0);
  CHECK(!RunResultFromJson(ToJson(eager), "e.json").timing->backend_setup_ms);
  RunResult ts = Sample();
  ts.backend = "torchscript";
  ts.timing->backend_setup_ms = 812.5;
  auto back = RunResultFromJson(ToJson(ts), "t.json");
  CHECK(back.backend == "torchscript");
  CHECK(*back.timing->backend_setup_ms == doctest::Approx(812.5));
  auto bad = ToJson(ts);
  bad["timing"]["backend_setup_ms"] = -1;
  CHECK_THROWS_AS(RunResultFromJson(bad, "t.json"), FileError);
  auto unknown = ToJson(ts);
  unknown["backend"] = "tensorrt";
  CHECK_THROWS_AS(RunResultFromJson(unknown, "t.json"), FileError);
}

TEST_CASE("the paired pass: one process's speedup, pooled processes' interval, the JSON contract") {
  auto part = [](std::vector<double> eager, std::vector<double> compiled) {
    RunResult r = Sample();
    r.backend = "torchscript";
    r.settings = RunSettings{};
    PairedTiming p;
    p.order = "interleaved";
    p.eager_samples_ms = std::move(eager);
    p.compiled_samples_ms = std::move(compiled);
    SummarizePaired(p);
    r.paired = p;
    return r;
  };
  RunResult one = part({4, 6, 5}, {2, 3, 2.5});
  CHECK(one.paired->eager_median_ms == doctest::Approx(5));
  CHECK(one.paired->compiled_median_ms == doctest::Approx(2.5));
  CHECK(one.paired->speedup == doctest::Approx(2));
  CHECK(ToJson(one)["paired"]["speedup_low"].is_null());
  RunResult pooled = PoolProcesses({part({4, 6, 5}, {2, 3, 2.5}), part({3, 3, 3}, {3, 3, 3}), part({9}, {6})});
  REQUIRE(pooled.paired);
  CHECK(pooled.paired->process_speedups == std::vector<double>{2, 1, 1.5});
  CHECK(pooled.paired->speedup == doctest::Approx(1.5));  // the median ratio, not the pooled medians'
  CHECK(*pooled.paired->speedup_low == doctest::Approx(1));
  CHECK(*pooled.paired->speedup_high == doctest::Approx(2));
  CHECK(pooled.paired->eager_samples_ms.size() == 7);
  RunResult back = RunResultFromJson(ToJson(pooled), "p.json");
  CHECK(back.paired->process_speedups == pooled.paired->process_speedups);
  CHECK(*back.paired->speedup_high == doctest::Approx(2));
  CHECK(back.settings->pairing == "interleaved");
  auto bad = ToJson(one);
  bad["paired"]["order"] = "sideways";
  CHECK_THROWS_WITH_AS(RunResultFromJson(bad, "p.json"), doctest::Contains("paired.order"), FileError);
  bad = ToJson(one);
  bad["paired"]["compiled_samples_ms"] = nlohmann::json::array();
  CHECK_THROWS_WITH_AS(RunResultFromJson(bad, "p.json"), doctest::Contains("paired.compiled_samples_ms"), FileError);
  bad = ToJson(one);
  bad["settings"]["pairing"] = "sometimes";
  CHECK_THROWS_WITH_AS(RunResultFromJson(bad, "p.json"), doctest::Contains("settings.pairing"), FileError);
  PairedTiming empty;
  CHECK_THROWS_AS(SummarizePaired(empty), std::invalid_argument);
}

TEST_CASE("errors name the file and the field") {
  auto j = ToJson(Sample());
  j["mode"] = "fly";
  try {
    RunResultFromJson(j, "runs/x.json");
    FAIL("expected an error");
  } catch (const FileError& e) {
    CHECK(e.field() == "mode");
    CHECK(std::string(e.what()).find("runs/x.json") != std::string::npos);
  }
  auto k = ToJson(Sample());
  k["timing"].erase("median_ms");
  try {
    RunResultFromJson(k, "y.json");
    FAIL("expected an error");
  } catch (const FileError& e) {
    CHECK(e.field() == "timing.median_ms");
  }
}

TEST_CASE("an integer field holding a float or an out-of-range number is refused, not cast") {
  // Found by the run_result fuzzer (tests/fuzz/corpus/run_result/regress-float-to-int.json):
  // nlohmann casts 1e30 to int64_t, undefined behaviour that UBSan reports.
  for (const nlohmann::json& bad : {nlohmann::json(1e30), nlohmann::json(2.5), nlohmann::json(uint64_t{1} << 63)}) {
    auto j = ToJson(Sample());
    j["batch_size"] = bad;
    try {
      RunResultFromJson(j, "z.json");
      FAIL("expected an error for " << bad.dump());
    } catch (const FileError& e) {
      CHECK(e.field() == "batch_size");
    }
  }
}

TEST_CASE("a result's settings pass the suite's checks: repeat 0 is refused as in a suite file") {
  RunResult r = Sample();
  r.settings = RunSettings{};
  auto j = ToJson(r);
  CHECK(RunResultFromJson(j, "s.json").settings == RunSettings{});
  for (const auto& [field, value] : {std::pair<const char*, nlohmann::json>{"repeat", 0},
                                     {"processes", 101},
                                     {"timeout_s", 0},
                                     {"warmup", -1},
                                     {"seed", -1}}) {
    auto bad = j;
    bad["settings"][field] = value;
    try {
      RunResultFromJson(bad, "s.json");
      FAIL("accepted settings." << field << " = " << value.dump());
    } catch (const FileError& e) {
      CHECK(e.field() == std::string("settings.") + field);
    }
  }
}

TEST_CASE("a newer schema version is refused with advice") {
  auto j = ToJson(Sample());
  j["schema_version"] = 99;
  CHECK_THROWS_WITH_AS(RunResultFromJson(j, "z.json"), doctest::Contains("upgrade TorchGauge"), FileError);
  // Past INT_MAX it is still newer (it once read back as int 1, version 1).
  j["schema_version"] = nlohmann::json::parse("4294967297");
  CHECK_THROWS_WITH_AS(RunResultFromJson(j, "z.json"), doctest::Contains("version 4294967297 is newer"), FileError);
}

TEST_CASE("pooling worker processes keeps every sample and recomputes the summary") {
  auto part = [](std::vector<double> samples, int64_t rss) {
    RunResult r = Sample();
    r.status = "ok";
    r.settings = RunSettings{};
    Timing t;
    t.clock = "steady_clock";
    t.samples_ms = std::move(samples);
    t.samples_per_step = 8;
    t.repetitions = static_cast<int>(t.samples_ms.size());
    SummarizeTiming(t);
    r.timing = t;
    r.memory = Memory{};
    r.memory->cpu_peak_rss_bytes = rss;
    r.flops = Flops{};
    r.flops->analytic_flops_per_iter = 1e9;
    r.duration_s = 2.0;
    return r;
  };
  RunResult pooled = PoolProcesses({part({1, 2, 3}, 100), part({10, 20, 30}, 300), part({4, 5, 6}, 200)});
  REQUIRE(pooled.timing);
  CHECK(pooled.timing->samples_ms == std::vector<double>{1, 2, 3, 10, 20, 30, 4, 5, 6});
  CHECK(pooled.timing->process_medians_ms == std::vector<double>{2, 20, 5});
  CHECK(pooled.timing->repetitions == 9);
  CHECK(pooled.timing->median_ms == doctest::Approx(5));
  CHECK(*pooled.timing->throughput_per_s == doctest::Approx(8 / 0.005));
  CHECK(pooled.settings->processes == 3);
  CHECK(*pooled.memory->cpu_peak_rss_bytes == 300);
  CHECK(*pooled.flops->achieved_tflops_analytic == doctest::Approx(1e9 / 0.005 / 1e12));
  CHECK(*pooled.duration_s == doctest::Approx(6.0));
  // The split survives the JSON contract.
  RunResult back = RunResultFromJson(ToJson(pooled), "pooled.json");
  CHECK(back.timing->process_medians_ms == pooled.timing->process_medians_ms);
  CHECK(back.settings->processes == 3);
  // One process: nothing to record.
  RunResult single = PoolProcesses({part({1, 2, 3}, 100)});
  CHECK(single.timing->process_medians_ms.empty());
  CHECK(ToJson(single)["timing"].count("process_medians_ms") == 0);
}

TEST_CASE("a pooled run keeps the system load of its busiest window and is judged by it") {
  auto part = [](std::vector<double> samples, std::optional<double> outside, std::optional<double> steal) {
    RunResult r = Sample();
    r.status = "ok";
    r.settings = RunSettings{};
    Timing t;
    t.clock = "steady_clock";
    t.samples_ms = std::move(samples);
    t.repetitions = static_cast<int>(t.samples_ms.size());
    SummarizeTiming(t);
    r.timing = t;
    r.system_load.reset();
    if (outside) {
      SystemLoad l;
      l.window_s = 2;
      l.cpus = 2;
      l.own_cpu_cores = 1;
      l.outside_cpu_cores = *outside;
      l.steal_cores = steal;
      l.resolution_cores = 0.01;
      r.system_load = l;
    }
    return r;
  };
  const std::vector<double> steady{10, 10.1, 9.9};
  // The second process shared the machine with 1.2 cores of other work: the
  // pool is noisy although the first (profiled) process was quiet.
  RunResult pooled = PoolProcesses({part(steady, 0.02, 0.0), part(steady, 1.2, 0.0), part(steady, 0.1, 0.0)});
  REQUIRE(pooled.system_load);
  CHECK(pooled.system_load->outside_cpu_cores == doctest::Approx(1.2));
  CHECK(RunNoise(pooled).machine_busy);
  CHECK(RunNoise(pooled).noisy);
  // Steal counts as other work, as ClassifyNoise counts it.
  pooled = PoolProcesses({part(steady, 0.3, 0.0), part(steady, 0.05, 0.5)});
  CHECK(pooled.system_load->outside_cpu_cores == doctest::Approx(0.05));
  // Quiet everywhere: not noisy.
  pooled = PoolProcesses({part(steady, 0.02, 0.0), part(steady, 0.03, 0.0)});
  CHECK(!RunNoise(pooled).noisy);
  // A process without a measurement is passed over; none with one: unset.
  pooled = PoolProcesses({part(steady, std::nullopt, std::nullopt), part(steady, 0.4, std::nullopt)});
  REQUIRE(pooled.system_load);
  CHECK(pooled.system_load->outside_cpu_cores == doctest::Approx(0.4));
  pooled = PoolProcesses({part(steady, std::nullopt, std::nullopt), part(steady, std::nullopt, std::nullopt)});
  CHECK(!pooled.system_load);
}

TEST_CASE("a malformed top kernel names its field instead of a raw JSON type error") {
  RunResult r = Sample();
  r.status = "ok";
  r.gpu_breakdown = GpuBreakdown{};
  r.gpu_breakdown->iterations = 1;
  nlohmann::json j = ToJson(r);
  j["gpu_breakdown"]["top_kernels"] = nlohmann::json::array({{{"name", 5}, {"total_ms", 1.0}, {"count", 1}}});
  CHECK_THROWS_WITH_AS(RunResultFromJson(j, "k.json"), doctest::Contains("gpu_breakdown.top_kernels[0].name"),
                       FileError);
  j["gpu_breakdown"]["top_kernels"] = nlohmann::json::object();
  CHECK_THROWS_WITH_AS(RunResultFromJson(j, "k.json"), doctest::Contains("must be an array"), FileError);
  j["gpu_breakdown"]["top_kernels"] = nlohmann::json::array({{{"name", "k"}, {"total_ms", 2.5}, {"count", 3}}});
  RunResult back = RunResultFromJson(j, "k.json");
  REQUIRE(back.gpu_breakdown->top_kernels.size() == 1);
  CHECK(back.gpu_breakdown->top_kernels[0].count == 3);
}

TEST_CASE("host breakdown and system load round-trip; older results without them load; noise is judged from them") {
  RunResult r = Sample();
  CHECK(ToJson(r).count("host_breakdown") == 0);
  CHECK(!RunResultFromJson(ToJson(r), "old.json").host_breakdown);
  HostBreakdown h;
  h.iterations = 2;
  h.wall_ms = 10;
  h.operator_ms = 8;
  h.compute_ms = 6;
  h.data_movement_ms = 2;
  h.outside_operators_ms = 2;
  h.compute_fraction = 0.6;
  h.data_movement_fraction = 0.2;
  h.outside_operators_fraction = 0.2;
  h.data_movement_ops = {"aten::copy_"};
  h.profiler_overhead_per_op_us = 1.5;
  r.host_breakdown = h;
  SystemLoad load;
  load.window_s = 2;
  load.cpus = 2;
  load.own_cpu_cores = 1;
  load.outside_cpu_cores = 1.2;
  load.resolution_cores = 0.01;
  r.system_load = load;
  const RunResult back = RunResultFromJson(ToJson(r), "new.json");
  REQUIRE(back.host_breakdown);
  CHECK(back.host_breakdown->compute_ms == doctest::Approx(6));
  CHECK(*back.host_breakdown->profiler_overhead_per_op_us == doctest::Approx(1.5));
  REQUIRE(back.system_load);
  CHECK(back.system_load->outside_cpu_cores == doctest::Approx(1.2));
  CHECK(RunNoise(back).noisy);
  CHECK(RunNoise(back).machine_busy);
  r.system_load->outside_cpu_cores = 0;
  CHECK(!RunNoise(r).noisy);  // CoV of {1,2,3} is 0 here: Sample() leaves the summary unset
  auto bad = ToJson(r);
  bad["host_breakdown"]["iterations"] = 0;
  CHECK_THROWS_WITH_AS(RunResultFromJson(bad, "bad.json"), doctest::Contains("host_breakdown"), FileError);
}
