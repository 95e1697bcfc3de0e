// A Llama-architecture decoder-only language model (Touvron et al. 2023,
// arXiv:2302.13971; Llama 3, arXiv:2407.21783), with a key-value cache and
// greedy generation: the first generative workload (issue 38). Written as
// torch::nn modules whose parameter names follow transformers'
// LlamaForCausalLM, so its state dict loads by name for the parity test.
//
// The architecture: token embedding; per layer a pre-norm block of RMSNorm,
// grouped-query self-attention (num_key_value_heads < num_attention_heads:
// each key/value head serves num_heads / num_kv_heads query heads) with
// rotary position embeddings on queries and keys, then RMSNorm and a SwiGLU
// MLP (down(silu(gate(x)) * up(x))); a final RMSNorm and the LM head, tied to
// the embedding when the config says so. No biases, no dropout (Llama's
// attention_dropout is 0). The rotary frequencies are theta^(-2i/d), adjusted
// as Llama 3.1/3.2 do when rope_scaling is "llama3": wavelengths longer than
// original_max_position_embeddings / low_freq_factor are divided by `factor`,
// those shorter than original_max_position_embeddings / high_freq_factor kept,
// and the band between interpolated smoothly.
//
// Registered as llama_3_2_1b at Llama-3.2-1B's published configuration
// (meta-llama/Llama-3.2-1B config.json): hidden 2048, 16 layers, 32 heads,
// 8 KV heads (head_dim 64), intermediate 8192, vocab 128256, rope_theta
// 500000 with llama3 rope scaling (factor 32, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192), tied
// embeddings, RMSNorm eps 1e-5, initializer_range 0.02: 1,235,814,400
// parameters. Train is next-token cross-entropy and one Adam step (lr 1e-3)
// as for the other Hugging Face LMs (hf_harness.h); eval is one forward pass.
// The workload is generative (models/generator.h, a LlamaGenerator): in
// eval mode the collector also times a prefill and single-token decode
// steps over the cache (collector/generation.h: TTFT, TPOT, tokens/s).
//
// Departure from the other families: smoke runs (WorkloadOptions::smoke) build
// a reduced configuration, LlamaSmokeConfig() (2 layers, hidden 256, 8 heads,
// 2 KV heads, intermediate 512, vocab 1024, the same rope and eps): a train
// step at the published size needs about 20 GB (weights, gradients and Adam's
// two moments of 1.24B parameters), more than the CPU suite's machines have.
// The parity test checks the reduced configuration against transformers.
//
// llama_v2_7b_16h, TorchBench's model of that name, is the same family at
// the configuration TorchBench's Hugging Face factory builds for it,
// LlamaConfig(num_hidden_layers=16): transformers' LlamaConfig defaults, which
// are Llama-2-7B's (hidden 4096, 32 heads, 32 KV heads: multi-head
// attention, intermediate 11008, vocab 32000, plain rope with theta 10000,
// RMSNorm eps 1e-6, untied LM head, 2048 positions) with 16 of its 32 layers:
// 3,500,281,856 parameters. TorchBench runs 128 tokens in train and 512 in
// eval, batch 1. Its smoke runs build Llama2SmokeConfig() (2 layers, hidden
// 256, 8 heads, 8 KV heads, intermediate 512, vocab 1024, the same rope, eps
// and untied head), which its parity checks.
//
// Three features serve the later Llama-architecture models, each off by
// default: an explicit head_dim (Qwen3: 128 with hidden 1024 and 16 heads),
// RMSNorm over each head's queries and keys before the rotation (Qwen3's
// q_norm and k_norm), and sliding-window attention (Mistral: a query at
// position q sees keys k with q - window < k <= q). Registered with them:
// qwen3_0_6b (Qwen/Qwen3-0.6B, the compiler suite's), mistral_7b_instruct
// (mistralai/Mistral-7B-Instruct-v0.1), llama_v31_8b (Meta-Llama-3.1-8B) and
// codellama (CodeLlama-7b-hf), TorchBench canaries at their hub configs,
// each with a reduced configuration for smoke runs that keeps its
// distinguishing features (LlamaVariant, llama.cc).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/shared/hf_harness.h"
#include "models/workload.h"

