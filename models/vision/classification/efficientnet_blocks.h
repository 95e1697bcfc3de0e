// timm's EfficientNet building blocks (timm/models/_efficientnet_blocks.py and
// _efficientnet_builder.py), written once for the two families built from
// them: timm_efficientnet (efficientnet_b0) and timm_efficientdet, whose
// backbone is tf_efficientnet_b1. The blocks are templates over a Style,
// because the two variants differ only in their layers, not in structure:
//
//   struct Style {
//     using ConvModule = ...;  // a ModuleHolder with parameters weight (and bias)
//     static ConvModule MakeConv(int64_t in, int64_t out, int64_t k, int64_t stride,
//                          int64_t groups, bool bias);
//     static torch::nn::BatchNorm2d MakeBn(int64_t channels);
//     static torch::Tensor Act(torch::Tensor x);  // SiLU
//   };
//
// efficientnet_b0 uses nn::Conv2d with symmetric padding, BatchNorm eps 1e-5
// and out-of-place SiLU; the "tf_" variant TF "same" padding, eps 1e-3 and
// in-place SiLU, as timm builds each. Submodules carry timm's names
// (conv_dw, bn1, se.conv_reduce, conv_pwl, ...), so that the state dicts
// match timm's.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace torchgauge::models::timm {

// timm's drop_path (stochastic depth) on a residual branch: a per-sample
// keep mask drawn as x.new_empty((N, 1, 1, 1)).bernoulli_(keep), scaled by
// 1 / keep. Identity in eval mode or at rate 0.
torch::Tensor DropPath(const torch::Tensor& x, double rate, bool training);

// Squeeze-excite as timm's efficientnet blocks have it: global mean, 1x1
// reduce conv, SiLU, 1x1 expand conv, sigmoid gate.
template <typename Style>
struct SqueezeExciteImpl : torch::nn::Module {
  SqueezeExciteImpl(int64_t channels, int64_t reduced)
      : conv_reduce(register_module("conv_reduce", Style::MakeConv(channels, reduced, 1, 1, 1, true))),
        conv_expand(register_module("conv_expand", Style::MakeConv(reduced, channels, 1, 1, 1, true))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto s = conv_reduce(x.mean({2, 3}, /*keepdim=*/true));
    return x * torch::sigmoid(conv_expand(Style::Act(s)));
  }
  typename Style::ConvModule conv_reduce, conv_expand;
};
template <typename Style>
using SqueezeExcite = torch::nn::ModuleHolder<SqueezeExciteImpl<Style>>;

struct BlockArgs {
  bool depthwise_separable;  // "ds" block (the first stage) or "ir" (inverted residual)
  int64_t in, out, kernel, stride, expand;
  double drop_path;
};

// Base class so that a stage can hold both block kinds.
struct MbBlock : torch::nn::Module {
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
};

// SE reduction: the block's input channels x 0.25 (se_ratio on in_chs).
inline int64_t SeReduced(int64_t in) { return static_cast<int64_t>(std::round(in * 0.25)); }

