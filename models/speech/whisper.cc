#include "models/speech/whisper.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/generator.h"
#include "models/shared/hf_harness.h"

namespace torchgauge::models {

WhisperConfig WhisperDefaultConfig() { return WhisperConfig{}; }

WhisperConfig DistilWhisperMediumEnConfig() {
  WhisperConfig c;
  c.vocab_size = 51864;  // English-only tokenizer
  c.num_mel_bins = 80;
  c.d_model = 1024;
  c.encoder_layers = 24;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 16;
  c.decoder_attention_heads = 16;
  c.encoder_ffn_dim = 4096;
  c.decoder_ffn_dim = 4096;
  c.max_source_positions = 1500;
  c.max_target_positions = 448;
  c.pad_token_id = 50256;
  c.bos_token_id = 50257;
  c.eos_token_id = 50256;
  c.decoder_start_token_id = 50257;
  c.classifier_proj_size = 256;
  c.num_labels = 2;
  return c;
}

WhisperConfig WhisperTinyConfig() {
  WhisperConfig c;  // the defaults are whisper-tiny's widths
  c.pad_token_id = 50257;
  c.bos_token_id = 50257;
  c.eos_token_id = 50257;
  c.decoder_start_token_id = 50258;
  return c;
}

WhisperConfig WhisperSmokeConfig() {
  WhisperConfig c;
  c.vocab_size = 1024;
  c.d_model = 64;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 4;
  c.decoder_attention_heads = 4;
  c.encoder_ffn_dim = 256;
  c.decoder_ffn_dim = 256;
  c.max_source_positions = 100;
  // 128 (the parity reference's too): room for the generation measurement's
  // default prompt (64 tokens) and 16 decode steps.
  c.max_target_positions = 128;
  c.pad_token_id = 1000;
  c.bos_token_id = 1000;
  c.eos_token_id = 1000;
  c.decoder_start_token_id = 1001;
  c.classifier_proj_size = 64;
  return c;
}

WhisperConfig DistilWhisperSmokeConfig() {
  WhisperConfig c = WhisperSmokeConfig();
  c.d_model = 128;
  c.encoder_attention_heads = 8;
  c.decoder_attention_heads = 8;
  c.encoder_ffn_dim = 512;
  c.decoder_ffn_dim = 512;
  return c;
}

namespace {

// nn.LayerNorm's default, which every Whisper norm keeps.
constexpr double kWhisperLayerNormEps = 1e-5;

// Whisper's sinusoids(length, channels): sin then cos halves, timescales
// from 1 to 10000.
torch::Tensor WhisperSinusoids(int64_t length, int64_t channels) {
  TORCH_CHECK(channels % 2 == 0, "whisper: sinusoidal embeddings need an even width, got ", channels);
  const double log_timescale_increment = std::log(10000.0) / static_cast<double>(channels / 2 - 1);
  auto inv_timescales = torch::exp(-log_timescale_increment * torch::arange(channels / 2));
  auto scaled_time = torch::arange(length).view({-1, 1}) * inv_timescales.view({1, -1});
  return torch::cat({scaled_time.sin(), scaled_time.cos()}, 1);
}

torch::Tensor WhisperDropout(const torch::Tensor& x, double p, bool train) {
  return p > 0 ? torch::dropout(x, p, train) : x;
}

// WhisperAttention with eager_attention_forward.
struct WhisperAttentionImpl : torch::nn::Module {
  WhisperAttentionImpl(int64_t embed_dim, int64_t num_heads_arg, double dropout)
      : k_proj(
            register_module("k_proj", torch::nn::Linear(torch::nn::LinearOptions(embed_dim, embed_dim).bias(false)))),
        v_proj(register_module("v_proj", torch::nn::Linear(embed_dim, embed_dim))),
        q_proj(register_module("q_proj", torch::nn::Linear(embed_dim, embed_dim))),
        out_proj(register_module("out_proj", torch::nn::Linear(embed_dim, embed_dim))),
        num_heads(num_heads_arg),
        head_dim(embed_dim / num_heads_arg),
        dropout_p(dropout) {
    TORCH_CHECK(head_dim * num_heads_arg == embed_dim, "whisper: d_model ", embed_dim, " not divisible by ",
                num_heads_arg, " heads");
  }

