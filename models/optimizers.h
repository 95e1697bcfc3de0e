// Optimizers whose step() also does the host-side work that a model's
// training loop does between backward and the update: a learning-rate
// schedule, gradient clipping. Every caller of step() then does that work:
// the model's own eager TrainStep() and the inductor backend's compiled train
// step, which replaces forward, loss and backward with one package call and
// then calls the model's optimizer (Workload::SplitTrainStep).
#pragma once

#include <functional>
#include <vector>

#include <torch/optim/adam.h>

namespace torchgauge::models {

// torch::optim::Adam that runs `before_step` ahead of every update.
class HookedAdam : public torch::optim::Adam {
 public:
  using Hook = std::function<void(HookedAdam&)>;
  HookedAdam(std::vector<torch::Tensor> params, const torch::optim::AdamOptions& options, Hook before_step);
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  Hook before_step_;
};

// Sets every parameter group's learning rate.
void SetLearningRate(torch::optim::Optimizer& optimizer, double lr);

// The Transformer's learning rate (Vaswani et al. 2017, eq. 3, as the
// ScheduledOptim of attention-is-all-you-need-pytorch and the
// TransformerOptimizer of Speech-Transformer compute it): factor *
// d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), for step >= 1.
double NoamRate(double factor, double d_model, double warmup, int64_t step);

}  // namespace torchgauge::models
