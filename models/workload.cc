#include "models/workload.h"

#include <torch/cuda.h>
#include <torch/optim/optimizer.h>
#include <torch/torch.h>

namespace torchgauge::models {

void Workload::Step(Mode mode) {
  if (mode == Mode::kTrain) {
    if (compiled_train_step_)
      compiled_train_step_();
    else
      TrainStep();
  } else {
    c10::InferenceMode guard;
    RunForward();
  }
}

LossWorkload::LossWorkload(ZeroGradAt zero_grad_at) : zero_grad_at_(zero_grad_at) {}
LossWorkload::~LossWorkload() = default;

torch::Tensor LossWorkload::TrainStep() {
  TORCH_CHECK(optimizer_ != nullptr, "TrainStep() needs a workload built in train mode");
  if (zero_grad_at_ == ZeroGradAt::kBeforeForward) optimizer_->zero_grad();
  torch::Tensor loss = Loss(RunForward());
  if (zero_grad_at_ == ZeroGradAt::kBeforeBackward) optimizer_->zero_grad();
  loss.backward();
  optimizer_->step();
  if (zero_grad_at_ == ZeroGradAt::kAfterStep) optimizer_->zero_grad();
  return Reported(loss).detach();
}

std::optional<Workload::TrainParts> LossWorkload::SplitTrainStep() {
  if (!optimizer_) return std::nullopt;
  return TrainParts{[this] { return Loss(Forward()); }, optimizer_.get()};
}

void Workload::CastTo(torch::ScalarType dtype) {
  net().to(dtype);
  for (auto& [name, tensor] : inputs_) {
    if (tensor.is_floating_point()) tensor = tensor.to(dtype);
  }
}

void SeedAll(uint64_t seed) {
  torch::manual_seed(seed);
  if (torch::cuda::is_available()) torch::cuda::manual_seed_all(seed);
}

}  // namespace torchgauge::models
