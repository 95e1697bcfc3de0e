#include "models/vision/detection/maskrcnn.h"

#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "models/unsupported_error.h"
#include "models/vision/detection/detection_common.h"
#include "models/vision/detection/torchvision_ops.h"

namespace torchgauge::models {
namespace {

using torch::Tensor;
using torch::indexing::None;
using torch::indexing::Slice;
namespace F = torch::nn::functional;
using namespace detection;  // NOLINT: the shared detection parts

// torchvision.models.detection.mask_rcnn.MaskRCNN / faster_rcnn.FasterRCNN
// defaults (torchvision 0.26).
struct Config {
  int64_t num_classes = 91;
  int64_t min_size = 800, max_size = 1333, size_divisible = 32;
  int64_t rpn_pre_nms_train = 2000, rpn_pre_nms_test = 1000;
  int64_t rpn_post_nms_train = 2000, rpn_post_nms_test = 1000;
  double rpn_nms_thresh = 0.7, rpn_fg_iou = 0.7, rpn_bg_iou = 0.3, rpn_score_thresh = 0.0;
  int64_t rpn_batch = 256;
  double rpn_pos_fraction = 0.5;
  double box_score_thresh = 0.05, box_nms_thresh = 0.5, box_fg_iou = 0.5, box_bg_iou = 0.5;
  int64_t box_detections = 100, box_batch = 512;
  double box_pos_fraction = 0.25;
};

constexpr double kFrozenBnEps = 0.0;                                // overwrite_eps(model, 0.0) for COCO_V1 weights
constexpr double kMomentum = 0.9, kWeightDecay = 1e-4;  // TorchBench's SGD (its lr: MaskRcnnSettings)
const double kBboxXformClip = std::log(1000.0 / 16);

// ---------------------------------------------------------------- backbone

struct BackboneImpl : torch::nn::Module {
  BackboneImpl() {
    body = register_module("body", ResNetBody(kFrozenBnEps));
    fpn = register_module("fpn", Fpn(std::vector<int64_t>{256, 512, 1024, 2048}, FpnExtra::kMaxPool));
  }
  std::vector<Tensor> forward(const Tensor& x) { return fpn(body(x)); }
  ResNetBody body{nullptr};
  Fpn fpn{nullptr};
};
TORCH_MODULE(Backbone);

// ------------------------------------------------------------- box coding
// models/detection/_utils.py: BoxCoder, Matcher, BalancedPositiveNegativeSampler
// (the box utilities of torchvision.ops.boxes are in detection_common.h).

struct BoxCoder {
  std::array<double, 4> w;
  // encode_boxes: targets of `gt` relative to `proposals`.
  Tensor Encode(const Tensor& gt, const Tensor& proposals) const {
    auto weights = torch::tensor({w[0], w[1], w[2], w[3]}, gt.options());
    auto col = [](const Tensor& t, int64_t i) { return t.index({Slice(), i}).unsqueeze(1); };
    auto ex_w = col(proposals, 2) - col(proposals, 0), ex_h = col(proposals, 3) - col(proposals, 1);
    auto ex_x = col(proposals, 0) + 0.5 * ex_w, ex_y = col(proposals, 1) + 0.5 * ex_h;
    auto gt_w = col(gt, 2) - col(gt, 0), gt_h = col(gt, 3) - col(gt, 1);
    auto gt_x = col(gt, 0) + 0.5 * gt_w, gt_y = col(gt, 1) + 0.5 * gt_h;
    auto dx = weights[0] * (gt_x - ex_x) / ex_w;
    auto dy = weights[1] * (gt_y - ex_y) / ex_h;
    auto dw = weights[2] * torch::log(gt_w / ex_w);
    auto dh = weights[3] * torch::log(gt_h / ex_h);
    return torch::cat({dx, dy, dw, dh}, 1);
  }
  // decode_single: boxes (R, 4) and codes (R, 4K) -> (R, 4K).
  Tensor Decode(const Tensor& codes, const Tensor& boxes_in) const {
    auto boxes = boxes_in.to(codes.scalar_type());
    auto widths = boxes.index({Slice(), 2}) - boxes.index({Slice(), 0});
    auto heights = boxes.index({Slice(), 3}) - boxes.index({Slice(), 1});
    auto ctr_x = boxes.index({Slice(), 0}) + 0.5 * widths;
    auto ctr_y = boxes.index({Slice(), 1}) + 0.5 * heights;
    auto dx = codes.index({Slice(), Slice(0, None, 4)}) / w[0];
    auto dy = codes.index({Slice(), Slice(1, None, 4)}) / w[1];
    auto dw = torch::clamp_max(codes.index({Slice(), Slice(2, None, 4)}) / w[2], kBboxXformClip);
    auto dh = torch::clamp_max(codes.index({Slice(), Slice(3, None, 4)}) / w[3], kBboxXformClip);
    auto px = dx * widths.index({Slice(), None}) + ctr_x.index({Slice(), None});
    auto py = dy * heights.index({Slice(), None}) + ctr_y.index({Slice(), None});
    auto pw = torch::exp(dw) * widths.index({Slice(), None});
    auto ph = torch::exp(dh) * heights.index({Slice(), None});
    auto half_h = torch::tensor(0.5, py.options()) * ph;
    auto half_w = torch::tensor(0.5, px.options()) * pw;
    return torch::stack({px - half_w, py - half_h, px + half_w, py + half_h}, 2).flatten(1);
  }
};

// det_utils.Matcher: best gt per prediction, -1 below `low`, -2 between.
Tensor Match(const Tensor& quality, double high, double low, bool allow_low_quality) {
  TORCH_CHECK(quality.numel() > 0, quality.size(0) == 0 ? "No ground-truth boxes available for one of the images"
                                                        : "No proposal boxes available for one of the images");
  auto [matched_vals, matches] = quality.max(0);
  Tensor all_matches = allow_low_quality ? matches.clone() : Tensor();
  auto below = matched_vals < low;
  auto between = (matched_vals >= low) & (matched_vals < high);
  matches.index_put_({below}, -1);
  matches.index_put_({between}, -2);
  if (allow_low_quality) {
    auto highest = std::get<0>(quality.max(1));
    auto pairs = torch::where(quality == highest.index({Slice(), None}));
    auto pred = pairs[1];
    matches.index_put_({pred}, all_matches.index({pred}));
  }
  return matches;
}

// det_utils.BalancedPositiveNegativeSampler: uint8 masks of the sampled
// positives (label >= 1) and negatives (label == 0), drawn with randperm in
// torchvision's order (per image: positives, then negatives).
std::pair<std::vector<Tensor>, std::vector<Tensor>> Sample(const std::vector<Tensor>& labels, int64_t batch,
                                                           double fraction) {
  std::vector<Tensor> pos, neg;
  for (const auto& l : labels) {
    auto positive = torch::where(l >= 1)[0];
    auto negative = torch::where(l == 0)[0];
    int64_t num_pos = std::min<int64_t>(positive.numel(), static_cast<int64_t>(batch * fraction));
    int64_t num_neg = std::min<int64_t>(negative.numel(), batch - num_pos);
    auto idx = torch::TensorOptions(torch::kLong).device(positive.device());
    auto perm1 = torch::randperm(positive.numel(), idx).index({Slice(None, num_pos)});
    auto perm2 = torch::randperm(negative.numel(), idx).index({Slice(None, num_neg)});
    auto pos_mask = torch::zeros_like(l, torch::kUInt8);
    auto neg_mask = torch::zeros_like(l, torch::kUInt8);
    pos_mask.index_put_({positive.index({perm1})}, 1);
    neg_mask.index_put_({negative.index({perm2})}, 1);
    pos.push_back(pos_mask);
    neg.push_back(neg_mask);
  }
  return {pos, neg};
}

// ---------------------------------------------------------------------- RPN

// RPNHead: a 3x3 conv + ReLU (Conv2dNormActivation, no norm), then 1x1
// objectness and box-delta convs; weights N(0, 0.01), biases 0.
struct RpnHeadImpl : torch::nn::Module {
  RpnHeadImpl() {
    conv = register_module("conv", torch::nn::Sequential(Block(Conv(256, 256, 3, 1, 1, true),
                                                               torch::nn::ReLU(torch::nn::ReLUOptions(true)))));
    cls_logits = register_module("cls_logits", Conv(256, 3, 1, 1, 0, true));
    bbox_pred = register_module("bbox_pred", Conv(256, 12, 1, 1, 0, true));
    torch::NoGradGuard g;
    for (auto& m : modules(false)) {
      if (auto* c = m->as<torch::nn::Conv2d>()) {
        torch::nn::init::normal_(c->weight, 0.0, 0.01);
        c->bias.zero_();
      }
    }
  }
  torch::nn::Sequential conv{nullptr};
  torch::nn::Conv2d cls_logits{nullptr}, bbox_pred{nullptr};
};
TORCH_MODULE(RpnHead);

// (N, A*C, H, W) -> (N, H*W*A, C), as permute_and_flatten.
Tensor PermuteAndFlatten(const Tensor& t, int64_t c) {
  const int64_t n = t.size(0), h = t.size(2), w = t.size(3);
  return t.view({n, -1, c, h, w}).permute({0, 3, 4, 1, 2}).reshape({n, -1, c});
}

struct RpnOutput {
  std::vector<Tensor> proposals;
  Tensor loss_objectness, loss_rpn_box_reg;
};

// torchvision's RegionProposalNetwork; the module holds only "head".
struct RpnImpl : torch::nn::Module {
  explicit RpnImpl(const Config& c) : cfg(c) { head = register_module("head", RpnHead()); }

