#include "models/vision/detection/fcos.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

// torchvision.models.detection.fcos.FCOS defaults (torchvision 0.26), which
// are detectron2's FCOS defaults too (center_sampling_radius 1.5,
// test_score_thresh 0.2, test_topk_candidates 1000, test_nms_thresh 0.6,
// max_detections_per_image 100).
struct Config {
  int64_t num_classes = 80;  // configs/common/models/retinanet.py: num_classes=80
  TransformSizes sizes;      // 800 / 1333 / 32
  double center_sampling_radius = 1.5, score_thresh = 0.2, nms_thresh = 0.6;
  int64_t detections_per_img = 100, topk_candidates = 1000;
};

constexpr double kFrozenBnEps = 1e-5;  // FrozenBatchNorm2d's default (detectron2's too)
// configs/COCO-Detection/fcos_R_50_FPN_1x.py: optimizer.lr = 0.01;
// configs/common/optim.py: SGD momentum 0.9, weight_decay 1e-4,
// weight_decay_norm 0.0.
constexpr double kLr = 0.01, kMomentum = 0.9, kWeightDecay = 1e-4;
constexpr double kFocalAlpha = 0.25, kFocalGamma = 2.0, kGiouEps = 1e-7;
constexpr int64_t kGroupNormGroups = 32;  // FCOS*Head: partial(nn.GroupNorm, 32)
// AnchorGenerator(((8,), (16,), (32,), (64,), (128,)), ((1.0,),) * 5): the strides of P3..P7.
const std::vector<double> kAnchorSizes = {8, 16, 32, 64, 128};

// ------------------------------------------------------------------- model

struct BackboneImpl : torch::nn::Module {
  BackboneImpl() {
    body = register_module("body", ResNetBody(kFrozenBnEps));
    // _resnet_fpn_extractor(returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256)).
    fpn = register_module("fpn", Fpn(std::vector<int64_t>{512, 1024, 2048}, FpnExtra::kP6P7));
  }
  // P3..P7.
  std::vector<Tensor> forward(const Tensor& x) {
    auto c = body(x);
    return fpn(std::vector<Tensor>(c.begin() + 1, c.end()));
  }
  ResNetBody body{nullptr};
  Fpn fpn{nullptr};
};
TORCH_MODULE(Backbone);

torch::nn::Conv2d HeadConv(int64_t out) {
  auto c = Conv(256, out, 3, 1, 1, true);
  torch::NoGradGuard g;
  torch::nn::init::normal_(c->weight, 0.0, 0.01);
  c->bias.zero_();
  return c;
}

// 4 x (conv3x3 256, GroupNorm(32, 256), ReLU), convs N(0, 0.01), biases 0.
torch::nn::Sequential Tower() {
  torch::nn::Sequential s;
  for (int i = 0; i < 4; ++i) {
    s->push_back(HeadConv(256));
    s->push_back(torch::nn::GroupNorm(torch::nn::GroupNormOptions(kGroupNormGroups, 256)));
    s->push_back(torch::nn::ReLU());
  }
  return s;
}

// (N, A*K, H, W) -> (N, HWA, K).
Tensor PermuteAndFlatten(const Tensor& t, int64_t k) {
  const int64_t n = t.size(0), h = t.size(2), w = t.size(3);
  return t.view({n, -1, k, h, w}).permute({0, 3, 4, 1, 2}).reshape({n, -1, k});
}

struct ClassificationHeadImpl : torch::nn::Module {
  explicit ClassificationHeadImpl(int64_t classes) {
    conv = register_module("conv", Tower());
    cls_logits = register_module("cls_logits", HeadConv(classes));
    torch::NoGradGuard g;
    const double prior = 0.01;
    cls_logits->bias.fill_(-std::log((1 - prior) / prior));
  }
  torch::nn::Sequential conv{nullptr};
  torch::nn::Conv2d cls_logits{nullptr};
};
TORCH_MODULE(ClassificationHead);

struct RegressionHeadImpl : torch::nn::Module {
  RegressionHeadImpl() {
    conv = register_module("conv", Tower());
    bbox_reg = register_module("bbox_reg", HeadConv(4));
    bbox_ctrness = register_module("bbox_ctrness", HeadConv(1));
  }
  torch::nn::Sequential conv{nullptr};
  torch::nn::Conv2d bbox_reg{nullptr}, bbox_ctrness{nullptr};
};
TORCH_MODULE(RegressionHead);

