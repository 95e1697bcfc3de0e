#include "models/vision/classification/quantized_qat.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// A quantized CPU operator by its registered name, called boxed as the
// converted Python model calls torch.ops.quantized.* (the custom-class
// packed parameters travel as IValues).
c10::OperatorHandle QuantizedOp(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

c10::IValue CallOne(const c10::OperatorHandle& op, std::vector<c10::IValue> stack) {
  op.callBoxed(&stack);
  TORCH_CHECK(stack.size() == 1, "quantized_qat: ", op.schema().name(), " returned ", stack.size(), " values");
  return std::move(stack[0]);
}

// Activation quantization parameters of a never-run observer
// (calculate_qparams on an empty min/max: scale 1.0, zero point 0).
constexpr double kActScale = 1.0;
constexpr int64_t kActZeroPoint = 0;

// Folds an eval-mode BatchNorm into the preceding bias-free convolution and
// quantizes and prepacks the result.
QuantizedConv Convert(nn::Module& owner, const std::string& prefix, const nn::Conv2dImpl& conv,
                      const nn::BatchNorm2dImpl& bn, bool relu) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(!conv.options.bias(), "quantized_qat: ", prefix, " is expected to have no bias");
  auto rsqrt = torch::rsqrt(bn.running_var + bn.options.eps());
  auto w = conv.weight * (bn.weight * rsqrt).reshape({-1, 1, 1, 1});
  auto b = (torch::zeros_like(bn.running_mean) - bn.running_mean) * rsqrt * bn.weight + bn.bias;
  auto qw = QuantizeWeightPerChannel(w);
  owner.register_buffer(prefix + "_weight", qw);
  owner.register_buffer(prefix + "_bias", b);
  const auto& o = conv.options;
  auto to_list = [](const torch::ExpandingArray<2>& a) { return std::vector<int64_t>{(*a)[0], (*a)[1]}; };
  const auto padding = std::get<torch::ExpandingArray<2>>(o.padding());
  QuantizedConv q;
  q.packed = CallOne(QuantizedOp("quantized::conv2d_prepack", ""),
                     {qw, b, to_list(o.stride()), to_list(padding), to_list(o.dilation()), o.groups()});
  q.relu = relu;
  q.out_scale = kActScale;
  q.out_zero_point = kActZeroPoint;
  return q;
}

// Quantizes and prepacks a classifier, as convert_fx does a Linear.
c10::IValue ConvertLinear(nn::Module& owner, const std::string& prefix, const nn::LinearImpl& fc) {
  torch::NoGradGuard no_grad;
  auto w = QuantizeWeightPerChannel(fc.weight);
  auto b = fc.bias.detach().clone();
  owner.register_buffer(prefix + "_weight", w);
  owner.register_buffer(prefix + "_bias", b);
  return CallOne(QuantizedOp("quantized::linear_prepack", ""), {w, b});
}

torch::Tensor Classify(const torch::Tensor& q, const c10::IValue& packed, double scale, int64_t zero_point) {
  static const c10::OperatorHandle linear = QuantizedOp("quantized::linear", "");
  return CallOne(linear, {q, packed, scale, zero_point}).toTensor().dequantize();
}

}  // namespace

torch::Tensor QuantizeWeightPerChannel(const torch::Tensor& w) {
  // The observer's symmetric rule in float32: max(-min(w_c, 0), max(w_c, 0))
  // over (127 - (-128)) / 2, at least float32's epsilon.
  const auto flat = w.detach().flatten(1);
  const auto zero = torch::zeros({1}, flat.options());
  const auto min_c = torch::minimum(std::get<0>(flat.min(1)), zero);
  const auto max_c = torch::maximum(std::get<0>(flat.max(1)), zero);
  auto scale = torch::maximum(-min_c, max_c) / ((127.0 - (-128.0)) / 2.0);
  scale = torch::clamp_min(scale, std::numeric_limits<float>::epsilon());
  return torch::quantize_per_channel(w.detach(), scale.to(torch::kDouble), torch::zeros({w.size(0)}, torch::kLong), 0,
                                     torch::kQInt8);
}

