#include "models/other/opacus.h"

#include <torch/torch.h>

#include <array>
#include <memory>
#include <unordered_map>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// torchbenchmark/models/opacus_cifar10/__init__.py: CIFAR-10 images are
// 32x32 with 10 classes; noise_multiplier = max_grad_norm = 1.0;
// optim.Adam(lr=0.001).
constexpr int64_t kClasses = 10, kImageSide = 32;
constexpr double kNoiseMultiplier = 1.0, kMaxGradNorm = 1.0, kLr = 1e-3;
// opacus/optimizers/optimizer.py clip_and_accumulate: norm + 1e-6.
constexpr double kNormEps = 1e-6;

using Pair = std::array<int64_t, 2>;

Pair AsPair(const torch::ExpandingArray<2>& a) { return {(*a)[0], (*a)[1]}; }

// A Conv2d's geometry, as opacus' conv grad sampler reads it from the layer.
struct ConvGeometry {
  Pair kernel, stride, padding, dilation;
  int64_t groups = 1, in_channels = 0;
};

ConvGeometry GeometryOf(const nn::Conv2dImpl& m) {
  const auto& o = m.options;
  ConvGeometry g;
  g.kernel = AsPair(o.kernel_size());
  g.stride = AsPair(o.stride());
  g.padding = AsPair(std::get<torch::ExpandingArray<2>>(o.padding()));
  g.dilation = AsPair(o.dilation());
  g.groups = o.groups();
  g.in_channels = o.in_channels();
  return g;
}

// opacus/utils/tensor_utils.py unfold2d (numeric padding): F.pad, then an
// as_strided view of the kernel windows, reshaped to (N, C*kh*kw, L).
torch::Tensor Unfold2d(const torch::Tensor& x, const ConvGeometry& g) {
  const int64_t h = x.size(2), w = x.size(3);
  const int64_t h_out =
      (h + 2 * g.padding[0] - (g.kernel[0] + (g.kernel[0] - 1) * (g.dilation[0] - 1))) / g.stride[0] + 1;
  const int64_t w_out =
      (w + 2 * g.padding[1] - (g.kernel[1] + (g.kernel[1] - 1) * (g.dilation[1] - 1))) / g.stride[1] + 1;
  auto padded =
      nn::functional::pad(x, nn::functional::PadFuncOptions({g.padding[1], g.padding[1], g.padding[0], g.padding[0]}));
  const int64_t w_pad = padded.size(3);
  auto windows = padded.as_strided(
      {padded.size(0), padded.size(1), g.kernel[0], g.kernel[1], h_out, w_out},
      {padded.stride(0), padded.stride(1), w_pad * g.dilation[0], g.dilation[1], w_pad * g.stride[0], g.stride[1]});
  return windows.reshape({padded.size(0), -1, h_out * w_out});
}

// opacus/grad_sample/conv.py compute_conv_grad_sample (Conv2d, no bias here).
torch::Tensor ConvWeightGradSample(const torch::Tensor& activation, const torch::Tensor& backprops,
                                   const ConvGeometry& g, torch::IntArrayRef weight_shape) {
  const int64_t n = activation.size(0);
  auto cols = Unfold2d(activation, g);
  auto b = backprops.reshape({n, -1, cols.size(-1)});
  auto gs = torch::einsum("noq,npq->nop", {b, cols});
  gs = gs.view({n, g.groups, -1, g.groups, g.in_channels / g.groups, g.kernel[0] * g.kernel[1]});
  gs = torch::einsum("ngrg...->ngr...", {gs}).contiguous();
  std::vector<int64_t> shape = {n};
  shape.insert(shape.end(), weight_shape.begin(), weight_shape.end());
  return gs.view(shape);
}

// GradSampleModule's hooks: the forward saves each layer's input, the hook on
// the layer's output computes that layer's per-sample gradients from it and
// the output gradient, and stores them per parameter.
class GradSampler {
 public:
  // Called at the start of each forward: opacus captures only when the module
  // trains and grad mode is on (capture_activations_hook).
  void Begin(bool capture) { capture_ = capture; }

  torch::Tensor Conv(nn::Conv2dImpl& m, const torch::Tensor& x);
  torch::Tensor Norm(nn::GroupNormImpl& m, const torch::Tensor& x);
  torch::Tensor Fc(nn::LinearImpl& m, const torch::Tensor& x);