  // key_value: the encoder output for cross-attention, undefined for
  // self-attention. mask: an additive [1, 1, q, k] mask or undefined.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& key_value = {},
                        const torch::Tensor& mask = {}) {
    auto q = Query(hidden);
    auto [k, v] = KeysValues(key_value.defined() ? key_value : hidden);
    return Attend(q, k, v, mask);
  }

  // The queries of `hidden` [bsz, heads, len, head_dim]. As the reference:
  // scaled before the product; the attention itself then scales by 1.
  torch::Tensor Query(const torch::Tensor& hidden) {
    auto q = q_proj(hidden) * std::pow(static_cast<double>(head_dim), -0.5);
    return q.view({hidden.size(0), hidden.size(1), -1, head_dim}).transpose(1, 2).contiguous();
  }
  // The keys and values of `current` [bsz, heads, len, head_dim]: what a
  // generation's cache keeps.
  std::pair<torch::Tensor, torch::Tensor> KeysValues(const torch::Tensor& current) {
    const auto bsz = current.size(0);
    auto k = k_proj(current).view({bsz, -1, num_heads, head_dim}).transpose(1, 2).contiguous();
    auto v = v_proj(current).view({bsz, -1, num_heads, head_dim}).transpose(1, 2).contiguous();
    return {k, v};
  }
  torch::Tensor Attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& mask) {
    const auto bsz = q.size(0), tgt_len = q.size(2);
    auto weights = torch::matmul(q, k.transpose(2, 3));
    if (mask.defined()) weights = weights + mask;
    weights = torch::softmax(weights, -1);
    weights = WhisperDropout(weights, dropout_p, is_training());
    auto out = torch::matmul(weights, v).transpose(1, 2).contiguous();
    return out_proj(out.reshape({bsz, tgt_len, -1}).contiguous());
  }

  torch::nn::Linear k_proj, v_proj, q_proj, out_proj;
  int64_t num_heads, head_dim;
  double dropout_p;
};
TORCH_MODULE(WhisperAttention);

// The feed-forward half of a layer: final_layer_norm, fc1, GELU, fc2.
torch::Tensor WhisperFeedForward(torch::nn::LayerNorm& norm, torch::nn::Linear& fc1, torch::nn::Linear& fc2,
                                 const torch::Tensor& hidden, const WhisperConfig& c, bool train) {
  auto h = torch::gelu(fc1(norm(hidden)));
  h = WhisperDropout(h, c.activation_dropout, train);
  h = WhisperDropout(fc2(h), c.dropout, train);
  return hidden + h;
}

