#include "models/vision/detection/detection_common.h"

#include <algorithm>
#include <cmath>

#include "models/vision/detection/torchvision_ops.h"

namespace torchgauge::models::detection {
namespace {

using torch::indexing::None;
using torch::indexing::Slice;
namespace F = torch::nn::functional;

// torchvision.models.resnet.Bottleneck (stride on the 3x3 conv), expansion 4.
struct BottleneckImpl : torch::nn::Module {
  BottleneckImpl(int64_t in, int64_t width, int64_t stride, double eps) {
    conv1 = register_module("conv1", Conv(in, width, 1, 1, 0, false));
    bn1 = register_module("bn1", FrozenBatchNorm2d(width, eps));
    conv2 = register_module("conv2", Conv(width, width, 3, stride, 1, false));
    bn2 = register_module("bn2", FrozenBatchNorm2d(width, eps));
    conv3 = register_module("conv3", Conv(width, width * 4, 1, 1, 0, false));
    bn3 = register_module("bn3", FrozenBatchNorm2d(width * 4, eps));
    if (stride != 1 || in != width * 4) {
      downsample = register_module("downsample", torch::nn::Sequential(Conv(in, width * 4, 1, stride, 0, false),
                                                                       FrozenBatchNorm2d(width * 4, eps)));
    }
  }
  Tensor forward(const Tensor& x) {
    auto out = torch::relu(bn1(conv1(x)));
    out = torch::relu(bn2(conv2(out)));
    out = bn3(conv3(out));
    auto identity = downsample ? downsample->forward(x) : x;
    return torch::relu(out + identity);
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  FrozenBatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

torch::nn::Sequential ResLayer(int64_t& in, int64_t width, int64_t blocks, int64_t stride, double eps) {
  torch::nn::Sequential layer;
  for (int64_t i = 0; i < blocks; ++i) {
    layer->push_back(Bottleneck(in, width, i == 0 ? stride : 1, eps));
    in = width * 4;
  }
  return layer;
}

double Uniform(double lo, double hi) { return torch::empty({1}, torch::kDouble).uniform_(lo, hi).item<double>(); }

}  // namespace

// ---------------------------------------------------------------- backbone

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(int64_t n, double eps_) : eps(eps_) {
  weight = register_buffer("weight", torch::ones({n}));
  bias = register_buffer("bias", torch::zeros({n}));
  running_mean = register_buffer("running_mean", torch::zeros({n}));
  running_var = register_buffer("running_var", torch::ones({n}));
}

Tensor FrozenBatchNorm2dImpl::forward(const Tensor& x) {
  auto scale = weight.reshape({1, -1, 1, 1}) * (running_var.reshape({1, -1, 1, 1}) + eps).rsqrt();
  auto shift = bias.reshape({1, -1, 1, 1}) - running_mean.reshape({1, -1, 1, 1}) * scale;
  return x * scale + shift;
}

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(bias));
}

ResNetBodyImpl::ResNetBodyImpl(double bn_eps) {
  conv1 = register_module("conv1", Conv(3, 64, 7, 2, 3, false));
  bn1 = register_module("bn1", FrozenBatchNorm2d(64, bn_eps));
  int64_t in = 64;
  layer1 = register_module("layer1", ResLayer(in, 64, 3, 1, bn_eps));
  layer2 = register_module("layer2", ResLayer(in, 128, 4, 2, bn_eps));
  layer3 = register_module("layer3", ResLayer(in, 256, 6, 2, bn_eps));
  layer4 = register_module("layer4", ResLayer(in, 512, 3, 2, bn_eps));
  for (auto& m : modules(false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0, torch::kFanOut, torch::kReLU);
    }
  }
  // _resnet_fpn_extractor(trainable_layers=3): only layer2..layer4 train.
  for (auto& p : conv1->parameters()) p.requires_grad_(false);
  for (auto& p : layer1->parameters()) p.requires_grad_(false);
}

std::vector<Tensor> ResNetBodyImpl::forward(const Tensor& x) {
  auto y = torch::max_pool2d(torch::relu(bn1(conv1(x))), 3, 2, 1);
  std::vector<Tensor> c;
  c.push_back(layer1->forward(y));
  c.push_back(layer2->forward(c.back()));
  c.push_back(layer3->forward(c.back()));
  c.push_back(layer4->forward(c.back()));
  return c;
}

LastLevelP6P7Impl::LastLevelP6P7Impl(int64_t channels) {
  p6 = register_module("p6", Conv(channels, channels, 3, 2, 1, true));
  p7 = register_module("p7", Conv(channels, channels, 3, 2, 1, true));
  torch::NoGradGuard g;
  for (auto* c : {&p6, &p7}) {
    torch::nn::init::kaiming_uniform_((*c)->weight, 1);
    (*c)->bias.zero_();
  }
}

