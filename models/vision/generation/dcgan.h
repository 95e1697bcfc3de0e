// DCGAN (Radford, Metz and Chintala 2016, "Unsupervised Representation
// Learning with Deep Convolutional Generative Adversarial Networks") as the
// PyTorch examples implement it (pytorch/examples dcgan/main.py), the dcgan
// model of TorchBench (torchbenchmark/models/dcgan/__init__.py).
//
// Architecture facts (TorchBench's DCGAN config: image 64 x 64, nc 3, nz 100,
// ngf = ndf = 64):
//  - Generator "main": ConvTranspose2d(nz, 8ngf, 4, 1, 0) then three
//    ConvTranspose2d(4, 2, 1) halving the width (8ngf -> 4ngf -> 2ngf -> ngf),
//    each followed by BatchNorm2d and ReLU, then ConvTranspose2d(ngf, nc, 4,
//    2, 1) and Tanh. No convolution has a bias.
//  - Discriminator "main": Conv2d(nc, ndf, 4, 2, 1) + LeakyReLU(0.2), three
//    Conv2d(4, 2, 1) doubling the width each with BatchNorm2d +
//    LeakyReLU(0.2), then Conv2d(8ndf, 1, 4, 1, 0) and Sigmoid. No biases.
//  - weights_init: conv weights ~ N(0, 0.02), BatchNorm weight ~ N(1, 0.02),
//    bias 0.
// Workload (TorchBench): eval runs the discriminator alone on a random
// N x 3 x 64 x 64 "photo" batch, output viewed as (N). Train is TorchBench's
// _train: num_epochs = 5 iterations, each the D update (BCE on the real
// batch, then on G(z) detached, z ~ N(0, 1) of N x 100 x 1 x 1; one Adam
// step) and the G update (BCE of D(G(z)) against the real label; one Adam
// step), Adam(lr 2e-4, betas (0.5, 0.999)) for each network. The host reads
// of D(x), D(G(z)) means (.item()) are kept: they are syncs of the reference.
//
// Deviations: none in the network. The module returned by net() holds the
// two networks as "netG" and "netD" (TorchBench keeps them as two attributes
// of its Model); TrainStep() returns errD + errG of the last iteration, as a
// single figure for the run (TorchBench returns nothing).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDcganModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