struct WhisperEncoderLayerImpl : torch::nn::Module {
  explicit WhisperEncoderLayerImpl(const WhisperConfig& c)
      : self_attn(
            register_module("self_attn", WhisperAttention(c.d_model, c.encoder_attention_heads, c.attention_dropout))),
        self_attn_layer_norm(register_module("self_attn_layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        fc1(register_module("fc1", torch::nn::Linear(c.d_model, c.encoder_ffn_dim))),
        fc2(register_module("fc2", torch::nn::Linear(c.encoder_ffn_dim, c.d_model))),
        final_layer_norm(register_module("final_layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        config(c) {}

  torch::Tensor forward(const torch::Tensor& input) {
    const bool train = is_training();
    auto attn = WhisperDropout(self_attn(self_attn_layer_norm(input)), config.dropout, train);
    auto hidden = WhisperFeedForward(final_layer_norm, fc1, fc2, input + attn, config, train);
    if (hidden.scalar_type() == torch::kHalf) {
      // As the reference: fp16 activations are clamped below the maximum.
      const double clamp_value = static_cast<double>(std::numeric_limits<c10::Half>::max()) - 1000;
      hidden = torch::clamp(hidden, -clamp_value, clamp_value);
    }
    return hidden;
  }

  WhisperAttention self_attn;
  torch::nn::LayerNorm self_attn_layer_norm;
  torch::nn::Linear fc1, fc2;
  torch::nn::LayerNorm final_layer_norm;
  WhisperConfig config;
};
TORCH_MODULE(WhisperEncoderLayer);

// One decoder layer's share of a generation's key-value cache: its
// self-attention's keys and values so far, and its cross-attention's over
// the encoder output (computed once, at the prefill).
struct WhisperLayerCache {
  torch::Tensor self_k, self_v, cross_k, cross_v;
};

struct WhisperDecoderLayerImpl : torch::nn::Module {
  explicit WhisperDecoderLayerImpl(const WhisperConfig& c)
      : self_attn(
            register_module("self_attn", WhisperAttention(c.d_model, c.decoder_attention_heads, c.attention_dropout))),
        self_attn_layer_norm(register_module("self_attn_layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        encoder_attn(register_module("encoder_attn",
                                     WhisperAttention(c.d_model, c.decoder_attention_heads, c.attention_dropout))),
        encoder_attn_layer_norm(
            register_module("encoder_attn_layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        fc1(register_module("fc1", torch::nn::Linear(c.d_model, c.decoder_ffn_dim))),
        fc2(register_module("fc2", torch::nn::Linear(c.decoder_ffn_dim, c.d_model))),
        final_layer_norm(register_module("final_layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        config(c) {}

  torch::Tensor forward(const torch::Tensor& input, const torch::Tensor& encoder_hidden,
                        const torch::Tensor& causal_mask) {
    const bool train = is_training();
    auto attn = self_attn->forward(self_attn_layer_norm(input), /*key_value=*/torch::Tensor(), causal_mask);
    auto hidden = input + WhisperDropout(attn, config.dropout, train);
    auto cross = encoder_attn(encoder_attn_layer_norm(hidden), encoder_hidden);
    hidden = hidden + WhisperDropout(cross, config.dropout, train);
    return WhisperFeedForward(final_layer_norm, fc1, fc2, hidden, config, train);
  }

  // forward for generation (eval, no dropout) over the cache: the new
  // positions' keys and values join it, the encoder's come from it.
  torch::Tensor Step(const torch::Tensor& input, WhisperLayerCache& cache, const torch::Tensor& causal_mask) {
    auto normed = self_attn_layer_norm(input);
    auto q = self_attn->Query(normed);
    auto [k, v] = self_attn->KeysValues(normed);
    cache.self_k = cache.self_k.defined() ? torch::cat({cache.self_k, k}, 2) : k;
    cache.self_v = cache.self_v.defined() ? torch::cat({cache.self_v, v}, 2) : v;
    auto hidden = input + self_attn->Attend(q, cache.self_k, cache.self_v, causal_mask);
    auto cross_q = encoder_attn->Query(encoder_attn_layer_norm(hidden));
    hidden = hidden + encoder_attn->Attend(cross_q, cache.cross_k, cache.cross_v, torch::Tensor());
    return WhisperFeedForward(final_layer_norm, fc1, fc2, hidden, config, /*train=*/false);
  }

  WhisperAttention self_attn;
  torch::nn::LayerNorm self_attn_layer_norm;
  WhisperAttention encoder_attn;
  torch::nn::LayerNorm encoder_attn_layer_norm;
  torch::nn::Linear fc1, fc2;
  torch::nn::LayerNorm final_layer_norm;
  WhisperConfig config;
};
TORCH_MODULE(WhisperDecoderLayer);

// LayerDrop's draw: the reference draws one torch.rand([]) per layer in
// training even at probability 0, on the CPU generator.
bool WhisperLayerDropped(bool train, double layerdrop) {
  if (!train) return false;
  return torch::rand({}).item<double>() < layerdrop;
}

struct WhisperEncoderImpl : torch::nn::Module {
  explicit WhisperEncoderImpl(const WhisperConfig& c)
      : conv1(register_module("conv1",
                              torch::nn::Conv1d(torch::nn::Conv1dOptions(c.num_mel_bins, c.d_model, 3).padding(1)))),
        conv2(register_module(
            "conv2", torch::nn::Conv1d(torch::nn::Conv1dOptions(c.d_model, c.d_model, 3).stride(2).padding(1)))),
        embed_positions(register_module("embed_positions", torch::nn::Embedding(c.max_source_positions, c.d_model))),
        layers(register_module("layers", torch::nn::ModuleList())),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        config(c) {
    embed_positions->weight.requires_grad_(false);
    for (int64_t i = 0; i < c.encoder_layers; ++i) layers->push_back(WhisperEncoderLayer(c));
  }

  torch::Tensor forward(const torch::Tensor& input_features) {
    const int64_t expected = config.max_source_positions * 2;
    TORCH_CHECK(input_features.size(-1) == expected, "whisper: the encoder expects ", expected, " mel frames, got ",
                input_features.size(-1));
    auto embeds = torch::gelu(conv1(input_features));
    embeds = torch::gelu(conv2(embeds)).permute({0, 2, 1});
    auto positions = torch::arange(config.max_source_positions, input_features.options().dtype(torch::kLong));
    auto hidden = WhisperDropout(embeds + embed_positions(positions), config.dropout, is_training());
    for (const auto& layer : *layers) {
      if (WhisperLayerDropped(is_training(), config.encoder_layerdrop)) continue;
      hidden = layer->as<WhisperEncoderLayerImpl>()->forward(hidden);
    }
    return layer_norm(hidden);
  }

  torch::nn::Conv1d conv1, conv2;
  torch::nn::Embedding embed_positions;
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm;
  WhisperConfig config;
};
TORCH_MODULE(WhisperEncoder);

struct WhisperDecoderImpl : torch::nn::Module {
  explicit WhisperDecoderImpl(const WhisperConfig& c)
      : embed_tokens(register_module(
            "embed_tokens",
            torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.d_model).padding_idx(c.pad_token_id)))),
        embed_positions(register_module("embed_positions", torch::nn::Embedding(c.max_target_positions, c.d_model))),
        layers(register_module("layers", torch::nn::ModuleList())),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.d_model, kWhisperLayerNormEps))),
        config(c) {
    for (int64_t i = 0; i < c.decoder_layers; ++i) layers->push_back(WhisperDecoderLayer(c));
  }

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& encoder_hidden) {
    auto hidden = WhisperDropout(Embed(input_ids, 0), config.dropout, is_training());
    auto mask = CausalMask(input_ids.size(1), 0, hidden);
    for (const auto& layer : *layers) {
      if (WhisperLayerDropped(is_training(), config.decoder_layerdrop)) continue;
      hidden = layer->as<WhisperDecoderLayerImpl>()->forward(hidden, encoder_hidden, mask);
    }
    return layer_norm(hidden);
  }

  // forward for generation: `input_ids` [batch, n] at positions past ..
  // past + n - 1 over `caches` (one per layer, its cross-attention's keys
  // and values set), which the new positions join. The mask hides each new
  // position's future among the new ones; a single position sees all.
  torch::Tensor Step(const torch::Tensor& input_ids, int64_t past, std::vector<WhisperLayerCache>& caches) {
    auto hidden = Embed(input_ids, past);
    const int64_t n = input_ids.size(1);
    const torch::Tensor mask = n > 1 ? CausalMask(n, past, hidden) : torch::Tensor();
    for (size_t i = 0; i < layers->size(); ++i) {
      hidden = layers[i]->as<WhisperDecoderLayerImpl>()->Step(hidden, caches[i], mask);
    }
    return layer_norm(hidden);
  }

  // The token embeddings of `input_ids` [batch, n] at positions past ..
  // past + n - 1, plus WhisperPositionalEmbedding's: weight[position_ids],
  // the positions repeated over the batch.
  torch::Tensor Embed(const torch::Tensor& input_ids, int64_t past) {
    const auto bsz = input_ids.size(0), n = input_ids.size(1);
    TORCH_CHECK(past + n <= config.max_target_positions, "whisper: ", past + n, " decoder positions exceed ",
                config.max_target_positions);
    auto inputs_embeds = embed_tokens(input_ids);
    auto position_ids = torch::arange(past, past + n, input_ids.options()).unsqueeze(0).repeat({bsz, 1});
    return inputs_embeds + embed_positions->weight.index({position_ids});
  }
  // transformers' eager causal mask [1, 1, n, past + n] for n new positions
  // after `past`: 0 where visible, the dtype's minimum (torch.finfo.min)
  // where a position would see its future.
  static torch::Tensor CausalMask(int64_t n, int64_t past, const torch::Tensor& like) {
    auto future = torch::ones({n, past + n}, like.options().dtype(torch::kBool)).triu(past + 1);
    return torch::zeros({1, 1, n, past + n}, like.options())
        .masked_fill(future.view({1, 1, n, past + n}), FinfoMin(like.scalar_type()));
  }

  torch::nn::Embedding embed_tokens, embed_positions;
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm;
  WhisperConfig config;
};
TORCH_MODULE(WhisperDecoder);

// WhisperPreTrainedModel._init_weights: N(0, init_std) for every Linear,
// Conv1d and Embedding weight, zero biases and padding rows, LayerNorm 1 and
// 0, then the encoder's sinusoidal position table.
void WhisperInitWeights(torch::nn::Module& model, double stddev) {
  torch::NoGradGuard no_grad;
  for (auto& m : model.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<torch::nn::Conv1dImpl>()) {
      conv->weight.normal_(0.0, stddev);
      if (conv->bias.defined()) conv->bias.zero_();
    }
  }
  InitHfWeights(model, stddev);
  for (auto& m : model.modules(/*include_self=*/false)) {
    if (auto* encoder = m->as<WhisperEncoderImpl>()) {
      auto& table = encoder->embed_positions->weight;
      table.copy_(WhisperSinusoids(table.size(0), table.size(1)));
    }
  }
}

struct WhisperForAudioClassificationImpl : torch::nn::Module {
  explicit WhisperForAudioClassificationImpl(const WhisperConfig& c)
      : encoder(register_module("encoder", WhisperEncoder(c))),
        projector(register_module("projector", torch::nn::Linear(c.d_model, c.classifier_proj_size))),
        classifier(register_module("classifier", torch::nn::Linear(c.classifier_proj_size, c.num_labels))) {
    WhisperInitWeights(*this, c.init_std);
  }