  // The per-sample gradients of `params` (in order), handed over and cleared
  // (opacus' DPOptimizer reads p.grad_sample, zero_grad drops it).
  std::vector<torch::Tensor> Take(const std::vector<torch::Tensor>& params);

 private:
  bool Capturing(const torch::Tensor& weight) const { return capture_ && weight.requires_grad(); }
  // rearrange_grad_samples with loss_reduction "mean": backprops * batch size.
  static torch::Tensor Backprops(const torch::Tensor& grad, int64_t n) { return grad.detach() * n; }
  void Store(const torch::Tensor& param, const torch::Tensor& grad_sample);

  bool capture_ = false;
  std::unordered_map<c10::TensorImpl*, torch::Tensor> samples_;
};

// opacus create_or_accumulate_grad_sample: a zero (max_batch_len, *shape)
// buffer whose leading rows receive the layer's per-sample gradients.
void GradSampler::Store(const torch::Tensor& param, const torch::Tensor& grad_sample) {
  auto it = samples_.find(param.unsafeGetTensorImpl());
  if (it != samples_.end()) {
    it->second.slice(0, 0, grad_sample.size(0)).add_(grad_sample);
    return;
  }
  auto buffer = torch::zeros(grad_sample.sizes(), grad_sample.options());
  buffer.slice(0, 0, grad_sample.size(0)).copy_(grad_sample);
  samples_.emplace(param.unsafeGetTensorImpl(), buffer);
}

torch::Tensor GradSampler::Conv(nn::Conv2dImpl& m, const torch::Tensor& x) {
  auto y = m.forward(x);
  if (!Capturing(m.weight)) return y;
  y.register_hook([this, a = x.detach(), w = m.weight, g = GeometryOf(m)](const torch::Tensor& grad) {
    Store(w, ConvWeightGradSample(a, Backprops(grad, a.size(0)), g, w.sizes()));
  });
  return y;
}

// opacus/grad_sample/group_norm.py: group_norm(x) without the affine part
// times the output gradient, summed over the spatial positions per channel.
torch::Tensor GradSampler::Norm(nn::GroupNormImpl& m, const torch::Tensor& x) {
  auto y = m.forward(x);
  if (!Capturing(m.weight)) return y;
  const int64_t groups = m.options.num_groups();
  const double eps = m.options.eps();
  y.register_hook([this, a = x.detach(), w = m.weight, b = m.bias, groups, eps](const torch::Tensor& grad) {
    auto backprops = Backprops(grad, a.size(0));
    auto gs = torch::group_norm(a, groups, {}, {}, eps) * backprops;
    Store(w, torch::einsum("ni...->ni", {gs}));
    Store(b, torch::einsum("ni...->ni", {backprops}));
  });
  return y;
}

// opacus/grad_sample/linear.py compute_linear_grad_sample.
torch::Tensor GradSampler::Fc(nn::LinearImpl& m, const torch::Tensor& x) {
  auto y = m.forward(x);
  if (!Capturing(m.weight)) return y;
  y.register_hook([this, a = x.detach(), w = m.weight, b = m.bias](const torch::Tensor& grad) {
    auto backprops = Backprops(grad, a.size(0));
    Store(w, torch::einsum("n...i,n...j->nij", {backprops, a}));
    Store(b, torch::einsum("n...k->nk", {backprops}));
  });
  return y;
}

std::vector<torch::Tensor> GradSampler::Take(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  out.reserve(params.size());
  for (const auto& p : params) {
    auto it = samples_.find(p.unsafeGetTensorImpl());
    TORCH_CHECK(it != samples_.end(), "opacus_cifar10: a parameter got no per-sample gradient");
    out.push_back(it->second);
  }
  samples_.clear();
  return out;
}

// ---------------------------------------------------------------- network

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false));
}

// opacus _batchnorm_to_groupnorm: GroupNorm(min(32, C), C, affine=True).
nn::GroupNorm Gn(int64_t c) { return nn::GroupNorm(nn::GroupNormOptions(std::min<int64_t>(32, c), c)); }

