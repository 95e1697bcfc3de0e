#include "models/vision/detection/efficientdet.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "models/unsupported_error.h"
#include "models/vision/classification/efficientnet_blocks.h"
#include "models/vision/detection/torchvision_ops.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// effdet/config/model_config.py: default_detection_model_configs and tf_efficientdet_d1.
constexpr int64_t kClasses = 90, kFpnChannels = 88, kFpnCells = 4, kHeadRepeats = 3;
constexpr int64_t kMinLevel = 3, kMaxLevel = 7, kLevels = kMaxLevel - kMinLevel + 1, kAnchorsPerCell = 9;
constexpr int64_t kImageSize = 640, kSmokeImageSize = 128;  // smoke: P7 is 1x1, so train BatchNorm needs batch >= 2
constexpr int64_t kMaxDetectionPoints = 5000, kMaxDetPerImage = 100;
constexpr int64_t kMaxInstances = 100;     // effdet/data/loader.py MAX_NUM_INSTANCES: targets padded with -1
constexpr double kBackboneDropPath = 0.2;  // backbone_args=dict(drop_path_rate=0.2)
constexpr double kAlpha = 0.25, kGamma = 1.5, kDelta = 0.1, kBoxLossWeight = 50.0;
constexpr double kMatchThreshold = 0.5, kNmsIou = 0.5, kBoxCoderEps = 1e-7, kFusionEps = 1e-4;
constexpr double kAnchorScale = 4.0;
// timm_efficientdet/args.py: --opt momentum, --momentum 0.9, --weight-decay 4e-5,
// --clip-grad 10, --lr 0.01, --warmup-lr 1e-4, --warmup-epochs 5 (cosine).
// Each TorchBench train() is epoch 0 of its own loop and ends with
// lr_scheduler.step(1): the first call runs at the warmup lr 1e-4, every
// later (measured) one at epoch 1's warmup lr, 1e-4 + (0.01 - 1e-4) / 5.
constexpr double kLr = 1e-4 + (0.01 - 1e-4) / 5.0, kMomentum = 0.9, kWeightDecay = 4e-5, kClipGrad = 10.0;

// ------------------------------------------------------------------ layers

// timm's create_conv2d with padding="same": stride-1 convs pad (k - 1) / 2
// statically; others are Conv2dSame, padding at run time with F.pad (the odd
// pixel right and bottom). Parameters named weight / bias as nn.Conv2d's.
struct SameConvImpl : nn::Module {
  SameConvImpl(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1, bool bias_arg = false)
      : k_(k), stride_(stride), groups_(groups) {
    weight = register_parameter("weight", torch::empty({out, in / groups, k, k}));
    if (bias_arg) this->bias = register_parameter("bias", torch::zeros({out}));
  }
  torch::Tensor forward(torch::Tensor x) {
    int64_t pad = 0;
    if (stride_ == 1) {
      pad = (k_ - 1) / 2;
    } else {
      x = PadSame(x, k_, stride_, 0.0);
    }
    return torch::conv2d(x, weight, bias, stride_, pad, 1, groups_);
  }
  // timm pad_same: get_same_padding per side, F.pad(x, [l, r, t, b], value).
  static torch::Tensor PadSame(const torch::Tensor& x, int64_t k, int64_t s, double value) {
    auto same = [&](int64_t i) { return std::max<int64_t>(((i + s - 1) / s - 1) * s + k - i, 0); };
    const int64_t ph = same(x.size(2)), pw = same(x.size(3));
    if (ph == 0 && pw == 0) return x;
    return torch::pad(x, {pw / 2, pw - pw / 2, ph / 2, ph - ph / 2}, "constant", value);
  }
  int64_t k_, stride_, groups_;
  torch::Tensor weight, bias;
};
TORCH_MODULE(SameConv);

// timm MaxPool2dSame(3, 2): pad_same with -inf, then max_pool2d without padding.
torch::Tensor MaxPoolSame(const torch::Tensor& x) {
  auto padded = SameConvImpl::PadSame(x, 3, 2, -std::numeric_limits<double>::infinity());
  return torch::max_pool2d(padded, {3, 3}, {2, 2});
}

nn::BatchNorm2d Bn(int64_t c, double momentum) {
  return nn::BatchNorm2d(nn::BatchNormOptions(c).eps(1e-3).momentum(momentum));
}
constexpr double kBackboneBnMomentum = 0.1;  // tf_ variants set only bn_eps (timm BN_EPS_TF_DEFAULT)
constexpr double kFpnBnMomentum = 0.01;      // effdet norm_kwargs=dict(eps=.001, momentum=.01)

// SiLU(inplace=True) as effdet's and timm's activation layers apply it.
torch::Tensor Silu_(torch::Tensor x) {
  torch::silu_(x);
  return x;
}

// ------------------------------------------------------------------ backbone

// tf_efficientnet_b1's layers (efficientnet_blocks.h): TF "same" padding,
// BatchNorm eps 1e-3, in-place SiLU.
struct TfStyle {
  using ConvModule = SameConv;
  static SameConv MakeConv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups, bool bias) {
    return SameConv(in, out, k, stride, groups, bias);
  }
  static nn::BatchNorm2d MakeBn(int64_t c) { return Bn(c, kBackboneBnMomentum); }
  static torch::Tensor Act(const torch::Tensor& x) { return Silu_(x); }
};

