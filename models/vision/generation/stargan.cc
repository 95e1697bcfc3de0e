#include "models/vision/generation/stargan.h"

#include <torch/torch.h>

namespace torchgauge::models {
namespace {

constexpr int64_t kCDim = 5, kImageSize = 128, kConvDim = 64, kRepeat = 6;
constexpr double kLr = 1e-4, kBeta1 = 0.5, kBeta2 = 0.999, kLambdaCls = 1.0, kLambdaGp = 10.0;

using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

torch::nn::InstanceNorm2d Norm(int64_t c) {
  return torch::nn::InstanceNorm2d(torch::nn::InstanceNorm2dOptions(c).affine(true).track_running_stats(true));
}
torch::nn::ReLU Relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }
torch::nn::LeakyReLU Leaky() { return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.01)); }

struct ResidualBlockImpl : torch::nn::Module {
  explicit ResidualBlockImpl(int64_t dim)
      : main(register_module(
            "main", torch::nn::Sequential(Conv2d(Conv2dOptions(dim, dim, 3).padding(1).bias(false)), Norm(dim), Relu(),
                                          Conv2d(Conv2dOptions(dim, dim, 3).padding(1).bias(false)), Norm(dim)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x + main->forward(x); }
  torch::nn::Sequential main;
};
TORCH_MODULE(ResidualBlock);

struct GeneratorImpl : torch::nn::Module {
  GeneratorImpl() {
    torch::nn::Sequential m;
    m->push_back(Conv2d(Conv2dOptions(3 + kCDim, kConvDim, 7).padding(3).bias(false)));
    m->push_back(Norm(kConvDim));
    m->push_back(Relu());
    int64_t dim = kConvDim;
    for (int i = 0; i < 2; ++i, dim *= 2) {
      m->push_back(Conv2d(Conv2dOptions(dim, dim * 2, 4).stride(2).padding(1).bias(false)));
      m->push_back(Norm(dim * 2));
      m->push_back(Relu());
    }
    for (int64_t i = 0; i < kRepeat; ++i) m->push_back(ResidualBlock(dim));
    for (int i = 0; i < 2; ++i, dim /= 2) {
      m->push_back(torch::nn::ConvTranspose2d(
          torch::nn::ConvTranspose2dOptions(dim, dim / 2, 4).stride(2).padding(1).bias(false)));
      m->push_back(Norm(dim / 2));
      m->push_back(Relu());
    }
    m->push_back(Conv2d(Conv2dOptions(dim, 3, 7).padding(3).bias(false)));
    m->push_back(torch::nn::Tanh());
    main = register_module("main", m);
  }

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& c) {
    // Tile the domain label over the image and append it as channels.
    auto tiled = c.view({c.size(0), c.size(1), 1, 1}).repeat({1, 1, x.size(2), x.size(3)});
    return main->forward(torch::cat({x, tiled}, 1));
  }
  torch::nn::Sequential main{nullptr};
};
TORCH_MODULE(Generator);

struct DiscriminatorImpl : torch::nn::Module {
  explicit DiscriminatorImpl(int64_t image_size) {
    torch::nn::Sequential m;
    m->push_back(Conv2d(Conv2dOptions(3, kConvDim, 4).stride(2).padding(1)));
    m->push_back(Leaky());
    int64_t dim = kConvDim;
    for (int64_t i = 1; i < kRepeat; ++i, dim *= 2) {
      m->push_back(Conv2d(Conv2dOptions(dim, dim * 2, 4).stride(2).padding(1)));
      m->push_back(Leaky());
    }
    main = register_module("main", m);
    conv1 = register_module("conv1", Conv2d(Conv2dOptions(dim, 1, 3).padding(1).bias(false)));
    const int64_t kernel = image_size >> kRepeat;  // image_size / 2^repeat_num
    conv2 = register_module("conv2", Conv2d(Conv2dOptions(dim, kCDim, kernel).bias(false)));
  }

  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    auto h = main->forward(x);
    auto out_cls = conv2->forward(h);
    return {conv1->forward(h), out_cls.view({out_cls.size(0), out_cls.size(1)})};
  }
  torch::nn::Sequential main{nullptr};
  Conv2d conv1{nullptr}, conv2{nullptr};
};
TORCH_MODULE(Discriminator);

struct StarGanImpl : torch::nn::Module {
  explicit StarGanImpl(int64_t image_size)
      : G(register_module("G", Generator())), D(register_module("D", Discriminator(image_size))) {}
  Generator G;
  Discriminator D;
};
TORCH_MODULE(StarGan);

// CelebA's classification loss: BCE with logits summed, divided by the batch.
torch::Tensor ClassificationLoss(const torch::Tensor& logit, const torch::Tensor& target) {
  return torch::binary_cross_entropy_with_logits(logit, target, {}, {}, at::Reduction::Sum) / logit.size(0);
}