// torchvision BasicBlock (expansion 1) with its norm layers as GroupNorm;
// downsample is Sequential(conv1x1, norm) as in torchvision (names 0 and 1).
struct DpBasicBlockImpl : nn::Module {
  DpBasicBlockImpl(int64_t in, int64_t out, int64_t stride, std::shared_ptr<GradSampler> sampler)
      : conv1(register_module("conv1", Conv(in, out, 3, stride, 1))),
        bn1(register_module("bn1", Gn(out))),
        conv2(register_module("conv2", Conv(out, out, 3, 1, 1))),
        bn2(register_module("bn2", Gn(out))),
        s(std::move(sampler)) {
    if (stride != 1 || in != out)
      downsample = register_module("downsample", nn::Sequential(Conv(in, out, 1, stride, 0), Gn(out)));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = s->Norm(*bn1, s->Conv(*conv1, x)).relu_();
    out = s->Norm(*bn2, s->Conv(*conv2, out));
    auto identity = x;
    if (downsample) {
      identity = s->Norm(*downsample->ptr<nn::GroupNormImpl>(1), s->Conv(*downsample->ptr<nn::Conv2dImpl>(0), x));
    }
    return (out += identity).relu_();
  }

  nn::Conv2d conv1;
  nn::GroupNorm bn1;
  nn::Conv2d conv2;
  nn::GroupNorm bn2;
  nn::Sequential downsample{nullptr};
  std::shared_ptr<GradSampler> s;
};
TORCH_MODULE(DpBasicBlock);

// torchvision resnet18(num_classes=10) after ModuleValidator.fix.
struct DpResNet18Impl : nn::Module {
  explicit DpResNet18Impl(std::shared_ptr<GradSampler> sampler)
      : conv1(register_module("conv1", Conv(3, 64, 7, 2, 3))),
        bn1(register_module("bn1", Gn(64))),
        s(std::move(sampler)) {
    const std::array<int64_t, 4> widths = {64, 128, 256, 512};
    int64_t in = 64;
    for (size_t i = 0; i < widths.size(); ++i) {
      const int64_t stride = i == 0 ? 1 : 2;
      layers.push_back(register_module(
          "layer" + std::to_string(i + 1),
          nn::Sequential(DpBasicBlock(in, widths[i], stride, s), DpBasicBlock(widths[i], widths[i], 1, s))));
      in = widths[i];
    }
    fc = register_module("fc", nn::Linear(512, kClasses));
    InitWeights();
  }

  // torchvision ResNet.__init__: Kaiming-normal (fan_out, relu) convolutions,
  // norm weight 1 and bias 0 (also GroupNorm's defaults); Linear keeps
  // PyTorch's default initialisation.
  void InitWeights() {
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* c = m->as<nn::Conv2d>()) nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    }
  }

  torch::Tensor forward(const torch::Tensor& images) {
    s->Begin(is_training() && torch::GradMode::is_enabled());
    auto x = s->Norm(*bn1, s->Conv(*conv1, images)).relu_();
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& layer : layers) x = layer->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return s->Fc(*fc, x);
  }

  nn::Conv2d conv1;
  nn::GroupNorm bn1;
  std::vector<nn::Sequential> layers;
  nn::Linear fc{nullptr};
  std::shared_ptr<GradSampler> s;
};
TORCH_MODULE(DpResNet18);

// ---------------------------------------------------------------- workload

