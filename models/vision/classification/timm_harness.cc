#include "models/vision/classification/timm_harness.h"

#include <torch/nn/functional/loss.h>

namespace torchgauge::models {

std::unique_ptr<torch::optim::SGD> MakeTimmSgd(torch::nn::Module& net, const std::set<std::string>& no_weight_decay) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : net.named_parameters()) {
    const auto& name = p.key();
    const bool is_bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const bool exempt = p.value().dim() <= 1 || is_bias || no_weight_decay.count(name) > 0;
    (exempt ? no_decay : decay).push_back(p.value());
  }
  auto options = [](double wd) {
    return std::make_unique<torch::optim::SGDOptions>(
        torch::optim::SGDOptions(1e-4).momentum(0.9).nesterov(true).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (!no_decay.empty()) groups.emplace_back(no_decay, options(0.0));
  if (!decay.empty()) groups.emplace_back(decay, options(1e-4));
  return std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(1e-4));
}

namespace {

class TimmWorkload : public LossWorkload {
 public:
  TimmWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
               std::function<torch::Tensor(const torch::Tensor&)> forward, const TimmWorkloadConfig& config)
      : net_(std::move(net)), forward_(std::move(forward)) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const auto on_device = torch::TensorOptions(opt.device);
    const int64_t side = opt.smoke ? config.smoke_image_size : config.image_size;
    inputs_["images"] = torch::randn({opt.batch_size, 3, side, side}, on_device);
    inputs_["target"] = torch::randint(0, config.num_classes, {opt.batch_size}, on_device.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) optimizer_ = MakeTimmSgd(*net_, config.no_weight_decay);
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return forward_(inputs_.at("images")); }

  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits, inputs_.at("target"));
  }

 private:
  std::shared_ptr<torch::nn::Module> net_;
  std::function<torch::Tensor(const torch::Tensor&)> forward_;
};

}  // namespace

std::unique_ptr<Workload> MakeTimmWorkload(const WorkloadOptions& opt, std::shared_ptr<torch::nn::Module> net,
                                           std::function<torch::Tensor(const torch::Tensor&)> forward,
                                           const TimmWorkloadConfig& config) {
  return std::make_unique<TimmWorkload>(opt, std::move(net), std::move(forward), config);
}

}  // namespace torchgauge::models