  RpnOutput forward(const ImageBatch& images, const std::vector<Tensor>& features, const std::vector<Target>* targets) {
    std::vector<Tensor> cls, reg;
    std::vector<int64_t> per_level;
    for (const auto& f : features) {
      auto t = head->conv->forward(f);
      auto o = head->cls_logits(t);
      cls.push_back(PermuteAndFlatten(o, 1));
      reg.push_back(PermuteAndFlatten(head->bbox_pred(t), 4));
      per_level.push_back(o.size(1) * o.size(2) * o.size(3));
    }
    // AnchorGenerator(((32,), (64,), (128,), (256,), (512,)), ((0.5, 1.0, 2.0),) * 5).
    auto anchors =
        Anchors(features, images.tensors.size(2), images.tensors.size(3), {32, 64, 128, 256, 512}, {0.5, 1.0, 2.0});
    const int64_t n = images.tensors.size(0);
    auto objectness = torch::cat(cls, 1).flatten(0, -2);
    auto deltas = torch::cat(reg, 1).reshape({-1, 4});
    auto all_anchors = torch::cat(std::vector<Tensor>(n, anchors));
    auto proposals = BoxCoder{{1, 1, 1, 1}}.Decode(deltas.detach(), all_anchors).view({n, -1, 4});
    RpnOutput out;
    out.proposals = Filter(proposals, objectness, images.sizes, per_level);
    if (targets != nullptr) Losses(anchors, *targets, objectness, deltas, out);
    return out;
  }

