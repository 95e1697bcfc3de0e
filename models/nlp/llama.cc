#include "models/nlp/llama.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <utility>

namespace torchgauge::models {

LlamaConfig Llama32_1BConfig() { return LlamaConfig{}; }

LlamaConfig LlamaSmokeConfig() {
  LlamaConfig c;
  c.vocab_size = 1024;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 2;
  return c;
}

LlamaConfig Llama2_7B16hConfig() {
  // transformers' LlamaConfig() defaults (Llama-2-7B) with num_hidden_layers=16.
  LlamaConfig c;
  c.vocab_size = 32000;
  c.hidden_size = 4096;
  c.intermediate_size = 11008;
  c.num_hidden_layers = 16;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 32;
  c.max_position_embeddings = 2048;
  c.rope_theta = 10000.0;
  c.llama3_rope_scaling = false;
  c.rms_norm_eps = 1e-6;
  c.tie_word_embeddings = false;
  return c;
}

LlamaConfig Llama2SmokeConfig() {
  LlamaConfig c = Llama2_7B16hConfig();
  c.vocab_size = 1024;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 8;
  return c;
}

namespace {

// The reduced configuration of a variant's smoke runs: 2 layers, hidden 256,
// 8 heads, intermediate 512, vocab 1024; the caller sets what the variant
// must keep (its key-value heads, head_dim, norms, window, rope).
LlamaConfig ReducedFrom(LlamaConfig c, int64_t num_key_value_heads) {
  c.vocab_size = 1024;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 8;
  c.num_key_value_heads = num_key_value_heads;
  return c;
}

// Qwen/Qwen3-0.6B's config.json: head_dim 128 (not hidden / heads = 64),
// q_norm and k_norm, rope theta 1e6, tied embeddings. Smoke: head_dim 64
// (not 256 / 8), the norms, 4 KV heads.
LlamaVariant Qwen3_0_6B() {
  LlamaConfig c;
  c.vocab_size = 151936;
  c.hidden_size = 1024;
  c.intermediate_size = 3072;
  c.num_hidden_layers = 28;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 8;
  c.head_dim_override = 128;
  c.qk_norm = true;
  c.max_position_embeddings = 40960;
  c.rope_theta = 1000000.0;
  c.llama3_rope_scaling = false;
  c.rms_norm_eps = 1e-6;
  c.tie_word_embeddings = true;
  LlamaConfig smoke = ReducedFrom(c, 4);
  smoke.head_dim_override = 64;
  return {c, smoke};
}

// mistralai/Mistral-7B-Instruct-v0.1's config.json: Llama's blocks with
// grouped-query attention (8 KV heads) and a 4096-token sliding window.
// Smoke: 2 KV heads and a window of 8, so that the window cuts at the smoke
// lengths (at TorchBench's 128 tokens the published window never does).
LlamaVariant Mistral7BInstruct() {
  LlamaConfig c;
  c.vocab_size = 32000;
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_hidden_layers = 32;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.max_position_embeddings = 32768;
  c.rope_theta = 10000.0;
  c.llama3_rope_scaling = false;
  c.rms_norm_eps = 1e-5;
  c.tie_word_embeddings = false;
  c.sliding_window = 4096;
  LlamaConfig smoke = ReducedFrom(c, 2);
  smoke.sliding_window = 8;
  return {c, smoke};
}

// meta-llama/Meta-Llama-3.1-8B's config.json: llama3 rope scaling with
// factor 8, 8 KV heads, untied head. Smoke: the same rope, 2 KV heads.
LlamaVariant Llama31_8B() {
  LlamaConfig c;
  c.vocab_size = 128256;
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_hidden_layers = 32;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.max_position_embeddings = 131072;
  c.rope_theta = 500000.0;
  c.llama3_rope_scaling = true;
  c.rope_scaling.factor = 8.0;
  c.rms_norm_eps = 1e-5;
  c.tie_word_embeddings = false;
  return {c, ReducedFrom(c, 2)};
}

// codellama/CodeLlama-7b-hf's config.json: Llama-2-7B's blocks with a
// 32016-token vocabulary, rope theta 1e6 and 16384 positions. Smoke: the
// same rope, multi-head attention.
LlamaVariant CodeLlama7B() {
  LlamaConfig c = Llama2_7B16hConfig();
  c.vocab_size = 32016;
  c.num_hidden_layers = 32;
  c.max_position_embeddings = 16384;
  c.rope_theta = 1000000.0;
  c.rms_norm_eps = 1e-5;
  return {c, ReducedFrom(c, 8)};
}

// meta-llama/Llama-2-7b-hf's and Llama-2-13b-hf's config.json: multi-head
// attention, 4096 positions, rms eps 1e-5, rope theta 1e4, an untied head
// over 32000 tokens; 7B is 4096 wide (11008, 32 layers, 32 heads), 13B 5120
// (13824, 40 layers, 40 heads). Smoke: multi-head attention, as the full ones.
LlamaVariant Llama2(int64_t hidden, int64_t intermediate, int64_t layers, int64_t heads) {
  LlamaConfig c = Llama2_7B16hConfig();
  c.hidden_size = hidden;
  c.intermediate_size = intermediate;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.num_key_value_heads = heads;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5;
  return {c, ReducedFrom(c, 8)};
}

}  // namespace

LlamaVariant LlamaVariantOf(const std::string& id) {
  if (id == "qwen3_0_6b") return Qwen3_0_6B();
  if (id == "mistral_7b_instruct") return Mistral7BInstruct();
  if (id == "llama_v31_8b") return Llama31_8B();
  if (id == "codellama") return CodeLlama7B();
  if (id == "llama_v2_7b") return Llama2(4096, 11008, 32, 32);
  if (id == "llama_v2_13b") return Llama2(5120, 13824, 40, 40);
  TORCH_CHECK(false, "Llama: no variant named '", id, "'");
}

torch::Tensor LlamaInverseFrequencies(const LlamaConfig& c) {
  const int64_t dim = c.head_dim();
  // theta^(-2i/d) in fp32, the exponent formed from integer steps as the
  // published code does, so both sides round alike.
  auto exponent = torch::arange(0, dim, 2, torch::kLong).to(torch::kFloat) / static_cast<double>(dim);
  auto inv_freq = 1.0 / torch::pow(c.rope_theta, exponent);
  if (!c.llama3_rope_scaling) return inv_freq;
  const auto& s = c.rope_scaling;
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_freq_wavelen = old_len / s.low_freq_factor;
  const double high_freq_wavelen = old_len / s.high_freq_factor;
  auto wavelen = 2 * M_PI / inv_freq;
  // Long wavelengths (low frequencies) are stretched by `factor`, short ones
  // kept; between the two, a linear blend in old_len / wavelen.
  auto scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
  auto smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  auto blended = (1 - smooth) * scaled / s.factor + smooth * scaled;
  auto medium = torch::logical_not(wavelen < high_freq_wavelen) & torch::logical_not(wavelen > low_freq_wavelen);
  return torch::where(medium, blended, scaled);
}

namespace {

torch::nn::Linear Projection(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// The second half of the last dimension, negated, before the first half: the
// rotation by 90 degrees of each (x_i, x_{i + d/2}) pair.
torch::Tensor RotateHalf(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  auto first = x.slice(-1, 0, half);
  auto second = x.slice(-1, half);
  return torch::cat({-second, first}, -1);
}

torch::Tensor ApplyRope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  auto rotated = x * cos;
  return rotated + RotateHalf(x) * sin;
}

// [batch, kv_heads, seq, d] -> [batch, kv_heads * groups, seq, d], each key
// or value head repeated for the `groups` query heads it serves.
torch::Tensor RepeatKv(const torch::Tensor& x, int64_t groups) {
  if (groups == 1) return x;
  const auto b = x.size(0), h = x.size(1), s = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, h, groups, s, d}).reshape({b, h * groups, s, d});
}

}  // namespace