  // The logits [batch, num_labels]: the projected encoder states averaged
  // over time, classified.
  torch::Tensor forward(const torch::Tensor& input_features) {
    auto hidden = projector(encoder(input_features));
    return classifier(hidden.mean(1));
  }

  WhisperEncoder encoder;
  torch::nn::Linear projector, classifier;
};
TORCH_MODULE(WhisperForAudioClassification);

struct WhisperModelImpl : torch::nn::Module {
  explicit WhisperModelImpl(const WhisperConfig& c)
      : encoder(register_module("encoder", WhisperEncoder(c))),
        decoder(register_module("decoder", WhisperDecoder(c))) {}
  torch::Tensor forward(const torch::Tensor& input_features, const torch::Tensor& decoder_input_ids) {
    return decoder(decoder_input_ids, encoder(input_features));
  }
  WhisperEncoder encoder;
  WhisperDecoder decoder;
};
TORCH_MODULE(WhisperModel);

struct WhisperForConditionalGenerationImpl : torch::nn::Module {
  explicit WhisperForConditionalGenerationImpl(const WhisperConfig& c)
      : model(register_module("model", WhisperModel(c))),
        proj_out(register_module("proj_out", TiedWeights(model->decoder->embed_tokens->weight))) {
    WhisperInitWeights(*this, c.init_std);
  }
  // The logits [batch, target, vocab].
  torch::Tensor forward(const torch::Tensor& input_features, const torch::Tensor& decoder_input_ids) {
    return proj_out(model(input_features, decoder_input_ids));
  }
  WhisperModel model;
  TiedWeights proj_out;
};
TORCH_MODULE(WhisperForConditionalGeneration);

// Greedy decoding over the key-value cache, as transformers' generate lays
// it out (the encoder once and the prompt at the prefill, then one position
// per step; the cross-attention's keys and values computed once), without
// its logits processors: what the collector's generation measurement times
// (TTFT includes encoding the audio). The audio is the workload's
// input_features (read from `inputs` at each prefill, so that a parity test's
// replaced inputs count), one clip per prompt row.
class WhisperGenerator : public Generator {
 public:
  WhisperGenerator(WhisperForConditionalGeneration net, const std::map<std::string, torch::Tensor>& inputs)
      : net_(std::move(net)), inputs_(inputs) {}

