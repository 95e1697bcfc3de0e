#include "models/vision/generation/super_slomo.h"

#include <torch/torch.h>

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

constexpr int64_t kFrameSize = 352;
constexpr double kLr = 1e-4;

torch::Tensor Leaky(const torch::Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.1)); }

Conv2d Conv(int64_t in, int64_t out, int64_t k) { return Conv2d(Conv2dOptions(in, out, k).padding((k - 1) / 2)); }

struct DownImpl : torch::nn::Module {
  DownImpl(int64_t in, int64_t out, int64_t k)
      : conv1(register_module("conv1", Conv(in, out, k))), conv2(register_module("conv2", Conv(out, out, k))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = F::avg_pool2d(x, F::AvgPool2dFuncOptions(2));
    y = Leaky(conv1(y));
    return Leaky(conv2(y));
  }
  Conv2d conv1, conv2;
};
TORCH_MODULE(Down);

struct UpImpl : torch::nn::Module {
  UpImpl(int64_t in, int64_t out)
      : conv1(register_module("conv1", Conv(in, out, 3))), conv2(register_module("conv2", Conv(2 * out, out, 3))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& skip) {
    auto y = F::interpolate(x, F::InterpolateFuncOptions()
                                   .scale_factor(std::vector<double>{2.0, 2.0})
                                   .mode(torch::kBilinear)
                                   .align_corners(false));
    y = Leaky(conv1(y));
    return Leaky(conv2(torch::cat({y, skip}, 1)));
  }
  Conv2d conv1, conv2;
};
TORCH_MODULE(Up);

struct SloMoUNetImpl : torch::nn::Module {
  SloMoUNetImpl(int64_t in, int64_t out)
      : conv1(register_module("conv1", Conv(in, 32, 7))),
        conv2(register_module("conv2", Conv(32, 32, 7))),
        down1(register_module("down1", Down(32, 64, 5))),
        down2(register_module("down2", Down(64, 128, 3))),
        down3(register_module("down3", Down(128, 256, 3))),
        down4(register_module("down4", Down(256, 512, 3))),
        down5(register_module("down5", Down(512, 512, 3))),
        up1(register_module("up1", Up(512, 512))),
        up2(register_module("up2", Up(512, 256))),
        up3(register_module("up3", Up(256, 128))),
        up4(register_module("up4", Up(128, 64))),
        up5(register_module("up5", Up(64, 32))),
        conv3(register_module("conv3", Conv(32, out, 3))) {}

  torch::Tensor forward(const torch::Tensor& input) {
    auto x = Leaky(conv1(input));
    auto s1 = Leaky(conv2(x));
    auto s2 = down1(s1);
    auto s3 = down2(s2);
    auto s4 = down3(s3);
    auto s5 = down4(s4);
    x = down5(s5);
    x = up1(x, s5);
    x = up2(x, s4);
    x = up3(x, s3);
    x = up4(x, s2);
    x = up5(x, s1);
    return Leaky(conv3(x));
  }
  Conv2d conv1, conv2;
  Down down1, down2, down3, down4, down5;
  Up up1, up2, up3, up4, up5;
  Conv2d conv3;
};
TORCH_MODULE(SloMoUNet);

// VGG16 features[:22]: conv1_1 .. conv4_3 (the last without its ReLU), with
// torchvision's initialisation of those convolutions.
torch::nn::Sequential MakeVgg16Conv43() {
  torch::nn::Sequential seq;
  const std::vector<int64_t> cfg = {64, 64, -1, 128, 128, -1, 256, 256, 256, -1, 512, 512, 512};
  int64_t in = 3;
  for (size_t i = 0; i < cfg.size(); ++i) {
    if (cfg[i] < 0) {
      seq->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
      continue;
    }
    torch::nn::Conv2d conv(Conv2dOptions(in, cfg[i], 3).padding(1));
    {
      torch::NoGradGuard g;
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      torch::nn::init::constant_(conv->bias, 0.0);
    }
    seq->push_back(conv);
    if (i + 1 < cfg.size()) seq->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
    in = cfg[i];
  }
  for (auto& p : seq->parameters()) p.set_requires_grad(false);
  return seq;
}