// timm DepthwiseSeparableConv: dw conv, BN + SiLU, SE, pw conv, BN, skip with
// drop path.
template <typename Style>
struct DepthwiseSeparableImpl : MbBlock {
  explicit DepthwiseSeparableImpl(const BlockArgs& a)
      : has_skip(a.stride == 1 && a.in == a.out), drop_path(a.drop_path) {
    conv_dw = register_module("conv_dw", Style::MakeConv(a.in, a.in, a.kernel, a.stride, a.in, false));
    bn1 = register_module("bn1", Style::MakeBn(a.in));
    se = register_module("se", SqueezeExcite<Style>(a.in, SeReduced(a.in)));
    conv_pw = register_module("conv_pw", Style::MakeConv(a.in, a.out, 1, 1, 1, false));
    bn2 = register_module("bn2", Style::MakeBn(a.out));
  }
  torch::Tensor forward(const torch::Tensor& x) override {
    auto y = Style::Act(bn1(conv_dw(x)));
    y = bn2(conv_pw(se(y)));
    return has_skip ? DropPath(y, drop_path, is_training()) + x : y;
  }
  bool has_skip;
  double drop_path;
  typename Style::ConvModule conv_dw{nullptr}, conv_pw{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  SqueezeExcite<Style> se{nullptr};
};

// timm InvertedResidual (MBConv): pw expand, BN + SiLU, dw conv, BN + SiLU,
// SE, pw linear projection, BN, skip with drop path.
template <typename Style>
struct InvertedResidualImpl : MbBlock {
  explicit InvertedResidualImpl(const BlockArgs& a) : has_skip(a.stride == 1 && a.in == a.out), drop_path(a.drop_path) {
    const int64_t mid = a.in * a.expand;
    conv_pw = register_module("conv_pw", Style::MakeConv(a.in, mid, 1, 1, 1, false));
    bn1 = register_module("bn1", Style::MakeBn(mid));
    conv_dw = register_module("conv_dw", Style::MakeConv(mid, mid, a.kernel, a.stride, mid, false));
    bn2 = register_module("bn2", Style::MakeBn(mid));
    se = register_module("se", SqueezeExcite<Style>(mid, SeReduced(a.in)));
    conv_pwl = register_module("conv_pwl", Style::MakeConv(mid, a.out, 1, 1, 1, false));
    bn3 = register_module("bn3", Style::MakeBn(a.out));
  }
  torch::Tensor forward(const torch::Tensor& x) override {
    auto y = Style::Act(bn1(conv_pw(x)));
    y = Style::Act(bn2(conv_dw(y)));
    y = bn3(conv_pwl(se(y)));
    return has_skip ? DropPath(y, drop_path, is_training()) + x : y;
  }
  bool has_skip;
  double drop_path;
  typename Style::ConvModule conv_pw{nullptr}, conv_dw{nullptr}, conv_pwl{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  SqueezeExcite<Style> se{nullptr};
};

// One stage of the arch_def: block kind, repeats, kernel, stride of its
// first block, expansion, output channels.
struct StageDef {
  bool depthwise_separable;
  int64_t repeats, kernel, stride, expand, out;
};

// EfficientNet's arch_def (ds_r1_k3_s1_e1_c16, ir_r2_k3_s2_e6_c24,
// ir_r2_k5_s2_e6_c40, ir_r3_k3_s2_e6_c80, ir_r3_k5_s1_e6_c112,
// ir_r4_k5_s2_e6_c192, ir_r1_k3_s1_e6_c320) with each stage's repeats scaled
// by depth_multiplier and rounded up (timm's _scale_stage_depth, "ceil"):
// 1.0 for b0, 1.1 for b1.
std::vector<StageDef> EfficientNetStages(double depth_multiplier);

// Builds the stages' blocks into `blocks` (timm's `blocks`, one ModuleList
// per stage), starting from `in` channels, with the drop-path rate rising
// linearly over the blocks from 0 to drop_path_rate. Returns the blocks per
// stage, in forward order.
template <typename Style>
std::vector<std::vector<std::shared_ptr<MbBlock>>> BuildStages(const std::vector<StageDef>& stages, int64_t in,
                                                               double drop_path_rate, torch::nn::ModuleList& blocks) {
  int64_t total = 0;
  for (const auto& s : stages) total += s.repeats;
  std::vector<std::vector<std::shared_ptr<MbBlock>>> out;
  int64_t index = 0;
  for (const auto& s : stages) {
    torch::nn::ModuleList stage;
    std::vector<std::shared_ptr<MbBlock>> sequence;
    for (int64_t r = 0; r < s.repeats; ++r, ++index) {
      const BlockArgs a{s.depthwise_separable,
                        in,
                        s.out,
                        s.kernel,
                        r == 0 ? s.stride : 1,
                        s.expand,
                        drop_path_rate * static_cast<double>(index) / static_cast<double>(total)};
      std::shared_ptr<MbBlock> block;
      if (s.depthwise_separable) {
        block = std::make_shared<DepthwiseSeparableImpl<Style>>(a);
      } else {
        block = std::make_shared<InvertedResidualImpl<Style>>(a);
      }
      stage->push_back(block);
      sequence.push_back(block);
      in = s.out;
    }
    blocks->push_back(stage);
    out.push_back(std::move(sequence));
  }
  return out;
}

}  // namespace torchgauge::models::timm
