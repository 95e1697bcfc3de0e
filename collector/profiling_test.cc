// The profiling pass's FLOP count: a step whose work no FLOP formula covers
// has its FLOPs not measured (null), never 0; a step with a counted operator
// has the formula's count (2·m·n·k for a matmul, as torch.utils.flop_counter).
#include <doctest/doctest.h>

#include <torch/torch.h>

#include "collector/profiling.h"

using namespace torchgauge;

TEST_CASE("profiling: no operator with a FLOP formula ran, so the FLOPs are null, not 0") {
  const auto x = torch::randn({64, 64});
  const auto out = collector::ProfileSteps([&] { (void)torch::relu(x).exp(); }, [] {}, 2, c10::DeviceType::CPU, "");
  CHECK_FALSE(out.flops_per_iter.has_value());
  CHECK(out.flop_counted_ops.empty());
  CHECK_FALSE(out.operators.empty());  // the operators were recorded all the same
}

TEST_CASE("profiling: a matmul is counted by its formula, per iteration") {
  const auto a = torch::randn({32, 48}), b = torch::randn({48, 16});
  const auto out = collector::ProfileSteps([&] { (void)torch::mm(a, b); }, [] {}, 3, c10::DeviceType::CPU, "");
  REQUIRE(out.flops_per_iter.has_value());
  CHECK(*out.flops_per_iter == doctest::Approx(2.0 * 32 * 48 * 16));
}