LlamaRmsNormImpl::LlamaRmsNormImpl(int64_t dim, double eps_arg)
    : weight(register_parameter("weight", torch::ones({dim}))), eps(eps_arg) {}

torch::Tensor LlamaRmsNormImpl::forward(const torch::Tensor& x) {
  auto h = x.to(torch::kFloat);
  auto variance = h.pow(2).mean(-1, /*keepdim=*/true);
  h = h * torch::rsqrt(variance + eps);
  return weight * h.to(x.scalar_type());
}

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaConfig& c)
    : num_heads(c.num_attention_heads),
      num_kv_heads(c.num_key_value_heads),
      head_dim(c.head_dim()),
      sliding_window(c.sliding_window) {
  TORCH_CHECK(c.head_dim_override > 0 || c.hidden_size % c.num_attention_heads == 0,
              "Llama: hidden_size not divisible by the heads");
  TORCH_CHECK(c.sliding_window >= 0, "Llama: sliding_window must not be negative");
  TORCH_CHECK(c.num_attention_heads % c.num_key_value_heads == 0,
              "Llama: num_attention_heads not divisible by num_key_value_heads");
  TORCH_CHECK(head_dim % 2 == 0, "Llama: rotary embeddings need an even head_dim");
  q_proj = register_module("q_proj", Projection(c.hidden_size, num_heads * head_dim));
  k_proj = register_module("k_proj", Projection(c.hidden_size, num_kv_heads * head_dim));
  v_proj = register_module("v_proj", Projection(c.hidden_size, num_kv_heads * head_dim));
  o_proj = register_module("o_proj", Projection(num_heads * head_dim, c.hidden_size));
  if (c.qk_norm) {
    q_norm = register_module("q_norm", LlamaRmsNorm(head_dim, c.rms_norm_eps));
    k_norm = register_module("k_norm", LlamaRmsNorm(head_dim, c.rms_norm_eps));
  }
}

