// CycleGAN (Zhu, Park, Isola and Efros 2017, "Unpaired Image-to-Image
// Translation using Cycle-Consistent Adversarial Networks") from
// junyanz/pytorch-CycleGAN-and-pix2pix, the pytorch_CycleGAN_and_pix2pix model
// of TorchBench (torchbenchmark/models/pytorch_CycleGAN_and_pix2pix/, run
// with "--model cycle_gan" on horse2zebra).
//
// Architecture facts (models/networks.py with the cycle_gan defaults: netG
// resnet_9blocks, netD basic, norm instance, no dropout, ngf = ndf = 64,
// init normal(0, 0.02)):
//  - ResnetGenerator "model": ReflectionPad2d(3), Conv 7x7 3->64, two stride-2
//    3x3 convs (64->128->256), nine ResnetBlocks of 256 (ReflectionPad2d(1),
//    3x3 conv, norm, ReLU, ReflectionPad2d(1), 3x3 conv, norm; x + block(x)),
//    two ConvTranspose2d(3, stride 2, padding 1, output_padding 1)
//    (256->128->64), ReflectionPad2d(3), Conv 7x7 64->3, Tanh. Norm is
//    InstanceNorm2d(affine=False, no running stats), so every conv has a bias.
//    Sequential indices (model.1, model.10.conv_block.5, ...) as in the
//    reference.
//  - NLayerDiscriminator (70x70 PatchGAN, n_layers 3): Conv 4x4 s2 3->64 +
//    LeakyReLU(0.2); Conv 4x4 s2 64->128, 128->256, Conv 4x4 s1 256->512, each
//    with InstanceNorm + LeakyReLU(0.2); Conv 4x4 s1 512->1. All with bias.
//  - init_weights('normal', 0.02): conv and transposed-conv weights
//    N(0, 0.02), biases 0.
// Workload (TorchBench): train is one CycleGANModel.optimize_parameters() on
// one A/B pair (train_cyclegan.py breaks after one batch and one epoch):
// forward (fake_B = G_A(A), rec_A = G_B(fake_B), fake_A = G_B(B), rec_B =
// G_A(fake_A)); G step with D_A, D_B frozen: identity L1 x 10 x 0.5, LSGAN
// (MSE to 1) of D_A(fake_B) and D_B(fake_A), cycle L1 x 10; then D step:
// 0.5 (MSE(D(real), 1) + MSE(D(pool(fake).detach()), 0)) for D_A and D_B.
// Adam(lr 2e-4, betas (0.5, 0.999)) over G_A + G_B and over D_A + D_B. The
// 50-image ImagePool is kept (it returns the new image until it holds 50,
// then half the time a stored one, which the new image replaces).
// Eval: TorchBench runs the test model's ResNet-9 generator on one
// 1 x 3 x 256 x 256 image; here G_A of the same network.
//
// Deviations: inputs are random images in [-1, 1] (TorchBench prefetches a
// horse2zebra batch, load 286, crop 256); smoke runs use 32 x 32 (the network
// is fully convolutional). The ImagePool draws from a seeded std::mt19937
// rather than Python's random module. net() holds the four networks as
// netG_A, netG_B, netD_A and netD_B (the reference's attribute names).
// TrainStep() returns loss_G + loss_D_A + loss_D_B. TorchBench refuses the
// model on CPU ("excessively slow"); here it runs on CPU at batch 1, slowly.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddCycleGanModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
