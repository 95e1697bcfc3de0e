#include "models/vision/generation/background_matting.h"

#include <torch/torch.h>

#include <cmath>

namespace torchgauge::models {
namespace {

using torch::nn::BatchNorm2d;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

constexpr int64_t kNgf = 64, kNfPart = 64, kBlocks1 = 7, kBlocks2 = 3, kResolution = 512;
constexpr double kLrG = 1e-4, kLrD = 1e-5;

torch::nn::ReflectionPad2d Reflect(int64_t p) {
  return torch::nn::ReflectionPad2d(torch::nn::ReflectionPad2dOptions(p));
}
torch::nn::ReLU Relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }
torch::nn::Upsample Up2() {
  return torch::nn::Upsample(torch::nn::UpsampleOptions()
                                 .scale_factor(std::vector<double>{2.0, 2.0})
                                 .mode(torch::kBilinear)
                                 .align_corners(true));
}
Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0, bool bias = true) {
  return Conv2d(Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(bias));
}

struct ResnetBlockImpl : torch::nn::Module {
  explicit ResnetBlockImpl(int64_t dim)
      : conv_block(
            register_module("conv_block", torch::nn::Sequential(Reflect(1), Conv(dim, dim, 3), BatchNorm2d(dim), Relu(),
                                                                Reflect(1), Conv(dim, dim, 3), BatchNorm2d(dim)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x + conv_block->forward(x); }
  torch::nn::Sequential conv_block;
};
TORCH_MODULE(ResnetBlock);

// ReflectionPad(3), 7x7 conv to ngf, two stride-2 3x3 convs, BN + ReLU each.
torch::nn::Sequential Encoder(int64_t in) {
  return torch::nn::Sequential(Reflect(3), Conv(in, kNgf, 7), BatchNorm2d(kNgf), Relu(),  //
                               Conv(kNgf, kNgf * 2, 3, 2, 1), BatchNorm2d(kNgf * 2), Relu(),
                               Conv(kNgf * 2, kNgf * 4, 3, 2, 1), BatchNorm2d(kNgf * 4), Relu());
}

torch::nn::Sequential Comb() {
  return torch::nn::Sequential(Conv(kNgf * 8, kNfPart, 1, 1, 0, false), BatchNorm2d(kNgf), Relu());
}

torch::nn::Sequential Blocks(int64_t n, torch::nn::Sequential seq = torch::nn::Sequential()) {
  for (int64_t i = 0; i < n; ++i) seq->push_back(ResnetBlock(kNgf * 4));
  return seq;
}

struct ResnetConditionHRImpl : torch::nn::Module {
  ResnetConditionHRImpl() {
    model_enc1 = register_module("model_enc1",
                                 torch::nn::Sequential(Reflect(3), Conv(3, kNgf, 7), BatchNorm2d(kNgf), Relu(),
                                                       Conv(kNgf, kNgf * 2, 3, 2, 1), BatchNorm2d(kNgf * 2), Relu()));
    model_enc2 = register_module(
        "model_enc2", torch::nn::Sequential(Conv(kNgf * 2, kNgf * 4, 3, 2, 1), BatchNorm2d(kNgf * 4), Relu()));
    model_enc_back = register_module("model_enc_back", Encoder(3));
    model_enc_seg = register_module("model_enc_seg", Encoder(1));
    model_enc_multi = register_module("model_enc_multi", Encoder(4));
    comb_back = register_module("comb_back", Comb());
    comb_seg = register_module("comb_seg", Comb());
    comb_multi = register_module("comb_multi", Comb());
    model_res_dec = register_module(
        "model_res_dec", Blocks(kBlocks1, torch::nn::Sequential(Conv(kNgf * 4 + 3 * kNfPart, kNgf * 4, 1, 1, 0, false),
                                                                BatchNorm2d(kNgf * 4), Relu())));
    model_res_dec_al = register_module("model_res_dec_al", Blocks(kBlocks2));
    model_res_dec_fg = register_module("model_res_dec_fg", Blocks(kBlocks2));
    model_al_out = register_module(
        "model_al_out",
        torch::nn::Sequential(Up2(), Conv(kNgf * 4, kNgf * 2, 3, 1, 1), BatchNorm2d(kNgf * 2), Relu(),  //
                              Up2(), Conv(kNgf * 2, kNgf, 3, 1, 1), BatchNorm2d(kNgf), Relu(),          //
                              Reflect(3), Conv(kNgf, 1, 7), torch::nn::Tanh()));
    model_dec_fg1 = register_module("model_dec_fg1", torch::nn::Sequential(Up2(), Conv(kNgf * 4, kNgf * 2, 3, 1, 1),
                                                                           BatchNorm2d(kNgf * 2), Relu()));
    model_fg_out =
        register_module("model_fg_out", torch::nn::Sequential(Up2(), Conv(kNgf * 4, kNgf, 3, 1, 1), BatchNorm2d(kNgf),
                                                              Relu(), Reflect(3), Conv(kNgf, 3, 7)));
  }

  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& image, const torch::Tensor& back,
                                                  const torch::Tensor& seg, const torch::Tensor& multi) {
    auto img_feat1 = model_enc1->forward(image);
    auto img_feat = model_enc2->forward(img_feat1);
    auto back_feat = model_enc_back->forward(back);
    auto seg_feat = model_enc_seg->forward(seg);
    auto multi_feat = model_enc_multi->forward(multi);  // computed and unused, as in the reference
    (void)multi_feat;
    auto oth_feat = torch::cat({comb_back->forward(torch::cat({img_feat, back_feat}, 1)),
                                comb_seg->forward(torch::cat({img_feat, seg_feat}, 1)),
                                comb_multi->forward(torch::cat({img_feat, back_feat}, 1))},
                               1);
    auto out_dec = model_res_dec->forward(torch::cat({img_feat, oth_feat}, 1));
    auto al_out = model_al_out->forward(model_res_dec_al->forward(out_dec));
    auto out_dec_fg1 = model_dec_fg1->forward(model_res_dec_fg->forward(out_dec));
    auto fg_out = model_fg_out->forward(torch::cat({out_dec_fg1, img_feat1}, 1));
    return {al_out, fg_out};
  }

  torch::nn::Sequential model_enc1{nullptr}, model_enc2{nullptr}, model_enc_back{nullptr}, model_enc_seg{nullptr},
      model_enc_multi{nullptr}, comb_back{nullptr}, comb_seg{nullptr}, comb_multi{nullptr}, model_res_dec{nullptr},
      model_res_dec_al{nullptr}, model_res_dec_fg{nullptr}, model_al_out{nullptr}, model_dec_fg1{nullptr},
      model_fg_out{nullptr};
};
TORCH_MODULE(ResnetConditionHR);

// MultiscaleDiscriminator with num_D = 1: one PatchGAN as "layer0".
struct MultiscaleDiscriminatorImpl : torch::nn::Module {
  MultiscaleDiscriminatorImpl() {
    auto norm = [](int64_t c) { return torch::nn::InstanceNorm2d(torch::nn::InstanceNorm2dOptions(c)); };
    auto leaky = [] { return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)); };
    layer0 = register_module("layer0", torch::nn::Sequential(Conv(3, 64, 4, 2, 2), leaky(),                //
                                                             Conv(64, 128, 4, 2, 2), norm(128), leaky(),   //
                                                             Conv(128, 256, 4, 2, 2), norm(256), leaky(),  //
                                                             Conv(256, 512, 4, 1, 2), norm(512), leaky(),  //
                                                             Conv(512, 1, 4, 1, 2)));
  }
  torch::Tensor forward(const torch::Tensor& x) { return layer0->forward(x); }
  torch::nn::Sequential layer0{nullptr};
};
TORCH_MODULE(MultiscaleDiscriminator);