  // filter_proposals: per-level top-k, sigmoid, clip, small boxes, score
  // threshold, batched NMS by level, post-NMS top-n.
  std::vector<Tensor> Filter(const Tensor& proposals, const Tensor& objectness_in,
                             const std::vector<std::pair<int64_t, int64_t>>& sizes,
                             const std::vector<int64_t>& per_level) {
    const int64_t n = proposals.size(0);
    auto dev = proposals.device();
    auto objectness = objectness_in.detach().reshape({n, -1});
    std::vector<Tensor> levels_v, top_idx;
    int64_t offset = 0;
    auto splits = objectness.split_with_sizes(per_level, 1);
    for (size_t l = 0; l < per_level.size(); ++l) {
      levels_v.push_back(
          torch::full({per_level[l]}, static_cast<int64_t>(l), torch::TensorOptions(torch::kLong).device(dev)));
      const int64_t k = std::min(is_training() ? cfg.rpn_pre_nms_train : cfg.rpn_pre_nms_test, splits[l].size(1));
      top_idx.push_back(std::get<1>(splits[l].topk(k, 1)) + offset);
      offset += per_level[l];
    }
    auto levels = torch::cat(levels_v, 0).reshape({1, -1}).expand_as(objectness);
    auto top = torch::cat(top_idx, 1);
    auto batch_idx = torch::arange(n, torch::TensorOptions(torch::kLong).device(dev)).index({Slice(), None});
    auto scores_all = torch::sigmoid(objectness.index({batch_idx, top}));
    levels = levels.index({batch_idx, top});
    auto boxes_all = proposals.index({batch_idx, top});
    const int64_t post = is_training() ? cfg.rpn_post_nms_train : cfg.rpn_post_nms_test;
    std::vector<Tensor> out;
    for (int64_t i = 0; i < n; ++i) {
      auto boxes = ClipBoxes(boxes_all[i], sizes[i].first, sizes[i].second);
      auto keep = RemoveSmallBoxes(boxes, 1e-3);
      auto scores = scores_all[i].index({keep});
      auto lvl = levels[i].index({keep});
      boxes = boxes.index({keep});
      keep = torch::where(scores >= cfg.rpn_score_thresh)[0];
      boxes = boxes.index({keep}), scores = scores.index({keep}), lvl = lvl.index({keep});
      keep = BatchedNms(boxes, scores, lvl, cfg.rpn_nms_thresh).index({Slice(None, post)});
      out.push_back(boxes.index({keep}));
    }
    return out;
  }

  // assign_targets_to_anchors + compute_loss.
  void Losses(const Tensor& anchors, const std::vector<Target>& targets, const Tensor& objectness, const Tensor& deltas,
              RpnOutput& out) {
    std::vector<Tensor> labels, regression;
    for (const auto& t : targets) {
      auto matched = Match(BoxIou(t.boxes, anchors), cfg.rpn_fg_iou, cfg.rpn_bg_iou, true);
      auto matched_gt = t.boxes.index({matched.clamp_min(0)});
      auto l = (matched >= 0).to(torch::kFloat);
      l.index_put_({matched == -1}, 0.0);
      l.index_put_({matched == -2}, -1.0);
      labels.push_back(l);
      regression.push_back(matched_gt);
    }
    auto reg_targets = BoxCoder{{1, 1, 1, 1}}.Encode(torch::cat(regression, 0),
                                                     torch::cat(std::vector<Tensor>(targets.size(), anchors), 0));
    auto [pos_masks, neg_masks] = Sample(labels, cfg.rpn_batch, cfg.rpn_pos_fraction);
    auto pos = torch::where(torch::cat(pos_masks, 0))[0];
    auto neg = torch::where(torch::cat(neg_masks, 0))[0];
    auto sampled = torch::cat({pos, neg}, 0);
    auto all_labels = torch::cat(labels, 0);
    out.loss_rpn_box_reg = F::smooth_l1_loss(deltas.index({pos}), reg_targets.index({pos}),
                                             F::SmoothL1LossFuncOptions().beta(1.0 / 9).reduction(torch::kSum)) /
                           sampled.numel();
    out.loss_objectness =
        F::binary_cross_entropy_with_logits(objectness.flatten().index({sampled}), all_labels.index({sampled}));
  }