// timm EfficientNetFeatures for tf_efficientnet_b1 (channel multiplier 1.0,
// depth 1.1: each stage's repeats ceil(r x 1.1)), returning stages 2, 4, 6.
struct BackboneImpl : nn::Module {
  BackboneImpl() {
    conv_stem = register_module("conv_stem", SameConv(3, 32, 3, 2));
    bn1 = register_module("bn1", Bn(32, kBackboneBnMomentum));
    blocks = register_module("blocks", nn::ModuleList());
    stage_blocks =
        timm::BuildStages<TfStyle>(timm::EfficientNetStages(/*depth_multiplier=*/1.1), 32, kBackboneDropPath, blocks);
  }
  std::vector<torch::Tensor> forward(const torch::Tensor& images) {
    auto x = Silu_(bn1(conv_stem(images)));
    std::vector<torch::Tensor> out;
    for (size_t si = 0; si < stage_blocks.size(); ++si) {
      for (auto& b : stage_blocks[si]) x = b->forward(x);
      if (si == 2 || si == 4 || si == 6) out.push_back(x);  // feature_info reductions 8, 16, 32
    }
    return out;
  }
  SameConv conv_stem{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ModuleList blocks{nullptr};
  std::vector<std::vector<std::shared_ptr<timm::MbBlock>>> stage_blocks;
};
TORCH_MODULE(Backbone);

// ------------------------------------------------------------------ BiFPN

// effdet ConvBnAct2d as ResampleFeatureMap uses it: 1x1 conv (bias: redundant
// bias), BN, no activation.
struct ConvBnImpl : nn::Module {
  ConvBnImpl(int64_t in, int64_t out)
      : conv(register_module("conv", SameConv(in, out, 1, 1, 1, true))),
        bn(register_module("bn", Bn(out, kFpnBnMomentum))) {}
  torch::Tensor forward(const torch::Tensor& x) { return bn(conv(x)); }
  SameConv conv;
  nn::BatchNorm2d bn;
};
TORCH_MODULE(ConvBn);

// effdet SeparableConv2d: depthwise 3x3, pointwise 1x1 (bias), optional BN.
struct SeparableImpl : nn::Module {
  SeparableImpl(int64_t in, int64_t out, bool with_bn)
      : conv_dw(register_module("conv_dw", SameConv(in, in, 3, 1, in))),
        conv_pw(register_module("conv_pw", SameConv(in, out, 1, 1, 1, true))) {
    if (with_bn) bn = register_module("bn", Bn(out, kFpnBnMomentum));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = conv_pw(conv_dw(x));
    return bn ? bn(y) : y;
  }
  SameConv conv_dw, conv_pw;
  nn::BatchNorm2d bn{nullptr};
};
TORCH_MODULE(Separable);

using Size2 = std::pair<int64_t, int64_t>;

// effdet ResampleFeatureMap: 1x1 conv + BN when the channels differ, then
// MaxPool2dSame(3, 2) to a smaller size or nearest interpolation to a larger.
struct ResampleImpl : nn::Module {
  ResampleImpl(int64_t in, int64_t out, Size2 in_size, Size2 out_size_arg) : out_size(out_size_arg) {
    if (in != out) conv = register_module("conv", ConvBn(in, out));
    down = in_size.first > out_size_arg.first && in_size.second > out_size_arg.second;
    up = !down && (in_size.first < out_size_arg.first || in_size.second < out_size_arg.second);
    TORCH_CHECK(!down || (in_size.first - 1) / out_size_arg.first + 1 == 2, "efficientdet: downsampling is by 2");
  }
  torch::Tensor forward(torch::Tensor x) {
    if (conv) x = conv(x);
    if (down) return MaxPoolSame(x);
    if (up) {
      return torch::nn::functional::interpolate(x, torch::nn::functional::InterpolateFuncOptions()
                                                       .size(std::vector<int64_t>{out_size.first, out_size.second})
                                                       .mode(torch::kNearest));
    }
    return x;
  }
  Size2 out_size;
  bool down = false, up = false;
  ConvBn conv{nullptr};
};
TORCH_MODULE(Resample);

// effdet FpnCombine with weight_method "fastattn": relu(edge_weights),
// stack of node_i * w_i / (sum + 1e-4), summed.
struct CombineImpl : nn::Module {
  CombineImpl(const std::vector<int64_t>& offsets_arg, const std::vector<int64_t>& chs, const std::vector<Size2>& sizes,
              Size2 out_size)
      : offsets(offsets_arg) {
    resample = register_module("resample", std::make_shared<nn::Module>());
    for (auto o : offsets_arg) {
      auto r = Resample(chs[o], kFpnChannels, sizes[o], out_size);
      resample->register_module(std::to_string(o), r);
      resamplers.push_back(r);
    }
    edge_weights = register_parameter("edge_weights", torch::ones({static_cast<int64_t>(offsets_arg.size())}));
  }
  torch::Tensor forward(const std::vector<torch::Tensor>& x) {
    std::vector<torch::Tensor> nodes;
    for (size_t i = 0; i < offsets.size(); ++i) nodes.push_back(resamplers[i]->forward(x[offsets[i]]));
    auto w = torch::relu(edge_weights.to(x[0].scalar_type()));
    auto sum = torch::sum(w);
    std::vector<torch::Tensor> weighted;
    for (size_t i = 0; i < nodes.size(); ++i) weighted.push_back((nodes[i] * w[i]) / (sum + kFusionEps));
    return torch::sum(torch::stack(weighted, -1), -1);
  }
  std::vector<int64_t> offsets;
  std::shared_ptr<nn::Module> resample;  // effdet's ModuleDict, keyed by input offset / level
  std::vector<Resample> resamplers;
  torch::Tensor edge_weights;
};
TORCH_MODULE(Combine);

// effdet Fnode: combine, then after_combine = SiLU + separable conv + BN.
struct FnodeImpl : nn::Module {
  FnodeImpl(Combine c) : combine(register_module("combine", c)) {
    after_combine = register_module("after_combine", nn::Sequential());
    conv = Separable(kFpnChannels, kFpnChannels, true);
    after_combine->push_back("conv", conv);
  }
  torch::Tensor forward(const std::vector<torch::Tensor>& x) { return conv(Silu_(combine(x))); }
  Combine combine;
  nn::Sequential after_combine{nullptr};
  Separable conv{nullptr};
};
TORCH_MODULE(Fnode);

// Feature sizes of levels 0..7 (effdet get_feat_sizes: (s - 1) // 2 + 1).
std::vector<Size2> FeatSizes(int64_t image_size) {
  std::vector<Size2> out{{image_size, image_size}};
  for (int64_t l = 1; l <= kMaxLevel; ++l) {
    auto [h, w] = out.back();
    out.push_back({(h - 1) / 2 + 1, (w - 1) / 2 + 1});
  }
  return out;
}

// bifpn_config: top-down nodes for levels 6..3, bottom-up 4..7, as
// (level, input offsets) over the 5 inputs and the nodes built so far.
std::vector<std::pair<int64_t, std::vector<int64_t>>> BiFpnNodes() {
  std::vector<std::vector<int64_t>> ids(kMaxLevel + 1);
  for (int64_t i = 0; i < kLevels; ++i) ids[kMinLevel + i] = {i};
  std::vector<std::pair<int64_t, std::vector<int64_t>>> nodes;
  int64_t next = kLevels;
  for (int64_t l = kMaxLevel - 1; l >= kMinLevel; --l) {
    nodes.push_back({l, {ids[l].back(), ids[l + 1].back()}});
    ids[l].push_back(next++);
  }
  for (int64_t l = kMinLevel + 1; l <= kMaxLevel; ++l) {
    std::vector<int64_t> in = ids[l];
    in.push_back(ids[l - 1].back());
    nodes.push_back({l, in});
    ids[l].push_back(next++);
  }
  return nodes;
}

struct BiFpnLayerImpl : nn::Module {
  BiFpnLayerImpl(std::vector<int64_t> chs, std::vector<Size2> sizes, const std::vector<Size2>& feat) {
    fnode = register_module("fnode", nn::ModuleList());
    for (const auto& [level, offsets] : BiFpnNodes()) {
      auto node = Fnode(Combine(offsets, chs, sizes, feat[level]));
      fnode->push_back(node);
      nodes.push_back(node);
      chs.push_back(kFpnChannels);
      sizes.push_back(feat[level]);
    }
  }
  std::vector<torch::Tensor> forward(std::vector<torch::Tensor> x) {
    for (auto& n : nodes) x.push_back(n(x));
    return std::vector<torch::Tensor>(x.end() - kLevels, x.end());
  }
  nn::ModuleList fnode{nullptr};
  std::vector<Fnode> nodes;
};
TORCH_MODULE(BiFpnLayer);

struct BiFpnImpl : nn::Module {
  explicit BiFpnImpl(int64_t image_size) {
    const auto feat = FeatSizes(image_size);
    std::vector<int64_t> chs = {40, 112, 320};
    std::vector<Size2> sizes = {feat[3], feat[4], feat[5]};
    resample = register_module("resample", std::make_shared<nn::Module>());
    for (int64_t level = 3; level < kLevels; ++level) {
      auto r = Resample(chs.back(), kFpnChannels, sizes.back(), feat[level + kMinLevel]);
      resample->register_module(std::to_string(level), r);
      resamplers.push_back(r);
      chs.push_back(kFpnChannels);
      sizes.push_back(feat[level + kMinLevel]);
    }
    cell = register_module("cell", nn::ModuleList());
    for (int64_t rep = 0; rep < kFpnCells; ++rep) {
      auto layer = BiFpnLayer(chs, sizes, feat);
      cell->push_back(layer);
      layers.push_back(layer);
      chs.assign(kLevels, kFpnChannels);
      sizes.assign(feat.begin() + kMinLevel, feat.end());
    }
  }
  std::vector<torch::Tensor> forward(std::vector<torch::Tensor> x) {
    for (auto& r : resamplers) x.push_back(r(x.back()));
    for (auto& l : layers) x = l(x);
    return x;
  }
  std::shared_ptr<nn::Module> resample;  // effdet's ModuleDict, keyed by input offset / level
  std::vector<Resample> resamplers;
  nn::ModuleList cell{nullptr};
  std::vector<BiFpnLayer> layers;
};
TORCH_MODULE(BiFpn);

// ------------------------------------------------------------------ heads

// effdet HeadNet: separable convs shared over levels, BN per (repeat, level),
// SiLU, separable predict conv.
struct HeadNetImpl : nn::Module {
  explicit HeadNetImpl(int64_t outputs) {
    conv_rep = register_module("conv_rep", nn::ModuleList());
    bn_rep = register_module("bn_rep", nn::ModuleList());
    for (int64_t r = 0; r < kHeadRepeats; ++r) {
      auto conv = Separable(kFpnChannels, kFpnChannels, false);
      conv_rep->push_back(conv);
      convs.push_back(conv);
      nn::ModuleList per_level;
      std::vector<nn::BatchNorm2d> level_bns;
      for (int64_t l = 0; l < kLevels; ++l) {
        nn::Sequential seq;
        auto bn = Bn(kFpnChannels, kFpnBnMomentum);
        seq->push_back("bn", bn);
        per_level->push_back(seq);
        level_bns.push_back(bn);
      }
      bn_rep->push_back(per_level);
      bns.push_back(level_bns);
    }
    predict = register_module("predict", Separable(kFpnChannels, outputs * kAnchorsPerCell, false));
  }
  std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& x) {
    std::vector<torch::Tensor> out;
    for (int64_t l = 0; l < kLevels; ++l) {
      auto y = x[l];
      for (int64_t r = 0; r < kHeadRepeats; ++r) y = Silu_(bns[r][l](convs[r](y)));
      out.push_back(predict(y));
    }
    return out;
  }
  nn::ModuleList conv_rep{nullptr}, bn_rep{nullptr};
  std::vector<Separable> convs;
  std::vector<std::vector<nn::BatchNorm2d>> bns;
  Separable predict{nullptr};
};
TORCH_MODULE(HeadNet);