class StarGanWorkload : public Workload {
 public:
  explicit StarGanWorkload(const WorkloadOptions& opt) : net_(kImageSize) {
    TORCH_CHECK(opt.batch_size >= 1, "pytorch_stargan: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    const int64_t n = opt.batch_size;
    inputs_["x_real"] = torch::rand({n, 3, kImageSize, kImageSize}, f) * 2 - 1;
    // Five CelebA attributes (Black_Hair, Blond_Hair, Brown_Hair, Male, Young).
    auto label_org = torch::randint(0, 2, {n, kCDim}, f).to(torch::kFloat);
    inputs_["label_org"] = label_org;
    // Eval input: create_labels' first target, black hair (the hair colours
    // are one-hot among the first three attributes).
    auto c_trg = label_org.clone();
    c_trg.select(1, 0).fill_(1);
    c_trg.select(1, 1).fill_(0);
    c_trg.select(1, 2).fill_(0);
    inputs_["c_trg"] = c_trg;
    samples_per_step_ = n;
    if (opt.mode == Mode::kTrain) {
      auto adam = torch::optim::AdamOptions(kLr).betas({kBeta1, kBeta2});
      g_optimizer_ = std::make_unique<torch::optim::Adam>(net_->G->parameters(), adam);
      d_optimizer_ = std::make_unique<torch::optim::Adam>(net_->D->parameters(), adam);
    }
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->G->forward(inputs_["x_real"], inputs_["c_trg"]); }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string(
          "the train step is the discriminator update (with a gradient penalty, a double backward); Forward() is the "
          "generator alone");
    }
    return std::nullopt;
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(d_optimizer_, "pytorch_stargan: TrainStep needs a workload built in train mode");
    auto& G = net_->G;
    auto& D = net_->D;
    const auto& x_real = inputs_["x_real"];
    const auto& label_org = inputs_["label_org"];
    auto rand_idx = torch::randperm(label_org.size(0), torch::TensorOptions().dtype(torch::kLong));
    auto label_trg = label_org.index_select(0, rand_idx.to(label_org.device()));
    auto c_org = label_org.clone();
    auto c_trg = label_trg.clone();

    // Train the discriminator.
    auto [out_src_real, out_cls_real] = D->forward(x_real);
    auto d_loss_real = -torch::mean(out_src_real);
    auto d_loss_cls = ClassificationLoss(out_cls_real, label_org);
    auto x_fake = G->forward(x_real, c_trg);
    auto d_loss_fake = torch::mean(D->forward(x_fake.detach()).first);
    auto alpha = torch::rand({x_real.size(0), 1, 1, 1}, x_real.options());
    auto x_hat = (alpha * x_real.detach() + (1 - alpha) * x_fake.detach()).requires_grad_(true);
    auto out_src_hat = D->forward(x_hat).first;
    auto dydx = torch::autograd::grad({out_src_hat}, {x_hat}, {torch::ones_like(out_src_hat)},
                                      /*retain_graph=*/true, /*create_graph=*/true)[0];
    dydx = dydx.view({dydx.size(0), -1});
    auto dydx_l2norm = torch::sqrt(torch::sum(dydx * dydx, 1));
    auto d_loss_gp = torch::mean((dydx_l2norm - 1).pow(2));
    auto d_loss = d_loss_real + d_loss_fake + kLambdaCls * d_loss_cls + kLambdaGp * d_loss_gp;
    g_optimizer_->zero_grad();
    d_optimizer_->zero_grad();
    d_loss.backward();
    d_optimizer_->step();
    // The log's host reads.
    (void)d_loss_real.item<double>();
    (void)d_loss_fake.item<double>();
    (void)d_loss_cls.item<double>();
    (void)d_loss_gp.item<double>();
    // The generator update runs when (i + 1) % n_critic == 0, never at i = 0
    // (TorchBench's num_iters = 1).
    return d_loss.detach();
  }

 private:
  StarGan net_;
  std::unique_ptr<torch::optim::Adam> g_optimizer_, d_optimizer_;
};

}  // namespace

void AddStarGanModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "pytorch_stargan";
  info.paper_name = "pytorch_stargan";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "yunjey/stargan Generator + Discriminator (Choi et al. 2018), CelebA config: c_dim 5, 128 x 128, 6 residual "
      "blocks, WGAN-GP discriminator step";
  // torchbenchmark/models/pytorch_stargan/__init__.py: DEFAULT_TRAIN_BSIZE =
  // 16, DEFAULT_EVAL_BSIZE = 16 (ALLOW_CUSTOMIZE_BSIZE = False).
  info.default_batch = {16, 16};
  // About 30 GFLOP per sample per train step, 20 per eval step: 2 samples
  // keep a step near 2 s on 2 cores.
  info.cpu_batch = BatchSizes{2, 2};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<StarGanWorkload>(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