  torch::Tensor Prefill(const torch::Tensor& prompt_ids, int64_t max_new_tokens) override {
    auto& decoder = net_->model->decoder;
    TORCH_CHECK(prompt_ids.size(1) + max_new_tokens <= decoder->config.max_target_positions, "whisper: a prompt of ",
                prompt_ids.size(1), " tokens and ", max_new_tokens, " new ones exceed the decoder's ",
                decoder->config.max_target_positions, " positions");
    const auto& features = inputs_.at("input_features");
    TORCH_CHECK(prompt_ids.size(0) == features.size(0), "whisper: a prompt batch of ", prompt_ids.size(0), " for ",
                features.size(0), " audio clips");
    auto encoder_hidden = net_->model->encoder(features);
    caches_.assign(decoder->layers->size(), {});
    for (size_t i = 0; i < caches_.size(); ++i) {
      auto* layer = decoder->layers[i]->as<WhisperDecoderLayerImpl>();
      std::tie(caches_[i].cross_k, caches_[i].cross_v) = layer->encoder_attn->KeysValues(encoder_hidden);
    }
    past_ = 0;
    return Next(prompt_ids);
  }
  torch::Tensor Decode(const torch::Tensor& token) override { return Next(token); }
  std::optional<int64_t> KvCacheBytes() const override {
    if (caches_.empty()) return std::nullopt;
    int64_t bytes = 0;
    for (const auto& c : caches_) {
      for (const auto* t : {&c.self_k, &c.self_v, &c.cross_k, &c.cross_v}) bytes += static_cast<int64_t>(t->nbytes());
    }
    return bytes;
  }
  int64_t vocab_size() const override { return net_->model->decoder->config.vocab_size; }

