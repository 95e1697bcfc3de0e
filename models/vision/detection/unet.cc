#include "models/vision/detection/unet.h"

#include <torch/torch.h>

#include "models/unsupported_error.h"

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;

torch::nn::Sequential MakeDoubleConv(int64_t in, int64_t out, int64_t mid) {
  using torch::nn::Conv2dOptions;
  return torch::nn::Sequential(torch::nn::Conv2d(Conv2dOptions(in, mid, 3).padding(1)), torch::nn::BatchNorm2d(mid),
                               torch::nn::ReLU(torch::nn::ReLUOptions(true)),
                               torch::nn::Conv2d(Conv2dOptions(mid, out, 3).padding(1)), torch::nn::BatchNorm2d(out),
                               torch::nn::ReLU(torch::nn::ReLUOptions(true)));
}

// Wraps the Sequential so that its parameters sit under "double_conv", as in
// the reference's DoubleConv module.
struct DoubleConvImpl : torch::nn::Module {
  DoubleConvImpl(int64_t in, int64_t out, int64_t mid = 0)
      : double_conv(register_module("double_conv", MakeDoubleConv(in, out, mid > 0 ? mid : out))) {}
  torch::Tensor forward(const torch::Tensor& x) { return double_conv->forward(x); }
  torch::nn::Sequential double_conv;
};
TORCH_MODULE(DoubleConv);

struct DownImpl : torch::nn::Module {
  DownImpl(int64_t in, int64_t out)
      : maxpool_conv(register_module(
            "maxpool_conv",
            torch::nn::Sequential(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)), DoubleConv(in, out)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return maxpool_conv->forward(x); }
  torch::nn::Sequential maxpool_conv;
};
TORCH_MODULE(Down);

// Bilinear variant only (TorchBench's setting): upsampling has no weights,
// so the DoubleConv narrows the concatenated channels through mid = in / 2.
struct UpImpl : torch::nn::Module {
  UpImpl(int64_t in, int64_t out) : conv(register_module("conv", DoubleConv(in, out, in / 2))) {}

  torch::Tensor forward(const torch::Tensor& below, const torch::Tensor& skip) {
    auto x = F::interpolate(below, F::InterpolateFuncOptions()
                                       .scale_factor(std::vector<double>{2.0, 2.0})
                                       .mode(torch::kBilinear)
                                       .align_corners(true));
    // Odd sizes (959 wide) lose a pixel in each max-pool; pad back to the skip.
    const int64_t dy = skip.size(2) - x.size(2), dx = skip.size(3) - x.size(3);
    x = F::pad(x, F::PadFuncOptions({dx / 2, dx - dx / 2, dy / 2, dy - dy / 2}));
    return conv(torch::cat({skip, x}, 1));
  }
  DoubleConv conv;
};
TORCH_MODULE(Up);

struct OutConvImpl : torch::nn::Module {
  OutConvImpl(int64_t in, int64_t out)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return conv(x); }
  torch::nn::Conv2d conv;
};
TORCH_MODULE(OutConv);

struct UNetImpl : torch::nn::Module {
  UNetImpl(int64_t n_channels, int64_t n_classes_arg) : n_classes(n_classes_arg) {
    const int64_t factor = 2;  // bilinear
    inc = register_module("inc", DoubleConv(n_channels, 64));
    down1 = register_module("down1", Down(64, 128));
    down2 = register_module("down2", Down(128, 256));
    down3 = register_module("down3", Down(256, 512));
    down4 = register_module("down4", Down(512, 1024 / factor));
    up1 = register_module("up1", Up(1024, 512 / factor));
    up2 = register_module("up2", Up(512, 256 / factor));
    up3 = register_module("up3", Up(256, 128 / factor));
    up4 = register_module("up4", Up(128, 64));
    outc = register_module("outc", OutConv(64, n_classes_arg));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto x1 = inc(x);
    auto x2 = down1(x1);
    auto x3 = down2(x2);
    auto x4 = down3(x3);
    auto x5 = down4(x4);
    auto y = up1(x5, x4);
    y = up2(y, x3);
    y = up3(y, x2);
    y = up4(y, x1);
    return outc(y);
  }