namespace torchgauge::models {

struct LlamaRopeScaling {
  double factor = 32.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct LlamaConfig {
  int64_t vocab_size = 128256;
  int64_t hidden_size = 2048;
  int64_t intermediate_size = 8192;
  int64_t num_hidden_layers = 16;
  int64_t num_attention_heads = 32;
  int64_t num_key_value_heads = 8;
  int64_t max_position_embeddings = 131072;
  double rope_theta = 500000.0;
  bool llama3_rope_scaling = true;  // false: plain rope
  LlamaRopeScaling rope_scaling = {};
  double rms_norm_eps = 1e-5;
  bool tie_word_embeddings = true;
  double initializer_range = 0.02;
  int64_t head_dim_override = 0;  // 0: hidden_size / num_attention_heads
  bool qk_norm = false;           // Qwen3's per-head RMSNorm of queries and keys
  int64_t sliding_window = 0;     // 0: full causal attention
  int64_t head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden_size / num_attention_heads; }
};

// meta-llama/Llama-3.2-1B's published configuration (the defaults above).
LlamaConfig Llama32_1BConfig();
// The smoke suite's reduced configuration (header comment).
LlamaConfig LlamaSmokeConfig();
// llama_v2_7b_16h's configuration and its reduced one (header comment).
LlamaConfig Llama2_7B16hConfig();
LlamaConfig Llama2SmokeConfig();

// The rotary inverse frequencies [head_dim / 2] in fp32, with the llama3
// adjustment when the config asks for it.
torch::Tensor LlamaInverseFrequencies(const LlamaConfig& config);

// One layer's cached keys and values, preallocated [batch, kv_heads,
// capacity, head_dim]; the first `LlamaKvCache::length` positions are valid.
struct LlamaLayerCache {
  torch::Tensor keys, values;
};

// The key-value cache of a whole model. A forward pass over n new tokens
// writes their keys and values at positions [length, length + n) of every
// layer and then advances length by n: a prefill writes the prompt, each
// decode step one position.
struct LlamaKvCache {
  std::vector<LlamaLayerCache> layers;
  int64_t length = 0;
  int64_t capacity() const { return layers.empty() ? 0 : layers.front().keys.size(2); }
};

// x / rms(x) * weight over the last dimension, computed in fp32.
struct LlamaRmsNormImpl : torch::nn::Module {
  LlamaRmsNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(LlamaRmsNorm);

struct LlamaAttentionImpl : torch::nn::Module {
  explicit LlamaAttentionImpl(const LlamaConfig& c);
  // hidden [batch, seq, hidden]; cos, sin [batch, seq, head_dim]. With a
  // cache, the new keys and values are written at cache->length (which the
  // caller advances) and the queries attend to every cached position.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& cos, const torch::Tensor& sin,
                        LlamaLayerCache* cache = nullptr, int64_t past = 0);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  // Registered only when the config asks for qk_norm.
  LlamaRmsNorm q_norm{nullptr}, k_norm{nullptr};
  int64_t num_heads, num_kv_heads, head_dim, sliding_window;
};
TORCH_MODULE(LlamaAttention);

struct LlamaMlpImpl : torch::nn::Module {
  explicit LlamaMlpImpl(const LlamaConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(LlamaMlp);

struct LlamaDecoderLayerImpl : torch::nn::Module {
  explicit LlamaDecoderLayerImpl(const LlamaConfig& c);
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& cos, const torch::Tensor& sin,
                        LlamaLayerCache* cache = nullptr, int64_t past = 0);
  LlamaAttention self_attn{nullptr};
  LlamaMlp mlp{nullptr};
  LlamaRmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(LlamaDecoderLayer);

// transformers' LlamaModel: the embedding, the layers and the final norm.
struct LlamaModelImpl : torch::nn::Module {
  explicit LlamaModelImpl(const LlamaConfig& c);
  // Hidden states of `input_ids` [batch, seq] at positions past.. past+seq.
  torch::Tensor forward(const torch::Tensor& input_ids, LlamaKvCache* cache = nullptr);
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  LlamaRmsNorm norm{nullptr};
  LlamaConfig config;
  // Not a buffer: transformers keeps inv_freq out of the state dict.
  torch::Tensor inv_freq;
};
TORCH_MODULE(LlamaModel);

struct LlamaForCausalLMImpl : torch::nn::Module {
  explicit LlamaForCausalLMImpl(const LlamaConfig& c);

  // Logits [batch, seq, vocab] of a full forward pass (no cache).
  torch::Tensor forward(const torch::Tensor& input_ids);
  // Logits of `input_ids` [batch, n] continuing the cached sequence: attends
  // to the cache's positions and to the new ones, writes the new keys and
  // values into the cache and advances its length by n.
  torch::Tensor forward(const torch::Tensor& input_ids, LlamaKvCache& cache);

  // An empty cache for `batch` sequences of up to `capacity` positions, on
  // the model's device and in its dtype.
  LlamaKvCache NewCache(int64_t batch, int64_t capacity) const;

  // Greedy decoding: one prefill of `prompt_ids` [batch, prompt], then
  // max_new_tokens - 1 single-token decode steps, each token the argmax of
  // the last position's logits. Returns the new tokens [batch,
  // max_new_tokens]. No stop token: always max_new_tokens. Runs without
  // autograd.
  torch::Tensor Generate(const torch::Tensor& prompt_ids, int64_t max_new_tokens);
  // Generate's two steps, for a caller that times them (LlamaGenerator):
  // the prompt [batch, prompt] into `cache` (empty), returning the first new
  // token [batch, 1]; then one token [batch, 1] into the cache, returning
  // the next. Greedy; the caller sets the grad mode.
  torch::Tensor Prefill(const torch::Tensor& prompt_ids, LlamaKvCache& cache);
  torch::Tensor Decode(const torch::Tensor& token, LlamaKvCache& cache);

  LlamaModel model{nullptr};
  // A TiedWeights over the embedding, or a Linear of its own.
  std::shared_ptr<torch::nn::Module> lm_head;
  LlamaConfig config;

 private:
  torch::Tensor Head(const torch::Tensor& hidden);
};
TORCH_MODULE(LlamaForCausalLM);

// The bytes a cache's tensors hold (every layer's keys and values at their
// allocated capacity).
int64_t LlamaKvCacheBytes(const LlamaKvCache& cache);

// The generation measurement's view of a LlamaForCausalLM
// (models/workload.h): each Prefill allocates a fresh cache for the prompt
// and max_new_tokens, as Generate does.
class LlamaGenerator : public Generator {
 public:
  explicit LlamaGenerator(LlamaForCausalLM net) : net_(std::move(net)) {}
  torch::Tensor Prefill(const torch::Tensor& prompt_ids, int64_t max_new_tokens) override;
  torch::Tensor Decode(const torch::Tensor& token) override;
  std::optional<int64_t> KvCacheBytes() const override;
  int64_t vocab_size() const override { return net_->config.vocab_size; }

 private:
  LlamaForCausalLM net_;
  LlamaKvCache cache_;
};

// llama_3_2_1b's registry entry at `config`, with `smoke` built in smoke
// runs (the parity test registers nothing; it builds the entry to reach the
// same workload).
ModelInfo LlamaInfo(const LlamaConfig& config = Llama32_1BConfig(), const LlamaConfig& smoke = LlamaSmokeConfig());
// llama_v2_7b_16h's registry entry.
ModelInfo Llama2_7B16hInfo();

// A later Llama-architecture model: its hub configuration and the reduced
// one its smoke runs build (llama.cc says what each keeps).
struct LlamaVariant {
  LlamaConfig config, smoke;
};
// qwen3_0_6b, mistral_7b_instruct, llama_v31_8b or codellama; throws for
// another id.
LlamaVariant LlamaVariantOf(const std::string& id);

// Registers llama_3_2_1b, llama_v2_7b_16h and the variants above.
void AddLlamaModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