// effdet _init_weight for the non-backbone modules and timm _init_weight_goog
// for the backbone.
void InitWeights(nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const std::string& n = item.key();
    auto* conv = item.value()->as<SameConvImpl>();
    if (conv == nullptr) {
      if (auto* bn = item.value()->as<nn::BatchNorm2dImpl>()) {
        bn->weight.fill_(1.0);
        bn->bias.zero_();
      }
      continue;
    }
    auto& w = conv->weight;
    const double rf = static_cast<double>(w.size(2) * w.size(3));
    const double fan_in = w.size(1) * rf, fan_out = std::floor(w.size(0) * rf / conv->groups_);
    if (n.rfind("model.backbone", 0) == 0) {
      w.normal_(0.0, std::sqrt(2.0 / fan_out));
    } else if (n.find("box_net") != std::string::npos || n.find("class_net") != std::string::npos) {
      w.normal_(0.0, std::sqrt(1.0 / std::max(1.0, fan_in)));  // _variance_scaling
    } else if (n.find(".conv_dw") != std::string::npos || n.find(".conv_pw") != std::string::npos ||
               n.find(".conv.conv") != std::string::npos) {
      const double limit = std::sqrt(3.0 / std::max(1.0, (fan_in + fan_out) / 2.0));  // _glorot_uniform
      w.uniform_(-limit, limit);
    }
    if (conv->bias.defined()) {
      const bool class_predict = n.find("class_net.predict.conv_pw") != std::string::npos;
      conv->bias.fill_(class_predict ? -std::log((1 - 0.01) / 0.01) : 0.0);
    }
  }
}