struct HeadOutputs {
  Tensor cls_logits, bbox_regression, bbox_ctrness;  // (N, HWA, K), (N, HWA, 4), (N, HWA, 1)
  std::vector<int64_t> per_level;                    // HW of each level
};

// FCOSHead: both towers over every level; bbox_reg through a ReLU.
struct FcosHeadImpl : torch::nn::Module {
  explicit FcosHeadImpl(int64_t classes) : num_classes(classes) {
    classification_head = register_module("classification_head", ClassificationHead(classes));
    regression_head = register_module("regression_head", RegressionHead());
  }
  HeadOutputs forward(const std::vector<Tensor>& features) {
    std::vector<Tensor> cls, reg, ctr;
    HeadOutputs out;
    for (const auto& f : features) {
      auto c = classification_head->cls_logits(classification_head->conv->forward(f));
      cls.push_back(PermuteAndFlatten(c, num_classes));
      auto r = regression_head->conv->forward(f);
      reg.push_back(PermuteAndFlatten(torch::relu(regression_head->bbox_reg(r)), 4));
      ctr.push_back(PermuteAndFlatten(regression_head->bbox_ctrness(r), 1));
      out.per_level.push_back(f.size(2) * f.size(3));
    }
    out.cls_logits = torch::cat(cls, 1);
    out.bbox_regression = torch::cat(reg, 1);
    out.bbox_ctrness = torch::cat(ctr, 1);
    return out;
  }
  int64_t num_classes;
  ClassificationHead classification_head{nullptr};
  RegressionHead regression_head{nullptr};
};
TORCH_MODULE(FcosHead);

// ------------------------------------------------------------ box coding

// det_utils.BoxLinearCoder(normalize_by_size=True): distances from the
// anchor's center to the four box sides, over the anchor's width / height.
Tensor LinearEncode(const Tensor& ref, const Tensor& proposals) {
  auto c = [](const Tensor& t, int64_t i) { return t.select(-1, i); };
  auto ctr_x = 0.5 * (c(ref, 0) + c(ref, 2));
  auto ctr_y = 0.5 * (c(ref, 1) + c(ref, 3));
  auto targets = torch::stack(
      {ctr_x - c(proposals, 0), ctr_y - c(proposals, 1), c(proposals, 2) - ctr_x, c(proposals, 3) - ctr_y}, -1);
  auto w = c(ref, 2) - c(ref, 0), h = c(ref, 3) - c(ref, 1);
  return targets / torch::stack({w, h, w, h}, -1);
}

Tensor LinearDecode(const Tensor& rel_codes, const Tensor& boxes_in) {
  auto boxes = boxes_in.to(rel_codes.scalar_type());
  auto c = [](const Tensor& t, int64_t i) { return t.select(-1, i); };
  auto ctr_x = 0.5 * (c(boxes, 0) + c(boxes, 2));
  auto ctr_y = 0.5 * (c(boxes, 1) + c(boxes, 3));
  auto w = c(boxes, 2) - c(boxes, 0), h = c(boxes, 3) - c(boxes, 1);
  auto rel = rel_codes * torch::stack({w, h, w, h}, -1);
  return torch::stack({ctr_x - c(rel, 0), ctr_y - c(rel, 1), ctr_x + c(rel, 2), ctr_y + c(rel, 3)}, -1);
}

// ---------------------------------------------------------------- losses

