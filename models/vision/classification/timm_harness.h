// TorchBench's timm harness (torchbenchmark/util/framework/timm/
// model_factory.py + timm_config.py), shared by the timm_* convolutional
// families: the workload around the network, not the network.
//   - inputs: randn of the model's default_cfg["input_size"] (224x224 for most,
//     192x192 for dm_nfnet_f0); smoke runs use 64x64 (behind global pooling the
//     image size is an input dimension, not architecture);
//   - targets: class indices drawn uniformly (TorchBench draws them with
//     .random_(num_classes) every step; here once at set-up, so that a step does
//     only Listing 1's work);
//   - loss: CrossEntropyLoss;
//   - optimizer: timm create_optimizer(opt="sgd", lr=1e-4, momentum=0.9,
//     weight_decay=1e-4): Nesterov SGD; parameters with ndim <= 1, names ending
//     in ".bias" and the model's no_weight_decay() names get weight decay 0
//     (timm param_groups_weight_decay).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>

#include <torch/optim/sgd.h>

#include "models/workload.h"

namespace torchgauge::models {

struct TimmWorkloadConfig {
  int64_t image_size = 224;       // default_cfg["input_size"][1:]
  int64_t smoke_image_size = 64;  // used when WorkloadOptions::smoke
  int64_t num_classes = 1000;
  std::set<std::string> no_weight_decay;  // the model's no_weight_decay() names
};

// `net` is the family's network; `forward` runs it on an image batch. Inputs
// are named "images" and "target", as tests/parity/ref_timm.py names them.
std::unique_ptr<Workload> MakeTimmWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
                                           std::function<torch::Tensor(const torch::Tensor&)> forward,
                                           const TimmWorkloadConfig& config = {});

// timm's create_optimizer(opt="sgd", lr=1e-4, momentum=0.9, weight_decay=1e-4)
// for `net`, as TorchBench's TimmConfig builds it.
std::unique_ptr<torch::optim::SGD> MakeTimmSgd(torch::nn::Module& net, const std::set<std::string>& no_weight_decay);

}  // namespace torchgauge::models
