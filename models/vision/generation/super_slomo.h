// Super SloMo (Jiang et al. 2018, "Super SloMo: High Quality Estimation of
// Multiple Intermediate Frames for Video Interpolation") from
// avinashpaliwal/Super-SloMo, the Super_SloMo model of TorchBench
// (torchbenchmark/models/Super_SloMo/{slomo_model,model_wrapper,__init__}.py).
//
// Architecture facts:
//  - UNet(in, out): conv1 7x7 in->32, conv2 7x7 32->32; down1..down5 =
//    avg_pool 2 then two convs (5x5 32->64, then 3x3 64->128, 128->256,
//    256->512, 512->512); up1..up5 = bilinear x2 upsampling
//    (align_corners=False), conv 3x3 in->out, then conv 3x3 over
//    cat(x, skip) 2out->out (512, 256, 128, 64, 32); conv3 3x3 32->out. Every
//    conv has a bias and is followed by LeakyReLU(0.1), conv3 included.
//  - flowComp = UNet(6, 4) on cat(I0, I1) gives F_0_1, F_1_0;
//    ArbTimeFlowIntrp = UNet(20, 5) refines the intermediate flows and gives
//    the visibility map. t = linspace(0.125, 0.875, 7)[frame index].
//  - backWarp: grid_sample(img, grid) (bilinear, zero padding,
//    align_corners=False) at pixel grid + flow, normalised by 2 (x / W - 0.5).
//  - The perceptual loss uses VGG16's features[:22] (conv1_1 .. conv4_3,
//    before its ReLU) with frozen parameters ("vgg16_conv_4_3").
//  - Loss: 204 L1(Ft_p, I_t) + 102 (four warp L1s) + 0.005 MSE(vgg(Ft_p),
//    vgg(I_t)) + flow smoothness of F_0_1 and F_1_0.
//  - PyTorch's default initialisation for the U-Nets (the reference applies
//    none).
// Workload (TorchBench): inputs are the frame index (0..6) and I0, I1, I_t of
// 352 x 352, normalised by subtracting the mean (0.429, 0.431, 0.397). Train:
// Adam(lr 1e-4) over all parameters (the frozen VGG gets no gradient), one
// forward computing the frame and the loss, backward, step. Eval runs the same
// forward (frame and loss) without gradients.
//
// Deviations: the VGG16 layers are randomly initialised (TorchBench loads
// ImageNet weights; nothing is downloaded here), with torchvision's VGG init
// (kaiming normal, fan_out, and zero biases). Frames are random. The backWarp
// grid is built for the input's size (TorchBench fixes 352 x 352, the size it
// feeds), so smoke runs can use 64 x 64 frames (the U-Nets need multiples of
// 32). Forward() returns the frame Ft_p; the loss it computes is kept for
// TrainStep(). TorchBench refuses the model on CPU ("excessively slow"); here
// it runs on CPU at batch 1.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddSuperSloMoModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
