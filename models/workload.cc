#include "models/workload.h"

#include <torch/cuda.h>
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