struct EfficientDetImpl : nn::Module {
  explicit EfficientDetImpl(int64_t image_size)
      : backbone(register_module("backbone", Backbone())),
        fpn(register_module("fpn", BiFpn(image_size))),
        class_net(register_module("class_net", HeadNet(kClasses))),
        box_net(register_module("box_net", HeadNet(4))) {}
  std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> forward(const torch::Tensor& x) {
    auto features = fpn(backbone(x));
    return {class_net(features), box_net(features)};
  }
  Backbone backbone;
  BiFpn fpn;
  HeadNet class_net, box_net;
};
TORCH_MODULE(EfficientDet);

// effdet Anchors._generate_boxes: per level, per (octave, aspect) config, the
// grid of centres (np.arange(stride / 2, size, stride), meshgrid) and the
// half sizes; (y1, x1, y2, x2) rows ordered (cell, config), computed in float64
// as numpy does and stored as float32.
torch::Tensor AnchorBoxes(int64_t image_size) {
  const auto feat = FeatSizes(image_size);
  const double aspects[3][2] = {{1.0, 1.0}, {1.4, 0.7}, {0.7, 1.4}};
  const auto f64 = torch::TensorOptions(torch::kDouble);
  std::vector<torch::Tensor> levels;
  for (int64_t level = kMinLevel; level <= kMaxLevel; ++level) {
    const double sy = static_cast<double>(feat[0].first) / static_cast<double>(feat[level].first);
    const double sx = static_cast<double>(feat[0].second) / static_cast<double>(feat[level].second);
    auto x = torch::arange(sx / 2, static_cast<double>(image_size), sx, f64);
    auto y = torch::arange(sy / 2, static_cast<double>(image_size), sy, f64);
    auto grid = torch::meshgrid({x, y}, "xy");
    auto xv = grid[0].reshape(-1), yv = grid[1].reshape(-1);
    std::vector<torch::Tensor> configs;
    for (int octave = 0; octave < 3; ++octave) {
      for (const auto& a : aspects) {
        const double scale = std::pow(2.0, octave / 3.0);
        const double ax = kAnchorScale * sx * scale * a[0] / 2.0, ay = kAnchorScale * sy * scale * a[1] / 2.0;
        configs.push_back(torch::stack({yv - ay, xv - ax, yv + ay, xv + ax}, 1).unsqueeze(1));
      }
    }
    levels.push_back(torch::cat(configs, 1).reshape({-1, 4}));
  }
  return torch::cat(levels, 0).to(torch::kFloat);
}

struct AnchorsImpl : nn::Module {
  explicit AnchorsImpl(int64_t image_size) { boxes = register_buffer("boxes", AnchorBoxes(image_size)); }
  torch::Tensor boxes;
};
TORCH_MODULE(Anchors);

// DetBenchTrain / DetBenchPredict: the model and the anchors buffer.
struct BenchImpl : nn::Module {
  explicit BenchImpl(int64_t image_size)
      : model(register_module("model", EfficientDet(image_size))),
        anchors(register_module("anchors", Anchors(image_size))),
        feat(FeatSizes(image_size)) {
    InitWeights(*this);
  }
  EfficientDet model;
  Anchors anchors;
  std::vector<Size2> feat;
};
TORCH_MODULE(Bench);

// ------------------------------------------------------------------ labeler