// torchvision.ops.sigmoid_focal_loss(reduction="sum").
Tensor SigmoidFocalLoss(const Tensor& inputs, const Tensor& targets) {
  auto p = torch::sigmoid(inputs);
  auto ce = F::binary_cross_entropy_with_logits(inputs, targets,
                                                F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
  auto p_t = p * targets + (1 - p) * (1 - targets);
  auto loss = ce * (1 - p_t).pow(kFocalGamma);
  auto alpha_t = kFocalAlpha * targets + (1 - kFocalAlpha) * (1 - targets);
  return (alpha_t * loss).sum();
}

// torchvision.ops.generalized_box_iou_loss(reduction="sum").
Tensor GiouLoss(const Tensor& boxes1, const Tensor& boxes2) {
  auto a = boxes1.unbind(-1), b = boxes2.unbind(-1);
  auto xk1 = torch::max(a[0], b[0]), yk1 = torch::max(a[1], b[1]);
  auto xk2 = torch::min(a[2], b[2]), yk2 = torch::min(a[3], b[3]);
  auto inter = torch::zeros_like(a[0]);
  auto mask = (yk2 > yk1) & (xk2 > xk1);
  inter.index_put_({mask}, (xk2.index({mask}) - xk1.index({mask})) * (yk2.index({mask}) - yk1.index({mask})));
  auto uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  auto iou = inter / (uni + kGiouEps);
  auto area_c = (torch::max(a[2], b[2]) - torch::min(a[0], b[0])) * (torch::max(a[3], b[3]) - torch::min(a[1], b[1]));
  auto miou = iou - ((area_c - uni) / (area_c + kGiouEps));
  return (1 - miou).sum();
}

struct Losses {
  Tensor classification, bbox_regression, bbox_ctrness;
};

// FCOS.compute_loss's matching for one image: anchor points near a gt center
// (center sampling), inside it, within the level's scale range; the gt of
// smallest area wins; -1 where none.
Tensor MatchAnchors(const Tensor& anchors, const Tensor& gt, const std::vector<int64_t>& per_level, double radius) {
  if (gt.numel() == 0) return torch::full({anchors.size(0)}, -1, anchors.options().dtype(torch::kLong));
  auto gt_centers = (gt.index({Slice(), Slice(None, 2)}) + gt.index({Slice(), Slice(2, None)})) / 2;
  auto centers = (anchors.index({Slice(), Slice(None, 2)}) + anchors.index({Slice(), Slice(2, None)})) / 2;
  auto sizes = anchors.index({Slice(), 2}) - anchors.index({Slice(), 0});
  auto match = std::get<0>((centers.index({Slice(), None}) - gt_centers.index({None})).abs_().max(2)) <
               radius * sizes.index({Slice(), None});
  auto xy = centers.unsqueeze(2).unbind(1);  // (N, 1) each
  auto g = gt.unsqueeze(0).unbind(2);        // (1, M) each
  auto dist = torch::stack({xy[0] - g[0], xy[1] - g[1], g[2] - xy[0], g[3] - xy[1]}, 2);
  match &= std::get<0>(dist.min(2)) > 0;
  auto lower = sizes * 4;
  lower.index_put_({Slice(None, per_level.front())}, 0);
  auto upper = sizes * 8;
  upper.index_put_({Slice(-per_level.back(), None)}, std::numeric_limits<double>::infinity());
  auto far = std::get<0>(dist.max(2));
  match &= (far > lower.index({Slice(), None})) & (far < upper.index({Slice(), None}));
  auto areas = (gt.index({Slice(), 2}) - gt.index({Slice(), 0})) * (gt.index({Slice(), 3}) - gt.index({Slice(), 1}));
  auto quality = match.to(torch::kFloat) * (1e8 - areas.index({None}));
  auto [best, matched] = quality.max(1);
  matched.index_put_({best < 1e-5}, -1);
  return matched;
}

// FCOSHead.compute_loss over the stacked per-image matches.
Losses HeadLosses(const HeadOutputs& h, const Tensor& anchors, const std::vector<Target>& targets,
                  const std::vector<Tensor>& matched) {
  std::vector<Tensor> classes_v, boxes_v;
  for (size_t i = 0; i < targets.size(); ++i) {
    auto idx = matched[i].clip(0);
    auto cls = targets[i].labels.index({idx});
    cls.index_put_({matched[i] < 0}, -1);
    classes_v.push_back(cls);
    boxes_v.push_back(targets[i].boxes.index({idx}));
  }
  auto gt_boxes = torch::stack(boxes_v), gt_classes = torch::stack(classes_v);
  auto all_anchors = torch::stack(std::vector<Tensor>(targets.size(), anchors));
  auto fg = gt_classes >= 0;
  const double norm = std::max<int64_t>(1, fg.sum().item<int64_t>());
  auto cls_targets = torch::zeros_like(h.cls_logits);
  cls_targets.index_put_({fg, gt_classes.index({fg})}, 1.0);
  Losses l;
  l.classification = SigmoidFocalLoss(h.cls_logits, cls_targets) / norm;
  auto pred_boxes = LinearDecode(h.bbox_regression, all_anchors);
  l.bbox_regression = GiouLoss(pred_boxes.index({fg}), gt_boxes.index({fg})) / norm;
  auto reg_targets = LinearEncode(all_anchors, gt_boxes);
  auto long_opts = torch::TensorOptions(torch::kLong).device(fg.device());
  auto lr = reg_targets.index({Slice(), Slice(), torch::tensor({0, 2}, long_opts)});  // left, right
  auto tb = reg_targets.index({Slice(), Slice(), torch::tensor({1, 3}, long_opts)});  // top, bottom
  auto ctrness = torch::sqrt((std::get<0>(lr.min(-1)) / std::get<0>(lr.max(-1))) *
                             (std::get<0>(tb.min(-1)) / std::get<0>(tb.max(-1))));
  auto pred_ctr = h.bbox_ctrness.squeeze(2);
  auto sum = F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kSum);
  l.bbox_ctrness = F::binary_cross_entropy_with_logits(pred_ctr.index({fg}), ctrness.index({fg}), sum) / norm;
  return l;
}