  Config cfg;
  RpnHead head{nullptr};
};
TORCH_MODULE(Rpn);

// ----------------------------------------------------------------- RoIHeads

// MultiScaleRoIAlign over P2..P5: each box goes to the level LevelMapper
// picks (canonical scale 224 at level 4, levels 2..5), pooled with
// torchvision::roi_align (sampling_ratio 2, aligned false).
Tensor MultiScaleRoiAlign(const std::vector<Tensor>& features, const std::vector<Tensor>& boxes,
                          const std::vector<std::pair<int64_t, int64_t>>& sizes, int64_t out) {
  int64_t max_h = 0, max_w = 0;
  for (const auto& [h, w] : sizes) max_h = std::max(max_h, h), max_w = std::max(max_w, w);
  std::vector<double> scales;
  for (int l = 0; l < 4; ++l) {  // _infer_scale: 2 ** round(log2(feature / image)) along the height
    double approx = static_cast<double>(features[l].size(2)) / static_cast<double>(max_h);
    scales.push_back(std::pow(2.0, torch::tensor(static_cast<float>(approx)).log2().round().item<double>()));
  }
  const int64_t k_min = static_cast<int64_t>(-torch::log2(torch::tensor(static_cast<float>(scales[0]))).item<float>());
  const int64_t k_max = static_cast<int64_t>(-torch::log2(torch::tensor(static_cast<float>(scales[3]))).item<float>());
  auto concat = torch::cat(boxes, 0);
  std::vector<Tensor> ids;
  for (size_t i = 0; i < boxes.size(); ++i) {
    ids.push_back(torch::full_like(boxes[i].index({Slice(), Slice(None, 1)}), static_cast<double>(i)));
  }
  auto rois = torch::cat({torch::cat(ids, 0), concat}, 1);
  std::vector<Tensor> areas;
  for (const auto& b : boxes) areas.push_back(BoxArea(b));
  auto s = torch::sqrt(torch::cat(areas));
  auto lvl = torch::floor(4 + torch::log2(s / 224) + torch::tensor(1e-6, s.options()));
  auto levels = torch::clamp(lvl, k_min, k_max).to(torch::kLong) - k_min;
  auto result = torch::zeros({rois.size(0), features[0].size(1), out, out}, features[0].options());
  for (int64_t l = 0; l < 4; ++l) {
    auto idx = torch::where(levels == l)[0];
    auto pooled = tvops::RoiAlign(features[l], rois.index({idx}), scales[l], out, out, 2, false);
    result.index_put_({idx}, pooled.to(result.scalar_type()));
  }
  return result;
}

struct TwoMlpHeadImpl : torch::nn::Module {
  TwoMlpHeadImpl() {
    fc6 = register_module("fc6", torch::nn::Linear(256 * 7 * 7, 1024));
    fc7 = register_module("fc7", torch::nn::Linear(1024, 1024));
  }
  Tensor forward(const Tensor& x) { return torch::relu(fc7(torch::relu(fc6(x.flatten(1))))); }
  torch::nn::Linear fc6{nullptr}, fc7{nullptr};
};
TORCH_MODULE(TwoMlpHead);

struct FastRcnnPredictorImpl : torch::nn::Module {
  explicit FastRcnnPredictorImpl(int64_t classes) {
    cls_score = register_module("cls_score", torch::nn::Linear(1024, classes));
    bbox_pred = register_module("bbox_pred", torch::nn::Linear(1024, classes * 4));
  }
  torch::nn::Linear cls_score{nullptr}, bbox_pred{nullptr};
};
TORCH_MODULE(FastRcnnPredictor);

// MaskRCNNHeads((256, 256, 256, 256), dilation 1): four Conv2dNormActivation
// (3x3 conv + ReLU, no norm); kaiming_normal(fan_out, relu), biases 0.
torch::nn::Sequential MaskHead() {
  torch::nn::Sequential s;
  for (int i = 0; i < 4; ++i) {
    s->push_back(Block(Conv(256, 256, 3, 1, 1, true), torch::nn::ReLU(torch::nn::ReLUOptions(true))));
  }
  return s;
}

// MaskRCNNPredictor: conv5_mask (ConvTranspose2d 2x2 stride 2), ReLU,
// mask_fcn_logits (1x1 conv to the classes).
struct MaskPredictorImpl : torch::nn::Module {
  explicit MaskPredictorImpl(int64_t classes) {
    conv5_mask = register_module("conv5_mask",
                                 torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(256, 256, 2).stride(2)));
    mask_fcn_logits = register_module("mask_fcn_logits", Conv(256, classes, 1, 1, 0, true));
  }
  Tensor forward(const Tensor& x) { return mask_fcn_logits(torch::relu(conv5_mask(x))); }
  torch::nn::ConvTranspose2d conv5_mask{nullptr};
  torch::nn::Conv2d mask_fcn_logits{nullptr};
};
TORCH_MODULE(MaskPredictor);

struct Detections {
  std::vector<Tensor> boxes, scores, labels, masks;  // masks: (n, 1, 28, 28) probabilities
  Tensor class_logits, box_regression;
};

struct TrainingSamples {
  std::vector<Tensor> proposals, matched_idxs, labels;
  Tensor regression_targets;
};

// torchvision's RoIHeads with the mask branch; the ROI poolers hold no state.
struct RoiHeadsImpl : torch::nn::Module {
  explicit RoiHeadsImpl(const Config& c) : cfg(c) {
    box_head = register_module("box_head", TwoMlpHead());
    box_predictor = register_module("box_predictor", FastRcnnPredictor(c.num_classes));
    mask_head = register_module("mask_head", MaskHead());
    mask_predictor = register_module("mask_predictor", MaskPredictor(c.num_classes));
    torch::NoGradGuard g;
    for (auto& m : mask_head->modules(false)) {
      if (auto* conv = m->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
        conv->bias.zero_();
      }
    }
    // MaskRCNNPredictor: kaiming_normal(fan_out, relu) on every "weight", biases 0.
    for (auto& p : mask_predictor->named_parameters()) {
      if (p.key().find("weight") != std::string::npos) {
        torch::nn::init::kaiming_normal_(p.value(), 0, torch::kFanOut, torch::kReLU);
      } else {
        p.value().zero_();
      }
    }
  }