namespace {

// The keys each query may see, [seq, past + seq] (true: attend), or an
// undefined tensor where plain causal attention (or none, for one query)
// gives the same: query i sits at position past + i and sees key k when
// k <= past + i and, with a sliding window w > 0, k > past + i - w.
torch::Tensor AttentionMask(int64_t past, int64_t seq, int64_t window, const torch::Device& device) {
  const bool windowed = window > 0 && past + seq > window;
  if (!windowed && (seq == 1 || past == 0)) return {};
  const auto options = torch::TensorOptions(device).dtype(torch::kLong);
  auto rows = torch::arange(past, past + seq, options).unsqueeze(1);
  auto cols = torch::arange(past + seq, options).unsqueeze(0);
  auto mask = cols <= rows;
  if (windowed) mask = mask & (cols > rows - window);
  return mask;
}

}  // namespace

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& hidden, const torch::Tensor& cos,
                                          const torch::Tensor& sin, LlamaLayerCache* cache, int64_t past) {
  const int64_t batch = hidden.size(0), seq = hidden.size(1);
  auto q = q_proj(hidden).view({batch, seq, num_heads, head_dim});
  auto k = k_proj(hidden).view({batch, seq, num_kv_heads, head_dim});
  if (q_norm) {
    q = q_norm(q);
    k = k_norm(k);
  }
  q = q.transpose(1, 2);
  k = k.transpose(1, 2);
  auto v = v_proj(hidden).view({batch, seq, num_kv_heads, head_dim}).transpose(1, 2);
  auto cos_h = cos.unsqueeze(1), sin_h = sin.unsqueeze(1);
  q = ApplyRope(q, cos_h, sin_h);
  k = ApplyRope(k, cos_h, sin_h);
  if (cache != nullptr) {
    cache->keys.slice(2, past, past + seq).copy_(k);
    cache->values.slice(2, past, past + seq).copy_(v);
    k = cache->keys.slice(2, 0, past + seq);
    v = cache->values.slice(2, 0, past + seq);
  }
  const int64_t groups = num_heads / num_kv_heads;
  k = RepeatKv(k, groups);
  v = RepeatKv(v, groups);
  const auto mask = AttentionMask(past, seq, sliding_window, q.device());
  torch::Tensor out;
  if (mask.defined()) {
    out = at::scaled_dot_product_attention(q, k, v, mask);
  } else {
    // One new query sees every cached position: no mask; a whole sequence
    // at once is plain causal attention.
    out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/seq > 1);
  }
  out = out.transpose(1, 2).reshape({batch, seq, num_heads * head_dim});
  return o_proj(out);
}

LlamaMlpImpl::LlamaMlpImpl(const LlamaConfig& c)
    : gate_proj(register_module("gate_proj", Projection(c.hidden_size, c.intermediate_size))),
      up_proj(register_module("up_proj", Projection(c.hidden_size, c.intermediate_size))),
      down_proj(register_module("down_proj", Projection(c.intermediate_size, c.hidden_size))) {}

torch::Tensor LlamaMlpImpl::forward(const torch::Tensor& x) {
  auto gate = torch::silu(gate_proj(x));
  return down_proj(gate * up_proj(x));
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaConfig& c)
    : self_attn(register_module("self_attn", LlamaAttention(c))),
      mlp(register_module("mlp", LlamaMlp(c))),
      input_layernorm(register_module("input_layernorm", LlamaRmsNorm(c.hidden_size, c.rms_norm_eps))),
      post_attention_layernorm(
          register_module("post_attention_layernorm", LlamaRmsNorm(c.hidden_size, c.rms_norm_eps))) {}

