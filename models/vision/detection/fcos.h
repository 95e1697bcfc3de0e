// FCOS (Tian, Shen, Chen and He 2019) with a ResNet-50-FPN backbone, the
// detectron2_fcos_r_50_fpn model of TorchBench
// (torchbenchmark/models/detectron2_fcos_r_50_fpn: detectron2's LazyConfig
// configs/COCO-Detection/fcos_R_50_FPN_1x.py). detectron2 is not on PyPI, so
// its config is mapped onto torchvision's FCOS (torchvision.models.detection.
// fcos, torchvision 0.26), the parity reference:
//  - GeneralizedRCNNTransform (detectron2: ResizeShortestEdge 800 / 1333,
//    ImageNet mean/std on BGR 0..255, the same normalization as torchvision's
//    RGB 0..1 mean/std), zero-padded batch divisible by 32.
//  - ResNet-50 with FrozenBatchNorm2d (eps 1e-5), conv1 and layer1 frozen
//    (detectron2 freeze_at = 2 = torchvision trainable_layers 3); FPN over
//    C3..C5 (256 channels) and LastLevelP6P7 from P5 (detectron2
//    top_block.in_feature = "p5").
//  - FCOSHead: classification and regression towers of 4 x (conv3x3,
//    GroupNorm(32, 256), ReLU), convs N(0, 0.01); cls_logits (prior 0.01),
//    bbox_reg (ReLU), bbox_ctrness.
//  - One anchor per location, size = stride (8..128); center-sampling target
//    assignment (radius 1.5, scale ranges 4x..8x the stride, smallest gt
//    wins); BoxLinearCoder(normalize_by_size); sigmoid focal loss (alpha
//    0.25, gamma 2), GIoU loss, centerness BCE, each over max(1, #fg).
//  - Eval: score sqrt(sigmoid(cls) * sigmoid(ctrness)) > 0.2, top 1000 per
//    level, batched NMS 0.6, 100 detections, boxes back to the input size.
// NMS is torchvision's own operator (models/vision/detection/torchvision_ops.h); when its
// library cannot be loaded the runs are recorded unsupported.
//
// Workload: TorchBench's eval (model(images) under no_grad). TorchBench has
// no train for this model: its Model sets FCOS_USE_BN and Detectron2Model
// raises NotImplementedError("FCOS train is not supported by upstream
// detectron2", detectron2 issue 4369), so train is recorded unsupported.
// The train step (detectron2's SGD: lr 0.01, momentum 0.9, weight decay
// 1e-4, none on the GroupNorm parameters) is implemented and checked by the
// parity test against torchvision's FCOS losses.
// Deviations (see AddFcosModels and docs): torchvision's choices where they
// differ from detectron2's (stride on the 3x3 conv, ReLU on bbox_reg,
// normalizer max(1, #fg) instead of an EMA, GroupNorm in the head where
// TorchBench's FCOS_USE_BN hack switches it to BatchNorm), random weights
// and synthesized seeded COCO-like images (MakeSample) instead of COCO
// val2017; smoke runs shrink the transform to 128/213 and the images to a
// long side of 160 px.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddFcosModels(std::vector<ModelInfo>& out);

// For the parity test: the transform's sizes and the score threshold
// (torchvision's keyword arguments min_size, max_size, score_thresh).
struct FcosSettings {
  int64_t min_size = 800;
  int64_t max_size = 1333;
  double score_thresh = 0.2;
};
std::unique_ptr<Workload> MakeFcosWorkload(const WorkloadOptions& opt, const FcosSettings& settings);

// Eval forward (net().eval(), no grad) returning, per image i, boxes<i>,
// scores<i>, labels<i>, and the head's cls_logits, bbox_regression and
// bbox_ctrness (N, sum HW, K).
std::map<std::string, torch::Tensor> FcosEvalOutputs(Workload& workload);

// One TrainStep(); returns its three losses by torchvision's names
// (classification, bbox_regression, bbox_ctrness).
std::map<std::string, torch::Tensor> FcosTrainLosses(Workload& workload);

}  // namespace torchgauge::models
