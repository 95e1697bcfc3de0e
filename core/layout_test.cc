#include <doctest/doctest.h>

#include <stdexcept>

#include "core/layout.h"

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