 private:
  torch::Tensor Next(const torch::Tensor& ids) {
    auto hidden = net_->model->decoder->Step(ids, past_, caches_);
    past_ += ids.size(1);
    return net_->proj_out(hidden.slice(1, -1)).argmax(-1);
  }

  WhisperForConditionalGeneration net_;
  const std::map<std::string, torch::Tensor>& inputs_;
  std::vector<WhisperLayerCache> caches_;
  int64_t past_ = 0;
};

// What a registration builds: its configuration (full and reduced), its head
// and, for the conditional generation head, the decoder's sequence length.
struct WhisperSpec {
  WhisperConfig full, smoke;
  WhisperHead head = WhisperHead::kAudioClassification;
  int64_t decoder_len = 0, smoke_decoder_len = 0;
};

// TorchBench's input: random log-mel features [batch, num_mel_bins,
// 2 * max_source_positions] (hf_Whisper's torch.randn(batch, 80, 3000)).
// Train adds labels: class ids for the classification head, token ids for
// the generation head (whose decoder reads them shifted right). Eval of the
// generation head feeds random decoder ids of the same length.
class WhisperWorkload : public LossWorkload, public GenerativeWorkload {
 public:
  WhisperWorkload(const WorkloadOptions& opt, const WhisperSpec& spec)
      : config_(opt.smoke ? spec.smoke : spec.full), head_(spec.head), net_(MakeWhisper(config_, spec.head)) {
    TORCH_CHECK(opt.batch_size > 0, "whisper: batch size must be positive");
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const int64_t n = opt.batch_size;
    auto f = torch::TensorOptions(opt.device);
    auto ids = f.dtype(torch::kLong);
    inputs_["input_features"] = torch::randn({n, config_.num_mel_bins, 2 * config_.max_source_positions}, f);
    const int64_t target = opt.smoke ? spec.smoke_decoder_len : spec.decoder_len;
    const bool train = opt.mode == Mode::kTrain;
    if (head_ == WhisperHead::kAudioClassification) {
      if (train) inputs_["labels"] = torch::randint(0, config_.num_labels, {n}, ids);
    } else {
      inputs_[train ? "labels" : "decoder_input_ids"] = torch::randint(0, config_.vocab_size, {n, target}, ids);
    }
    // TorchBench's Hugging Face optimizer: Adam(lr 1e-3).
    if (train) optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(1e-3));
    samples_per_step_ = n;
    if (head_ == WhisperHead::kConditionalGeneration) {
      generator_ = std::make_unique<WhisperGenerator>(
          WhisperForConditionalGeneration(std::dynamic_pointer_cast<WhisperForConditionalGenerationImpl>(net_)),
          inputs_);
    }
  }

