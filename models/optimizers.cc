#include "models/optimizers.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace torchgauge::models {

HookedAdam::HookedAdam(std::vector<torch::Tensor> params, const torch::optim::AdamOptions& options, Hook before_step)
    : torch::optim::Adam(std::move(params), options), before_step_(std::move(before_step)) {}

torch::Tensor HookedAdam::step(LossClosure closure) {
  if (before_step_) before_step_(*this);
  return torch::optim::Adam::step(std::move(closure));
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double NoamRate(double factor, double d_model, double warmup, int64_t step) {
  const double s = static_cast<double>(step);
  return factor * std::pow(d_model, -0.5) * std::min(std::pow(s, -0.5), s * std::pow(warmup, -1.5));
}

}  // namespace torchgauge::models