struct SuperSloMoImpl : torch::nn::Module {
  SuperSloMoImpl()
      : flowComp(register_module("flowComp", SloMoUNet(6, 4))),
        ArbTimeFlowIntrp(register_module("ArbTimeFlowIntrp", SloMoUNet(20, 5))),
        vgg16_conv_4_3(register_module("vgg16_conv_4_3", MakeVgg16Conv43())) {}
  SloMoUNet flowComp, ArbTimeFlowIntrp;
  torch::nn::Sequential vgg16_conv_4_3;
};
TORCH_MODULE(SuperSloMo);

class SuperSloMoWorkload : public Workload {
 public:
  SuperSloMoWorkload(const WorkloadOptions& opt, int64_t size) {
    TORCH_CHECK(opt.batch_size >= 1, "Super_SloMo: batch size must be positive, got ", opt.batch_size);
    TORCH_CHECK(size % 32 == 0, "Super_SloMo: frame size must be a multiple of 32 (five 2x poolings), got ", size);
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    const int64_t n = opt.batch_size;
    // ToTensor() then Normalize(mean, std = 1): pixel values minus the mean.
    auto mean = torch::tensor({0.429, 0.431, 0.397}, f).view({1, 3, 1, 1});
    inputs_["trainFrameIndex"] = torch::randint(0, 7, {n}, f.dtype(torch::kLong));
    inputs_["I0"] = torch::rand({n, 3, size, size}, f) - mean;
    inputs_["I1"] = torch::rand({n, 3, size, size}, f) - mean;
    inputs_["IFrame"] = torch::rand({n, 3, size, size}, f) - mean;
    samples_per_step_ = n;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    auto [frame, loss] = FrameAndLoss();
    loss_ = loss;
    return frame;
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "the model's forward returns the interpolated frame and its loss (VGG16 perceptual term included); a compiled "
        "forward carries one tensor and would drop the loss");
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "Super_SloMo: TrainStep needs a workload built in train mode");
    optimizer_->zero_grad();
    auto loss = FrameAndLoss().second;
    loss.backward();
    optimizer_->step();
    return loss.detach();
  }

 private:
  // slomo_model.backWarp: sample img at the pixel grid displaced by flow.
  torch::Tensor BackWarp(const torch::Tensor& img, const torch::Tensor& flow) {
    const int64_t H = img.size(2), W = img.size(3);
    if (!grid_x_.defined() || grid_x_.size(0) != H || grid_x_.size(1) != W || grid_x_.device() != img.device()) {
      auto grids = torch::meshgrid({torch::arange(H, torch::TensorOptions(img.device()).dtype(torch::kLong)),
                                    torch::arange(W, torch::TensorOptions(img.device()).dtype(torch::kLong))},
                                   "ij");
      grid_y_ = grids[0];
      grid_x_ = grids[1];
    }
    auto u = flow.select(1, 0), v = flow.select(1, 1);
    auto x = grid_x_.unsqueeze(0).expand_as(u).to(u.scalar_type()) + u;
    auto y = grid_y_.unsqueeze(0).expand_as(v).to(u.scalar_type()) + v;
    x = 2 * (x / static_cast<double>(W) - 0.5);
    y = 2 * (y / static_cast<double>(H) - 0.5);
    auto grid = torch::stack({x, y}, 3);
    return F::grid_sample(
        img, grid, F::GridSampleFuncOptions().mode(torch::kBilinear).padding_mode(torch::kZeros).align_corners(false));
  }

  std::pair<torch::Tensor, torch::Tensor> FrameAndLoss() {
    const auto& index = inputs_["trainFrameIndex"];
    const auto& I0 = inputs_["I0"];
    const auto& I1 = inputs_["I1"];
    const auto& IFrame = inputs_["IFrame"];
    auto flowOut = net_->flowComp(torch::cat({I0, I1}, 1));
    auto F_0_1 = flowOut.narrow(1, 0, 2);
    auto F_1_0 = flowOut.narrow(1, 2, 2);
    // getFlowCoeff / getWarpCoeff at t = linspace(0.125, 0.875, 7)[index].
    auto t = torch::linspace(0.125, 0.875, 7, I0.options()).index_select(0, index).view({-1, 1, 1, 1});
    auto c00 = -(1 - t) * t, c01 = t * t, c10 = (1 - t) * (1 - t), c11 = c00;
    auto F_t_0 = c00 * F_0_1 + c01 * F_1_0;
    auto F_t_1 = c10 * F_0_1 + c11 * F_1_0;
    auto g_I0_F_t_0 = BackWarp(I0, F_t_0);
    auto g_I1_F_t_1 = BackWarp(I1, F_t_1);
    auto intrpOut = net_->ArbTimeFlowIntrp(torch::cat({I0, I1, F_0_1, F_1_0, F_t_1, F_t_0, g_I1_F_t_1, g_I0_F_t_0}, 1));
    auto F_t_0_f = intrpOut.narrow(1, 0, 2) + F_t_0;
    auto F_t_1_f = intrpOut.narrow(1, 2, 2) + F_t_1;
    auto V_t_0 = torch::sigmoid(intrpOut.narrow(1, 4, 1));
    auto V_t_1 = 1 - V_t_0;
    auto g_I0_F_t_0_f = BackWarp(I0, F_t_0_f);
    auto g_I1_F_t_1_f = BackWarp(I1, F_t_1_f);
    auto w0 = 1 - t, w1 = t;
    auto Ft_p = (w0 * V_t_0 * g_I0_F_t_0_f + w1 * V_t_1 * g_I1_F_t_1_f) / (w0 * V_t_0 + w1 * V_t_1);

    auto recnLoss = torch::l1_loss(Ft_p, IFrame);
    auto prcpLoss = torch::mse_loss(net_->vgg16_conv_4_3->forward(Ft_p), net_->vgg16_conv_4_3->forward(IFrame));
    auto warpLoss = torch::l1_loss(g_I0_F_t_0, IFrame) + torch::l1_loss(g_I1_F_t_1, IFrame) +
                    torch::l1_loss(BackWarp(I0, F_1_0), I1) + torch::l1_loss(BackWarp(I1, F_0_1), I0);
    auto smooth = [](const torch::Tensor& f) {
      const int64_t H = f.size(2), W = f.size(3);
      return torch::mean(torch::abs(f.narrow(3, 0, W - 1) - f.narrow(3, 1, W - 1))) +
             torch::mean(torch::abs(f.narrow(2, 0, H - 1) - f.narrow(2, 1, H - 1)));
    };
    auto loss_smooth = smooth(F_1_0) + smooth(F_0_1);
    auto loss = 204 * recnLoss + 102 * warpLoss + 0.005 * prcpLoss + loss_smooth;
    return {Ft_p, loss};
  }

  SuperSloMo net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  torch::Tensor grid_x_, grid_y_, loss_;
};

}  // namespace

void AddSuperSloMoModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "super_slomo";
  info.paper_name = "Super_SloMo";
  info.domain = Domain::kVision;
  info.task = "video interpolation";
  info.reference =
      "avinashpaliwal/Super-SloMo UNet(6, 4) + UNet(20, 5) with backward warping and VGG16 conv4_3 perceptual loss "
      "(Jiang et al. 2018), as torchbenchmark/models/Super_SloMo";
  // torchbenchmark/models/Super_SloMo/__init__.py: DEFAULT_TRAIN_BSIZE = 6,
  // DEFAULT_EVAL_BSIZE = 10.
  info.default_batch = {6, 10};
  // About 0.6 TFLOP per 352 x 352 sample per train step (two U-Nets and two
  // VGG16 passes): batch 1 is the smallest, still well over 2 s on 2 cores.
  info.cpu_batch = BatchSizes{1, 1};
  info.smoke_batch = {1, 1};
  // Smoke runs use 64 x 64 frames instead of 352 x 352 (fully convolutional).
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<SuperSloMoWorkload>(opt, opt.smoke ? 64 : kFrameSize);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
