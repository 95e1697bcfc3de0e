#include "models/vision/generation/cyclegan.h"

#include <torch/torch.h>

#include <random>

namespace torchgauge::models {
namespace {

constexpr int64_t kNgf = 64, kNdf = 64, kBlocks = 9, kPoolSize = 50;
constexpr double kLr = 2e-4, kBeta1 = 0.5, kLambdaA = 10.0, kLambdaB = 10.0, kLambdaIdentity = 0.5;

using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

torch::nn::InstanceNorm2d Norm(int64_t c) {
  return torch::nn::InstanceNorm2d(torch::nn::InstanceNorm2dOptions(c).affine(false).track_running_stats(false));
}
torch::nn::ReflectionPad2d Reflect(int64_t p) {
  return torch::nn::ReflectionPad2d(torch::nn::ReflectionPad2dOptions(p));
}
torch::nn::ReLU Relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }
torch::nn::LeakyReLU Leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
}

struct ResnetBlockImpl : torch::nn::Module {
  explicit ResnetBlockImpl(int64_t dim)
      : conv_block(register_module(
            "conv_block", torch::nn::Sequential(Reflect(1), Conv2d(Conv2dOptions(dim, dim, 3)), Norm(dim), Relu(),
                                                Reflect(1), Conv2d(Conv2dOptions(dim, dim, 3)), Norm(dim)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x + conv_block->forward(x); }
  torch::nn::Sequential conv_block;
};
TORCH_MODULE(ResnetBlock);

struct ResnetGeneratorImpl : torch::nn::Module {
  ResnetGeneratorImpl(int64_t input_nc, int64_t output_nc) {
    torch::nn::Sequential m;
    m->push_back(Reflect(3));
    m->push_back(Conv2d(Conv2dOptions(input_nc, kNgf, 7)));
    m->push_back(Norm(kNgf));
    m->push_back(Relu());
    for (int64_t mult : {1, 2}) {
      m->push_back(Conv2d(Conv2dOptions(kNgf * mult, kNgf * mult * 2, 3).stride(2).padding(1)));
      m->push_back(Norm(kNgf * mult * 2));
      m->push_back(Relu());
    }
    for (int64_t i = 0; i < kBlocks; ++i) m->push_back(ResnetBlock(kNgf * 4));
    for (int64_t mult : {4, 2}) {
      m->push_back(torch::nn::ConvTranspose2d(
          torch::nn::ConvTranspose2dOptions(kNgf * mult, kNgf * mult / 2, 3).stride(2).padding(1).output_padding(1)));
      m->push_back(Norm(kNgf * mult / 2));
      m->push_back(Relu());
    }
    m->push_back(Reflect(3));
    m->push_back(Conv2d(Conv2dOptions(kNgf, output_nc, 7)));
    m->push_back(torch::nn::Tanh());
    model = register_module("model", m);
  }
  torch::Tensor forward(const torch::Tensor& x) { return model->forward(x); }
  torch::nn::Sequential model{nullptr};
};
TORCH_MODULE(ResnetGenerator);

// The 70x70 PatchGAN ("basic", n_layers 3).
struct NLayerDiscriminatorImpl : torch::nn::Module {
  explicit NLayerDiscriminatorImpl(int64_t input_nc) {
    torch::nn::Sequential m;
    m->push_back(Conv2d(Conv2dOptions(input_nc, kNdf, 4).stride(2).padding(1)));
    m->push_back(Leaky());
    for (int64_t n = 1; n <= 3; ++n) {
      const int64_t in = kNdf * std::min<int64_t>(1 << (n - 1), 8), out = kNdf * std::min<int64_t>(1 << n, 8);
      m->push_back(Conv2d(Conv2dOptions(in, out, 4).stride(n < 3 ? 2 : 1).padding(1)));
      m->push_back(Norm(out));
      m->push_back(Leaky());
    }
    m->push_back(Conv2d(Conv2dOptions(kNdf * 8, 1, 4).stride(1).padding(1)));
    model = register_module("model", m);
  }
  torch::Tensor forward(const torch::Tensor& x) { return model->forward(x); }
  torch::nn::Sequential model{nullptr};
};
TORCH_MODULE(NLayerDiscriminator);

// init_weights(net, 'normal', 0.02): every conv-like weight N(0, 0.02), bias 0.
void InitWeights(torch::nn::Module& net) {
  torch::NoGradGuard g;
  for (auto& m : net.modules(/*include_self=*/false)) {
    torch::Tensor w, b;
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      w = c->weight, b = c->bias;
    } else if (auto* t = m->as<torch::nn::ConvTranspose2d>()) {
      w = t->weight, b = t->bias;
    } else {
      continue;
    }
    torch::nn::init::normal_(w, 0.0, 0.02);
    if (b.defined()) torch::nn::init::constant_(b, 0.0);
  }
}

struct CycleGanImpl : torch::nn::Module {
  CycleGanImpl() {
    netG_A = register_module("netG_A", ResnetGenerator(3, 3));
    InitWeights(*netG_A);
    netG_B = register_module("netG_B", ResnetGenerator(3, 3));
    InitWeights(*netG_B);
    netD_A = register_module("netD_A", NLayerDiscriminator(3));
    InitWeights(*netD_A);
    netD_B = register_module("netD_B", NLayerDiscriminator(3));
    InitWeights(*netD_B);
  }
  ResnetGenerator netG_A{nullptr}, netG_B{nullptr};
  NLayerDiscriminator netD_A{nullptr}, netD_B{nullptr};
};
TORCH_MODULE(CycleGan);

// util/image_pool.py: a buffer of previously generated images.
class ImagePool {
 public:
  ImagePool(int64_t size, uint64_t seed) : size_(size), rng_(seed) {}