torch::Tensor LlamaDecoderLayerImpl::forward(torch::Tensor hidden, const torch::Tensor& cos, const torch::Tensor& sin,
                                             LlamaLayerCache* cache, int64_t past) {
  hidden = hidden + self_attn(input_layernorm(hidden), cos, sin, cache, past);
  return hidden + mlp(post_attention_layernorm(hidden));
}

LlamaModelImpl::LlamaModelImpl(const LlamaConfig& c)
    : embed_tokens(register_module("embed_tokens", torch::nn::Embedding(c.vocab_size, c.hidden_size))),
      layers(register_module("layers", torch::nn::ModuleList())),
      norm(register_module("norm", LlamaRmsNorm(c.hidden_size, c.rms_norm_eps))),
      config(c),
      inv_freq(LlamaInverseFrequencies(c)) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(LlamaDecoderLayer(c));
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& input_ids, LlamaKvCache* cache) {
  const int64_t seq = input_ids.size(-1);
  const int64_t past = cache != nullptr ? cache->length : 0;
  TORCH_CHECK(cache == nullptr || past + seq <= cache->capacity(), "Llama: ", past + seq,
              " positions exceed the cache's capacity ", cache->capacity());
  TORCH_CHECK(past + seq <= config.max_position_embeddings, "Llama: sequence exceeds max_position_embeddings");
  auto hidden = embed_tokens(input_ids);
  if (inv_freq.device() != hidden.device()) inv_freq = inv_freq.to(hidden.device());
  // Angles position * frequency in fp32, each frequency twice (the halves
  // RotateHalf pairs), then cos and sin in the activations' dtype.
  auto positions = torch::arange(past, past + seq, torch::TensorOptions(hidden.device()).dtype(torch::kLong));
  auto freqs = positions.to(torch::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);
  auto angles = torch::cat({freqs, freqs}, -1).unsqueeze(0);
  auto cos = angles.cos().to(hidden.scalar_type()), sin = angles.sin().to(hidden.scalar_type());
  for (size_t i = 0; i < layers->size(); ++i) {
    LlamaLayerCache* layer_cache = cache != nullptr ? &cache->layers.at(i) : nullptr;
    hidden = layers[i]->as<LlamaDecoderLayerImpl>()->forward(hidden, cos, sin, layer_cache, past);
  }
  if (cache != nullptr) cache->length += seq;
  return norm(hidden);
}

LlamaForCausalLMImpl::LlamaForCausalLMImpl(const LlamaConfig& c)
    : model(register_module("model", LlamaModel(c))), config(c) {
  if (c.tie_word_embeddings) {
    lm_head = register_module("lm_head", TiedWeights(model->embed_tokens->weight));
  } else {
    lm_head = register_module("lm_head", Projection(c.hidden_size, c.vocab_size).ptr());
  }
  // transformers' _init_weights for Llama is the common one: N(0,
  // initializer_range) for Linear and Embedding weights; RMSNorm's weights
  // stay 1 and Llama has no biases or padding row.
  InitHfWeights(*this, c.initializer_range);
}

torch::Tensor LlamaForCausalLMImpl::Head(const torch::Tensor& hidden) {
  if (auto* tied = lm_head->as<TiedWeightsImpl>()) return tied->forward(hidden);
  return lm_head->as<torch::nn::LinearImpl>()->forward(hidden);
}

torch::Tensor LlamaForCausalLMImpl::forward(const torch::Tensor& input_ids) { return Head(model(input_ids, nullptr)); }

torch::Tensor LlamaForCausalLMImpl::forward(const torch::Tensor& input_ids, LlamaKvCache& cache) {
  return Head(model(input_ids, &cache));
}

LlamaKvCache LlamaForCausalLMImpl::NewCache(int64_t batch, int64_t capacity) const {
  TORCH_CHECK(batch > 0 && capacity > 0, "Llama: a cache needs a positive batch and capacity");
  const auto options = model->embed_tokens->weight.options().requires_grad(false);
  LlamaKvCache cache;
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    cache.layers.push_back({torch::zeros({batch, config.num_key_value_heads, capacity, config.head_dim()}, options),
                            torch::zeros({batch, config.num_key_value_heads, capacity, config.head_dim()}, options)});
  }
  return cache;
}