torch::Tensor QuantizedConv::Forward(const torch::Tensor& qx) const {
  static const c10::OperatorHandle conv = QuantizedOp("quantized::conv2d", "new");
  static const c10::OperatorHandle conv_relu = QuantizedOp("quantized::conv2d_relu", "new");
  return CallOne(relu ? conv_relu : conv, {qx, packed, out_scale, out_zero_point}).toTensor();
}

QuantizedResNet50Impl::QuantizedResNet50Impl(ResNetImpl& f) {
  input_scale = kActScale;
  input_zero_point = kActZeroPoint;
  conv1 = Convert(*this, "conv1", *f.conv1, *f.bn1, true);
  nn::Sequential* stages[4] = {&f.layer1, &f.layer2, &f.layer3, &f.layer4};
  for (int s = 0; s < 4; ++s) {
    std::vector<QuantizedBottleneck> stage;
    for (size_t i = 0; i < (*stages[s])->size(); ++i) {
      auto* blk = (*stages[s])->ptr(i)->as<BottleneckImpl>();
      TORCH_CHECK(blk != nullptr, "resnet50_quantized_qat: expects Bottleneck blocks");
      const std::string p = "layer" + std::to_string(s + 1) + "_" + std::to_string(i) + "_";
      QuantizedBottleneck q;
      q.conv1 = Convert(*this, p + "conv1", *blk->conv1, *blk->bn1, true);
      q.conv2 = Convert(*this, p + "conv2", *blk->conv2, *blk->bn2, true);
      q.conv3 = Convert(*this, p + "conv3", *blk->conv3, *blk->bn3, false);
      if (blk->downsample) {
        q.has_downsample = true;
        q.downsample = Convert(*this, p + "downsample_0", *blk->downsample->ptr(0)->as<nn::Conv2dImpl>(),
                               *blk->downsample->ptr(1)->as<nn::BatchNorm2dImpl>(), false);
      }
      q.add_scale = kActScale;
      q.add_zero_point = kActZeroPoint;
      stage.push_back(std::move(q));
    }
    layers.push_back(std::move(stage));
  }
  fc_packed = ConvertLinear(*this, "fc", *f.fc);
  fc_scale = kActScale;
  fc_zero_point = kActZeroPoint;
}

