// The inductor train check's float64 judgement (JudgeAgainstFloat64): a
// compiled output is accepted by its distance from a float64 eager output,
// measured against float32 eager's own distance, never against eager alone.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "collector/backends/inductor_backend.h"

using torchgauge::collector::JudgeAgainstFloat64;

namespace {

// A float64 reference and a float32 copy with noise of RMS about `rms`.
torch::Tensor Noisy(const torch::Tensor& ref, double rms, int64_t seed) {
  torch::manual_seed(seed);
  return (ref + rms * torch::randn_like(ref)).to(torch::kFloat);
}

}  // namespace

TEST_CASE("float64 judgement: a compiled output no farther from float64 than twice eager's passes; three times fails") {
  torch::manual_seed(0);
  const auto ref = torch::randn({64, 64}, torch::kDouble);  // 4,096 elements: multiplier 2
  const auto eager = Noisy(ref, 1e-2, 1);
  const auto close = JudgeAgainstFloat64(Noisy(ref, 1.5e-2, 2), eager, ref, 1e-3);
  CHECK(close.multiplier == 2.0);
  CHECK(close.pass);
  CHECK(close.eager_rmse == doctest::Approx(1e-2).epsilon(0.05));
  CHECK(close.compiled_rmse == doctest::Approx(1.5e-2).epsilon(0.05));
  const auto far = JudgeAgainstFloat64(Noisy(ref, 3e-2, 3), eager, ref, 1e-3);
  CHECK_FALSE(far.pass);
  CHECK(far.bound == doctest::Approx(2 * far.eager_rmse + 1e-4));
}

TEST_CASE("float64 judgement: small tensors and 1x1 kernels get a multiplier of 3") {
  torch::manual_seed(0);
  const auto bias = torch::randn({999}, torch::kDouble);
  const auto kernel = torch::randn({64, 32, 1, 1}, torch::kDouble);  // 2,048 elements, 1x1
  const auto conv = torch::randn({16, 16, 3, 3}, torch::kDouble);    // 2,304 elements, 3x3
  CHECK(JudgeAgainstFloat64(bias.to(torch::kFloat), bias.to(torch::kFloat), bias, 1e-3).multiplier == 3.0);
  CHECK(JudgeAgainstFloat64(kernel.to(torch::kFloat), kernel.to(torch::kFloat), kernel, 1e-3).multiplier == 3.0);
  CHECK(JudgeAgainstFloat64(conv.to(torch::kFloat), conv.to(torch::kFloat), conv, 1e-3).multiplier == 2.0);
  // 2.5 times eager's distance: within 3 for the 1x1 kernel, beyond 2 for the 3x3 one.
  CHECK(JudgeAgainstFloat64(Noisy(kernel, 2.5e-2, 1), Noisy(kernel, 1e-2, 2), kernel, 1e-3).pass);
  CHECK_FALSE(JudgeAgainstFloat64(Noisy(conv, 2.5e-2, 1), Noisy(conv, 1e-2, 2), conv, 1e-3).pass);
}

TEST_CASE("float64 judgement: a missing or misshapen output fails; the tolerance floor admits exact eager") {
  const auto ref = torch::randn({2000}, torch::kDouble);
  CHECK_FALSE(JudgeAgainstFloat64(torch::Tensor(), ref.to(torch::kFloat), ref, 1e-3).pass);
  CHECK_FALSE(JudgeAgainstFloat64(ref.to(torch::kFloat).reshape({40, 50}), ref.to(torch::kFloat), ref, 1e-3).pass);
  // Eager equal to float64 (after rounding): the compiled side may differ by tolerance / 10 in RMSE.
  CHECK(JudgeAgainstFloat64(Noisy(ref, 5e-5, 1), ref.to(torch::kFloat), ref, 1e-3).pass);
  CHECK_FALSE(JudgeAgainstFloat64(Noisy(ref, 5e-4, 1), ref.to(torch::kFloat), ref, 1e-3).pass);
}