class OpacusWorkload : public Workload {
 public:
  explicit OpacusWorkload(const WorkloadOptions& opt) : sampler_(std::make_shared<GradSampler>()), net_(sampler_) {
    TORCH_CHECK(opt.batch_size >= 1, "opacus_cifar10: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    const auto on_device = torch::TensorOptions(opt.device);
    inputs_["images"] = torch::randn({opt.batch_size, 3, kImageSide, kImageSide}, on_device);
    inputs_["target"] = torch::randint(0, kClasses, {opt.batch_size}, on_device.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    // make_private with poisson_sampling=False over a one-batch DataLoader:
    // expected_batch_size = int(len(dataset) * (1 / len(loader))) = batch.
    expected_batch_size_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      for (const auto& p : net_->named_parameters()) {
        params_.push_back(p.value());
        names_.push_back(p.key());
      }
      optimizer_ = std::make_unique<torch::optim::Adam>(params_, torch::optim::AdamOptions(kLr));
    }
  }

  nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->forward(inputs_.at("images")); }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string("the train step's per-sample gradient hooks hang on the forward's intermediate tensors");
    }
    return std::nullopt;
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "opacus_cifar10: TrainStep needs a workload built in train mode");
    auto output = RunForward();
    auto loss = torch::cross_entropy_loss(output, inputs_.at("target"));
    loss.backward();
    DpPreStep();
    optimizer_->step();
    ZeroGrad();
    return loss.detach();
  }

  DpStepRecord& KeepRecord() {
    keep_record_ = true;
    return record_;
  }

 private:
  // DPOptimizer.pre_step: clip_and_accumulate, add_noise, scale_grad.
  void DpPreStep() {
    auto grad_samples = sampler_->Take(params_);
    std::vector<torch::Tensor> per_param_norms;
    for (const auto& g : grad_samples) per_param_norms.push_back(g.reshape({g.size(0), -1}).norm(2, {-1}));
    auto per_sample_norms = torch::stack(per_param_norms, 1).norm(2, {1});
    auto clip_factor = (kMaxGradNorm / (per_sample_norms + kNormEps)).clamp(std::nullopt, 1.0);
    std::vector<torch::Tensor> summed;
    for (const auto& g : grad_samples) summed.push_back(torch::einsum("i,i...", {clip_factor, g}));
    if (keep_record_) Record(per_sample_norms, grad_samples, summed);
    for (size_t i = 0; i < params_.size(); ++i)
      params_[i].mutable_grad() = (summed[i] + Noise(summed[i])).view_as(params_[i]);
    for (auto& p : params_) p.mutable_grad().div_(static_cast<double>(expected_batch_size_));
  }

  // DPOptimizer.zero_grad(set_to_none=False) ends in torch.optim's
  // zero_grad(False): a gradient without grad_fn (ours: a view of the noisy
  // sum) is zeroed in place, kept for the next backward to accumulate into.
  // LibTorch's Optimizer::zero_grad detaches in place first, which a view
  // refuses, so the Python rule is re-stated here.
  void ZeroGrad() {
    for (auto& p : params_) {
      auto& g = p.mutable_grad();
      if (!g.defined()) continue;
      g.requires_grad_(false);
      g.zero_();
    }
  }

  // opacus _generate_noise (secure_mode False, no generator: the global
  // one): it allocates a zeros tensor of the shape (returned only when std is
  // 0), then draws torch.normal(0, std, shape). The dtype follows the
  // gradient's (opacus takes the default float32; the same in fp32 runs).
  static torch::Tensor Noise(const torch::Tensor& reference) {
    const auto opts = reference.options();
    (void)torch::zeros(reference.sizes(), opts);
    return torch::normal(0.0, kNoiseMultiplier * kMaxGradNorm, reference.sizes(), std::nullopt, opts);
  }

  void Record(const torch::Tensor& norms, const std::vector<torch::Tensor>& grad_samples,
              const std::vector<torch::Tensor>& summed) {
    record_.per_sample_norms = norms.detach().clone();
    for (size_t i = 0; i < names_.size(); ++i) {
      record_.grad_samples[names_[i]] = grad_samples[i].detach().clone();
      record_.summed_clipped[names_[i]] = summed[i].detach().clone();
    }
  }

  std::shared_ptr<GradSampler> sampler_;
  DpResNet18 net_;
  std::vector<torch::Tensor> params_;
  std::vector<std::string> names_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  int64_t expected_batch_size_ = 1;
  bool keep_record_ = false;
  DpStepRecord record_;
};

}  // namespace

const DpStepRecord& KeepDpStepRecord(Workload& workload) {
  auto* w = dynamic_cast<OpacusWorkload*>(&workload);
  TORCH_CHECK(w != nullptr, "KeepDpStepRecord: not an opacus_cifar10 workload");
  return w->KeepRecord();
}

void AddOpacusModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "opacus_cifar10";
  info.paper_name = "opacus_cifar10";
  info.domain = Domain::kOther;
  info.task = "differentially private training (DP-SGD, per-sample gradients)";
  info.reference =
      "torchvision resnet18(num_classes=10) with GroupNorm (opacus ModuleValidator.fix), opacus 1.5.3 "
      "PrivacyEngine.make_private (hooks, flat clipping 1.0, noise 1.0) over Adam(1e-3), as "
      "torchbenchmark/models/opacus_cifar10";
  // torchbenchmark/models/opacus_cifar10/__init__.py: DEFAULT_TRAIN_BSIZE =
  // DEFAULT_EVAL_BSIZE = 64.
  info.default_batch = {64, 64};
  // CPU: a train step holds N x 11.2M per-sample gradients (2.9 GB at 64)
  // and passes over them four times (zero fill, copy, norms, clipped sum);
  // batch 16 took about 5 CPU-seconds per step here (a loaded 2-core host),
  // so 64 would be far over a few seconds. Eval (0.074 GFLOP a sample) keeps 64.
  info.cpu_batch = BatchSizes{16, 64};
  // Smoke: two samples, so the per-sample gradients still differ.
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<OpacusWorkload>(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