// effdet object_detection: BoxList.get_center_coordinates_and_sizes.
std::vector<torch::Tensor> CentersAndSizes(const torch::Tensor& boxes) {
  auto c = boxes.t().unbind();
  auto width = c[3] - c[1], height = c[2] - c[0];
  return {c[0] + height / 2., c[1] + width / 2., height, width};
}

// region_similarity_calculator.iou(gt, anchors): G x N.
torch::Tensor Iou(const torch::Tensor& a, const torch::Tensor& b) {
  auto ca = a.chunk(4, 1), cb = b.chunk(4, 1);
  auto ih = torch::clamp(torch::min(ca[2], cb[2].t()) - torch::max(ca[0], cb[0].t()), 0);
  auto iw = torch::clamp(torch::min(ca[3], cb[3].t()) - torch::max(ca[1], cb[1].t()), 0);
  auto inter = ih * iw;
  auto area_a = (ca[2] - ca[0]).squeeze(1) * (ca[3] - ca[1]).squeeze(1);
  auto area_b = (cb[2] - cb[0]).squeeze(1) * (cb[3] - cb[1]).squeeze(1);
  auto unions = area_a.unsqueeze(1) + area_b.unsqueeze(0) - inter;
  return torch::where(inter == 0.0, torch::zeros_like(inter), inter / unions);
}

// ArgMaxMatcher._set_values_using_indicator: x * (1 - ind) + val * ind.
torch::Tensor SetWhere(const torch::Tensor& x, const torch::Tensor& indicator, int64_t val) {
  auto ind = indicator.to(x.scalar_type());
  return x * torch::rsub(ind, 1) + val * ind;  // Python's 1 - t is aten::rsub
}

// ArgMaxMatcher(0.5, unmatched 0.5, negatives_lower_than_unmatched,
// force_match_for_each_row): per anchor the matched target, -1 unmatched,
// -2 ignored.
torch::Tensor ArgMaxMatch(const torch::Tensor& sim) {
  if (sim.size(0) == 0) return -1 * torch::ones({sim.size(1)}, sim.options().dtype(torch::kLong));
  auto [vals, matches] = torch::max(sim, 0);
  auto below = kMatchThreshold > vals;
  auto between = (vals >= kMatchThreshold) & (kMatchThreshold > vals);
  matches = SetWhere(matches, below, -1);
  matches = SetWhere(matches, between, -2);
  auto force_cols = torch::argmax(sim, 1);
  auto onehot = torch::zeros({sim.size(0), sim.size(1)}, sim.options().dtype(torch::kBool))
                    .scatter_(1, force_cols.unsqueeze(1), 1);
  auto [mask, rows] = torch::max(onehot, 0);
  return torch::where(mask, rows, matches);
}

// Match.gather_based_on_match: rows of [ignored, unmatched, input] at match + 2.
torch::Tensor GatherOnMatch(const torch::Tensor& input, const torch::Tensor& ignored, const torch::Tensor& unmatched,
                            const torch::Tensor& match) {
  auto table = torch::cat({ignored, unmatched, input}, 0);
  return torch::index_select(table, 0, torch::clamp(match + 2, 0));
}

// FasterRcnnBoxCoder.encode (no scale factors, eps 1e-7): ty, tx, th, tw.
torch::Tensor Encode(const torch::Tensor& boxes, const torch::Tensor& anchors) {
  auto a = CentersAndSizes(anchors), b = CentersAndSizes(boxes);
  a[2] += kBoxCoderEps;
  a[3] += kBoxCoderEps;
  b[2] += kBoxCoderEps;
  b[3] += kBoxCoderEps;
  auto tx = (b[1] - a[1]) / a[3], ty = (b[0] - a[0]) / a[2];
  auto tw = torch::log(b[3] / a[3]), th = torch::log(b[2] / a[2]);
  return torch::stack({ty, tx, th, tw}).t();
}

struct Labels {
  std::vector<torch::Tensor> cls, box;  // per level: B x H x W x 9, B x H x W x 36
  torch::Tensor num_positives;          // B
};

// AnchorLabeler.batch_label_anchors (TargetAssigner.assign per image).
Labels LabelAnchors(const torch::Tensor& anchors, const torch::Tensor& bbox, const torch::Tensor& cls,
                    const std::vector<Size2>& feat) {
  Labels out;
  std::vector<std::vector<torch::Tensor>> cls_l(kLevels), box_l(kLevels);
  std::vector<torch::Tensor> positives;
  for (int64_t i = 0; i < bbox.size(0); ++i) {
    auto valid = cls[i] > -1;
    auto gt_boxes = bbox[i].index({valid}), gt_cls = cls[i].index({valid});
    auto match = ArgMaxMatch(Iou(gt_boxes, anchors));
    auto zero_box = torch::zeros({1, 4}, anchors.options());
    auto matched = Encode(GatherOnMatch(gt_boxes, zero_box, zero_box, match), anchors);
    auto unmatched = torch::zeros({1, 4}, anchors.options()).repeat({match.size(0), 1});
    auto box_t = torch::where((match >= 0).unsqueeze(1), matched, unmatched);
    auto fill = torch::tensor({0.0, 0.0}, gt_cls.options());
    auto cls_t = (GatherOnMatch(gt_cls, fill.narrow(0, 0, 1), fill.narrow(0, 1, 1), match) - 1).to(torch::kLong);
    int64_t count = 0;
    for (int64_t l = 0; l < kLevels; ++l) {
      const auto [h, w] = feat[kMinLevel + l];
      const int64_t steps = h * w * kAnchorsPerCell;
      cls_l[l].push_back(cls_t.narrow(0, count, steps).reshape({h, w, -1}));
      box_l[l].push_back(box_t.narrow(0, count, steps).reshape({h, w, -1}));
      count += steps;
    }
    positives.push_back((match > -1).to(torch::kFloat).sum());
  }
  for (int64_t l = 0; l < kLevels; ++l) {
    out.cls.push_back(torch::stack(cls_l[l]));
    out.box.push_back(torch::stack(box_l[l]));
  }
  out.num_positives = torch::stack(positives);
  return out;
}