torch::Tensor QuantizedResNet50Impl::forward(const torch::Tensor& x) {
  static const c10::OperatorHandle add_relu = QuantizedOp("quantized::add_relu", "");
  auto q = torch::quantize_per_tensor(x, input_scale, input_zero_point, torch::kQUInt8);
  // Every size spelt out for both dimensions: the quantized kernel reads two
  // dilation entries, where C++'s default `dilation=1` has one (Python's
  // argument parser expands it).
  q = torch::max_pool2d(conv1.Forward(q), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  for (const auto& stage : layers) {
    for (const auto& b : stage) {
      auto out = b.conv3.Forward(b.conv2.Forward(b.conv1.Forward(q)));
      auto identity = b.has_downsample ? b.downsample.Forward(q) : q;
      q = CallOne(add_relu, {out, identity, b.add_scale, b.add_zero_point}).toTensor();
    }
  }
  q = torch::flatten(torch::adaptive_avg_pool2d(q, {1, 1}), 1);
  return Classify(q, fc_packed, fc_scale, fc_zero_point);
}

namespace {

// A torchvision Conv2dNormActivation ("<i>.0" conv, "<i>.1" BN, "<i>.2"
// ReLU6) converted: the conv-BN folded, unfused (FX has no conv-BN-ReLU6
// pattern); the ReLU6 runs in QuantizedMobileNetV2Impl::forward.
QuantizedConv ConvertConvBnReLU6(nn::Module& owner, const std::string& prefix, nn::Module& m) {
  auto* seq = m.as<nn::SequentialImpl>();
  TORCH_CHECK(seq != nullptr && seq->size() == 3, "mobilenet_v2_quantized_qat: ", prefix,
              " is expected to be conv, BN, ReLU6");
  return Convert(owner, prefix + "_0", *seq->ptr(0)->as<nn::Conv2dImpl>(), *seq->ptr(1)->as<nn::BatchNorm2dImpl>(),
                 false);
}

QuantizedInvertedResidual ConvertInvertedResidual(nn::Module& owner, const std::string& prefix,
                                                  MobileNetV2InvertedResidualImpl& blk) {
  QuantizedInvertedResidual q;
  const auto& seq = *blk.conv;
  // [expand,] depthwise, projection conv, projection BN: the fused projection
  // takes the conv's name ("conv.2" after an expand, "conv.1" without).
  const size_t n_act = seq.size() - 2;
  for (size_t i = 0; i < n_act; ++i)
    q.relu6_convs.push_back(ConvertConvBnReLU6(owner, prefix + "_conv_" + std::to_string(i), *seq.ptr(i)));
  q.project = Convert(owner, prefix + "_conv_" + std::to_string(n_act), *seq.ptr(n_act)->as<nn::Conv2dImpl>(),
                      *seq.ptr(n_act + 1)->as<nn::BatchNorm2dImpl>(), false);
  q.use_res_connect = blk.use_res_connect;
  q.add_scale = kActScale;
  q.add_zero_point = kActZeroPoint;
  return q;
}

// nn.ReLU6 on a quantized tensor: hardtanh(0, 6) in the quantized domain.
torch::Tensor QuantizedReLU6(const torch::Tensor& q) { return torch::hardtanh(q, 0.0, 6.0); }

}  // namespace

QuantizedMobileNetV2Impl::QuantizedMobileNetV2Impl(MobileNetV2Impl& f) {
  input_scale = kActScale;
  input_zero_point = kActZeroPoint;
  const auto& feats = *f.features;
  const size_t n = feats.size();
  TORCH_CHECK(n >= 3, "mobilenet_v2_quantized_qat: too few feature stages");
  stem = ConvertConvBnReLU6(*this, "features_0", *feats.ptr(0));
  for (size_t i = 1; i + 1 < n; ++i) {
    auto* blk = feats.ptr(i)->as<MobileNetV2InvertedResidualImpl>();
    TORCH_CHECK(blk != nullptr, "mobilenet_v2_quantized_qat: features.", i, " is not an inverted residual");
    blocks.push_back(ConvertInvertedResidual(*this, "features_" + std::to_string(i), *blk));
  }
  last = ConvertConvBnReLU6(*this, "features_" + std::to_string(n - 1), *feats.ptr(n - 1));
  auto* drop = f.classifier->ptr(0)->as<nn::DropoutImpl>();
  TORCH_CHECK(drop != nullptr, "mobilenet_v2_quantized_qat: classifier.0 is expected to be Dropout");
  dropout = drop->options.p();
  fc_packed = ConvertLinear(*this, "classifier_1", *f.classifier->ptr(1)->as<nn::LinearImpl>());
  fc_scale = kActScale;
  fc_zero_point = kActZeroPoint;
}

torch::Tensor QuantizedMobileNetV2Impl::forward(const torch::Tensor& x) {
  static const c10::OperatorHandle add = QuantizedOp("quantized::add", "");
  auto q = torch::quantize_per_tensor(x, input_scale, input_zero_point, torch::kQUInt8);
  q = QuantizedReLU6(stem.Forward(q));
  for (const auto& b : blocks) {
    auto out = q;
    for (const auto& c : b.relu6_convs) out = QuantizedReLU6(c.Forward(out));
    out = b.project.Forward(out);
    q = b.use_res_connect ? CallOne(add, {q, out, b.add_scale, b.add_zero_point}).toTensor() : out;
  }
  q = QuantizedReLU6(last.Forward(q));
  q = torch::flatten(torch::adaptive_avg_pool2d(q, {1, 1}), 1);
  // classifier.0, nn.Dropout in eval: F.dropout(train=False), the identity.
  q = torch::dropout(q, dropout, /*train=*/false);
  return Classify(q, fc_packed, fc_scale, fc_zero_point);
}

namespace {

// TorchBench's eval workload for the converted models: 224x224 images (64x64
// in smoke runs: behind the global pool an input dimension), float in, float
// logits out.
class QuantizedEvalWorkload : public Workload {
 public:
  QuantizedEvalWorkload(const WorkloadOptions& opt, std::string id, std::shared_ptr<nn::Module> net,
                        std::function<torch::Tensor(const torch::Tensor&)> forward)
      : id_(std::move(id)), net_(std::move(net)), forward_(std::move(forward)) {
    TORCH_CHECK(opt.mode == Mode::kEval, id_, ": only eval is supported");
    TORCH_CHECK(opt.device.is_cpu(), id_, ": quantized kernels run on CPU only, got ", opt.device.str());
    TORCH_CHECK(opt.batch_size >= 1, id_, ": batch size must be positive, got ", opt.batch_size);
    const int64_t side = opt.smoke ? 64 : 224;
    inputs_["images"] = torch::randn({opt.batch_size, 3, side, side});
    samples_per_step_ = opt.batch_size;
  }

  nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return forward_(inputs_.at("images")); }
  torch::Tensor TrainStep() override { TORCH_CHECK(false, id_, ": train mode is not supported"); }
  // The collector's torchscript and inductor backends start from a JIT trace
  // of Forward(), with parameters and buffers as graph inputs; this forward's
  // weights live in prepacked custom-class objects passed to boxed
  // quantized::* calls, and tracing it fails (checked with LibTorch 2.11).
  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return "the converted int8 model computes with prepacked custom-class weights through boxed quantized::* "
           "operators, which the collector's JIT trace of the forward does not support";
  }
  void CastTo(torch::ScalarType dtype) override {
    TORCH_CHECK(false, id_, ": a quantized int8 model cannot be cast to ", dtype);
  }

 private:
  std::string id_;
  std::shared_ptr<nn::Module> net_;
  std::function<torch::Tensor(const torch::Tensor&)> forward_;
};

