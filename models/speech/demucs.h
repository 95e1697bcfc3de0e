// demucs: Demucs v2 (Défossez, Usunier, Bottou & Bach 2019, "Music Source
// Separation in the Waveform Domain", arXiv:1911.13254), as TorchBench
// configures it (torchbenchmark/models/demucs: __init__.py, demucs/model.py,
// demucs/augment.py, demucs/parser.py, demucs/utils.py; from
// facebookresearch/demucs v2).
//
// Configuration (TorchBench builds Demucs(channels=64), model.py defaults
// otherwise; parser.py for the training step):
//   4 sources x 2 audio channels; depth 6; kernel 8, stride 4; channels
//   64 -> 128 -> ... -> 2048 (growth 2); rewrite 1x1 convs and GLU
//   (glu=True); transposed-convolution decoder (upsample=False) with a
//   context-3 conv + GLU before each transposed conv, ReLU after all but the
//   last; U-Net skips centre-trimmed to the decoder's length; bottleneck
//   BLSTM: nn.LSTM(2048, 2048, 2 layers, bidirectional, time-major) +
//   Linear(4096, 2048). Initialisation: PyTorch's defaults, then every conv
//   and transposed conv divided by sqrt(weight.std() / 0.1) (rescale=0.1).
//   265,679,496 parameters.
// Workload (TorchBench's DemucsWrapper, parameters under "model."):
//   input `streams`: batch x 5 x 2 x 426888 uniform [0, 1) (TorchBench's
//   synthetic input); sources = streams[:, 1:]; the augmentation
//   Sequential(FlipSign, FlipChannels, Shift(44100), Remix(group 4)) draws
//   random signs, channel flips, time offsets and within-group source
//   permutations in train mode and only cuts the last 44100 samples in eval;
//   mix = sources.sum(1); estimates = model(mix).
//   Train step: L1 loss between the estimates and the centre-trimmed
//   sources, Adam(lr 3e-4) (parser.py), as TorchBench's _train.
//   Forward() returns the estimates (batch x 4 x 2 x time').
// Deviations:
//  - TorchBench raises NotImplementedError for train (T4 memory, CPU time);
//    we run its _train code, which the paper's version measured.
//  - The train step needs the augmented sources that the forward draws, so a
//    compiled forward cannot stand for it (CompiledForwardUnsupported).
//  - smoke=true shortens the streams to 44100 + 20000 samples (the length
//    is not architectural; Shift cuts 44100 and depth 6 needs at least
//    17748 after the cut).
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDemucsModels(std::vector<ModelInfo>& out);

// The workload at another encoder/decoder depth (same widths, kernel, stride
// and BiLSTM): the parity test runs depth 4, whose state is small enough to
// exchange with the Python reference.
std::unique_ptr<Workload> MakeDemucsWorkload(const WorkloadOptions& opt, int64_t depth);

}  // namespace torchgauge::models