// ------------------------------------------------------------------ loss

// effdet loss.one_hot: scatter 1 at non-negative labels, zero rows elsewhere.
torch::Tensor OneHot(const torch::Tensor& x, int64_t classes) {
  auto non_neg = (x >= 0).unsqueeze(-1);
  auto shape = x.sizes().vec();
  shape.push_back(classes);
  auto onehot = torch::zeros(shape, x.options().dtype(torch::kFloat));
  return onehot.scatter(-1, x.unsqueeze(-1) * non_neg, 1) * non_neg;
}

// effdet new_focal_loss (label_smoothing 0).
torch::Tensor FocalLoss(const torch::Tensor& logits, torch::Tensor targets, const torch::Tensor& normalizer) {
  auto pred_prob = logits.sigmoid();
  targets = targets.to(logits.scalar_type());
  auto onem_targets = torch::rsub(targets, 1.);  // Python's 1. - t: aten::rsub
  auto p_t = (targets * pred_prob) + (onem_targets * torch::rsub(pred_prob, 1.));
  auto alpha_factor = targets * kAlpha + onem_targets * (1. - kAlpha);
  auto modulating_factor = torch::pow(torch::rsub(p_t, 1.), kGamma);
  auto ce = torch::binary_cross_entropy_with_logits(logits, targets, {}, {}, at::Reduction::None);
  // 1 / normalizer: Tensor.__rtruediv__ is reciprocal() * 1.
  return normalizer.reciprocal() * 1 * alpha_factor * modulating_factor * ce;
}

// effdet huber_loss (weights = targets != 0, summed) / (num_positives_sum x 4).
torch::Tensor BoxLoss(const torch::Tensor& out, const torch::Tensor& target, const torch::Tensor& num_pos) {
  auto normalizer = num_pos * 4.0;
  auto mask = target != 0.0;
  auto abs_err = (out - target).abs();
  auto quadratic = torch::clamp(abs_err, c10::nullopt, kDelta);
  auto linear = abs_err - quadratic;
  auto loss = 0.5 * quadratic.pow(2) + kDelta * linear;
  return loss.mul(mask).sum() / normalizer;
}

struct Losses {
  torch::Tensor total, cls, box;
};

// effdet loss_fn: per-level focal and box losses, total = cls + 50 box.
// `cls_out` / `box_out` are the head outputs already in B x H x W x (A C)
// layout (the permute(0, 2, 3, 1) of loss_fn).
Losses DetectionLoss(const std::vector<torch::Tensor>& cls_out, const std::vector<torch::Tensor>& box_out,
                     const Labels& labels) {
  auto num_pos_sum = (labels.num_positives.sum() + 1.0).to(torch::kFloat);
  std::vector<torch::Tensor> cls_losses, box_losses;
  for (int64_t l = 0; l < kLevels; ++l) {
    const auto& t = labels.cls[l];
    auto oh = OneHot(t, kClasses);
    const int64_t bs = oh.size(0), h = oh.size(1), w = oh.size(2);
    oh = oh.view({bs, h, w, -1});
    auto loss = FocalLoss(cls_out[l].to(torch::kFloat), oh, num_pos_sum);
    loss = loss.view({bs, h, w, -1, kClasses}) * (t != -2).unsqueeze(-1);
    cls_losses.push_back(loss.sum());
    box_losses.push_back(BoxLoss(box_out[l].to(torch::kFloat), labels.box[l], num_pos_sum));
  }
  Losses out;
  out.cls = torch::sum(torch::stack(cls_losses, -1), -1);
  out.box = torch::sum(torch::stack(box_losses, -1), -1);
  out.total = out.cls + kBoxLossWeight * out.box;
  return out;
}

// ------------------------------------------------------------------ predict

// torchvision batched_nms: the per-class loop (_batched_nms_vanilla) for CPU
// inputs over 4000 numbers (CUDA: 100000), the coordinate trick otherwise.
torch::Tensor BatchedNms(const torch::Tensor& boxes, const torch::Tensor& scores, const torch::Tensor& idxs,
                         double iou) {
  const int64_t limit = boxes.device().is_cpu() ? 4000 : 100000;
  if (boxes.numel() > limit) {
    auto keep_mask = torch::zeros_like(scores, torch::kBool);
    auto classes = std::get<0>(torch::_unique2(idxs));  // torch.unique(idxs)
    for (const auto& class_id : classes.unbind()) {
      auto curr = torch::where(idxs == class_id)[0];
      auto keep = tvops::Nms(boxes.index({curr}), scores.index({curr}), iou);
      keep_mask.index_put_({curr.index({keep})}, true);
    }
    auto keep_indices = torch::where(keep_mask)[0];
    return keep_indices.index({std::get<1>(scores.index({keep_indices}).sort(-1, /*descending=*/true))});
  }
  if (boxes.numel() == 0) return torch::empty({0}, boxes.options().dtype(torch::kLong));
  auto max_coordinate = boxes.max();
  auto offsets = idxs.to(boxes.scalar_type()) * (max_coordinate + torch::tensor(1).to(boxes.options()));
  return tvops::Nms(boxes + offsets.unsqueeze(1), scores, iou);
}

