// Background Matting (Sengupta et al. 2020, "Background Matting: The World
// is Your Green Screen") from senguptaumd/Background-Matting, the
// Background_Matting model of TorchBench
// (torchbenchmark/models/Background_Matting/{__init__,networks,
// loss_functions,functions}.py): the self-supervised "Real_fixed" stage.
//
// Architecture facts (networks.py):
//  - ResnetConditionHR(input_nc (3, 3, 1, 4), output_nc 4, ngf 64, nf_part 64,
//    BatchNorm, n_blocks1 7, n_blocks2 3, reflect padding): four encoders
//    (image: model_enc1 + model_enc2; background, soft segmentation and
//    motion frames: model_enc_back / _seg / _multi), each ReflectionPad(3),
//    7x7 conv to 64 and two stride-2 3x3 convs to 256, with BN + ReLU; three
//    1x1 bias-free "comb" convs 512 -> 64 (the reference feeds comb_multi
//    the image and *background* features, so the motion encoder's output is
//    computed and unused, as here); model_res_dec: 1x1 conv 448 -> 256 and 7
//    ResnetBlocks; model_res_dec_al / _fg: 3 ResnetBlocks each; the alpha
//    decoder (two x2 bilinear upsamplings with align_corners=True, 3x3 convs
//    to 128 and 64, ReflectionPad(3), 7x7 conv to 1, Tanh) and the foreground
//    decoder (upsample + conv to 128, concatenation with the image's first
//    encoder features, upsample + conv to 64, 7x7 conv to 3).
//  - MultiscaleDiscriminator(input_nc 3, ndf 64, n_layers 3, InstanceNorm2d
//    without affine, num_D 1): one PatchGAN "layer0" with 4x4 convs padded by
//    2 (stride 2, 2, 2, 1, 1; 64, 128, 256, 512, 1 channels).
//  - netB (the frozen teacher) is a second ResnetConditionHR in eval mode
//    with PyTorch's default init; netG and netD get conv_init (xavier_uniform
//    with gain sqrt(2), zero bias; BatchNorm weight N(1, 0.2), bias 0).
// Workload (TorchBench's train(), one batch: its loader yields a single
// batch from the three rows of Video_data_train.csv): teacher outputs from
// netB; netG's alpha and foreground; losses: normalised L1 of alpha and its
// Sobel gradients against the teacher, of the foreground where the teacher's
// alpha > -0.98, and of the composite on the captured background where the
// segmentation > 0.95 (each per sample, skipped when the mask is empty: a
// host sync per sample); the prediction re-composed, shifted horizontally by a
// random amount (found from the segmentation on the host), on a permuted or
// the "random" background; LSGAN losses of netD; lossG = GAN + 0.05 (comp +
// alpha + fg), Adam(1e-4) for netG; then netD's real/fake LSGAN loss,
// Adam(1e-5), stepped since i % 5 == 0. As in the reference,
// compose_image_withshift returns a detached tensor (Variable(x) detaches), so
// the adversarial term sends no gradient to netG. The eight scalar reads of
// the TensorBoard log are kept as .item() syncs. Eval: TorchBench's eval()
// raises NotImplementedError, so eval is unsupported here too.
//
// Deviations: inputs are synthetic (random image, background, "random"
// background and motion frames in [-1, 1]; the segmentation and its
// ground truth a centred box), at 512 x 512 as TorchBench crops them (smoke:
// 64 x 64; the networks are fully convolutional). The host-side random draws
// (numpy: the background permutation, the coin for the random background and
// the per-sample shift) come from a seeded SplitMix64, which the parity test
// re-states in Python. The TensorBoard event writes and the per-call
// torch.save of both networks and optimizers (disk I/O in TorchBench's train)
// are left out. TrainStep() returns lossG + lossD. net() holds netB, netG
// and netD.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddBackgroundMattingModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
