// Mask R-CNN (He, Gkioxari, Dollar and Girshick 2017) with a ResNet-50-FPN
// backbone as torchvision implements it (torchvision.models.detection.
// maskrcnn_resnet50_fpn, torchvision 0.26), the vision_maskrcnn model of
// TorchBench (torchbenchmark/models/vision_maskrcnn/__init__.py).
//
// TorchBench builds maskrcnn_resnet50_fpn(pretrained=True): COCO_V1 weights,
// so the backbone uses FrozenBatchNorm2d with eps overwritten to 0.0
// (overwrite_eps), trainable_backbone_layers = 3 (conv1 and layer1 frozen),
// 91 classes. Every stage is written with LibTorch (the transform, backbone,
// anchors and box utilities in models/vision/detection/detection_common.h, shared with FCOS):
//  - GeneralizedRCNNTransform: normalize (ImageNet mean/std), resize so the
//    short side is min_size (800) and the long side at most max_size (1333),
//    bilinear; masks nearest; boxes scaled; zero-padded batch, divisible by 32.
//  - ResNet-50 (FrozenBatchNorm2d) + FPN (256 channels, LastLevelMaxPool).
//  - RPN: AnchorGenerator (sizes 32..512, ratios 0.5/1/2), RPNHead, BoxCoder,
//    per-level top-k (2000 train / 1000 eval), clipping, small-box removal,
//    batched NMS (0.7), post-NMS top 2000/1000; Matcher (0.7/0.3, low-quality
//    matches), balanced sampler (256, 0.5), BCE + smooth-L1 (beta 1/9).
//  - RoIHeads: MultiScaleRoIAlign (7x7 / 14x14, sampling 2, levels by
//    LevelMapper), TwoMLPHead (1024), FastRCNNPredictor; proposal matching
//    (0.5), sampling (512, 0.25), losses; eval postprocess (score 0.05, NMS
//    0.5, 100 detections); MaskRCNNHeads (4 x conv 256), MaskRCNNPredictor
//    (ConvTranspose2d 2x2 s2 + 1x1), mask loss against roi_align of the gt
//    masks (28x28); eval mask inference and paste_masks_in_image.
// The ROI and NMS kernels are torchvision's own operators
// (models/vision/detection/torchvision_ops.h); when its library cannot be loaded the runs are
// recorded unsupported.
//
// Workload: TorchBench's _train (model(images, targets), sum of the 5 losses,
// SGD with momentum 0.9, weight decay 1e-4 over the trainable parameters)
// and _eval (model(images) under no_grad).
// Deviations: random weights (TorchBench loads COCO weights; no downloads
// here), so SGD steps at lr 2e-5 instead of 0.02 (MaskRcnnSettings says
// why), and synthesized seeded COCO-like images and targets instead of
// COCO val2017 (see MakeSample in detection_common.cc). With random weights the box
// score threshold (0.05) usually keeps no detection in eval, so the eval
// mask branch runs on zero boxes. Smoke runs shrink the transform's
// min_size/max_size to 128/213 and the images to a long side of 160 px.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddMaskRcnnModels(std::vector<ModelInfo>& out);

// For the parity test: the transform's sizes and the box score threshold
// (torchvision's keyword arguments min_size, max_size, box_score_thresh),
// and the SGD learning rate.
//
// TorchBench trains at lr 0.02 from COCO-trained weights, which this project
// cannot download. From random weights that rate diverges in two steps in
// torchvision itself (maskrcnn_resnet50_fpn at the smoke sizes, seed 0: the
// classifier loss 15.8, then 6.4e10, then NaN; the RPN's proposals 1370,
// then 0, so that the box head sees the ground-truth boxes alone). The
// workload therefore steps at the rate torchvision's detection reference
// (references/detection/train.py) starts from: 0.02 times its warm-up factor
// 1/1000, held. The work per step is TorchBench's (the same SGD with
// momentum and weight decay); at this rate the box head sees 512 sampled
// RoIs per image at every step, as with trained weights.
struct MaskRcnnSettings {
  int64_t min_size = 800;
  int64_t max_size = 1333;
  double box_score_thresh = 0.05;
  double learning_rate = 0.02 / 1000;
};
std::unique_ptr<Workload> MakeMaskRcnnWorkload(const WorkloadOptions& opt, const MaskRcnnSettings& settings);

// Eval forward (net().eval(), no grad) returning, per image i, boxes<i>,
// scores<i>, labels<i>, masks<i> (pasted, original size), proposals<i> (the
// RPN's), and the box predictor's class_logits and box_regression.
std::map<std::string, torch::Tensor> MaskRcnnEvalOutputs(Workload& workload);

// One TrainStep(); returns its five losses by torchvision's names.
std::map<std::string, torch::Tensor> MaskRcnnTrainLosses(Workload& workload);

// Per image, the RoIs the box head saw in the last TrainStep() (the
// balanced sampler's 512 where the proposals allow).
std::vector<int64_t> MaskRcnnSampledRois(Workload& workload);

}  // namespace torchgauge::models