// effdet decode_box_outputs (output_xyxy).
torch::Tensor DecodeBoxes(const torch::Tensor& rel, const torch::Tensor& anchors) {
  auto yc_a = (anchors.select(1, 0) + anchors.select(1, 2)) / 2;
  auto xc_a = (anchors.select(1, 1) + anchors.select(1, 3)) / 2;
  auto ha = anchors.select(1, 2) - anchors.select(1, 0);
  auto wa = anchors.select(1, 3) - anchors.select(1, 1);
  auto t = rel.unbind(1);
  auto w = torch::exp(t[3]) * wa, h = torch::exp(t[2]) * ha;
  auto yc = t[0] * ha + yc_a, xc = t[1] * wa + xc_a;
  return torch::stack({xc - w / 2., yc - h / 2., xc + w / 2., yc + h / 2.}, 1);
}

// effdet generate_detections for one image.
torch::Tensor GenerateDetections(const torch::Tensor& cls_out, const torch::Tensor& box_out,
                                 const torch::Tensor& anchor_boxes, const torch::Tensor& indices,
                                 const torch::Tensor& classes, const torch::Tensor& img_scale,
                                 const torch::Tensor& img_size) {
  auto boxes = DecodeBoxes(box_out.to(torch::kFloat), anchor_boxes.index({indices}));
  auto size = img_size / img_scale;
  boxes = torch::minimum(boxes.clamp(0), torch::cat({size, size}, 0));  // clip_boxes_xyxy
  auto scores = cls_out.sigmoid().squeeze(1).to(torch::kFloat);
  auto top = BatchedNms(boxes, scores, classes, kNmsIou).slice(0, 0, kMaxDetPerImage);
  auto det = torch::cat({boxes.index({top}) * img_scale, scores.index({top}).unsqueeze(1),
                         (classes.index({top}).unsqueeze(1) + 1).to(torch::kFloat)},
                        1);
  if (det.size(0) < kMaxDetPerImage) {
    det = torch::cat({det, torch::zeros({kMaxDetPerImage - det.size(0), 6}, det.options())}, 0);
  }
  return det;
}

// effdet _post_process (top-k over anchors x classes) and _batch_detection.
torch::Tensor PostProcess(const torch::Tensor& cls_all, const torch::Tensor& box_all, const torch::Tensor& anchors,
                          const torch::Tensor& img_scale, const torch::Tensor& img_size) {
  const int64_t b = cls_all.size(0);
  auto topk = std::get<1>(torch::topk(cls_all.reshape({b, -1}), kMaxDetectionPoints, 1));
  auto indices = torch::floor_divide(topk, kClasses);
  auto classes = topk % kClasses;
  auto box_topk = torch::gather(box_all, 1, indices.unsqueeze(2).expand({-1, -1, 4}));
  auto cls_topk = torch::gather(cls_all, 1, indices.unsqueeze(2).expand({-1, -1, kClasses}));
  cls_topk = torch::gather(cls_topk, 2, classes.unsqueeze(2));
  std::vector<torch::Tensor> dets;
  for (int64_t i = 0; i < b; ++i) {
    dets.push_back(
        GenerateDetections(cls_topk[i], box_topk[i], anchors, indices[i], classes[i], img_scale[i], img_size[i]));
  }
  return torch::stack(dets, 0);
}

// ------------------------------------------------------------------ workload

// Synthetic COCO-like targets: 2..12 boxes per image (y1, x1, y2, x2 in
// pixels, sides log-uniform in [0.02, 0.6] of the image), classes 1..90,
// padded to 100 rows with -1 as effdet's DetectionFastCollate pads.
std::pair<torch::Tensor, torch::Tensor> SyntheticTargets(int64_t batch, int64_t size) {
  auto bbox = torch::full({batch, kMaxInstances, 4}, -1.0);
  auto cls = torch::full({batch, kMaxInstances}, -1.0);
  const double s = static_cast<double>(size);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t n = torch::randint(2, 13, {1}).item<int64_t>();
    auto hw = torch::exp(torch::empty({n, 2}).uniform_(std::log(0.02), std::log(0.6))) * s;
    auto corner = torch::rand({n, 2}) * (s - hw);
    bbox[i].narrow(0, 0, n).copy_(torch::cat({corner, corner + hw}, 1));
    cls[i].narrow(0, 0, n).copy_(torch::randint(1, kClasses + 1, {n}).to(torch::kFloat));
  }
  return {bbox, cls};
}

