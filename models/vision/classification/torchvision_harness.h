// TorchBench's torchvision harness (torchbenchmark/util/framework/vision/
// model_factory.py), shared by the torchvision families: images of 224x224
// (64x64 in smoke runs: behind adaptive pooling the image size is an input
// dimension, not architecture), Adam with its defaults (lr 1e-3, betas
// 0.9/0.999, eps 1e-8) and CrossEntropyLoss. Targets are drawn once at
// set-up, so that a step does only Listing 1's work: forward, loss,
// zero_grad, backward, optimizer step.
#pragma once

#include <functional>
#include <memory>

#include "models/workload.h"

namespace torchgauge::models {

enum class VisionTargets {
  kSoft,          // uniform random, shaped like the logits (the harness's default)
  kClassIndices,  // random class indices (squeezenet1_1's own train())
};

// `net` is the family's network; `forward` runs it on an image batch.
// Inputs are named "images" and "target", as the parity references name them.
std::unique_ptr<Workload> MakeTorchvisionWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
                                                  std::function<torch::Tensor(const torch::Tensor&)> forward,
                                                  int64_t num_classes = 1000,
                                                  VisionTargets targets = VisionTargets::kSoft);

}  // namespace torchgauge::models