  torch::Tensor Query(const torch::Tensor& images) {
    auto data = images.detach();
    if (size_ == 0) return data;
    std::vector<torch::Tensor> out;
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (int64_t i = 0; i < data.size(0); ++i) {
      auto image = data.narrow(0, i, 1);
      if (static_cast<int64_t>(images_.size()) < size_) {
        images_.push_back(image);
        out.push_back(image);
      } else if (coin(rng_) > 0.5) {
        std::uniform_int_distribution<int64_t> pick(0, size_ - 1);
        const int64_t k = pick(rng_);
        out.push_back(images_[k].clone());
        images_[k] = image;
      } else {
        out.push_back(image);
      }
    }
    return torch::cat(out, 0);
  }

 private:
  int64_t size_;
  std::mt19937_64 rng_;
  std::vector<torch::Tensor> images_;
};

void SetRequiresGrad(torch::nn::Module& net, bool requires_grad) {
  for (auto& p : net.parameters()) p.set_requires_grad(requires_grad);
}

torch::Tensor LsganLoss(const torch::Tensor& prediction, bool real) {
  return torch::mse_loss(prediction, torch::full_like(prediction, real ? 1.0 : 0.0));
}

class CycleGanWorkload : public Workload {
 public:
  CycleGanWorkload(const WorkloadOptions& opt, int64_t size)
      : fake_A_pool_(kPoolSize, opt.seed * 2 + 1), fake_B_pool_(kPoolSize, opt.seed * 2 + 2) {
    TORCH_CHECK(opt.batch_size >= 1, "pytorch_cyclegan_and_pix2pix: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    // Images normalised to [-1, 1], as the dataset's transform leaves them.
    inputs_["real_A"] = torch::rand({opt.batch_size, 3, size, size}, f) * 2 - 1;
    if (opt.mode == Mode::kTrain) {
      inputs_["real_B"] = torch::rand({opt.batch_size, 3, size, size}, f) * 2 - 1;
      auto adam = torch::optim::AdamOptions(kLr).betas({kBeta1, 0.999});
      auto g_params = net_->netG_A->parameters();
      for (auto& p : net_->netG_B->parameters()) g_params.push_back(p);
      auto d_params = net_->netD_A->parameters();
      for (auto& p : net_->netD_B->parameters()) d_params.push_back(p);
      optimizer_g_ = std::make_unique<torch::optim::Adam>(g_params, adam);
      optimizer_d_ = std::make_unique<torch::optim::Adam>(d_params, adam);
    }
    samples_per_step_ = opt.batch_size;
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->netG_A->forward(inputs_["real_A"]); }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string(
          "the train step runs and updates two generators and two discriminators; Forward() is G_A alone");
    }
    return std::nullopt;
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_g_, "pytorch_cyclegan_and_pix2pix: TrainStep needs a workload built in train mode");
    auto& G_A = net_->netG_A;
    auto& G_B = net_->netG_B;
    auto& D_A = net_->netD_A;
    auto& D_B = net_->netD_B;
    const auto& real_A = inputs_["real_A"];
    const auto& real_B = inputs_["real_B"];
    // forward()
    auto fake_B = G_A->forward(real_A);
    auto rec_A = G_B->forward(fake_B);
    auto fake_A = G_B->forward(real_B);
    auto rec_B = G_A->forward(fake_A);
    // G_A and G_B, the discriminators frozen.
    SetRequiresGrad(*D_A, false);
    SetRequiresGrad(*D_B, false);
    optimizer_g_->zero_grad();
    auto idt_A = G_A->forward(real_B);
    auto loss_idt_A = torch::l1_loss(idt_A, real_B) * kLambdaB * kLambdaIdentity;
    auto idt_B = G_B->forward(real_A);
    auto loss_idt_B = torch::l1_loss(idt_B, real_A) * kLambdaA * kLambdaIdentity;
    auto loss_G_A = LsganLoss(D_A->forward(fake_B), true);
    auto loss_G_B = LsganLoss(D_B->forward(fake_A), true);
    auto loss_cycle_A = torch::l1_loss(rec_A, real_A) * kLambdaA;
    auto loss_cycle_B = torch::l1_loss(rec_B, real_B) * kLambdaB;
    auto loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B;
    loss_G.backward();
    optimizer_g_->step();
    // D_A and D_B.
    SetRequiresGrad(*D_A, true);
    SetRequiresGrad(*D_B, true);
    optimizer_d_->zero_grad();
    auto loss_D_A = BackwardD(*D_A, real_B, fake_B_pool_.Query(fake_B));
    auto loss_D_B = BackwardD(*D_B, real_A, fake_A_pool_.Query(fake_A));
    optimizer_d_->step();
    return (loss_G + loss_D_A + loss_D_B).detach();
  }

 private:
  static torch::Tensor BackwardD(NLayerDiscriminatorImpl& D, const torch::Tensor& real, const torch::Tensor& fake) {
    auto loss_real = LsganLoss(D.forward(real), true);
    auto loss_fake = LsganLoss(D.forward(fake.detach()), false);
    auto loss = (loss_real + loss_fake) * 0.5;
    loss.backward();
    return loss;
  }

  CycleGan net_;
  ImagePool fake_A_pool_, fake_B_pool_;
  std::unique_ptr<torch::optim::Adam> optimizer_g_, optimizer_d_;
};

}  // namespace

void AddCycleGanModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "pytorch_cyclegan_and_pix2pix";
  info.paper_name = "pytorch_CycleGAN_and_pix2pix";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "junyanz/pytorch-CycleGAN-and-pix2pix CycleGANModel (Zhu et al. 2017): resnet_9blocks generators, 70x70 "
      "PatchGAN discriminators, instance norm, LSGAN";
  // torchbenchmark/models/pytorch_CycleGAN_and_pix2pix/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 1, DEFAULT_EVAL_BSIZE = 1 (ALLOW_CUSTOMIZE_BSIZE =
  // False). One 256 x 256 step is already the smallest batch on CPU.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  // Smoke runs use 32 x 32 images instead of 256 x 256 (a 64 x 64 train step
  // took 27 s of CPU on the shared 2-core machine): the networks are fully
  // convolutional and the PatchGAN still yields a 2 x 2 map.
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<CycleGanWorkload>(opt, opt.smoke ? 32 : 256);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