FpnImpl::FpnImpl(const std::vector<int64_t>& in_channels, FpnExtra extra_) : extra(extra_) {
  inner_blocks = register_module("inner_blocks", torch::nn::ModuleList());
  layer_blocks = register_module("layer_blocks", torch::nn::ModuleList());
  for (int64_t in : in_channels) {
    inner_blocks->push_back(Block(Conv(in, 256, 1, 1, 0, true)));
    layer_blocks->push_back(Block(Conv(256, 256, 3, 1, 1, true)));
  }
  torch::NoGradGuard g;
  for (auto& m : modules(false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_uniform_(c->weight, 1);
      c->bias.zero_();
    }
  }
  if (extra == FpnExtra::kP6P7) extra_blocks = register_module("extra_blocks", LastLevelP6P7(256));
}

// Returns the pyramid levels from the finest, then the extra block's.
std::vector<Tensor> FpnImpl::forward(const std::vector<Tensor>& c) {
  const int64_t n = static_cast<int64_t>(c.size());
  auto last_inner = inner_blocks[n - 1]->as<Block>()->forward(c[n - 1]);
  std::vector<Tensor> results(n);
  results[n - 1] = layer_blocks[n - 1]->as<Block>()->forward(last_inner);
  for (int64_t i = n - 2; i >= 0; --i) {
    auto lateral = inner_blocks[i]->as<Block>()->forward(c[i]);
    auto top_down = F::interpolate(
        last_inner,
        F::InterpolateFuncOptions().size(std::vector<int64_t>{lateral.size(2), lateral.size(3)}).mode(torch::kNearest));
    last_inner = lateral + top_down;
    results[i] = layer_blocks[i]->as<Block>()->forward(last_inner);
  }
  if (extra == FpnExtra::kMaxPool) {
    results.push_back(torch::max_pool2d(results.back(), 1, 2, 0));
  } else {
    auto p6 = extra_blocks->p6(results.back());
    results.push_back(p6);
    results.push_back(extra_blocks->p7(torch::relu(p6)));
  }
  return results;
}

// ------------------------------------------------------------- box helpers
// torchvision.ops.boxes and models/detection/_utils.py.

Tensor BoxArea(const Tensor& b) { return (b.select(-1, 2) - b.select(-1, 0)) * (b.select(-1, 3) - b.select(-1, 1)); }

Tensor BoxIou(const Tensor& a, const Tensor& b) {
  auto area1 = BoxArea(a), area2 = BoxArea(b);
  auto lt = torch::max(a.index({Slice(), None, Slice(None, 2)}), b.index({None, Slice(), Slice(None, 2)}));
  auto rb = torch::min(a.index({Slice(), None, Slice(2, None)}), b.index({None, Slice(), Slice(2, None)}));
  auto wh = (rb - lt).clamp_min(0);
  auto inter = wh.select(-1, 0) * wh.select(-1, 1);
  auto uni = area1.index({Slice(), None}) + area2.index({None, Slice()}) - inter;
  return inter / uni;
}

Tensor ClipBoxes(const Tensor& boxes, int64_t height, int64_t width) {
  auto x = boxes.index({"...", Slice(0, None, 2)}).clamp(0, width);
  auto y = boxes.index({"...", Slice(1, None, 2)}).clamp(0, height);
  return torch::stack({x, y}, boxes.dim()).reshape(boxes.sizes());
}

Tensor RemoveSmallBoxes(const Tensor& b, double min_size) {
  auto ws = b.select(-1, 2) - b.select(-1, 0), hs = b.select(-1, 3) - b.select(-1, 1);
  return torch::where((ws >= min_size) & (hs >= min_size))[0];
}

// batched_nms: per-class NMS by the coordinate offset trick, or class by class
// above 4000 coordinates on CPU (100,000 on GPU), as torchvision switches.
Tensor BatchedNms(const Tensor& boxes, const Tensor& scores, const Tensor& idxs, double iou) {
  const int64_t limit = boxes.is_cpu() ? 4000 : 100000;
  if (boxes.numel() > limit) {
    auto keep_mask = torch::zeros_like(scores, torch::kBool);
    auto classes = std::get<0>(torch::_unique2(idxs, /*sorted=*/true, false, false));
    for (int64_t i = 0; i < classes.size(0); ++i) {
      auto curr = torch::where(idxs == classes[i])[0];
      auto curr_keep = tvops::Nms(boxes.index({curr}), scores.index({curr}), iou);
      keep_mask.index_put_({curr.index({curr_keep})}, true);
    }
    auto keep = torch::where(keep_mask)[0];
    return keep.index({std::get<1>(scores.index({keep}).sort(-1, /*descending=*/true))});
  }
  if (boxes.numel() == 0) return torch::empty({0}, torch::TensorOptions(torch::kLong).device(boxes.device()));
  auto max_coordinate = boxes.max();
  auto offsets = idxs.to(boxes.options()) * (max_coordinate + torch::tensor(1).to(boxes.options()));
  return tvops::Nms(boxes + offsets.index({Slice(), None}), scores, iou);
}