  int64_t n_classes;
  DoubleConv inc{nullptr};
  Down down1{nullptr}, down2{nullptr}, down3{nullptr}, down4{nullptr};
  Up up1{nullptr}, up2{nullptr}, up3{nullptr}, up4{nullptr};
  OutConv outc{nullptr};
};
TORCH_MODULE(UNet);

// Pytorch-UNet's dice_loss(multiclass=True) with reduce_batch_first: the
// Dice coefficient of each class over the whole batch, averaged over classes.
torch::Tensor MulticlassDiceLoss(const torch::Tensor& probs, const torch::Tensor& one_hot) {
  constexpr double kEps = 1e-6;
  torch::Tensor dice = torch::zeros({}, probs.options());
  for (int64_t c = 0; c < probs.size(1); ++c) {
    auto p = probs.select(1, c).reshape(-1), t = one_hot.select(1, c).reshape(-1);
    auto inter = torch::dot(p, t);
    auto sets_sum = p.sum() + t.sum();
    // The reference reads this back to the host every step; keep that sync.
    if (sets_sum.item<double>() == 0) sets_sum = 2 * inter;
    dice = dice + (2 * inter + kEps) / (sets_sum + kEps);
  }
  return 1 - dice / probs.size(1);
}

class UNetWorkload : public LossWorkload {
 public:
  UNetWorkload(const WorkloadOptions& opt, int64_t height, int64_t width) : net_(3, 2) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive");
    TORCH_CHECK(height >= 16 && width >= 16, "UNet needs at least 16 x 16 inputs (four 2x poolings)");
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    inputs_["images"] = torch::rand({opt.batch_size, 3, height, width}, f);
    // TorchBench draws randint(0, 1), i.e. all-background masks; both classes
    // are drawn here so that the Dice terms are not degenerate. Same cost.
    inputs_["masks"] = torch::randint(0, 2, {opt.batch_size, height, width}, f.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    optimizer_ = std::make_unique<torch::optim::RMSprop>(
        net_->parameters(), torch::optim::RMSpropOptions(1e-5).weight_decay(1e-8).momentum(0.9));
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->forward(inputs_["images"]); }

  // The Dice loss reads each class's sum back to the host (the reference's
  // `if sets_sum.item() == 0`), a branch on data inside the loss.
  std::optional<TrainParts> SplitTrainStep() override {
    throw UnsupportedError(
        "the Dice loss reads each class's sum back to the host and branches on it (Pytorch-UNet's dice_coeff: "
        "sets_sum.item() == 0); a traced joint forward-backward package would fix one branch and drop the reads");
  }

  torch::Tensor Loss(const torch::Tensor& logits) override {
    const auto& masks = inputs_["masks"];
    return F::cross_entropy(logits, masks) +
           MulticlassDiceLoss(torch::softmax(logits, 1).to(torch::kFloat),
                              F::one_hot(masks, net_->n_classes).permute({0, 3, 1, 2}).to(torch::kFloat));
  }

 private:
  UNet net_;
};

}  // namespace

std::unique_ptr<Workload> MakeUNetWorkload(const WorkloadOptions& opt, int64_t height, int64_t width) {
  return std::make_unique<UNetWorkload>(opt, height, width);
}

void AddUNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "pytorch_unet";
  info.paper_name = "pytorch_unet";
  info.domain = Domain::kVision;
  info.task = "image segmentation";
  info.reference = "milesial/Pytorch-UNet UNet(n_channels=3, n_classes=2, bilinear=True) (Ronneberger et al. 2015)";
  // torchbenchmark/models/pytorch_unet/__init__.py: DEFAULT_TRAIN_BSIZE = 1,
  // DEFAULT_EVAL_BSIZE = 1 (one 640 x 959 Carvana image).
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  // Smoke runs use a 64 x 95 input (1/10 of each side, same aspect ratio): the
  // network is fully convolutional, so the architecture is unchanged.
  info.create = [](const WorkloadOptions& opt) {
    return opt.smoke ? MakeUNetWorkload(opt, 64, 95) : MakeUNetWorkload(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