  // The generation head's greedy decoding (WhisperGenerator); the
  // classification heads generate nothing.
  Generator* generator() override { return generator_.get(); }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    const auto& features = inputs_.at("input_features");
    if (head_ == WhisperHead::kAudioClassification) {
      return net_->as<WhisperForAudioClassificationImpl>()->forward(features);
    }
    // As transformers does when given labels; a parity test may replace the
    // labels, so the decoder inputs are derived on every call.
    auto it = inputs_.find("labels");
    auto decoder_ids = it == inputs_.end()
                           ? inputs_.at("decoder_input_ids")
                           : ShiftTokensRight(it->second, config_.pad_token_id, config_.decoder_start_token_id);
    return net_->as<WhisperForConditionalGenerationImpl>()->forward(features, decoder_ids);
  }

 private:
  // transformers' loss for the head: cross-entropy of the logits against
  // the labels, averaged.
  torch::Tensor Loss(const torch::Tensor& logits) override {
    namespace F = torch::nn::functional;
    const auto& labels = inputs_.at("labels");
    return F::cross_entropy(logits.view({-1, logits.size(-1)}), labels.reshape(-1));
  }

  WhisperConfig config_;
  WhisperHead head_;
  std::shared_ptr<torch::nn::Module> net_;
  std::unique_ptr<WhisperGenerator> generator_;
};

ModelInfo WhisperInfo(const std::string& id, const std::string& paper_name, const std::string& reference,
                      const WhisperSpec& spec) {
  ModelInfo info;
  info.id = id;
  info.paper_name = paper_name;
  info.domain = Domain::kSpeech;
  info.task = "speech recognition";
  info.reference = reference;
  info.smoke_batch = {2, 2};
  info.create = [spec](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<WhisperWorkload>(opt, spec);
  };
  return info;
}

constexpr const char* kWhisperSmokeText =
    "; smoke runs: 2 encoder layers, d_model 64, 4 heads, ffn 256, 80 mel bins x 200 frames "
    "(max_source_positions 100), projector 64";
constexpr const char* kWhisperTinySmokeText =
    "; smoke runs: 2 encoder and 2 decoder layers, d_model 64, 4 heads, ffn 256, 80 mel bins x 200 frames "
    "(max_source_positions 100), vocab 1024, 16 decoder tokens";

}  // namespace

