// Every registered model has a static cost weight, so a new model cannot
// silently weigh "typical" in a sharded night without --cost-from.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "collector/cost_weights.h"
#include "models/workload.h"

using namespace torchgauge;

TEST_CASE("cost weights: every registered model is in the table") {
  for (const auto& m : models::Registry()) {
    INFO(m.id);
    CHECK(collector::ForwardGflopsPerSample(m.id).has_value());
  }
}

TEST_CASE("cost weights: the reference weighs about 1, heavier models more, nothing less than the floor") {
  CHECK(collector::StaticModelWeight("resnet50", 32) == doctest::Approx(1.0 + collector::kStepFloor));
  CHECK(collector::StaticModelWeight("vgg16", 64) > collector::StaticModelWeight("resnet18", 16));
  CHECK(collector::StaticModelWeight("test_tiny", 8) == doctest::Approx(collector::kStepFloor));
  CHECK(collector::StaticModelWeight("no_such_model", 8) == 1.0);
}
