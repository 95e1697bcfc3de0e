// YOLOv3-SPP (Redmon and Farhadi 2018, "YOLOv3: An Incremental Improvement",
// with the spatial pyramid pooling block of ultralytics' cfg) as TorchBench's
// yolov3 runs it: torchbenchmark/models/yolov3, ultralytics/yolov3 (archive
// branch, 2020) with cfg/yolov3-spp.cfg, 80 COCO classes.
//
// Network (yolo_models.py create_modules / Darknet, built here from the cfg
// text YoloV3SppCfg() returns, which restates cfg/yolov3-spp.cfg block by
// block): 114 layers in module_list. [convolutional]: Conv2d (k, stride,
// padding k/2, bias only without BN) + BatchNorm2d(momentum 0.03, eps 1e-4)
// + LeakyReLU(0.1, inplace); [shortcut] adds an earlier layer's output;
// [route] concatenates earlier outputs on channels; [maxpool] stride 1,
// padding (k-1)/2 (the SPP block: 5, 9, 13); [upsample] nearest x2; [yolo]:
// 3 anchors each (masks 6,7,8 / 3,4,5 / 0,1,2 of 10,13 ... 373,326), strides
// 32, 16, 8. The conv feeding each yolo layer gets the "smart bias" init
// (objectness bias -4.5, class biases + log(0.6 / (80 - 0.99))).
// 62,998,749 parameters (ultralytics' model_info: 6.29987e+07).
// Parameter names as the reference's state dict: module_list.<i>.Conv2d.weight,
// module_list.<i>.BatchNorm2d.{weight,bias,running_mean,...}, and the yolo
// layers' module_list.<i>.anchor_vec / anchor_wh buffers.
//
// Train (yolo_train.py, TorchBench args --img 416 --batch B, one batch per
// train()): images uint8 -> float / 255; pred = model(imgs) (raw per-layer
// predictions); compute_loss: build_targets matches each target to the
// anchors whose wh IoU > iou_t 0.20 (no neighbour offsets), GIoU box loss,
// BCEWithLogits(pos_weight 1) objectness against tobj = (1 - gr) + gr *
// GIoU.clamp(0) and class losses, gains giou 3.54, obj 64.3, cls 37.4 (x 80 /
// 80), mean reductions; loss *= B / 64; backward; SGD step; EMA update
// (decay 0.9999 * (1 - exp(-updates / 2000))). Each TorchBench train() runs
// the loop from epoch 0, batch 0, so every step is the burn-in's first
// iteration ni = 0: gr 0, accumulate 1, momentum 0.9, weight decay 0, lr 0 for
// weights and BN scales and 0.1 for biases (np.interp at ni = 0), SGD
// nesterov. Optimizer groups as the reference: ".bias" / "Conv2d.weight" /
// the rest.
// Eval (__init__.py eval()): Darknet in eval mode on torch.rand(B, 3, 384,
// 512); the yolo layers' inference outputs (xy sigmoid + grid, wh exp x
// anchors, x stride, sigmoid of objectness and classes) concatenated, then
// non_max_suppression(conf 0.3, IoU 0.6, best class only, merge), whose result
// TorchBench discards. Forward() returns the concatenated inference output
// (B x 10080 x 85 at 384x512); Step(eval) adds the NMS.
//
// Deviations:
//  - Inputs are synthetic: TorchBench trains on COCO-128 mosaics (416x416
//    letterboxed photos with about 7 labels per source image). Here the train
//    images are seeded uniform uint8 noise and each image gets 2..12 labels
//    (COCO-128: 929 labels / 128 images, about 7.3), classes uniform over 80,
//    width and height log-uniform in [0.02, 0.6] of the image, centres
//    uniform with the box inside the image.
//  - In train mode Forward() returns the raw predictions of the three layers
//    viewed (B, -1, 85) and concatenated (the module returns a list); the
//    train step splits them back. The cat is one copy of the head outputs.
//  - The reference's YOLOLayer also keeps ng and grid buffers (the last
//    input's grid, recomputed every forward); they are not kept here.
//  - The step does not run the reference's per-epoch bookkeeping after the
//    batch (LambdaLR scheduler step, ema.update_attr, fitness): host-side
//    work that the next train() overwrites.
//  - TorchBench raises NotImplementedError for CPU train ("excessively slow
//    runtime", GH issue #100); this collector runs it at the CPU batch size.
//  - smoke=true uses 64x64 train images (grids 2x2, 4x4, 8x8) and 96x128
//    eval images.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddYoloV3Models(std::vector<ModelInfo>& out);

// The Darknet cfg text of YOLOv3-SPP (cfg/yolov3-spp.cfg's blocks) for
// `classes` classes; the parity test hands it to its Python re-statement.
std::string YoloV3SppCfg(int64_t classes = 80);

// utils.non_max_suppression as TorchBench's eval calls it (conf 0.3, IoU 0.6,
// multi_label false, not agnostic, merge on) on an inference output
// (B x N x (5 + classes)). Returns the kept detections of all images as rows
// (image, x1, y1, x2, y2, conf, class).
torch::Tensor YoloNonMaxSuppression(const torch::Tensor& prediction, double conf_thres = 0.3, double iou_thres = 0.6);

}  // namespace torchgauge::models