class EfficientDetWorkload : public Workload {
 public:
  EfficientDetWorkload(const WorkloadOptions& opt, int64_t image_size) : net_(image_size) {
    TORCH_CHECK(opt.batch_size >= 1, "timm_efficientdet: batch size must be positive, got ", opt.batch_size);
    TORCH_CHECK(image_size % 128 == 0, "timm_efficientdet: image size must be a multiple of 128");
    if (opt.mode == Mode::kEval) {
      if (auto why = tvops::Unavailable()) {
        throw UnsupportedError("timm_efficientdet eval (DetBenchPredict) needs torchvision's nms: " + *why);
      }
    }
    net_->to(opt.device);
    samples_per_step_ = opt.batch_size;
    // The loader's prefetcher hands normalised float images to the model.
    inputs_["images"] = torch::randn({opt.batch_size, 3, image_size, image_size}).to(opt.device);
    if (opt.mode == Mode::kTrain) {
      auto [bbox, cls] = SyntheticTargets(opt.batch_size, image_size);
      inputs_["bbox"] = bbox.to(opt.device);
      inputs_["cls"] = cls.to(opt.device);
      optimizer_ = MakeOptimizer();
    } else {
      // img_info of the eval loader: images at the model's size, scale 1.
      inputs_["img_scale"] = torch::ones({opt.batch_size}).to(opt.device);
      inputs_["img_size"] = torch::full({opt.batch_size, 2}, static_cast<double>(image_size)).to(opt.device);
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // The class and box outputs of all levels as _post_process arranges them
  // (permute(0, 2, 3, 1), reshape(B, -1, classes | 4), cat over levels),
  // concatenated on the last dimension: B x anchors x (90 + 4).
  torch::Tensor Forward() override {
    auto [cls, box] = net_->model->forward(inputs_["images"]);
    const int64_t b = cls[0].size(0);
    std::vector<torch::Tensor> c, bx;
    for (int64_t l = 0; l < kLevels; ++l) {
      c.push_back(cls[l].permute({0, 2, 3, 1}).reshape({b, -1, kClasses}));
      bx.push_back(box[l].permute({0, 2, 3, 1}).reshape({b, -1, 4}));
    }
    return torch::cat({torch::cat(c, 1), torch::cat(bx, 1)}, 2);
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "timm_efficientdet: TrainStep needs a workload built in train mode");
    auto flat = RunForward();
    std::vector<torch::Tensor> cls_out, box_out;
    SplitLevels(flat, &cls_out, &box_out);
    auto labels = LabelAnchors(net_->anchors->boxes, inputs_["bbox"], inputs_["cls"], net_->feat);
    auto losses = DetectionLoss(cls_out, box_out, labels);
    optimizer_->zero_grad();
    losses.total.backward();
    torch::nn::utils::clip_grad_norm_(net_->parameters(), kClipGrad);
    optimizer_->step();
    last_cls_ = losses.cls.detach();
    last_box_ = losses.box.detach();
    return losses.total.detach();
  }

  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    c10::InferenceMode guard;
    Detect(RunForward());
  }

  torch::Tensor Detect(const torch::Tensor& flat) {
    return PostProcess(flat.narrow(2, 0, kClasses), flat.narrow(2, kClasses, 4), net_->anchors->boxes,
                       inputs_.at("img_scale"), inputs_.at("img_size"));
  }

  std::pair<torch::Tensor, torch::Tensor> last_losses() const { return {last_cls_, last_box_}; }

 private:
  // The flat output back into per-level B x H x W x (9 x 90) and x (9 x 4).
  void SplitLevels(const torch::Tensor& flat, std::vector<torch::Tensor>* cls, std::vector<torch::Tensor>* box) {
    int64_t offset = 0;
    const int64_t b = flat.size(0);
    for (int64_t l = 0; l < kLevels; ++l) {
      const auto [h, w] = net_->feat[kMinLevel + l];
      auto part = flat.narrow(1, offset, h * w * kAnchorsPerCell);
      cls->push_back(part.narrow(2, 0, kClasses).reshape({b, h, w, -1}));
      box->push_back(part.narrow(2, kClasses, 4).reshape({b, h, w, -1}));
      offset += h * w * kAnchorsPerCell;
    }
  }

  // timm create_optimizer("momentum"): SGD(momentum 0.9, nesterov False);
  // param_groups_weight_decay puts 1-D parameters and biases in a group
  // without weight decay.
  std::unique_ptr<torch::optim::SGD> MakeOptimizer() {
    std::vector<torch::Tensor> decay, no_decay;
    for (const auto& p : net_->named_parameters()) {
      const bool bias = p.key().size() >= 5 && p.key().compare(p.key().size() - 5, 5, ".bias") == 0;
      (p.value().dim() <= 1 || bias ? no_decay : decay).push_back(p.value());
    }
    auto sgd = [](double wd) {
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(kLr).momentum(kMomentum).weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(no_decay, sgd(0.0));
    groups.emplace_back(decay, sgd(kWeightDecay));
    return std::make_unique<torch::optim::SGD>(std::move(groups), *sgd(0.0));
  }

  Bench net_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  torch::Tensor last_cls_, last_box_;
};

}  // namespace

std::unique_ptr<Workload> MakeEfficientDetWorkload(const WorkloadOptions& opt, int64_t image_size) {
  return std::make_unique<EfficientDetWorkload>(opt, image_size);
}

torch::Tensor EfficientDetDetections(Workload& workload) {
  auto& w = dynamic_cast<EfficientDetWorkload&>(workload);
  torch::NoGradGuard no_grad;
  return w.Detect(w.Forward());
}

std::pair<torch::Tensor, torch::Tensor> EfficientDetLastLosses(const Workload& workload) {
  return dynamic_cast<const EfficientDetWorkload&>(workload).last_losses();
}

void AddEfficientDetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_efficientdet";
  info.paper_name = "timm_efficientdet";
  info.domain = Domain::kVision;
  info.task = "object detection";
  info.reference =
      "effdet 0.4.1 create_model('tf_efficientdet_d1', bench_task='train' | 'predict', 90 classes, 640x640) with "
      "timm 1.0.31's tf_efficientnet_b1 backbone, as torchbenchmark/models/timm_efficientdet builds it";
  // torchbenchmark/models/timm_efficientdet/__init__.py: DEFAULT_TRAIN_BSIZE = 16, DEFAULT_EVAL_BSIZE = 128.
  info.default_batch = {16, 128};
  // About 6 GFLOPs a 640x640 forward; on 2 quiet cores a train step takes
  // 1.3 s an image and an eval step 0.45 s an image, so 2 / 4 keep a CPU step
  // near a few seconds (TorchBench has no CPU run: "The original model code
  // forces the use of CUDA").
  info.cpu_batch = BatchSizes{2, 4};
  info.smoke_batch = {2, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return MakeEfficientDetWorkload(opt, opt.smoke ? kSmokeImageSize : kImageSize);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
