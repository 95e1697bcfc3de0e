#include "models/vision/generation/dcgan.h"

#include <torch/torch.h>

namespace torchgauge::models {
namespace {

constexpr int64_t kImageSize = 64, kNc = 3, kNz = 100, kNgf = 64, kNdf = 64;
constexpr int kIterationsPerTrainStep = 5;  // TorchBench DCGAN.num_epochs
constexpr double kLr = 2e-4, kBeta1 = 0.5;

torch::nn::ConvTranspose2d Up(int64_t in, int64_t out, int64_t stride, int64_t pad) {
  return torch::nn::ConvTranspose2d(
      torch::nn::ConvTranspose2dOptions(in, out, 4).stride(stride).padding(pad).bias(false));
}

torch::nn::Conv2d Down(int64_t in, int64_t out, int64_t stride, int64_t pad) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 4).stride(stride).padding(pad).bias(false));
}

torch::nn::LeakyReLU Leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
}
torch::nn::ReLU Relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }

struct GeneratorImpl : torch::nn::Module {
  GeneratorImpl()
      : main(register_module(
            "main", torch::nn::Sequential(Up(kNz, kNgf * 8, 1, 0), torch::nn::BatchNorm2d(kNgf * 8), Relu(),
                                          Up(kNgf * 8, kNgf * 4, 2, 1), torch::nn::BatchNorm2d(kNgf * 4), Relu(),
                                          Up(kNgf * 4, kNgf * 2, 2, 1), torch::nn::BatchNorm2d(kNgf * 2), Relu(),
                                          Up(kNgf * 2, kNgf, 2, 1), torch::nn::BatchNorm2d(kNgf), Relu(),
                                          Up(kNgf, kNc, 2, 1), torch::nn::Tanh()))) {}
  torch::Tensor forward(const torch::Tensor& z) { return main->forward(z); }
  torch::nn::Sequential main;
};
TORCH_MODULE(Generator);

struct DiscriminatorImpl : torch::nn::Module {
  DiscriminatorImpl()
      : main(register_module(
            "main", torch::nn::Sequential(Down(kNc, kNdf, 2, 1), Leaky(),  //
                                          Down(kNdf, kNdf * 2, 2, 1), torch::nn::BatchNorm2d(kNdf * 2), Leaky(),
                                          Down(kNdf * 2, kNdf * 4, 2, 1), torch::nn::BatchNorm2d(kNdf * 4), Leaky(),
                                          Down(kNdf * 4, kNdf * 8, 2, 1), torch::nn::BatchNorm2d(kNdf * 8), Leaky(),
                                          Down(kNdf * 8, 1, 1, 0), torch::nn::Sigmoid()))) {}
  torch::Tensor forward(const torch::Tensor& x) { return main->forward(x); }
  torch::nn::Sequential main;
};
TORCH_MODULE(Discriminator);

// The example's weights_init, applied to every module of a network.
void WeightsInit(torch::nn::Module& net) {
  torch::NoGradGuard g;
  for (auto& m : net.modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::normal_(c->weight, 0.0, 0.02);
    } else if (auto* t = m->as<torch::nn::ConvTranspose2d>()) {
      torch::nn::init::normal_(t->weight, 0.0, 0.02);
    } else if (auto* b = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::normal_(b->weight, 1.0, 0.02);
      torch::nn::init::constant_(b->bias, 0.0);
    }
  }
}

struct DcganImpl : torch::nn::Module {
  DcganImpl() {
    netG = register_module("netG", Generator());
    WeightsInit(*netG);
    netD = register_module("netD", Discriminator());
    WeightsInit(*netD);
  }
  Generator netG{nullptr};
  Discriminator netD{nullptr};
};
TORCH_MODULE(Dcgan);

class DcganWorkload : public Workload {
 public:
  explicit DcganWorkload(const WorkloadOptions& opt) : device_(opt.device) {
    TORCH_CHECK(opt.batch_size >= 1, "dcgan: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    // TorchBench: random values as a surrogate for a batch of photos.
    inputs_["images"] = torch::randn({opt.batch_size, kNc, kImageSize, kImageSize}, torch::TensorOptions(opt.device));
    samples_per_step_ = opt.mode == Mode::kTrain ? kIterationsPerTrainStep * opt.batch_size : opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      auto adam = torch::optim::AdamOptions(kLr).betas({kBeta1, 0.999});
      optimizer_d_ = std::make_unique<torch::optim::Adam>(net_->netD->parameters(), adam);
      optimizer_g_ = std::make_unique<torch::optim::Adam>(net_->netG->parameters(), adam);
    }
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->netD->forward(inputs_["images"]).view(-1); }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string(
          "the train step updates the generator and the discriminator; Forward() is the discriminator alone");
    }
    return std::nullopt;
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_d_, "dcgan: TrainStep needs a workload built in train mode");
    auto& netD = net_->netD;
    auto& netG = net_->netG;
    const auto& real = inputs_["images"];
    const int64_t b = real.size(0);
    const auto opts = real.options();
    torch::Tensor errD, errG;
    for (int it = 0; it < kIterationsPerTrainStep; ++it) {
      // (1) D: maximize log(D(x)) + log(1 - D(G(z))).
      netD->zero_grad();
      auto label = torch::full({b}, 1.0, opts);
      auto output = netD->forward(real).view(-1);
      auto errD_real = torch::binary_cross_entropy(output, label);
      errD_real.backward();
      (void)output.mean().item<double>();  // D(x)
      auto noise = torch::randn({b, kNz, 1, 1}, opts);
      auto fake = netG->forward(noise);
      label.fill_(0.0);
      output = netD->forward(fake.detach()).view(-1);
      auto errD_fake = torch::binary_cross_entropy(output, label);
      errD_fake.backward();
      (void)output.mean().item<double>();  // D(G(z)) before the D step
      errD = errD_real + errD_fake;
      optimizer_d_->step();
      // (2) G: maximize log(D(G(z))).
      netG->zero_grad();
      label.fill_(1.0);
      output = netD->forward(fake).view(-1);
      errG = torch::binary_cross_entropy(output, label);
      errG.backward();
      (void)output.mean().item<double>();  // D(G(z)) after the D step
      optimizer_g_->step();
    }
    return (errD + errG).detach();
  }

 private:
  torch::Device device_;
  Dcgan net_;
  std::unique_ptr<torch::optim::Adam> optimizer_d_, optimizer_g_;
};

}  // namespace

void AddDcganModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "dcgan";
  info.paper_name = "dcgan";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "pytorch/examples dcgan (Radford et al. 2016) as torchbenchmark/models/dcgan: 64x64, nz 100, ngf = ndf = 64";
  // torchbenchmark/models/dcgan/__init__.py: DEFAULT_TRAIN_BSIZE = 32,
  // DEFAULT_EVAL_BSIZE = 256.
  info.default_batch = {32, 256};
  // One train step is 5 D+G iterations (about 4.3 GFLOP per sample each):
  // batch 4 keeps it near 2 s on 2 cores; eval (the discriminator, 0.2 GFLOP
  // per sample) at 64.
  info.cpu_batch = BatchSizes{4, 64};
  // Smoke train at batch 1: its step is still five D+G iterations.
  info.smoke_batch = {1, 2};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<DcganWorkload>(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
