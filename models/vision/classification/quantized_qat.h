// The quantization-aware-trained, int8-converted models of TorchBench, in
// eval mode: resnet50_quantized_qat and mobilenet_v2_quantized_qat
// (torchbenchmark/models/<id>/__init__.py). TorchBench takes a randomly
// initialised torchvision.models.resnet50 / mobilenet_v2 (the float models,
// not torchvision.models.quantization's), prepares it for quantization-aware
// training with FX graph mode (get_default_qat_qconfig("fbgemm")) and
// converts it straight away (quantize_fx.convert_fx), without a calibrating
// forward. This file does the same conversion natively and runs the result
// through LibTorch's quantized CPU kernels, called by name through the
// dispatcher as the converted Python model calls torch.ops.quantized.*:
//   * every convolution is folded with its BatchNorm (running statistics, as
//     convert_fx folds: w * gamma * rsqrt(var + eps), (b - mean) * gamma *
//     rsqrt(var + eps) + beta), its weight quantized per output channel to
//     qint8 (symmetric: scale = max|w_c| / 127.5, zero point 0, the
//     per-channel fake-quant observer's rule) and prepacked with
//     quantized::conv2d_prepack (depthwise convolutions too, groups kept);
//     the ReLU that follows a conv-BN is fused (quantized::conv2d_relu);
//     FX fuses no ReLU6, so MobileNetV2's ReLU6 stays a module that runs
//     hardtanh(0, 6) on the quantized tensor (aten::hardtanh's QuantizedCPU
//     kernel), as the converted Python model does;
//   * residual sums are quantized::add_relu (ResNet) or quantized::add
//     (MobileNetV2's inverted residuals, no activation), pooling runs on
//     quantized tensors, the classifier is quantized::linear on a per-channel
//     weight (linear_prepack), the logits are dequantized;
//   * activation scales and zero points are those of the never-run activation
//     observers: scale 1.0, zero point 0, quint8 — exactly what TorchBench's
//     converted model uses (its activations are integer-valued; a degenerate
//     but deterministic model, whose kernels and shapes are the real ones).
// The converted weights are buffers named after the converted model's
// modules, '.' written '_' ("layer1_0_conv2_weight", a per-channel qint8
// tensor; "layer1_0_conv2_bias", the folded float bias;
// "features_2_conv_1_0_weight" for MobileNetV2); like the converted model,
// the nets have no trainable parameters.
//
// The torchscript and inductor backends are declared unsupported: they start
// from a JIT trace of the forward, which fails on these boxed calls with
// custom-class packed weights.
//
// Deviations: TorchBench's eval() runs the first image of the batch only; we
// run the whole batch, like every other model here, so that the batch size
// means what it says. Train mode (QAT with fake quantization) is not
// supported (TorchBench's metadata.yaml: train_benchmark: false for both);
// eval runs on CPU only, as in TorchBench (quantized kernels are CPU
// kernels).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/vision/classification/mobilenet_v2.h"
#include "models/shared/resnet_network.h"
#include "models/workload.h"

namespace torchgauge::models {

// One converted convolution: BN folded, weight quantized per channel and
// prepacked, with the output's quantization parameters.
struct QuantizedConv {
  c10::IValue packed;  // __torch__.torch.classes.quantized.Conv2dPackedParamsBase
  bool relu = false;   // quantized::conv2d_relu rather than quantized::conv2d
  double out_scale = 1.0;
  int64_t out_zero_point = 0;
  torch::Tensor Forward(const torch::Tensor& qx) const;
};

struct QuantizedBottleneck {
  QuantizedConv conv1, conv2, conv3, downsample;
  bool has_downsample = false;
  double add_scale = 1.0;
  int64_t add_zero_point = 0;
};

struct QuantizedResNet50Impl : torch::nn::Module {
  // Converts `float_net` (a torchvision-layout ResNet with Bottleneck blocks)
  // as convert_fx does; `float_net` is left unchanged.
  explicit QuantizedResNet50Impl(ResNetImpl& float_net);
  torch::Tensor forward(const torch::Tensor& x);

  double input_scale = 1.0;
  int64_t input_zero_point = 0;
  QuantizedConv conv1;
  std::vector<std::vector<QuantizedBottleneck>> layers;
  c10::IValue fc_packed;  // __torch__.torch.classes.quantized.LinearPackedParamsBase
  double fc_scale = 1.0;
  int64_t fc_zero_point = 0;
};
TORCH_MODULE(QuantizedResNet50);

// MobileNetV2's inverted residual, converted: expand (absent when the
// expansion is 1) and depthwise conv-BN each followed by ReLU6 (hardtanh on
// the quantized tensor), the linear projection conv-BN, and quantized::add
// when the block keeps its shape.
struct QuantizedInvertedResidual {
  std::vector<QuantizedConv> relu6_convs;  // expand (if any), depthwise
  QuantizedConv project;
  bool use_res_connect = false;
  double add_scale = 1.0;
  int64_t add_zero_point = 0;
};

struct QuantizedMobileNetV2Impl : torch::nn::Module {
  // Converts `float_net` (torchvision's mobilenet_v2 layout) as convert_fx
  // does; `float_net` is left unchanged.
  explicit QuantizedMobileNetV2Impl(MobileNetV2Impl& float_net);
  torch::Tensor forward(const torch::Tensor& x);

  double input_scale = 1.0;
  int64_t input_zero_point = 0;
  QuantizedConv stem, last;                       // features.0 and features.18, each with ReLU6
  std::vector<QuantizedInvertedResidual> blocks;  // features.1 .. features.17
  double dropout = 0.2;                           // classifier.0, the identity in eval
  c10::IValue fc_packed;                          // classifier.1
  double fc_scale = 1.0;
  int64_t fc_zero_point = 0;
};
TORCH_MODULE(QuantizedMobileNetV2);

// Per-channel symmetric qint8 quantization of a weight (axis 0), as the QAT
// per-channel weight observer and convert_fx do it.
torch::Tensor QuantizeWeightPerChannel(const torch::Tensor& w);

// Registers resnet50_quantized_qat and mobilenet_v2_quantized_qat.
void AddQuantizedQatModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
