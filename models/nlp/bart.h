// BART-base encoder-decoder for conditional generation (the paper's hf_Bart,
// TorchBench hf_Bart), written as torch::nn modules whose parameter names
// follow transformers' BartForConditionalGeneration, so its state dict loads
// by name for the parity test.
//
// Hyperparameters: the published "facebook/bart-base" config TorchBench loads
// (Lewis et al. 2019, section 2.1): d_model 768, 6 encoder and 6 decoder
// layers, 12 heads, FFN 3072, GELU, vocab 50265, 1024 learned positions
// (stored with BART's offset of 2, so 1026 rows), post-norm layers with a
// LayerNorm on the embeddings, dropout 0.1 (hidden states, attention
// probabilities and FFN activations), no embedding scaling, pad token 1,
// decoder start token 2. The token embedding `model.shared` is tied to both
// stacks' embed_tokens and to lm_head; the logits add the (zero, non-trained)
// final_logits_bias buffer.
//
// Deviations from the reference: none in the computation. As in transformers'
// SDPA path, attention gets no mask tensor: the encoder's and the
// cross-attention's all-ones masks are dropped, and the decoder's causal mask
// is SDPA's is_causal. LayerDrop is 0 in this config, but in training the
// reference still draws one torch.rand([]) per layer; the C++ stacks draw it
// too so that the dropout masks that follow come from the same random stream.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_bart.
void AddBartModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
