// The suite file's "probe" object, the platform id of a thread-limited
// collection, and the peak-RSS reset.
#include <doctest/doctest.h>

#include "collector/config.h"
#include "collector/environment.h"
#include "collector/run_spec.h"

#include <map>
#include <set>
#include <vector>

using namespace torchgauge;
using nlohmann::json;

TEST_CASE("a suite's probe object sets the probe's sizes and survives the manifest round trip") {
  json j = collector::EmbeddedSuiteJson("smoke");
  const auto smoke = collector::ParseSuite(j, "smoke");
  CHECK(smoke.probe.matmul_n == 1024);  // the smoke suite keeps its probe cheap
  CHECK(smoke.probe.repeats == 3);
  const auto full = collector::ParseSuite(collector::EmbeddedSuiteJson("full"), "full");
  CHECK(full.probe.matmul_n == 0);  // the probe's own defaults
  CHECK(full.probe.repeats == collector::ProbeOptions{}.repeats);
  j["probe"] = {{"matmul_n", 256}, {"triad_elements", 1000000}, {"kernels", false}};
  auto s = collector::ParseSuite(j, "x.json");
  CHECK(s.probe.matmul_n == 256);
  CHECK(s.probe.triad_elements == 1000000);
  CHECK(!s.probe.kernels);
  CHECK(s.probe.warmup == collector::ProbeOptions{}.warmup);
  CHECK(collector::SuiteToJson(collector::ParseSuite(collector::SuiteToJson(s), "rt")) == collector::SuiteToJson(s));
}

TEST_CASE("a bad probe object is refused naming the field") {
  json j = collector::EmbeddedSuiteJson("smoke");
  j["probe"] = {{"repeats", 0}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("probe.repeats"));
  j["probe"] = {{"matmul", 256}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("probe.matmul"));
  j["probe"] = {{"matmul_n", -1}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("probe.matmul_n"));
  j["probe"] = 3;
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("'probe'"));
}

TEST_CASE("a thread-limited collection is a platform of its own") {
  const json cpu = {{"device", {{"vendor", "CPU"}, {"name", "AMD EPYC"}}},
                    {"host", {{"arch", "x86_64"}}},
                    {"cpu", {{"logical_cores", 2}}},
                    {"libtorch", {{"cuda_runtime", nullptr}, {"hip_runtime", nullptr}}}};
  CHECK(collector::AutoPlatformId(cpu) == "cpu-x86_64-2c");
  core::RunSettings s;
  CHECK(collector::AutoPlatformId(cpu, s) == "cpu-x86_64-2c");
  s.threads = 1;
  CHECK(collector::AutoPlatformId(cpu, s) == "cpu-x86_64-2c-1t");
  s.cpu_isa = "avx2";
  CHECK(collector::AutoPlatformId(cpu, s) == "cpu-x86_64-2c-1t-avx2");
  s.measure = "counted";
  CHECK(collector::AutoPlatformId(cpu, s) == "cpu-x86_64-2c-1t-counted");
  const json gpu = {{"device", {{"vendor", "NVIDIA"}, {"name", "NVIDIA H100 80GB HBM3"}}},
                    {"host", {{"arch", "x86_64"}}},
                    {"cpu", {{"logical_cores", 16}}},
                    {"libtorch", {{"cuda_runtime", "13.0"}, {"hip_runtime", nullptr}}}};
  core::RunSettings four;
  four.threads = 4;
  CHECK(collector::AutoPlatformId(gpu, four).ends_with("-cu130-4t"));
}

TEST_CASE("a counted run's effective settings: one thread, AVX2, no profiling or paired pass") {
  collector::SettingsOverrides o;
  o.measure = "counted";
  core::RunSettings s;
  collector::ApplyOverrides(o, s);
  CHECK(s.threads == 1);
  CHECK(s.cpu_isa == "avx2");
  CHECK(s.profile_iterations == 0);
  CHECK(s.pairing == "off");
  o.threads = 2;
  core::RunSettings t;
  CHECK_THROWS_WITH(collector::ApplyOverrides(o, t), doctest::Contains("one thread"));
  o.threads.reset();
  o.measure = "instructions";
  core::RunSettings u;
  CHECK_THROWS_WITH(collector::ApplyOverrides(o, u), doctest::Contains("--measure: must be one of: time, counted"));
}

