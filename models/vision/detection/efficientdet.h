// EfficientDet-D1 (Tan, Pang and Le 2020, "EfficientDet: Scalable and
// Efficient Object Detection"), TorchBench's timm_efficientdet.
//
// TorchBench (torchbenchmark/models/timm_efficientdet, args.py and
// __init__.py) builds effdet.create_model("tf_efficientdet_d1",
// bench_task="train" | "predict", num_classes=None -> the config's 90,
// pretrained=False, pretrained_backbone=False), image size 640 x 640. This is
// effdet 0.4.1's model (with timm 1.0.31's tf_efficientnet_b1 backbone):
//  - Backbone: timm's EfficientNet-B1 "tf_" variant, features_only, levels
//    P3..P5 (out_indices 2, 3, 4: 40, 112, 320 channels). Depth multiplier
//    1.1 (stage repeats 2, 3, 3, 4, 4, 5, 2 = 23 blocks), TF "same" padding:
//    stride-2 convs pad dynamically (timm Conv2dSame: F.pad with
//    max((ceil(i/s) - 1) s + k - i, 0), the odd pixel right/bottom), stride-1
//    convs pad (k - 1) / 2; BatchNorm eps 1e-3 (BN_EPS_TF_DEFAULT), momentum
//    0.1; SiLU; squeeze-excite (reduce = block input / 4); drop path 0.2
//    (backbone_args of tf_efficientdet_d1), linear over the 23 blocks.
//  - BiFPN ("bifpn_fa"): 88 channels, 4 cells; P6 = 1x1 conv(320 -> 88) + BN
//    + MaxPool2dSame(3, 2) of P5, P7 = MaxPool2dSame(3, 2) of P6; each cell has
//    8 nodes (4 top-down, 4 bottom-up), each a fast normalised fusion
//    (relu(w) / (sum relu(w) + 1e-4), per-input resample: 1x1 conv + BN where
//    the channels differ, nearest upsample to size or MaxPool2dSame down),
//    SiLU, separable 3x3 conv (depthwise, pointwise with the "redundant" bias)
//    and BN (eps 1e-3, momentum 0.01).
//  - Class / box nets: 3 separable convs (shared over levels, BN per level),
//    SiLU, a separable predict conv to 9 anchors x 90 classes / x 4.
//  - Anchors: 3 octave scales x aspect ratios (1, 1), (1.4, 0.7), (0.7, 1.4),
//    anchor scale 4, levels 3..7 (a buffer "anchors.boxes", as DetBench's).
//  - Train (DetBenchTrain with its AnchorLabeler, as effdet's bench_labeler
//    path): IoU of targets against anchors, ArgMaxMatcher(0.5, 0.5, force
//    match per row), FasterRcnnBoxCoder targets, focal loss (alpha 0.25,
//    gamma 1.5, "new" form, no label smoothing) normalised by the positives +
//    1, Huber box loss (delta 0.1) over 4 x that, total = class + 50 x box;
//    timm create_optimizer "momentum": SGD momentum 0.9, weight decay 4e-5
//    except 1-D parameters and biases; clip_grad_norm_ 10.
//  - Eval (DetBenchPredict): top 5000 of class logits over all anchors and
//    classes, decode, clip to img_size / img_scale, sigmoid, torchvision's
//    batched_nms (IoU 0.5; per-class loop on CPU inputs over 4000 numbers,
//    the coordinate offset trick otherwise, as torchvision 0.26 chooses),
//    the best 100, scaled by img_scale, padded with zeros: B x 100 x 6.
//
// Deviations:
//  - Inputs are synthetic: normalised N(0, 1) images (TorchBench's loader
//    prefetcher hands normalised COCO images) and 2..12 boxes per image
//    (classes 1..90, sides log-uniform in [0.02, 0.6] of the image), padded
//    to 100 rows with -1. Eval's img_info is scale 1 and the model's size.
//  - Weights are random: TorchBench loads the ImageNet backbone
//    (pretrained_backbone = not --no-pretrained-backbone).
//  - The anchor labeler runs inside the train step on the step's device, as
//    effdet's bench_labeler=True path; TorchBench labels in the loader's
//    collate (also inside its timed train(), on the CPU).
//  - The train step is TorchBench train()'s training iteration only: its
//    validate() pass (one eval-mode DetBenchTrain batch: loss and
//    detections) and the scheduler step are not run; the lr is the
//    steady-state 0.00208 (see efficientdet.cc).
//  - Forward() returns the class and box outputs concatenated (B x anchors
//    x 94); the train step splits them back per level (narrow + reshape
//    copies), where effdet's loss permutes the head outputs directly.
//  - TorchBench raises NotImplementedError on CPU; the collector runs CPU at
//    the CPU batch sizes. smoke=true uses 128 x 128 images.
#pragma once

#include <torch/types.h>

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddEfficientDetModels(std::vector<ModelInfo>& out);

// The workload at `image_size` (a multiple of 128): smoke and parity runs use
// small images; the anchors and BiFPN sizes follow it as create_model's
// image_size does.
std::unique_ptr<Workload> MakeEfficientDetWorkload(const WorkloadOptions& opt, int64_t image_size);

// DetBenchPredict's detections (B x 100 x 6: x1, y1, x2, y2, score, class)
// for the workload's inputs; throws when torchvision's operators cannot load.
torch::Tensor EfficientDetDetections(Workload& workload);

// The class and box losses of the workload's last TrainStep().
std::pair<torch::Tensor, torch::Tensor> EfficientDetLastLosses(const Workload& workload);

}  // namespace torchgauge::models
