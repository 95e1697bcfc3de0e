// Speech-Transformer (Dong, Xu and Xu 2018, "Speech-Transformer: a
// no-recurrence sequence-to-sequence model for speech recognition") as in
// kaituoxu/Speech-Transformer (commit e684777), the speech_transformer model
// of TorchBench.
//
// Hyperparameters, from torchbenchmark/models/speech_transformer/config.py
// (SpeechTransformerTrainConfig) and the model sources beside it:
//  - Features: 80 filter banks stacked by low frame rate LFR_m = 4, LFR_n = 3,
//    so 320 inputs per (3x subsampled) frame.
//  - Encoder: Linear(320, 512) + LayerNorm + sinusoidal positional encoding
//    (pe_maxlen 5000, a buffer), then 6 post-norm layers of multi-head
//    self-attention (8 heads, d_k = d_v = 64, separate w_qs/w_ks/w_vs with
//    biases, output fc, residual + LayerNorm) and a position-wise FFN
//    (512 -> 2048 -> 512, ReLU, residual + LayerNorm); padded frames are
//    masked from attention keys and zeroed after each sub-layer.
//  - Decoder: character embedding (vocabulary 1014, aishell train_chars.txt
//    in TorchBench's input_data) scaled by sqrt(512) + positional encoding,
//    6 layers of masked self-attention, encoder-decoder attention and FFN;
//    the output projection shares the embedding matrix
//    (tgt_emb_prj_weight_sharing = 1), so it is no separate parameter.
//  - Dropout 0.1 (attention weights, sub-layer outputs, embeddings).
//  - Loss: label-smoothed (0.1) cross-entropy over non-padded targets.
//  - Optimizer: Adam(betas (0.9, 0.98), eps 1e-9) with the Noam schedule
//    lr = k * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), k = 0.2,
//    warmup_steps = 1 (TorchBench's TransformerOptimizer settings).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddSpeechTransformerModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