std::shared_ptr<torch::nn::Module> MakeWhisper(const WhisperConfig& config, WhisperHead head) {
  if (head == WhisperHead::kAudioClassification) return WhisperForAudioClassification(config).ptr();
  return WhisperForConditionalGeneration(config).ptr();
}

// TorchBench implements eval only for hf_Whisper and hf_distil_whisper (both
// train()s raise NotImplementedError), so their train runs are recorded as
// unsupported with that reason. Their workloads still define the step its
// Hugging Face harness runs for other models (the classification head's
// cross-entropy against random class ids, then Adam), which the parity test
// uses to check every gradient of the encoder against transformers'.
void AddWhisperModels(std::vector<ModelInfo>& out) {
  const WhisperConfig smoke = WhisperSmokeConfig();
  auto whisper = WhisperInfo("hf_whisper", "hf_Whisper",
                             std::string("transformers.WhisperForAudioClassification(WhisperConfig()) (TorchBench "
                                         "hf_Whisper: AutoModelForAudioClassification; whisper-tiny's widths), "
                                         "random weights, log-mel input [batch, 80, 3000]") +
                                 kWhisperSmokeText,
                             {.full = WhisperDefaultConfig(), .smoke = smoke});
  // torchbenchmark/models/hf_Whisper/__init__.py: DEFAULT_TRAIN_BSIZE = 8,
  // DEFAULT_EVAL_BSIZE = 8 (metadata.yaml: eval_batch_size 8 on the A100).
  whisper.default_batch = {8, 8};
  // metadata.yaml: not_implemented on cpu; the CPU suite runs one clip.
  whisper.cpu_batch = BatchSizes{1, 1};
  whisper.supports_train = false;
  whisper.unsupported_reason =
      "TorchBench's hf_Whisper has no train test (its train() raises NotImplementedError: \"Training is not "
      "implemented.\")";
  out.push_back(std::move(whisper));

  auto distil = WhisperInfo("hf_distil_whisper", "hf_distil_whisper",
                            std::string("transformers.WhisperForAudioClassification(distil-whisper/distil-medium.en "
                                        "config) (TorchBench hf_distil_whisper: AutoModelForAudioClassification), "
                                        "random weights, log-mel input [batch, 80, 3000]; smoke runs: 2 encoder "
                                        "layers, d_model 128, 8 heads, ffn 512, 80 mel bins x 200 frames "
                                        "(max_source_positions 100), projector 64"),
                            {.full = DistilWhisperMediumEnConfig(), .smoke = DistilWhisperSmokeConfig()});
  // torchbenchmark/models/hf_distil_whisper/__init__.py: DEFAULT_TRAIN_BSIZE
  // = 8, DEFAULT_EVAL_BSIZE = 1.
  distil.default_batch = {8, 1};
  distil.cpu_batch = BatchSizes{1, 1};
  distil.supports_train = false;
  distil.unsupported_reason =
      "TorchBench's hf_distil_whisper has no train test (it raises NotImplementedError: \"Training is not "
      "implemented.\")";
  out.push_back(std::move(distil));

  auto tiny = WhisperInfo("whisper_tiny", "whisper-tiny",
                          std::string("transformers.WhisperForConditionalGeneration(openai/whisper-tiny config) "
                                      "(PyTorch's compiler suite, benchmarks/dynamo/huggingface_llm_models.py), "
                                      "random weights, log-mel input [1, 80, 3000], 448 decoder tokens") +
                              kWhisperTinySmokeText,
                          {.full = WhisperTinyConfig(),
                           .smoke = smoke,
                           .head = WhisperHead::kConditionalGeneration,
                           .decoder_len = 448,
                           .smoke_decoder_len = 16});
  // The compiler suite runs one 30 s clip.
  tiny.default_batch = {1, 1};
  out.push_back(std::move(tiny));
}

}  // namespace torchgauge::models
