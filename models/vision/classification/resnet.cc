#include "models/vision/classification/resnet.h"

#include <torch/torch.h>

#include <optional>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

ModelInfo Make(const std::string& id, const std::string& reference, ResNetConfig (*config)(), BatchSizes batch,
               BatchSizes smoke, std::optional<BatchSizes> cpu_batch = std::nullopt) {
  ModelInfo info;
  info.id = id;
  info.paper_name = id;
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = reference;
  info.default_batch = batch;
  info.smoke_batch = smoke;
  info.cpu_batch = cpu_batch;
  info.create = [config](const WorkloadOptions& opt) {
    const ResNetConfig c = config();
    ResNet net(c);
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward, c.num_classes);
  };
  return info;
}

}  // namespace

void AddResNetModels(std::vector<ModelInfo>& out) {
  // Default batch sizes: DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in
  // pytorch/benchmark torchbenchmark/models/<id>/__init__.py.
  out.push_back(Make("resnet18", "torchvision.models.resnet18", ResNet18Config, {16, 8}, {1, 1}));
  // resnet50 on a CPU device: about 4.1 GFLOPs an image forward, 3x that to
  // train, so 8/8 keeps a step near a second on 2 cores.
  out.push_back(Make("resnet50", "torchvision.models.resnet50", ResNet50Config, {32, 32}, {1, 1}, BatchSizes{8, 8}));
  // resnet152: 32/32 in torchbenchmark/models/resnet152/__init__.py. About
  // 11.5 GFLOPs a 224x224 image forward, so on a 2-core CPU a train step at 32
  // takes tens of seconds: the CPU suite runs 4 (train) and 8 (eval).
  out.push_back(Make("resnet152", "torchvision.models.resnet152", ResNet152Config, {32, 32}, {1, 1}, BatchSizes{4, 8}));
  out.push_back(Make("resnext50_32x4d", "torchvision.models.resnext50_32x4d", ResNeXt50_32x4dConfig, {8, 8}, {1, 1}));
}

}  // namespace torchgauge::models