// networks.conv_init.
void ConvInit(torch::nn::Module& net) {
  torch::NoGradGuard g;
  for (auto& m : net.modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::xavier_uniform_(c->weight, std::sqrt(2.0));
      if (c->bias.defined()) torch::nn::init::constant_(c->bias, 0.0);
    } else if (auto* b = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::normal_(b->weight, 1.0, 0.2);
      torch::nn::init::constant_(b->bias, 0.0);
    }
  }
}

struct BackgroundMattingImpl : torch::nn::Module {
  BackgroundMattingImpl() {
    netB = register_module("netB", ResnetConditionHR());
    netB->eval();
    for (auto& p : netB->parameters()) p.set_requires_grad(false);
    netG = register_module("netG", ResnetConditionHR());
    ConvInit(*netG);
    netD = register_module("netD", MultiscaleDiscriminator());
    ConvInit(*netD);
  }
  ResnetConditionHR netB{nullptr}, netG{nullptr};
  MultiscaleDiscriminator netD{nullptr};
};
TORCH_MODULE(BackgroundMatting);

// SplitMix64: stands for the reference's numpy draws (re-stated in the
// parity test's reference script).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t RandInt(int64_t lo, int64_t hi) {  // [lo, hi)
    TORCH_CHECK(hi > lo, "Background_Matting: empty random range [", lo, ", ", hi, ")");
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo));
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  std::vector<int64_t> Permutation(int64_t n) {
    std::vector<int64_t> p(n);
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[Next() % static_cast<uint64_t>(i + 1)]);
    return p;
  }

 private:
  uint64_t state_;
};