Tensor ResizeBoxes(const Tensor& boxes, std::pair<int64_t, int64_t> from, std::pair<int64_t, int64_t> to) {
  auto fo = torch::TensorOptions(torch::kFloat).device(boxes.device());
  auto ratio_h = torch::tensor(static_cast<float>(to.first), fo) / torch::tensor(static_cast<float>(from.first), fo);
  auto ratio_w = torch::tensor(static_cast<float>(to.second), fo) / torch::tensor(static_cast<float>(from.second), fo);
  auto c = boxes.unbind(1);
  return torch::stack({c[0] * ratio_w, c[1] * ratio_h, c[2] * ratio_w, c[3] * ratio_h}, 1);
}

// AnchorGenerator: base anchors round([-w, -h, w, h] / 2) per ratio, shifted
// by int32 grid offsets times the integer stride image // grid.
Tensor Anchors(const std::vector<Tensor>& features, int64_t image_h, int64_t image_w, const std::vector<double>& sizes,
               const std::vector<double>& ratios) {
  std::vector<Tensor> per_level;
  for (size_t l = 0; l < features.size(); ++l) {
    auto fo = torch::TensorOptions(features[l].scalar_type()).device(features[l].device());
    auto scales = torch::tensor({sizes[l]}, fo);
    auto h_ratios = torch::sqrt(torch::tensor(ratios, fo));
    auto w_ratios = 1 / h_ratios;
    auto ws = (w_ratios.index({Slice(), None}) * scales.index({None, Slice()})).view(-1);
    auto hs = (h_ratios.index({Slice(), None}) * scales.index({None, Slice()})).view(-1);
    auto base = (torch::stack({-ws, -hs, ws, hs}, 1) / 2).round();
    const int64_t gh = features[l].size(2), gw = features[l].size(3);
    auto io = torch::TensorOptions(torch::kInt).device(features[l].device());
    auto shifts_x = torch::arange(0, gw, io) * (image_w / gw);
    auto shifts_y = torch::arange(0, gh, io) * (image_h / gh);
    auto grid = torch::meshgrid({shifts_y, shifts_x}, "ij");
    auto sx = grid[1].reshape(-1), sy = grid[0].reshape(-1);
    auto shifts = torch::stack({sx, sy, sx, sy}, 1);
    per_level.push_back((shifts.view({-1, 1, 4}) + base.view({1, -1, 4})).reshape({-1, 4}));
  }
  return torch::cat(per_level);
}

// ---------------------------------------------------------------- transform

namespace {

// One image normalized and resized (its target's boxes and masks with it).
Tensor NormalizeResize(const Tensor& img, Target* t, const TransformSizes& s, bool training) {
  auto mean = torch::tensor({0.485, 0.456, 0.406}, img.options()).index({Slice(), None, None});
  auto std = torch::tensor({0.229, 0.224, 0.225}, img.options()).index({Slice(), None, None});
  auto x = (img - mean) / std;
  if (training) (void)torch::empty({1}).uniform_(0.0, 1.0).item<double>();
  const int64_t h = img.size(1), w = img.size(2);
  const double scale = std::min(static_cast<double>(s.min_size) / static_cast<double>(std::min(h, w)),
                                static_cast<double>(s.max_size) / static_cast<double>(std::max(h, w)));
  auto opts = F::InterpolateFuncOptions().scale_factor(std::vector<double>{scale, scale}).recompute_scale_factor(true);
  x = F::interpolate(x.index({None}), opts.mode(torch::kBilinear).align_corners(false))[0];
  if (t != nullptr) {
    if (t->masks.defined()) {
      auto m = t->masks.index({Slice(), None}).to(torch::kFloat);
      t->masks = F::interpolate(m, opts.mode(torch::kNearest).align_corners(std::nullopt))
                     .index({Slice(), 0})
                     .to(torch::kUInt8);
    }
    t->boxes = ResizeBoxes(t->boxes, {h, w}, {x.size(1), x.size(2)});
  }
  return x;
}

}  // namespace

