// tacotron2: NVIDIA's Tacotron 2 (Shen et al. 2018, "Natural TTS Synthesis
// by Conditioning WaveNet on Mel Spectrogram Predictions"), as in
// NVIDIA/tacotron2 (model.py, layers.py, loss_function.py, hparams.py) with
// the hyperparameters of TorchBench's torchbenchmark/models/tacotron2
// (__init__.py create_hparams).
//
// Network (state-dict names as in model.py):
//   embedding  148 symbols (text/symbols.py: pad, special, punctuation,
//        letters, ARPAbet) x 512, uniform(+-sqrt(3) * sqrt(2 / (148 + 512))).
//   encoder  3 x (ConvNorm 512 -> 512, kernel 5 + BatchNorm1d, ReLU,
//        dropout 0.5), then a bidirectional LSTM(512, 256) over the packed
//        text lengths.
//   decoder  Prenet 80 -> 256 -> 256 (bias-free LinearNorms, ReLU, dropout
//        0.5 ALWAYS on, in eval too, as the original); attention_rnn
//        LSTMCell(256 + 512, 1024) with dropout 0.1; location-sensitive
//        attention (query 1024 -> 128, memory 512 -> 128, location conv
//        2 -> 32, kernel 31, dense 32 -> 128, v 128 -> 1; padded text masked
//        with -inf) over the previous and cumulative alignments;
//        decoder_rnn LSTMCell(1024 + 512, 1024) with dropout 0.1;
//        linear_projection 1536 -> 80 and gate_layer 1536 -> 1. One mel frame
//        per step (n_frames_per_step 1), teacher-forced on the target frames
//        after an all-zero go frame.
//   postnet  5 x (ConvNorm kernel 5 + BatchNorm1d): 80 -> 512 -> 512 -> 512
//        -> 512 -> 80, tanh and dropout 0.5 between, added to the decoder's
//        mel frames.
//   Xavier-uniform weights with the layer's gain (linear, tanh, relu,
//   sigmoid), PyTorch's default biases. 28,193,153 parameters.
// Workload: Tacotron2.forward (teacher-forced, in train and eval: TorchBench
// evaluates model(example_inputs), not model.inference), mask_padding:
// padded frames of the mel outputs set to 0 and of the gate to 1e3 through
// .data (the gradient passes them unmasked, as in the original).
// Tacotron2Loss = MSE(mel, target) + MSE(mel_postnet, target) +
// BCEWithLogits(gate, gate_target); Adam(lr 1e-3, weight_decay 1e-6), no
// gradient clipping in TorchBench's _train. Forward() returns the postnet
// mel spectrogram (batch x 80 x frames).
// Deviations:
//  - TorchBench feeds the first batch of its LJSpeech filelist (text and
//    mel spectrograms computed from the wav files); we have no data, so
//    text ids are random symbols and the mel targets random normals, with
//    lengths sorted descending from 160 characters / 800 frames (about
//    LJ001's long sentences at 5 frames per character) down to half of
//    that across the batch; gate targets are 1 from each utterance's last
//    frame on. smoke=true uses 16 characters / 40 frames.
//  - TorchBench's wrapper raises NotImplementedError on CPU and CUDA (memory
//    on its CI); we run its _train / _eval code.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddTacotron2Models(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