// loss_functions.normalized_l1_loss: per sample, skipped when its mask is empty.
torch::Tensor NormalizedL1(const torch::Tensor& alpha, const torch::Tensor& alpha_pred, const torch::Tensor& mask) {
  constexpr double kEps = 1e-6;
  torch::Tensor loss = torch::zeros({}, alpha.options());
  for (int64_t i = 0; i < alpha.size(0); ++i) {
    auto m = mask[i];
    if (m.sum().item<double>() > 0) {
      loss = loss + torch::sum(torch::abs(alpha[i] * m - alpha_pred[i] * m)) / (torch::sum(m) + kEps);
    }
  }
  return loss / alpha.size(0);
}

// alpha_gradient_loss: normalised L1 of the Sobel responses. The filters are
// built on the host and copied over each call, as in the reference.
torch::Tensor AlphaGradientLoss(const torch::Tensor& alpha, const torch::Tensor& alpha_pred,
                                const torch::Tensor& mask) {
  auto host = torch::TensorOptions().dtype(alpha.scalar_type());
  auto fx = torch::tensor({1., 0., -1., 2., 0., -2., 1., 0., -1.}, host).view({1, 1, 3, 3}).to(alpha.device());
  auto fy = torch::tensor({1., 2., 1., 0., 0., 0., -1., -2., -1.}, host).view({1, 1, 3, 3}).to(alpha.device());
  auto opt = torch::nn::functional::Conv2dFuncOptions().padding(1);
  namespace F = torch::nn::functional;
  return NormalizedL1(F::conv2d(alpha, fx, opt), F::conv2d(alpha_pred, fx, opt), mask) +
         NormalizedL1(F::conv2d(alpha, fy, opt), F::conv2d(alpha_pred, fy, opt), mask);
}

torch::Tensor ComposeLoss(const torch::Tensor& image, const torch::Tensor& alpha_pred, const torch::Tensor& fg,
                          const torch::Tensor& bg, const torch::Tensor& mask) {
  auto a = (alpha_pred + 1) / 2;
  return NormalizedL1(image, fg * a + (1 - a) * bg, mask);
}

// GANloss for one discriminator scale: MSE to host-built labels.
torch::Tensor GanLoss(const torch::Tensor& pred, bool real) {
  auto host = torch::TensorOptions().dtype(pred.scalar_type());
  auto labels = (real ? torch::ones(pred.sizes(), host) : torch::zeros(pred.sizes(), host)).to(pred.device());
  return torch::mse_loss(pred, labels);
}