struct Detections {
  std::vector<Tensor> boxes, scores, labels;
  HeadOutputs head;
};

struct FcosImpl : torch::nn::Module {
  explicit FcosImpl(const Config& c) : cfg(c) {
    backbone = register_module("backbone", Backbone());
    head = register_module("head", FcosHead(c.num_classes));
  }

  // FCOS.forward in training: the three losses.
  Losses TrainForward(const std::vector<Tensor>& images, std::vector<Target> targets) {
    auto batch = TransformImages(images, &targets, cfg.sizes, /*training=*/true);
    CheckBoxes(targets);
    auto features = backbone(batch.tensors);
    auto h = head(features);
    auto anchors = Anchors(features, batch.tensors.size(2), batch.tensors.size(3), kAnchorSizes, {1.0});
    std::vector<Tensor> matched;
    for (const auto& t : targets) {
      matched.push_back(MatchAnchors(anchors, t.boxes, h.per_level, cfg.center_sampling_radius));
    }
    return HeadLosses(h, anchors, targets, matched);
  }

  // FCOS.forward in eval: detections with boxes in the input images' sizes.
  Detections EvalForward(const std::vector<Tensor>& images) {
    auto batch = TransformImages(images, nullptr, cfg.sizes, /*training=*/false);
    auto features = backbone(batch.tensors);
    Detections d;
    d.head = head(features);
    auto anchors = Anchors(features, batch.tensors.size(2), batch.tensors.size(3), kAnchorSizes, {1.0});
    for (size_t i = 0; i < images.size(); ++i) {
      Postprocess(d.head, anchors, static_cast<int64_t>(i), batch.sizes[i], d);
      d.boxes.back() = ResizeBoxes(d.boxes.back(), batch.sizes[i], {images[i].size(1), images[i].size(2)});
    }
    return d;
  }

  // postprocess_detections for image i: per level, score threshold and top
  // candidates, decoded and clipped boxes; then batched NMS by class.
  void Postprocess(const HeadOutputs& h, const Tensor& anchors, int64_t i, std::pair<int64_t, int64_t> size,
                   Detections& d) const {
    auto logits = h.cls_logits[i].split_with_sizes(h.per_level, 0);
    auto regression = h.bbox_regression[i].split_with_sizes(h.per_level, 0);
    auto ctrness = h.bbox_ctrness[i].split_with_sizes(h.per_level, 0);
    auto anchors_l = anchors.split_with_sizes(h.per_level, 0);
    std::vector<Tensor> boxes_v, scores_v, labels_v;
    for (size_t l = 0; l < h.per_level.size(); ++l) {
      const int64_t classes = logits[l].size(-1);
      auto scores = torch::sqrt(torch::sigmoid(logits[l]) * torch::sigmoid(ctrness[l])).flatten();
      auto keep = scores > cfg.score_thresh;
      scores = scores.index({keep});
      auto idxs = torch::where(keep)[0];
      auto [top_scores, top] = scores.topk(std::min<int64_t>(cfg.topk_candidates, idxs.size(0)));
      idxs = idxs.index({top});
      auto anchor_idxs = torch::div(idxs, classes, "floor");
      labels_v.push_back(idxs.remainder(classes));
      auto boxes = LinearDecode(regression[l].index({anchor_idxs}), anchors_l[l].index({anchor_idxs}));
      boxes_v.push_back(ClipBoxes(boxes, size.first, size.second));
      scores_v.push_back(top_scores);
    }
    auto boxes = torch::cat(boxes_v), scores = torch::cat(scores_v), labels = torch::cat(labels_v);
    auto keep = BatchedNms(boxes, scores, labels, cfg.nms_thresh).index({Slice(None, cfg.detections_per_img)});
    d.boxes.push_back(boxes.index({keep}));
    d.scores.push_back(scores.index({keep}));
    d.labels.push_back(labels.index({keep}));
  }