ImageBatch TransformImages(const std::vector<Tensor>& images, std::vector<Target>* targets, const TransformSizes& s,
                           bool training) {
  ImageBatch batch;
  std::vector<Tensor> resized;
  for (size_t i = 0; i < images.size(); ++i) {
    auto x = NormalizeResize(images[i], targets != nullptr ? &(*targets)[i] : nullptr, s, training);
    batch.sizes.emplace_back(x.size(1), x.size(2));
    resized.push_back(x);
  }
  int64_t max_h = 0, max_w = 0;
  for (const auto& x : resized) max_h = std::max(max_h, x.size(1)), max_w = std::max(max_w, x.size(2));
  const double stride = static_cast<double>(s.size_divisible);
  max_h = static_cast<int64_t>(std::ceil(static_cast<double>(max_h) / stride) * stride);
  max_w = static_cast<int64_t>(std::ceil(static_cast<double>(max_w) / stride) * stride);
  batch.tensors = resized[0].new_full({static_cast<int64_t>(resized.size()), resized[0].size(0), max_h, max_w}, 0);
  for (size_t i = 0; i < resized.size(); ++i) {
    batch.tensors[i]
        .index({Slice(None, resized[i].size(0)), Slice(None, resized[i].size(1)), Slice(None, resized[i].size(2))})
        .copy_(resized[i]);
  }
  return batch;
}

void CheckBoxes(const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    auto degenerate = t.boxes.index({Slice(), Slice(2, None)}) <= t.boxes.index({Slice(), Slice(None, 2)});
    TORCH_CHECK(!degenerate.any().item<bool>(), "All bounding boxes should have positive height and width.");
  }
}

// ------------------------------------------------------------------ samples

const std::vector<int64_t>& CocoCategoryIds() {
  static const std::vector<int64_t> ids = {
      1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31,
      32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
      60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90};
  return ids;
}

// One seeded COCO-like sample (stated statistics, not COCO's pixels):
//  - image: uniform [0, 1) RGB, long side `long_side` (COCO val2017: mostly
//    640 px), short side uniform in [0.56, 1] of it, every 4th portrait;
//  - 2..13 objects (COCO averages about 7 instances per image), labels
//    uniform over the 80 COCO ids;
//  - box side sqrt(area) log-uniform in [0.015, 0.6] x sqrt(image area)
//    (about a third each small / medium / large, as COCO's 41/34/24%), aspect
//    log-uniform in [0.5, 2], at least 2 px, placed uniformly;
//  - mask: the filled ellipse inscribed in the box (uint8).
void MakeSample(std::map<std::string, Tensor>& in, int64_t i, int64_t long_side, const torch::Device& device,
                bool with_masks) {
  const auto& ids = CocoCategoryIds();
  const int64_t short_side = static_cast<int64_t>(long_side * Uniform(0.5625, 1.0));
  const bool portrait = i % 4 == 3;
  const int64_t h = portrait ? long_side : short_side, w = portrait ? short_side : long_side;
  auto image = torch::rand({3, h, w});
  const int64_t n = torch::randint(2, 14, {1}).item<int64_t>();
  auto boxes = torch::empty({n, 4});
  auto labels = torch::empty({n}, torch::kLong);
  auto masks = torch::zeros({with_masks ? n : 0, h, w}, torch::kUInt8);
  auto ys = torch::arange(h, torch::kFloat).add(0.5).view({-1, 1});
  auto xs = torch::arange(w, torch::kFloat).add(0.5).view({1, -1});
  for (int64_t k = 0; k < n; ++k) {
    const double side = std::exp(Uniform(std::log(0.015), std::log(0.6))) * std::sqrt(static_cast<double>(h * w));
    const double aspect = std::exp(Uniform(std::log(0.5), std::log(2.0)));
    const double bw = std::clamp(side * std::sqrt(aspect), 2.0, w - 1.0);
    const double bh = std::clamp(side / std::sqrt(aspect), 2.0, h - 1.0);
    const double x0 = Uniform(0, w - bw), y0 = Uniform(0, h - bh);
    boxes[k] = torch::tensor({x0, y0, x0 + bw, y0 + bh}, torch::kFloat);
    labels[k] = ids[torch::randint(0, static_cast<int64_t>(ids.size()), {1}).item<int64_t>()];
    if (!with_masks) continue;
    auto ex = (xs - (x0 + bw / 2)) / (bw / 2), ey = (ys - (y0 + bh / 2)) / (bh / 2);
    masks[k] = (ex * ex + ey * ey <= 1).to(torch::kUInt8);
  }
  const auto s = std::to_string(i);
  in["image" + s] = image.to(device);
  in["boxes" + s] = boxes.to(device);
  in["labels" + s] = labels.to(device);
  if (with_masks) in["masks" + s] = masks.to(device);
}

}  // namespace torchgauge::models::detection