torch::Tensor LlamaForCausalLMImpl::Prefill(const torch::Tensor& prompt_ids, LlamaKvCache& cache) {
  // The whole prompt at once; only its last position's logits are needed.
  return Head(model(prompt_ids, &cache).slice(1, -1)).argmax(-1);
}

torch::Tensor LlamaForCausalLMImpl::Decode(const torch::Tensor& token, LlamaKvCache& cache) {
  return Head(model(token, &cache)).argmax(-1);
}

torch::Tensor LlamaForCausalLMImpl::Generate(const torch::Tensor& prompt_ids, int64_t max_new_tokens) {
  TORCH_CHECK(prompt_ids.dim() == 2 && prompt_ids.size(1) > 0, "Llama: the prompt must be [batch, length > 0]");
  TORCH_CHECK(max_new_tokens > 0, "Llama: max_new_tokens must be positive");
  torch::NoGradGuard no_grad;
  auto cache = NewCache(prompt_ids.size(0), prompt_ids.size(1) + max_new_tokens);
  std::vector<torch::Tensor> tokens;
  tokens.reserve(max_new_tokens);
  tokens.push_back(Prefill(prompt_ids, cache));
  for (int64_t step = 1; step < max_new_tokens; ++step) tokens.push_back(Decode(tokens.back(), cache));
  return torch::cat(tokens, 1);
}

int64_t LlamaKvCacheBytes(const LlamaKvCache& cache) {
  int64_t bytes = 0;
  for (const auto& layer : cache.layers) bytes += layer.keys.nbytes() + layer.values.nbytes();
  return bytes;
}

torch::Tensor LlamaGenerator::Prefill(const torch::Tensor& prompt_ids, int64_t max_new_tokens) {
  TORCH_CHECK(prompt_ids.dim() == 2 && prompt_ids.size(1) > 0, "Llama: the prompt must be [batch, length > 0]");
  TORCH_CHECK(max_new_tokens > 0, "Llama: max_new_tokens must be positive");
  cache_ = LlamaKvCache{};  // the previous generation's memory goes first
  cache_ = net_->NewCache(prompt_ids.size(0), prompt_ids.size(1) + max_new_tokens);
  return net_->Prefill(prompt_ids, cache_);
}

torch::Tensor LlamaGenerator::Decode(const torch::Tensor& token) { return net_->Decode(token, cache_); }

std::optional<int64_t> LlamaGenerator::KvCacheBytes() const {
  if (cache_.layers.empty()) return std::nullopt;
  return LlamaKvCacheBytes(cache_);
}

namespace {

// BuildFromIds, with the generator over the same network.
std::function<LanguageModel()> BuildLlama(const LlamaConfig& config) {
  return [config] {
    LanguageModel lm = BuildFromIds<LlamaForCausalLM>(config)();
    lm.generator =
        std::make_shared<LlamaGenerator>(LlamaForCausalLM(std::dynamic_pointer_cast<LlamaForCausalLMImpl>(lm.net)));
    return lm;
  };
}

// A llama registration: batch 1 for train and eval, causal LM, `config` in
// full runs and `smoke` in smoke runs.
ModelInfo LlamaEntry(std::string id, std::string reference, const LlamaConfig& config, const LlamaConfig& smoke,
                     int64_t train_seq_len, int64_t eval_seq_len) {
  return LanguageModelInfo({
      .id = std::move(id),
      .paper_name = "(not in the paper's list)",
      .reference = std::move(reference),
      .default_batch = {1, 1},
      .objective = LmObjective::kCausalLm,
      .vocab_size = config.vocab_size,
      .train_seq_len = train_seq_len,
      .eval_seq_len = eval_seq_len,
      .build = BuildLlama(config),
      .smoke_vocab_size = smoke.vocab_size,
      .build_smoke = BuildLlama(smoke),
  });
}

}  // namespace

ModelInfo LlamaInfo(const LlamaConfig& config, const LlamaConfig& smoke) {
  // Not a TorchBench model; batch 1 for train and eval as its other large
  // causal LMs (hf_gpt2_large's eval), 512 and 1024 tokens as they do.
  return LlamaEntry("llama_3_2_1b",
                    "transformers.LlamaForCausalLM(meta-llama/Llama-3.2-1B config), random weights; smoke runs: "
                    "2 layers, hidden 256, 8 heads, 2 KV heads, intermediate 512, vocab 1024",
                    config, smoke, 512, 1024);
}

