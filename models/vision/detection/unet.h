// U-Net (Ronneberger, Fischer and Brox 2015, "U-Net: Convolutional Networks
// for Biomedical Image Segmentation") as implemented by milesial/Pytorch-UNet,
// the pytorch_unet model of TorchBench.
//
// Architecture facts, from torchbenchmark/models/pytorch_unet/pytorch_unet/
// unet/unet_{model,parts}.py (milesial/Pytorch-UNet):
//  - UNet(n_channels=3, n_classes=2, bilinear=True) as TorchBench builds it.
//  - DoubleConv = (3x3 conv pad 1 -> BatchNorm -> ReLU) x 2; every conv has a
//    bias. Encoder widths 64, 128, 256, 512, then 1024 / factor (factor 2 when
//    bilinear). Down = 2x2 max-pool then DoubleConv.
//  - Up (bilinear): x2 bilinear upsampling with align_corners=True, pad to the
//    skip tensor's size, concatenate [skip, upsampled], DoubleConv with
//    mid = in / 2; outputs 512/f, 256/f, 128/f, 64 channels.
//  - OutConv: 1x1 conv to n_classes.
// Input: TorchBench feeds N x 3 x 640 x 959 (Carvana images at half scale).
// Loss: cross-entropy plus multiclass Dice loss; optimizer RMSprop(lr 1e-5,
// weight_decay 1e-8, momentum 0.9) (torchbenchmark/models/pytorch_unet/__init__.py).
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// The input resolution is not part of the (fully convolutional) network;
// tests and short runs may pass a smaller one.
std::unique_ptr<Workload> MakeUNetWorkload(const WorkloadOptions& opt, int64_t height = 640, int64_t width = 959);

void AddUNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
