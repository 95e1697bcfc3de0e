// The tanh-squashed Gaussian policy distribution shared by the RL workloads
// (soft_actor_critic: TorchBench's util/distribution.SquashedNormal; drq:
// drq's utils.SquashedNormal; the two are the same distribution).
#pragma once

#include <torch/types.h>

namespace torchgauge::models {

// A reparameterised sample: the pre-tanh Gaussian value and its tanh. The
// log-density of a fresh sample uses pre_tanh directly (the distribution's
// cache in both references), so the inverse clamp (-0.99, 0.99) of their
// atanh never comes into play on this path.
struct SquashedSample {
  torch::Tensor pre_tanh, action;
};

// x = mu + sigma * eps, eps ~ N(0, 1) from the current generator.
SquashedSample SquashedRSample(const torch::Tensor& mu, const torch::Tensor& sigma);

// Elementwise log-density of the sample's action: the Gaussian log-density
// of pre_tanh minus log|d tanh/dx|, written in the stable form
// 2 (log 2 - x - softplus(-2x)).
torch::Tensor SquashedLogProb(const SquashedSample& s, const torch::Tensor& mu, const torch::Tensor& sigma);

}  // namespace torchgauge::models
