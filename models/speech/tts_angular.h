// The tts_angular model of TorchBench: Mozilla TTS's speaker encoder trained
// with the angular prototypical loss.
//
// Sources (torchbenchmark/models/tts_angular/{model,angular_tts_main}.py,
// adapted from mozilla/TTS TTS/speaker_encoder/model.py and config.json):
//  - SpeakerEncoder(input_dim=40, proj_dim=256, lstm_dim=768,
//    num_lstm_layers=3, use_lstm_with_projection=True): three stacked
//    LSTMWithProjection blocks, each a one-layer LSTM (hidden 768, with
//    biases) followed by a bias-free Linear projection to 256; the first
//    takes the 40 mel bands, the others the 256-wide projections.
//  - The embedding is the last frame's projection, L2-normalised.
//  - Input: N utterances x 50 frames x 40 mel bands (TorchBench's synthetic data).
//  - AngleProtoLoss (Chung et al. 2020, "In defence of metric learning for
//    speaker recognition"; clovaai/voxceleb_trainer): per speaker the first
//    utterance is the positive, the mean of the others the anchor; cosine
//    similarities scaled by w = 10 and shifted by b = -5 feed a cross-entropy
//    over speakers. w and b are not in the optimizer in TorchBench, so they
//    stay constants here.
//  - Optimizer: RAdam (Liu et al. 2020) with lr 1e-4, betas (0.9, 0.999),
//    eps 1e-8, no weight decay, degenerated to SGD while the variance
//    rectification term is undefined, as in TorchBench's copy.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddTtsAngularModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