  Config cfg;
  Backbone backbone{nullptr};
  FcosHead head{nullptr};
};
TORCH_MODULE(Fcos);

// ---------------------------------------------------------------- workload

// detectron2's get_default_optimizer_params(weight_decay_norm=0.0): the
// GroupNorm parameters without weight decay, every other trainable one with.
std::unique_ptr<torch::optim::SGD> MakeOptimizer(torch::nn::Module& net) {
  std::vector<Tensor> decay, no_decay;
  for (const auto& m : net.modules(/*include_self=*/true)) {
    const bool norm = m->as<torch::nn::GroupNorm>() != nullptr;
    for (auto& p : m->parameters(/*recurse=*/false)) {
      if (p.requires_grad()) (norm ? no_decay : decay).push_back(p);
    }
  }
  auto base = torch::optim::SGDOptions(kLr).momentum(kMomentum).weight_decay(kWeightDecay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::SGDOptions>(base));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::SGDOptions>(
                                    torch::optim::SGDOptions(kLr).momentum(kMomentum).weight_decay(0.0)));
  return std::make_unique<torch::optim::SGD>(std::move(groups), base);
}

class FcosWorkload : public Workload {
 public:
  FcosWorkload(const WorkloadOptions& opt, const Config& cfg, int64_t long_side) : batch_(opt.batch_size) {
    TORCH_CHECK(opt.batch_size >= 1, "detectron2_fcos_r_50_fpn: batch size must be positive, got ", opt.batch_size);
    if (auto why = tvops::Unavailable())
      throw UnsupportedError("detectron2_fcos_r_50_fpn needs torchvision's nms operator: " + *why);
    net_ = Fcos(cfg);
    net_->to(opt.device);
    // detectron2's dataset mapper gives contiguous class indices 0..79
    // (thing_dataset_id_to_contiguous_id); the samples carry COCO ids.
    auto to_contiguous = torch::zeros({91}, torch::kLong);
    const auto& ids = CocoCategoryIds();
    for (size_t k = 0; k < ids.size(); ++k) to_contiguous[ids[k]] = static_cast<int64_t>(k);
    for (int64_t i = 0; i < batch_; ++i) {
      MakeSample(inputs_, i, long_side, torch::kCPU, /*masks=*/false);
      for (const char* name : {"image", "boxes", "labels"}) {
        auto& t = inputs_[name + std::to_string(i)];
        if (std::string(name) == "labels") t = to_contiguous.index({t});
        t = t.to(opt.device);
      }
    }
    samples_per_step_ = batch_;
    if (opt.mode == Mode::kTrain) optimizer_ = MakeOptimizer(*net_);
  }

  torch::nn::Module& net() override { return *net_; }

  // TorchBench's eval: model(images); the detections flattened into one tensor.
  Tensor Forward() override {
    auto d = net_->EvalForward(Images());
    std::vector<Tensor> parts;
    for (size_t i = 0; i < d.boxes.size(); ++i) {
      for (const auto& t : {d.boxes[i], d.scores[i], d.labels[i]}) parts.push_back(t.flatten().to(torch::kFloat));
    }
    return torch::cat(parts);
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "FCOS's forward takes lists of images and targets and has data-dependent shapes and host "
        "synchronisations (score threshold, top-k over the kept candidates, NMS)");
  }

  // torchvision's train step: loss_dict = model(images, targets); sum;
  // zero_grad; backward; SGD step (detectron2's optimizer).
  Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "detectron2_fcos_r_50_fpn: TrainStep needs a workload built in train mode");
    std::vector<Target> targets;
    for (int64_t i = 0; i < batch_; ++i) {
      const auto s = std::to_string(i);
      targets.push_back({inputs_["boxes" + s], inputs_["labels" + s], Tensor()});
    }
    last_ = net_->TrainForward(Images(), targets);
    auto total = last_.classification + last_.bbox_regression + last_.bbox_ctrness;
    optimizer_->zero_grad();
    total.backward();
    optimizer_->step();
    return total.detach();
  }

  Fcos& model() { return net_; }
  const Losses& last_losses() const { return last_; }
  std::vector<Tensor> Images() {
    std::vector<Tensor> images;
    for (int64_t i = 0; i < batch_; ++i) images.push_back(inputs_["image" + std::to_string(i)]);
    return images;
  }

 private:
  int64_t batch_;
  Fcos net_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  Losses last_;
};

