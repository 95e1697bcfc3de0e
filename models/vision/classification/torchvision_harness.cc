#include "models/vision/classification/torchvision_harness.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

namespace torchgauge::models {

namespace {

class TorchvisionWorkload : public LossWorkload {
 public:
  TorchvisionWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
                      std::function<torch::Tensor(const torch::Tensor&)> forward, int64_t num_classes,
                      VisionTargets targets)
      : net_(std::move(net)), forward_(std::move(forward)) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const auto on_device = torch::TensorOptions(opt.device);
    const int64_t side = opt.smoke ? 64 : 224;
    inputs_["images"] = torch::randn({opt.batch_size, 3, side, side}, on_device);
    inputs_["target"] = targets == VisionTargets::kSoft
                            ? torch::rand({opt.batch_size, num_classes}, on_device)
                            : torch::randint(0, num_classes, {opt.batch_size}, on_device.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(1e-3));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return forward_(inputs_.at("images")); }

 private:
  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits, inputs_.at("target"));
  }

  std::shared_ptr<torch::nn::Module> net_;
  std::function<torch::Tensor(const torch::Tensor&)> forward_;
};

}  // namespace

std::unique_ptr<Workload> MakeTorchvisionWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
                                                  std::function<torch::Tensor(const torch::Tensor&)> forward,
                                                  int64_t num_classes, VisionTargets targets) {
  return std::make_unique<TorchvisionWorkload>(opt, std::move(net), std::move(forward), num_classes, targets);
}

}  // namespace torchgauge::models
