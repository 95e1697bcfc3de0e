// nanogpt: TorchBench's nanogpt (added since the paper, issue 38), Karpathy's
// nanoGPT GPT model as torchbenchmark/models/nanogpt/model.py copies it, with
// TorchBench's GPTConfig defaults: block_size 1024, vocab_size 50304 (GPT-2's
// 50257 padded to a multiple of 64), 12 layers, 12 heads, n_embd 768,
// dropout 0.0 and bias True (biases in every Linear and LayerNorm, as
// GPT-2): 124,475,904 parameters. The architecture is GPT-2's: token and
// position embeddings, pre-LayerNorm blocks (eps 1e-5) of causal
// self-attention (one c_attn Linear for q, k, v; scaled_dot_product_attention
// with is_causal) and an MLP of 4 n_embd with the tanh GELU (model.py's
// new_gelu), a final LayerNorm and lm_head tied to the token embedding.
// Unlike transformers' GPT-2 the projections are nn.Linear (weight [out, in]).
// Initialisation as model.py: N(0, 0.02) for Linear and Embedding weights,
// zero biases, the residual projections (c_proj) at 0.02 / sqrt(2 n_layer).
// Module names follow model.py (transformer.wte, transformer.h.<i>.attn.c_attn,
// lm_head, ...), so its state dict loads by name.
//
// The workload, as TorchBench's nanogpt/__init__.py: batch 1, a prompt of 64
// random token ids in [1, vocab); forward() returns the logits of the last
// position only ([batch, 1, vocab], model.py's inference-time shortcut, which
// TorchBench's train uses too); train's loss is logits.sum() / logits.numel()
// and the optimizer model.configure_optimizers(weight_decay 0.1, lr 6e-4,
// betas (0.9, 0.95)): AdamW with weight decay on the parameters of two or
// more dimensions and none on biases and LayerNorm weights. Departure: eval is
// one forward pass over the prompt, where TorchBench's eval samples 32 new
// tokens (model.generate, temperature 0.8, top_k 200): a multinomial draw
// cannot be compared across implementations. Generate() is the greedy form of
// that loop (argmax instead of the draw), checked token for token against
// transformers' generate in the parity test; like model.py's generate it has
// no key-value cache and reruns the (cropped) context for every token. The
// workload's Generator (models/generator.h) decodes the same way, so the
// collector's generation measurement (TTFT, TPOT) times nanoGPT's own
// cacheless decoding, and reports no cache size.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// GPTConfig, less dropout (0.0: none) and bias (True: always).
struct NanoGptConfig {
  int64_t block_size = 1024;
  int64_t vocab_size = 50304;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  double init_std = 0.02;
};

// transformer.{wte, wpe, h, ln_f} of model.py's GPT.
struct NanoGptTransformerImpl : torch::nn::Module {
  explicit NanoGptTransformerImpl(const NanoGptConfig& c);
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(NanoGptTransformer);

struct NanoGptImpl : torch::nn::Module {
  explicit NanoGptImpl(const NanoGptConfig& c);
  // model.py's forward(idx): the logits of the last position, [batch, 1, vocab].
  torch::Tensor forward(const torch::Tensor& idx);
  // The logits of every position, [batch, seq, vocab].
  torch::Tensor Logits(const torch::Tensor& idx);
  // model.py's generate with argmax in place of sampling: max_new_tokens
  // steps, each over the last block_size tokens. Returns the new tokens
  // [batch, max_new_tokens]; runs without autograd.
  torch::Tensor Generate(const torch::Tensor& idx, int64_t max_new_tokens);
  // One step of that loop: the greedy next token [batch, 1] after
  // `sequence`, over its last block_size tokens (no cache).
  torch::Tensor NextToken(const torch::Tensor& sequence);

  NanoGptTransformer transformer{nullptr};
  // A TiedWeights over transformer.wte's weight (model.py ties the two).
  std::shared_ptr<torch::nn::Module> lm_head;
  NanoGptConfig config;

 private:
  torch::Tensor Hidden(const torch::Tensor& idx);
};
TORCH_MODULE(NanoGpt);

// nanogpt's registry entry at `config` (TorchBench's by default; the parity
// test builds a reduced one).
ModelInfo NanoGptInfo(const NanoGptConfig& config = {});

// Registers nanogpt.
void AddNanoGptModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