ModelInfo QuantizedInfo(const std::string& id, const std::string& float_model, BatchSizes batch) {
  ModelInfo info;
  info.id = id;
  info.paper_name = id;
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models." + float_model +
                   " through torch.ao.quantization.quantize_fx prepare_qat_fx + convert_fx (fbgemm)";
  info.default_batch = batch;
  info.smoke_batch = {1, 1};
  info.supports_train = false;
  info.unsupported_reason =
      "train: quantization-aware training (fake-quantize modules and observers in the training graph) is not "
      "implemented; TorchBench does not benchmark this model's train test either (metadata.yaml: "
      "train_benchmark: false). Eval runs the converted int8 "
      "model on CPU only (quantized kernels are CPU kernels; TorchBench's eval is CPU-only too)";
  return info;
}

}  // namespace

void AddQuantizedQatModels(std::vector<ModelInfo>& out) {
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/<id>/__init__.py.
  ModelInfo resnet = QuantizedInfo("resnet50_quantized_qat", "resnet50", {32, 32});
  resnet.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    ResNet float_net(ResNet50Config());
    float_net->eval();
    QuantizedResNet50 net(*float_net);
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return std::make_unique<QuantizedEvalWorkload>(opt, "resnet50_quantized_qat", net.ptr(), forward);
  };
  out.push_back(std::move(resnet));

  ModelInfo mobilenet = QuantizedInfo("mobilenet_v2_quantized_qat", "mobilenet_v2", {96, 96});
  // On a CPU device: measured 1.2 s an eval step at batch 8 (224x224) on the
  // shared 2-core machine, so 96 would take some 14 s; the CPU suite runs 16,
  // as for the float mobilenet_v2.
  mobilenet.cpu_batch = BatchSizes{16, 16};
  mobilenet.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    MobileNetV2 float_net;
    float_net->eval();
    QuantizedMobileNetV2 net(*float_net);
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return std::make_unique<QuantizedEvalWorkload>(opt, "mobilenet_v2_quantized_qat", net.ptr(), forward);
  };
  out.push_back(std::move(mobilenet));
}

}  // namespace torchgauge::models