// Smoke: the transform's sizes shrunk (800/1333 -> 128/213, the same ratio)
// and images with a long side of 160 px instead of 640.
constexpr int64_t kSmokeMinSize = 128, kSmokeMaxSize = 213, kSmokeLongSide = 160, kLongSide = 640;

}  // namespace

std::unique_ptr<Workload> MakeFcosWorkload(const WorkloadOptions& opt, const FcosSettings& settings) {
  Config cfg;
  cfg.sizes.min_size = settings.min_size;
  cfg.sizes.max_size = settings.max_size;
  cfg.score_thresh = settings.score_thresh;
  return std::make_unique<FcosWorkload>(opt, cfg, opt.smoke ? kSmokeLongSide : kLongSide);
}

std::map<std::string, torch::Tensor> FcosEvalOutputs(Workload& workload) {
  auto& w = dynamic_cast<FcosWorkload&>(workload);
  w.net().eval();
  torch::NoGradGuard no_grad;
  auto d = w.model()->EvalForward(w.Images());
  std::map<std::string, Tensor> out{{"cls_logits", d.head.cls_logits},
                                    {"bbox_regression", d.head.bbox_regression},
                                    {"bbox_ctrness", d.head.bbox_ctrness}};
  for (size_t i = 0; i < d.boxes.size(); ++i) {
    const auto s = std::to_string(i);
    out["boxes" + s] = d.boxes[i];
    out["scores" + s] = d.scores[i];
    out["labels" + s] = d.labels[i];
  }
  return out;
}

std::map<std::string, torch::Tensor> FcosTrainLosses(Workload& workload) {
  auto& w = dynamic_cast<FcosWorkload&>(workload);
  w.net().train();
  w.TrainStep();
  const auto& l = w.last_losses();
  return {{"classification", l.classification.detach()},
          {"bbox_regression", l.bbox_regression.detach()},
          {"bbox_ctrness", l.bbox_ctrness.detach()}};
}

void AddFcosModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "detectron2_fcos_r_50_fpn";
  info.paper_name = "detectron2_fcos_r_50_fpn";
  info.domain = Domain::kVision;
  info.task = "object detection";
  info.reference =
      "detectron2 configs/COCO-Detection/fcos_R_50_FPN_1x.py as torchbenchmark/models/detectron2_fcos_r_50_fpn, "
      "mapped onto torchvision.models.detection.FCOS (ResNet-50-FPN, FrozenBatchNorm2d, 3 trainable backbone "
      "layers, LastLevelP6P7 from P5, 80 classes)";
  // torchbenchmark/util/framework/detectron2/model_factory.py: DEFAULT_TRAIN_BSIZE = 1;
  // detectron2_fcos_r_50_fpn/metadata.yaml: eval_batch_size 4 on NVIDIA A100-SXM4-40GB
  // (the paper's GPU; DEFAULT_EVAL_BSIZE = 1 elsewhere).
  info.default_batch = {1, 4};
  // metadata.yaml: not_implemented on cpu; the CPU suite runs one 800 x 1067 image.
  info.cpu_batch = BatchSizes{1, 1};
  info.smoke_batch = {1, 2};
  info.supports_train = false;
  info.unsupported_reason =
      "TorchBench's detectron2_fcos_r_50_fpn has no train: Detectron2Model raises NotImplementedError(\"FCOS train "
      "is not supported by upstream detectron2. See GH Issue: "
      "https://github.com/facebookresearch/detectron2/issues/4369.\")";
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    FcosSettings s;
    if (opt.smoke) s.min_size = kSmokeMinSize, s.max_size = kSmokeMaxSize;
    return MakeFcosWorkload(opt, s);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