ModelInfo Llama2_7B16hInfo() {
  // llama_v2_7b_16h/__init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1;
  // TorchBench's Hugging Face table: 128 tokens in train, 512 in eval.
  return LlamaEntry("llama_v2_7b_16h",
                    "transformers.LlamaForCausalLM(LlamaConfig(num_hidden_layers=16)) (Llama-2-7B's widths, 16 of "
                    "its 32 layers), random weights, as TorchBench llama_v2_7b_16h (added since the paper); smoke "
                    "runs: 2 layers, hidden 256, 8 heads, 8 KV heads, intermediate 512, vocab 1024",
                    Llama2_7B16hConfig(), Llama2SmokeConfig(), 128, 512);
}

namespace {

// A TorchBench canary whose train test raises NotImplementedError: eval only.
ModelInfo EvalOnly(ModelInfo info, const std::string& why) {
  info.supports_train = false;
  info.unsupported_reason = why;
  return info;
}

}  // namespace

void AddLlamaModels(std::vector<ModelInfo>& out) {
  out.push_back(LlamaInfo());
  out.push_back(Llama2_7B16hInfo());
  const auto qwen = Qwen3_0_6B();
  // The compiler suite's model, not TorchBench's: llama_3_2_1b's lengths.
  out.push_back(LlamaEntry("qwen3_0_6b",
                           "transformers.Qwen3ForCausalLM(Qwen/Qwen3-0.6B config), random weights, as PyTorch's "
                           "compiler benchmarks run it; smoke runs: 2 layers, hidden 256, 8 heads, 4 KV heads, "
                           "head_dim 64, q/k norms, intermediate 512, vocab 1024",
                           qwen.config, qwen.smoke, 512, 1024));
  // The canaries: DEFAULT_EVAL_BSIZE = 1 (and DEFAULT_TRAIN_BSIZE = 1 where
  // set); TorchBench's Hugging Face table: 128 tokens for mistral, 512 for
  // the others.
  const auto mistral = Mistral7BInstruct();
  out.push_back(EvalOnly(
      LlamaEntry("mistral_7b_instruct",
                 "transformers.MistralForCausalLM(mistralai/Mistral-7B-Instruct-v0.1 config), random weights, as "
                 "TorchBench's canary mistral_7b_instruct; smoke runs: 2 layers, hidden 256, 8 heads, 2 KV heads, "
                 "sliding window 8, intermediate 512, vocab 1024",
                 mistral.config, mistral.smoke, 128, 128),
      "TorchBench's mistral_7b_instruct has no train test (its train() returns NotImplementedError)"));
  const auto llama31 = Llama31_8B();
  out.push_back(
      EvalOnly(LlamaEntry("llama_v31_8b",
                          "transformers.LlamaForCausalLM(meta-llama/Meta-Llama-3.1-8B config), random weights, as "
                          "TorchBench's canary llama_v31_8b; smoke runs: 2 layers, hidden 256, 8 heads, 2 KV heads, "
                          "intermediate 512, vocab 1024",
                          llama31.config, llama31.smoke, 512, 512),
               "TorchBench's llama_v31_8b has no train test (its train() returns NotImplementedError: \"FSDP should "
               "implement a training loop\")"));
  const auto code = CodeLlama7B();
  out.push_back(LlamaEntry("codellama",
                           "transformers.LlamaForCausalLM(codellama/CodeLlama-7b-hf config), random weights, as "
                           "TorchBench's canary codellama; smoke runs: 2 layers, hidden 256, 8 heads, 8 KV heads, "
                           "intermediate 512, vocab 1024",
                           code.config, code.smoke, 512, 512));
  for (const auto* id : {"llama_v2_7b", "llama_v2_13b"}) {
    const auto v = LlamaVariantOf(id);
    const std::string size = std::string(id) == "llama_v2_7b" ? "7b" : "13b";
    out.push_back(EvalOnly(LlamaEntry(id,
                                      "transformers.LlamaForCausalLM(meta-llama/Llama-2-" + size +
                                          "-hf config), random weights, as "
                                          "TorchBench's canary " +
                                          id +
                                          "; smoke runs: 2 layers, hidden 256, 8 heads, 8 KV heads, "
                                          "intermediate 512, vocab 1024",
                                      v.config, v.smoke, 512, 512),
                           std::string("TorchBench's ") + id +
                               " has no train test (its train() returns NotImplementedError: \"FSDP "
                               "should implement a training loop\")"));
  }
}

}  // namespace torchgauge::models
