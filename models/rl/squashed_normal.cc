#include "models/rl/squashed_normal.h"

#include <torch/nn/functional/activation.h>

#include <cmath>

namespace torchgauge::models {

SquashedSample SquashedRSample(const torch::Tensor& mu, const torch::Tensor& sigma) {
  auto x = mu + sigma * torch::randn_like(mu);
  return {x, torch::tanh(x)};
}

torch::Tensor SquashedLogProb(const SquashedSample& s, const torch::Tensor& mu, const torch::Tensor& sigma) {
  namespace F = torch::nn::functional;
  const double half_log_2pi = 0.5 * std::log(2.0 * M_PI);
  auto normal = -(s.pre_tanh - mu).pow(2) / (2 * sigma.pow(2)) - sigma.log() - half_log_2pi;
  auto log_det = 2.0 * (std::log(2.0) - s.pre_tanh - F::softplus(-2.0 * s.pre_tanh));
  return normal - log_det;
}

}  // namespace torchgauge::models