  // select_training_samples: gt boxes join the proposals, Matcher(0.5, 0.5),
  // balanced sampling (512, 0.25), regression targets (weights 10, 10, 5, 5).
  TrainingSamples Select(std::vector<Tensor> proposals, const std::vector<Target>& targets) {
    TrainingSamples s;
    std::vector<Tensor> matched_all, labels_all;
    for (size_t i = 0; i < proposals.size(); ++i) {
      proposals[i] = torch::cat({proposals[i], targets[i].boxes});
      auto m = Match(BoxIou(targets[i].boxes, proposals[i]), cfg.box_fg_iou, cfg.box_bg_iou, false);
      auto clamped = m.clamp_min(0);
      auto l = targets[i].labels.index({clamped}).to(torch::kLong);
      l.index_put_({m == -1}, 0);
      l.index_put_({m == -2}, -1);
      matched_all.push_back(clamped);
      labels_all.push_back(l);
    }
    auto [pos, neg] = Sample(labels_all, cfg.box_batch, cfg.box_pos_fraction);
    std::vector<Tensor> gt_matched;
    for (size_t i = 0; i < proposals.size(); ++i) {
      auto inds = torch::where(pos[i] | neg[i])[0];
      s.proposals.push_back(proposals[i].index({inds}));
      s.labels.push_back(labels_all[i].index({inds}));
      s.matched_idxs.push_back(matched_all[i].index({inds}));
      gt_matched.push_back(targets[i].boxes.index({s.matched_idxs.back()}));
    }
    s.regression_targets = BoxCoder{{10, 10, 5, 5}}.Encode(torch::cat(gt_matched, 0), torch::cat(s.proposals, 0));
    return s;
  }

  // fastrcnn_loss: cross entropy + smooth-L1 (beta 1/9) on the positives'
  // class-specific deltas, divided by the number of sampled boxes.
  std::pair<Tensor, Tensor> BoxLosses(const Tensor& logits, const Tensor& regression, const TrainingSamples& s) {
    auto labels = torch::cat(s.labels, 0);
    auto cls = F::cross_entropy(logits, labels);
    auto pos = torch::where(labels > 0)[0];
    auto reg = regression.reshape({logits.size(0), regression.size(-1) / 4, 4});
    auto box = F::smooth_l1_loss(reg.index({pos, labels.index({pos})}), s.regression_targets.index({pos}),
                                 F::SmoothL1LossFuncOptions().beta(1.0 / 9).reduction(torch::kSum)) /
               labels.numel();
    return {cls, box};
  }

  // maskrcnn_loss: targets are torchvision::roi_align (28x28, scale 1,
  // sampling -1) of each positive's matched gt mask.
  Tensor MaskLoss(const Tensor& logits, const std::vector<Tensor>& boxes, const std::vector<Tensor>& matched,
                  const std::vector<Target>& targets) {
    const int64_t m = logits.size(-1);
    std::vector<Tensor> labels, mask_targets;
    for (size_t i = 0; i < boxes.size(); ++i) {
      labels.push_back(targets[i].labels.index({matched[i]}));
      auto rois = torch::cat({matched[i].to(boxes[i].options()).index({Slice(), None}), boxes[i]}, 1);
      auto gt = targets[i].masks.index({Slice(), None}).to(rois.options());
      mask_targets.push_back(tvops::RoiAlign(gt, rois, 1.0, m, m, -1, false).index({Slice(), 0}));
    }
    auto l = torch::cat(labels, 0);
    auto t = torch::cat(mask_targets, 0);
    if (t.numel() == 0) return logits.sum() * 0;
    auto idx = torch::arange(l.size(0), torch::TensorOptions(torch::kLong).device(l.device()));
    return F::binary_cross_entropy_with_logits(logits.index({idx, l}), t);
  }

  Tensor MaskLogits(const std::vector<Tensor>& features, const std::vector<Tensor>& boxes,
                    const std::vector<std::pair<int64_t, int64_t>>& sizes) {
    return mask_predictor(mask_head->forward(MultiScaleRoiAlign(features, boxes, sizes, 14)));
  }