class BackgroundMattingWorkload : public Workload {
 public:
  BackgroundMattingWorkload(const WorkloadOptions& opt, int64_t size) : rng_(opt.seed) {
    TORCH_CHECK(opt.batch_size >= 1, "Background_Matting: batch size must be positive, got ", opt.batch_size);
    TORCH_CHECK(size >= 32 && size % 4 == 0, "Background_Matting: frame size must be a multiple of 4, >= 32, got ",
                size);
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    const int64_t n = opt.batch_size;
    inputs_["image"] = torch::rand({n, 3, size, size}, f) * 2 - 1;
    inputs_["bg"] = torch::rand({n, 3, size, size}, f) * 2 - 1;
    inputs_["multi_fr"] = torch::rand({n, 4, size, size}, f) * 2 - 1;
    inputs_["back_rnd"] = torch::rand({n, 3, size, size}, f) * 2 - 1;
    // A person-sized box as the soft segmentation and its ground truth.
    auto box = torch::full({n, 1, size, size}, -1.0, f);
    box.narrow(2, size / 4, size / 2).narrow(3, 3 * size / 8, size / 4).fill_(1.0);
    inputs_["seg"] = box;
    inputs_["seg_gt"] = box.clone();
    samples_per_step_ = n;
    optimizer_g_ = std::make_unique<torch::optim::Adam>(net_->netG->parameters(), torch::optim::AdamOptions(kLrG));
    optimizer_d_ = std::make_unique<torch::optim::Adam>(net_->netD->parameters(), torch::optim::AdamOptions(kLrD));
  }

  torch::nn::Module& net() override { return *net_; }

