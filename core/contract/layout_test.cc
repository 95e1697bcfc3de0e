#include <doctest/doctest.h>

#include <stdexcept>

#include "core/contract/layout.h"

using namespace torchgauge::core;

TEST_CASE("safe ids") {
  CHECK(IsSafeId("2.11.0-20261122"));
  CHECK(IsSafeId("nvidia-h100-80gb-cu130"));
  CHECK(IsSafeId("cpu-x86_64-2c"));
  CHECK_FALSE(IsSafeId(""));
  CHECK_FALSE(IsSafeId(".."));
  CHECK_FALSE(IsSafeId("../etc"));
  CHECK_FALSE(IsSafeId("a/b"));
  CHECK_FALSE(IsSafeId(".hidden"));
  CHECK_FALSE(IsSafeId("<script>"));
  CHECK_FALSE(IsSafeId("caf\xc3\xa9"));
  CHECK_FALSE(IsSafeId(std::string(129, 'a')));
}

TEST_CASE("results layout") {
  auto dir = PlatformDir("results", "b1", "cpu-x86_64-2c");
  CHECK(dir == std::filesystem::path("results/b1/cpu-x86_64-2c"));
  CHECK(ManifestPath(dir) == dir / "manifest.json");
  CHECK(RunPath(dir, {"resnet50", "train", "eager", "fp32"}) == dir / "runs" / "resnet50.train.eager.fp32.json");
  CHECK_THROWS_AS(PlatformDir("results", "../x", "p"), std::invalid_argument);
}

TEST_CASE("collector working files") {
  const std::filesystem::path dir = "results/b1/p1";
  const RunKey key{"resnet50", "train", "eager", "fp32"};
  CHECK(ProcessStem(key, 0, 1) == "resnet50.train.eager.fp32");
  CHECK(ProcessStem(key, 2, 3) == "resnet50.train.eager.fp32.p2");
  const auto stem = ProcessStem(key, 1, 2);
  CHECK(SpecPath(dir, stem) == dir / ".work" / "resnet50.train.eager.fp32.p1.spec.json");
  CHECK(PartResultPath(dir, stem) == dir / ".work" / "resnet50.train.eager.fp32.p1.result.json");
  CHECK(LogPath(dir, stem) == dir / "logs" / "resnet50.train.eager.fp32.p1.log");
  CHECK(TracePath(dir, key) == dir / "traces" / "resnet50.train.eager.fp32.trace.json");
  CHECK(WorkDir(dir) == dir / ".work");
  CHECK(LogsDir(dir) == dir / "logs");
  CHECK(BisectResultsRoot("w") == std::filesystem::path("w/results"));
  CHECK(BisectLogPath("w") == std::filesystem::path("w/bisect.log"));
}