  Config cfg;
  TwoMlpHead box_head{nullptr};
  FastRcnnPredictor box_predictor{nullptr};
  torch::nn::Sequential mask_head{nullptr};
  MaskPredictor mask_predictor{nullptr};
};
TORCH_MODULE(RoiHeads);

// postprocess_detections: softmax, class-specific decoded boxes clipped,
// background dropped, score threshold, small boxes (1e-2), batched NMS by
// class, top detections_per_img.
void PostprocessDetections(const Config& cfg, const Tensor& logits, const Tensor& regression,
                           const std::vector<Tensor>& proposals, const std::vector<std::pair<int64_t, int64_t>>& sizes,
                           Detections& d) {
  const int64_t classes = logits.size(-1);
  std::vector<int64_t> per_image;
  for (const auto& p : proposals) per_image.push_back(p.size(0));
  auto pred_boxes = BoxCoder{{10, 10, 5, 5}}.Decode(regression, torch::cat(proposals, 0));
  pred_boxes = pred_boxes.reshape({pred_boxes.size(0), -1, 4});
  auto pred_scores = torch::softmax(logits, -1);
  auto boxes_list = pred_boxes.split_with_sizes(per_image, 0);
  auto scores_list = pred_scores.split_with_sizes(per_image, 0);
  for (size_t i = 0; i < proposals.size(); ++i) {
    auto boxes = ClipBoxes(boxes_list[i], sizes[i].first, sizes[i].second);
    auto scores = scores_list[i];
    auto labels = torch::arange(classes, torch::TensorOptions(torch::kLong).device(logits.device()))
                      .view({1, -1})
                      .expand_as(scores);
    boxes = boxes.index({Slice(), Slice(1, None)}).reshape({-1, 4});
    scores = scores.index({Slice(), Slice(1, None)}).reshape(-1);
    labels = labels.index({Slice(), Slice(1, None)}).reshape(-1);
    auto inds = torch::where(scores > cfg.box_score_thresh)[0];
    boxes = boxes.index({inds}), scores = scores.index({inds}), labels = labels.index({inds});
    auto keep = RemoveSmallBoxes(boxes, 1e-2);
    boxes = boxes.index({keep}), scores = scores.index({keep}), labels = labels.index({keep});
    keep = BatchedNms(boxes, scores, labels, cfg.box_nms_thresh).index({Slice(None, cfg.box_detections)});
    d.boxes.push_back(boxes.index({keep}));
    d.scores.push_back(scores.index({keep}));
    d.labels.push_back(labels.index({keep}));
  }
}

// ------------------------------------------------------------ eval pasting

// paste_mask_in_image for one (M+2)x(M+2) mask and its integer box.
Tensor PasteOne(const Tensor& mask, const Tensor& box, int64_t im_h, int64_t im_w) {
  auto b = box.to(torch::kCPU);
  const int64_t b0 = b[0].item<int64_t>(), b1 = b[1].item<int64_t>(), b2 = b[2].item<int64_t>(),
                b3 = b[3].item<int64_t>();
  const int64_t w = std::max<int64_t>(b2 - b0 + 1, 1), h = std::max<int64_t>(b3 - b1 + 1, 1);
  // F::interpolate's bilinear path, called directly: GCC 12 misreads the
  // options object's inlined destructor as reading uninitialised memory.
  auto resized = torch::upsample_bilinear2d(mask.expand({1, 1, -1, -1}), {h, w}, /*align_corners=*/false)[0][0];
  auto im_mask = torch::zeros({im_h, im_w}, resized.options());
  const int64_t x0 = std::max<int64_t>(b0, 0), x1 = std::min<int64_t>(b2 + 1, im_w);
  const int64_t y0 = std::max<int64_t>(b1, 0), y1 = std::min<int64_t>(b3 + 1, im_h);
  if (x1 > x0 && y1 > y0) {
    im_mask.index_put_({Slice(y0, y1), Slice(x0, x1)},
                       resized.index({Slice(y0 - b1, y1 - b1), Slice(x0 - b0, x1 - b0)}));
  }
  return im_mask;
}

// paste_masks_in_image (padding 1): masks padded, boxes expanded by the same
// scale and truncated to integers, each mask resized into its box.
Tensor PasteMasks(const Tensor& masks, const Tensor& boxes, int64_t im_h, int64_t im_w) {
  const int64_t m = masks.size(-1);
  const double scale = static_cast<double>(m + 2) / m;
  auto padded = F::pad(masks, F::PadFuncOptions({1, 1, 1, 1}));
  auto w_half = (boxes.index({Slice(), 2}) - boxes.index({Slice(), 0})) * 0.5;
  auto h_half = (boxes.index({Slice(), 3}) - boxes.index({Slice(), 1})) * 0.5;
  auto x_c = (boxes.index({Slice(), 2}) + boxes.index({Slice(), 0})) * 0.5;
  auto y_c = (boxes.index({Slice(), 3}) + boxes.index({Slice(), 1})) * 0.5;
  w_half *= scale;
  h_half *= scale;
  auto expanded = torch::zeros_like(boxes);
  expanded.index_put_({Slice(), 0}, x_c - w_half);
  expanded.index_put_({Slice(), 2}, x_c + w_half);
  expanded.index_put_({Slice(), 1}, y_c - h_half);
  expanded.index_put_({Slice(), 3}, y_c + h_half);
  auto ib = expanded.to(torch::kLong);
  if (masks.size(0) == 0) return masks.new_empty({0, 1, im_h, im_w});
  std::vector<Tensor> res;
  for (int64_t i = 0; i < masks.size(0); ++i) res.push_back(PasteOne(padded[i][0], ib[i], im_h, im_w));
  return torch::stack(res, 0).index({Slice(), None});
}

// ------------------------------------------------------------------- model

struct Losses {
  Tensor loss_classifier, loss_box_reg, loss_mask, loss_objectness, loss_rpn_box_reg;
  std::vector<int64_t> sampled_rois;  // per image, the RoIs the box head saw
};

struct MaskRcnnImpl : torch::nn::Module {
  explicit MaskRcnnImpl(const Config& c) : cfg(c) {
    backbone = register_module("backbone", Backbone());
    rpn = register_module("rpn", Rpn(c));
    roi_heads = register_module("roi_heads", RoiHeads(c));
  }

