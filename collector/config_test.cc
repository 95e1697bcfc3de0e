// The suite file's "probe" object and the platform id of a thread-limited
// collection.
#include <doctest/doctest.h>

#include "collector/config.h"
#include "collector/environment.h"

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
  CHECK(collector::AutoPlatformId(cpu, 0) == "cpu-x86_64-2c");
  CHECK(collector::AutoPlatformId(cpu, 1) == "cpu-x86_64-2c-1t");
  const json gpu = {{"device", {{"vendor", "NVIDIA"}, {"name", "NVIDIA H100 80GB HBM3"}}},
                    {"host", {{"arch", "x86_64"}}},
                    {"cpu", {{"logical_cores", 16}}},
                    {"libtorch", {{"cuda_runtime", "13.0"}, {"hip_runtime", nullptr}}}};
  CHECK(collector::AutoPlatformId(gpu, 4).ends_with("-cu130-4t"));
}
