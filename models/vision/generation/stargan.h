// StarGAN (Choi et al. 2018, "StarGAN: Unified Generative Adversarial
// Networks for Multi-Domain Image-to-Image Translation") from yunjey/stargan,
// the pytorch_stargan model of TorchBench
// (torchbenchmark/models/pytorch_stargan/{model,solver,main}.py).
//
// Architecture facts (main.py defaults, CelebA: c_dim 5, image 128,
// g_conv_dim = d_conv_dim = 64, g_repeat_num = d_repeat_num = 6):
//  - Generator "main": the domain label is tiled to the image size and
//    concatenated (3 + 5 channels); Conv 7x7 pad 3 -> 64, two Conv 4x4 s2
//    (64 -> 128 -> 256), six ResidualBlocks of 256 ("main": conv 3x3, IN,
//    ReLU, conv 3x3, IN; x + main(x)), two ConvTranspose2d 4x4 s2
//    (256 -> 128 -> 64), Conv 7x7 -> 3, Tanh. Convs bias-free; every norm is
//    InstanceNorm2d(affine=True, track_running_stats=True), so eval mode
//    normalises with running statistics, as the reference does.
//  - Discriminator: "main" = Conv 4x4 s2 3 -> 64 + LeakyReLU(0.01), then five
//    Conv 4x4 s2 doubling (to 2048) + LeakyReLU(0.01), all with bias; "conv1"
//    3x3 -> 1 (PatchGAN source map), "conv2" (image/64)x(image/64) -> c_dim
//    (domain classification), both bias-free.
//  - PyTorch's default initialisation (the reference applies none).
// Workload (TorchBench): eval is the generator on (x_real, c_trg) at batch
// 16, 128 x 128. Train is Solver.train() with num_iters = 1: at i = 0,
// (i + 1) % n_critic (5) != 0, so only the discriminator is updated, as
// TorchBench runs it: label_trg = label_org[randperm(N)]; D(x_real) gives
// -mean(out_src) and the CelebA classification loss (BCE-with-logits summed
// over attributes / N); x_fake = G(x_real, c_trg) (G in train mode, so its
// instance norms update their running statistics); mean(D(x_fake.detach()));
// the WGAN-GP gradient penalty on x_hat = a x_real + (1 - a) x_fake, a ~
// U(0, 1) per sample, through torch::autograd::grad with create_graph (a
// double backward through D); d_loss = real + fake + 1 * cls + 10 * gp;
// Adam(lr 1e-4, betas (0.5, 0.999)). The four .item() reads of the log are
// kept (syncs of the reference).
//
// Deviations: the CelebA batch (random 128 x 128 images in [-1, 1] and random
// 0/1 attributes here) is prefetched as TorchBench does. Smoke runs keep
// 128 x 128: the classifier's kernel (image/64) depends on it. net() holds
// the networks as "G" and "D" (the Solver's attribute names). TrainStep()
// returns d_loss.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddStarGanModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