  // GeneralizedRCNNTransform (models/vision/detection/detection_common.h).
  ImageBatch Transform(const std::vector<Tensor>& images, std::vector<Target>* targets) {
    return TransformImages(images, targets, {cfg.min_size, cfg.max_size, cfg.size_divisible}, is_training());
  }

  // GeneralizedRCNN.forward in training: the five losses.
  Losses TrainForward(const std::vector<Tensor>& images, std::vector<Target> targets) {
    auto batch = Transform(images, &targets);
    CheckBoxes(targets);
    auto features = backbone(batch.tensors);
    auto rpn_out = rpn(batch, features, &targets);
    auto samples = roi_heads->Select(rpn_out.proposals, targets);
    std::vector<Tensor> p4(features.begin(), features.begin() + 4);
    auto box_features = roi_heads->box_head(MultiScaleRoiAlign(p4, samples.proposals, batch.sizes, 7));
    auto logits = roi_heads->box_predictor->cls_score(box_features);
    auto regression = roi_heads->box_predictor->bbox_pred(box_features);
    Losses l;
    for (const auto& p : samples.proposals) l.sampled_rois.push_back(p.size(0));
    std::tie(l.loss_classifier, l.loss_box_reg) = roi_heads->BoxLosses(logits, regression, samples);
    std::vector<Tensor> mask_boxes, mask_matched;
    for (size_t i = 0; i < samples.proposals.size(); ++i) {
      auto pos = torch::where(samples.labels[i] > 0)[0];
      mask_boxes.push_back(samples.proposals[i].index({pos}));
      mask_matched.push_back(samples.matched_idxs[i].index({pos}));
    }
    l.loss_mask =
        roi_heads->MaskLoss(roi_heads->MaskLogits(p4, mask_boxes, batch.sizes), mask_boxes, mask_matched, targets);
    l.loss_objectness = rpn_out.loss_objectness;
    l.loss_rpn_box_reg = rpn_out.loss_rpn_box_reg;
    return l;
  }

  // GeneralizedRCNN.forward in eval: detections with pasted masks, boxes in
  // the original image coordinates. `proposals` receives the RPN's.
  Detections EvalForward(const std::vector<Tensor>& images, std::vector<Tensor>* proposals = nullptr) {
    auto batch = Transform(images, nullptr);
    auto features = backbone(batch.tensors);
    auto rpn_out = rpn(batch, features, nullptr);
    if (proposals != nullptr) *proposals = rpn_out.proposals;
    std::vector<Tensor> p4(features.begin(), features.begin() + 4);
    auto box_features = roi_heads->box_head(MultiScaleRoiAlign(p4, rpn_out.proposals, batch.sizes, 7));
    Detections d;
    d.class_logits = roi_heads->box_predictor->cls_score(box_features);
    d.box_regression = roi_heads->box_predictor->bbox_pred(box_features);
    PostprocessDetections(cfg, d.class_logits, d.box_regression, rpn_out.proposals, batch.sizes, d);
    auto mask_prob = roi_heads->MaskLogits(p4, d.boxes, batch.sizes).sigmoid();  // maskrcnn_inference
    auto labels = torch::cat(d.labels);
    auto idx = torch::arange(mask_prob.size(0), torch::TensorOptions(torch::kLong).device(labels.device()));
    mask_prob = mask_prob.index({idx, labels}).index({Slice(), None});
    std::vector<int64_t> per_image;
    for (const auto& l : d.labels) per_image.push_back(l.size(0));
    auto probs = mask_prob.split_with_sizes(per_image, 0);
    for (size_t i = 0; i < images.size(); ++i) {
      std::pair<int64_t, int64_t> original{images[i].size(1), images[i].size(2)};
      d.boxes[i] = ResizeBoxes(d.boxes[i], batch.sizes[i], original);
      d.masks.push_back(PasteMasks(probs[i], d.boxes[i], original.first, original.second));
    }
    return d;
  }

  Config cfg;
  Backbone backbone{nullptr};
  Rpn rpn{nullptr};
  RoiHeads roi_heads{nullptr};
};
TORCH_MODULE(MaskRcnn);

// ---------------------------------------------------------------- workload

class MaskRcnnWorkload : public Workload {
 public:
  MaskRcnnWorkload(const WorkloadOptions& opt, const Config& cfg, int64_t long_side, double lr)
      : batch_(opt.batch_size) {
    TORCH_CHECK(opt.batch_size >= 1, "vision_maskrcnn: batch size must be positive, got ", opt.batch_size);
    if (auto why = tvops::Unavailable())
      throw UnsupportedError("vision_maskrcnn needs torchvision's operators: " + *why);
    net_ = MaskRcnn(cfg);
    net_->to(opt.device);
    for (int64_t i = 0; i < batch_; ++i) MakeSample(inputs_, i, long_side, opt.device, /*masks=*/true);
    samples_per_step_ = batch_;
    if (opt.mode == Mode::kTrain) {
      std::vector<Tensor> params;
      for (auto& p : net_->parameters()) {
        if (p.requires_grad()) params.push_back(p);
      }
      optimizer_ = std::make_unique<torch::optim::SGD>(
          params, torch::optim::SGDOptions(lr).momentum(kMomentum).weight_decay(kWeightDecay));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // TorchBench's _eval: model(images); the detections flattened into one tensor.
  Tensor Forward() override {
    auto d = net_->EvalForward(Images());
    std::vector<Tensor> parts;
    for (size_t i = 0; i < d.boxes.size(); ++i) {
      for (const auto& t : {d.boxes[i], d.scores[i], d.labels[i], d.masks[i]})
        parts.push_back(t.flatten().to(torch::kFloat));
    }
    return torch::cat(parts);
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "Mask R-CNN's forward takes lists of images and targets and has data-dependent shapes and "
        "host synchronisations (TorchBench: \"JIT is not supported by this model\")");
  }

  // TorchBench's _train: loss_dict = model(images, targets); sum; zero_grad;
  // backward; SGD step.
  Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "vision_maskrcnn: TrainStep needs a workload built in train mode");
    std::vector<Target> targets;
    for (int64_t i = 0; i < batch_; ++i) {
      const auto s = std::to_string(i);
      targets.push_back({inputs_["boxes" + s], inputs_["labels" + s], inputs_["masks" + s]});
    }
    last_ = net_->TrainForward(Images(), targets);
    auto total =
        last_.loss_classifier + last_.loss_box_reg + last_.loss_mask + last_.loss_objectness + last_.loss_rpn_box_reg;
    optimizer_->zero_grad();
    total.backward();
    optimizer_->step();
    return total.detach();
  }

