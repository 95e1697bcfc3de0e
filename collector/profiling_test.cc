// The profiling pass's FLOP count: a step whose work no FLOP formula covers
// has its FLOPs not measured (null), never 0; a step with a counted operator
// has the formula's count (2·m·n·k for a matmul, as torch.utils.flop_counter),
// and a train step counts its backward pass (LibTorch's own profiler FLOPs
// counted a forward conv2d and nothing of convolution_backward).
#include <doctest/doctest.h>

#include <torch/torch.h>

#include "collector/profiling.h"

using namespace torchgauge;

TEST_CASE("profiling: no operator with a FLOP formula ran, so the FLOPs are null, not 0") {
  const auto x = torch::randn({64, 64});
  const auto out = collector::ProfileSteps([&] { (void)torch::relu(x).exp(); }, [] {}, 2, c10::DeviceType::CPU, "");
  CHECK_FALSE(out.flops_per_iter.has_value());
  CHECK(out.flop_counted_ops.empty());
  CHECK(out.flops_reason == "no operator with a FLOP formula ran");
  CHECK_FALSE(out.operators.empty());  // the operators were recorded all the same
}

TEST_CASE("profiling: a matmul is counted by its formula, per iteration") {
  const auto a = torch::randn({32, 48}), b = torch::randn({48, 16});
  const auto out = collector::ProfileSteps([&] { (void)torch::mm(a, b); }, [] {}, 3, c10::DeviceType::CPU, "");
  REQUIRE(out.flops_per_iter.has_value());
  CHECK(*out.flops_per_iter == doctest::Approx(2.0 * 32 * 48 * 16));
}

TEST_CASE("profiling: a convolution train step counts the backward pass") {
  torch::manual_seed(0);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).stride(2).padding(1));
  torch::nn::Linear fc(8 * 8 * 8, 10);
  auto x = torch::randn({2, 3, 16, 16});
  auto step = [&] { fc(conv(x).flatten(1)).sum().backward(); };
  step();
  auto p = collector::ProfileSteps(
      step, [] {}, 2, c10::DeviceType::CPU, "");
  const double conv_fwd = 8 * 8 * 9 * 2 * 8 * 3 * 2;
  const double fc_fwd = 2.0 * 2 * 512 * 10;
  // Forward; the weight gradient of the conv (x needs no grad); the linear's
  // input and weight gradients.
  REQUIRE(p.flops_per_iter.has_value());
  CHECK(*p.flops_per_iter == conv_fwd + conv_fwd + fc_fwd * 3);
  CHECK(p.flops_reason.empty());

  auto eval = collector::ProfileSteps(
      [&] {
        torch::NoGradGuard g;
        fc(conv(x).flatten(1));
      },
      [] {}, 1, c10::DeviceType::CPU, "");
  REQUIRE(eval.flops_per_iter.has_value());
  CHECK(*eval.flops_per_iter == conv_fwd + fc_fwd);
}