  // netG's alpha and foreground (TorchBench's get_module returns netG).
  torch::Tensor Forward() override {
    auto [al, fg] = net_->netG->forward(inputs_["image"], inputs_["bg"], inputs_["seg"], inputs_["multi_fr"]);
    return torch::cat({al, fg}, 1);
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "the train step runs the frozen teacher, the generator and the discriminator with host-side choices between "
        "them; Forward() is the generator alone");
  }

  torch::Tensor TrainStep() override {
    auto& netB = net_->netB;
    auto& netG = net_->netG;
    auto& netD = net_->netD;
    netB->eval();  // frozen teacher, eval mode throughout (set once in TorchBench's __init__)
    netG->train();
    netD->train();
    const auto& image = inputs_["image"];
    const auto& bg = inputs_["bg"];
    const auto& seg = inputs_["seg"];
    const auto& multi_fr = inputs_["multi_fr"];
    const auto& seg_gt = inputs_["seg_gt"];
    const auto& back_rnd = inputs_["back_rnd"];
    const double wt = 1;
    auto mask0 = torch::ones(seg.sizes(), seg.options());

    auto [alpha_pred_sup, fg_pred_sup] = netB->forward(image, bg, seg, multi_fr);
    auto mask = (alpha_pred_sup > -0.98).to(torch::kFloat);
    auto mask1 = (seg_gt > 0.95).to(torch::kFloat);

    auto [alpha_pred, fg_pred] = netG->forward(image, bg, seg, multi_fr);
    auto al_loss =
        NormalizedL1(alpha_pred_sup, alpha_pred, mask0) + 0.5 * AlphaGradientLoss(alpha_pred_sup, alpha_pred, mask0);
    auto fg_loss = NormalizedL1(fg_pred_sup, fg_pred, mask);
    auto comp_loss = ComposeLoss(image, alpha_pred, fg_pred, bg, mask1);

    auto perm = torch::tensor(rng_.Permutation(bg.size(0)), torch::kLong).to(bg.device());
    auto bg_sh = bg.index_select(0, perm);
    auto al_mask = (alpha_pred > 0.95).to(torch::kFloat);
    if (rng_.Uniform() > 0.5) bg_sh = back_rnd;
    auto image_sh = ComposeWithShift(alpha_pred, image * al_mask + fg_pred * (1 - al_mask), bg_sh, seg);

    auto loss_ganG = GanLoss(netD->forward(image_sh), true);
    auto lossG = loss_ganG + wt * (0.05 * comp_loss + 0.05 * al_loss + 0.05 * fg_loss);
    optimizer_g_->zero_grad();
    lossG.backward();
    optimizer_g_->step();

    auto loss_ganD_fake = GanLoss(netD->forward(image_sh), false);
    auto loss_ganD_real = GanLoss(netD->forward(image), true);
    auto lossD = (loss_ganD_real + loss_ganD_fake) * 0.5;
    // i % 5 == 0 at TorchBench's only iteration: the discriminator steps.
    optimizer_d_->zero_grad();
    lossD.backward();
    optimizer_d_->step();

    // The TensorBoard scalars (host reads).
    for (const auto& t : {lossG, lossD, loss_ganG, loss_ganD_real, loss_ganD_fake, al_loss, fg_loss, comp_loss}) {
      (void)t.item<double>();
    }
    return (lossG + lossD).detach();
  }

 private:
  // functions.compose_image_withshift: per sample, the segmentation's column
  // extent is read on the host, a shift n drawn in [-(y1 - 10), W - y2 - 10),
  // alpha and foreground rotated by n columns and composed on bg. The result
  // is detached (the reference wraps it in Variable()).
  torch::Tensor ComposeWithShift(const torch::Tensor& alpha_pred, const torch::Tensor& fg_pred, const torch::Tensor& bg,
                                 const torch::Tensor& seg) {
    const int64_t W = fg_pred.size(3);
    std::vector<torch::Tensor> out;
    for (int64_t t = 0; t < fg_pred.size(0); ++t) {
      auto al_tmp = ((seg[t][0].detach().to(torch::kCPU) + 1) / 2).clamp(0, 1);
      auto cols = torch::nonzero((al_tmp > 0.1).any(0)).flatten();
      TORCH_CHECK(cols.numel() > 0, "Background_Matting: empty segmentation in sample ", t);
      const int64_t y1 = cols.min().item<int64_t>(), y2 = cols.max().item<int64_t>();
      const int64_t n = rng_.RandInt(-(y1 - 10), W - y2 - 10);
      const int64_t cut = ((W - n) % W + W) % W;  // x[..., -n:] starts at column W - n (mod W)
      auto shift = [&](const torch::Tensor& x) {
        return torch::cat({x.narrow(2, cut, W - cut), x.narrow(2, 0, cut)}, 2);
      };
      auto a = (shift(alpha_pred[t]) + 1) / 2;
      out.push_back(shift(fg_pred[t]) * a + (1 - a) * bg[t]);
    }
    return torch::stack(out, 0).detach();
  }

  BackgroundMatting net_;
  SplitMix64 rng_;
  std::unique_ptr<torch::optim::Adam> optimizer_g_, optimizer_d_;
};

}  // namespace

void AddBackgroundMattingModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "background_matting";
  info.paper_name = "Background_Matting";
  info.domain = Domain::kVision;
  info.task = "pattern recognition (image matting)";
  info.reference =
      "senguptaumd/Background-Matting ResnetConditionHR (teacher netB + netG) and MultiscaleDiscriminator, the "
      "Real_fixed self-supervised step (Sengupta et al. 2020), as torchbenchmark/models/Background_Matting";
  // torchbenchmark/models/Background_Matting/__init__.py: DEFAULT_TRAIN_BSIZE
  // = 4, DEFAULT_EVAL_BSIZE = 1 (its loader holds three samples, so
  // TorchBench's one batch has 3).
  info.default_batch = {4, 1};
  // About 3 TFLOP per 512 x 512 sample per step (netB, netG forward and
  // backward): batch 1 is the smallest, still far over 2 s on 2 cores.
  info.cpu_batch = BatchSizes{1, 1};
  info.smoke_batch = {1, 1};
  info.supports_eval = false;
  info.unsupported_reason = "TorchBench's Background_Matting has no eval: its eval() raises NotImplementedError";
  // Smoke runs use 64 x 64 frames instead of 512 x 512 (fully convolutional).
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<BackgroundMattingWorkload>(opt, opt.smoke ? 64 : kResolution);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