  MaskRcnn& model() { return net_; }
  const Losses& last_losses() const { return last_; }
  std::vector<Tensor> Images() {
    std::vector<Tensor> images;
    for (int64_t i = 0; i < batch_; ++i) images.push_back(inputs_["image" + std::to_string(i)]);
    return images;
  }

 private:
  int64_t batch_;
  MaskRcnn net_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  Losses last_;
};

// Smoke: the transform's sizes shrunk (800/1333 -> 128/213, the same ratio)
// and images with a long side of 160 px instead of 640.
constexpr int64_t kSmokeMinSize = 128, kSmokeMaxSize = 213, kSmokeLongSide = 160, kLongSide = 640;

}  // namespace

std::unique_ptr<Workload> MakeMaskRcnnWorkload(const WorkloadOptions& opt, const MaskRcnnSettings& settings) {
  Config cfg;
  cfg.min_size = settings.min_size;
  cfg.max_size = settings.max_size;
  cfg.box_score_thresh = settings.box_score_thresh;
  return std::make_unique<MaskRcnnWorkload>(opt, cfg, opt.smoke ? kSmokeLongSide : kLongSide,
                                            settings.learning_rate);
}

std::map<std::string, torch::Tensor> MaskRcnnEvalOutputs(Workload& workload) {
  auto& w = dynamic_cast<MaskRcnnWorkload&>(workload);
  w.net().eval();
  torch::NoGradGuard no_grad;
  std::vector<Tensor> proposals;
  auto d = w.model()->EvalForward(w.Images(), &proposals);
  std::map<std::string, Tensor> out{{"class_logits", d.class_logits}, {"box_regression", d.box_regression}};
  for (size_t i = 0; i < d.boxes.size(); ++i) {
    const auto s = std::to_string(i);
    out["boxes" + s] = d.boxes[i];
    out["scores" + s] = d.scores[i];
    out["labels" + s] = d.labels[i];
    out["masks" + s] = d.masks[i];
    out["proposals" + s] = proposals[i];
  }
  return out;
}

std::map<std::string, torch::Tensor> MaskRcnnTrainLosses(Workload& workload) {
  auto& w = dynamic_cast<MaskRcnnWorkload&>(workload);
  w.net().train();
  w.TrainStep();
  const auto& l = w.last_losses();
  return {{"loss_classifier", l.loss_classifier.detach()},
          {"loss_box_reg", l.loss_box_reg.detach()},
          {"loss_mask", l.loss_mask.detach()},
          {"loss_objectness", l.loss_objectness.detach()},
          {"loss_rpn_box_reg", l.loss_rpn_box_reg.detach()}};
}

std::vector<int64_t> MaskRcnnSampledRois(Workload& workload) {
  return dynamic_cast<MaskRcnnWorkload&>(workload).last_losses().sampled_rois;
}

void AddMaskRcnnModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "vision_maskrcnn";
  info.paper_name = "vision_maskrcnn";
  info.domain = Domain::kVision;
  info.task = "instance segmentation";
  info.reference =
      "torchvision.models.detection.maskrcnn_resnet50_fpn as torchbenchmark/models/vision_maskrcnn (COCO_V1 setup: "
      "FrozenBatchNorm2d eps 0, 3 trainable backbone layers, 91 classes; SGD momentum 0.9, wd 1e-4, at lr 2e-5, "
      "torchvision's warm-up start, where TorchBench's 0.02 from trained weights diverges from random ones)";
  // torchbenchmark/models/vision_maskrcnn/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 4.
  info.default_batch = {4, 4};
  // At 800 x 1067 one image's train step is tens of seconds on 2 cores.
  info.cpu_batch = BatchSizes{1, 1};
  // Smoke: one small image; the box head still sees the balanced sampler's
  // 512 RoIs per image in train, and in eval the RPN's proposals after NMS
  // (742 for the seeded smoke image, of torchvision's 1000 at most). Both
  // checked by tests/parity/maskrcnn_parity_test.cc.
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    MaskRcnnSettings s;
    if (opt.smoke) s.min_size = kSmokeMinSize, s.max_size = kSmokeMaxSize;
    return MakeMaskRcnnWorkload(opt, s);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