TEST_CASE("backend_models limits a suite's backend to some models per mode; --backend lifts it") {
  const auto smoke = collector::ParseSuite(collector::EmbeddedSuiteJson("smoke"), "smoke");
  const auto plan = collector::BuildPlan(smoke, {}, "cpu");
  std::map<std::string, std::set<std::string>> inductor;  // mode -> models
  std::set<std::string> eager_models;
  for (const auto& r : plan) {
    if (r.backend == "inductor") inductor[r.mode].insert(r.model);
    if (r.backend == "eager") eager_models.insert(r.model);
  }
  const auto& listed = smoke.backend_models.at("inductor");
  CHECK(inductor["eval"] == std::set<std::string>(listed.at("eval").begin(), listed.at("eval").end()));
  CHECK(inductor["train"] == std::set<std::string>(listed.at("train").begin(), listed.at("train").end()));
  CHECK(inductor["train"].size() >= 2);
  CHECK(eager_models.size() == smoke.models.size());  // eager runs every model
  CHECK(collector::SuiteToJson(collector::ParseSuite(collector::SuiteToJson(smoke), "rt")) ==
        collector::SuiteToJson(smoke));

  collector::PlanFilters asked;
  asked.backends = {"inductor"};
  asked.modes = {"eval"};
  size_t runs = 0;
  for (const auto& r : collector::BuildPlan(smoke, asked, "cpu")) runs += r.backend == "inductor";
  CHECK(runs == smoke.models.size());  // asked for by name: every selected model

  json j = collector::EmbeddedSuiteJson("smoke");
  j["backend_models"] = {{"cudagraph", {{"eval", {"resnet18"}}}}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("backend_models.cudagraph"));
  j["backend_models"] = {{"inductor", {{"inference", {"resnet18"}}}}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("inference"));
  j["backend_models"] = {{"inductor", {{"eval", {"no_such_model"}}}}};
  CHECK_THROWS_WITH(collector::BuildPlan(collector::ParseSuite(j, "x.json"), {}, "cpu"),
                    doctest::Contains("no_such_model"));
}

TEST_CASE("backend_processes gives a backend's runs their own process count; --processes lifts it") {
  const auto smoke = collector::ParseSuite(collector::EmbeddedSuiteJson("smoke"), "smoke");
  REQUIRE(smoke.backend_processes.count("inductor"));
  REQUIRE(smoke.backend_processes.at("inductor") >= 2);  // the smoke site's speedups get intervals
  std::map<std::string, std::set<int>> counts;           // backend -> the processes its runs have
  for (const auto& r : collector::BuildPlan(smoke, {}, "cpu")) counts[r.backend].insert(r.settings.processes);
  CHECK(counts["eager"] == std::set<int>{smoke.settings.processes});
  for (const auto& [backend, n] : counts) {
    const auto own = smoke.backend_processes.find(backend);
    CHECK(n == std::set<int>{own == smoke.backend_processes.end() ? smoke.settings.processes : own->second});
  }
  CHECK(collector::SuiteToJson(collector::ParseSuite(collector::SuiteToJson(smoke), "rt"))["backend_processes"] ==
        collector::SuiteToJson(smoke)["backend_processes"]);

  auto asked = smoke;
  collector::SettingsOverrides o;
  o.repeat = 7;
  collector::ApplyOverrides(o, asked);
  CHECK(asked.backend_processes == smoke.backend_processes);  // other options leave the counts
  o.processes = 3;
  collector::ApplyOverrides(o, asked);
  for (const auto& r : collector::BuildPlan(asked, {}, "cpu")) CHECK(r.settings.processes == 3);

  json j = collector::EmbeddedSuiteJson("smoke");
  j["backend_processes"] = {{"cudagraph", 2}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("backend_processes.cudagraph"));
  j["backend_processes"] = {{"inductor", 0}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("must be >= 1"));
  j["backend_processes"] = {{"inductor", 2.5}};
  CHECK_THROWS_WITH(collector::ParseSuite(j, "x.json"), doctest::Contains("must be an integer"));
}

TEST_CASE("a suite's run settings are read by the one RunSettings reader, with its checks") {
  json j = collector::EmbeddedSuiteJson("smoke");
  j["repeat"] = 0;  // refused here as in a result or a manifest
  CHECK_THROWS_WITH_AS(collector::ParseSuite(j, "x.json"), "x.json: field 'repeat': must be >= 1",
                       std::invalid_argument);
  j = collector::EmbeddedSuiteJson("smoke");
  j["warmup"] = 1.5;
  CHECK_THROWS_WITH_AS(collector::ParseSuite(j, "x.json"), doctest::Contains("field 'warmup': must be an integer"),
                       std::invalid_argument);
  j = collector::EmbeddedSuiteJson("smoke");
  j["seed"] = -1;  // would wrap in a uint64_t
  CHECK_THROWS_WITH_AS(collector::ParseSuite(j, "x.json"), doctest::Contains("field 'seed'"), std::invalid_argument);
  j = collector::EmbeddedSuiteJson("smoke");
  j["batch_size_overrides"] = {{"resnet18", {{"eval", 1e30}}}};
  CHECK_THROWS_WITH_AS(collector::ParseSuite(j, "x.json"), doctest::Contains("batch_size_overrides.resnet18.eval"),
                       std::invalid_argument);
}

TEST_CASE("the peak-RSS reset lowers VmHWM, or says that the kernel refused it") {
  {
    // Raise the peak by 256 MiB, touched, then give it back.
    std::vector<char> big(256 << 20);
    for (size_t i = 0; i < big.size(); i += 4096) big[i] = 1;
    CHECK(collector::PeakRssBytes() >= collector::CurrentRssBytes());
  }
  const bool reset = collector::ResetPeakRss();
  MESSAGE("clear_refs reset allowed here: " << reset);
  // A worker records its peak's scope as "timed_steps" after a reset and
  // "process" when the reset failed (collector/worker.cc).
  if (reset) CHECK(collector::PeakRssBytes() < collector::CurrentRssBytes() + (128 << 20));
  CHECK_FALSE(collector::ResetPeakRss("/nonexistent-dir/clear_refs"));
}
