#include "models/nlp/transformer.h"

#include <torch/torch.h>

#include "models/optimizers.h"

#include <cmath>

namespace torchgauge::models {
namespace {

using Config = AttentionIsAllYouNeedConfig;

torch::nn::LayerNorm MakeLayerNorm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-6));
}

torch::nn::Linear NoBias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

struct PositionalEncodingImpl : torch::nn::Module {
  PositionalEncodingImpl(int64_t d_hid, int64_t n_position) {
    // Sinusoid table computed in double, stored in float, as the original
    // builds it in NumPy: sin on even dimensions, cos on odd ones.
    auto table = torch::empty({n_position, d_hid}, torch::kDouble);
    auto acc = table.accessor<double, 2>();
    for (int64_t pos = 0; pos < n_position; ++pos) {
      for (int64_t j = 0; j < d_hid; ++j) {
        double angle = pos / std::pow(10000.0, 2.0 * (j / 2) / static_cast<double>(d_hid));
        acc[pos][j] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
      }
    }
    pos_table = register_buffer("pos_table", table.to(torch::kFloat).unsqueeze(0));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    TORCH_CHECK(x.size(1) <= pos_table.size(1), "transformer: sequence longer than n_position");
    return x + pos_table.slice(1, 0, x.size(1)).detach();
  }
  torch::Tensor pos_table;
};
TORCH_MODULE(PositionalEncoding);

struct MultiHeadAttentionImpl : torch::nn::Module {
  explicit MultiHeadAttentionImpl(const Config& c)
      : w_qs(register_module("w_qs", NoBias(c.d_model, c.n_head * c.d_k))),
        w_ks(register_module("w_ks", NoBias(c.d_model, c.n_head * c.d_k))),
        w_vs(register_module("w_vs", NoBias(c.d_model, c.n_head * c.d_v))),
        fc(register_module("fc", NoBias(c.n_head * c.d_v, c.d_model))),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.d_model))),
        n_head(c.n_head),
        d_k(c.d_k),
        d_v(c.d_v),
        temperature(std::sqrt(static_cast<double>(c.d_k))),
        dropout_p(c.dropout) {}

  // mask: [b, 1 or len_q, len_k], true where attention is allowed.
  torch::Tensor forward(const torch::Tensor& q_in, const torch::Tensor& kv, const torch::Tensor& mask) {
    const auto b = q_in.size(0), lq = q_in.size(1), lk = kv.size(1);
    auto q = w_qs(q_in).view({b, lq, n_head, d_k}).transpose(1, 2);
    auto k = w_ks(kv).view({b, lk, n_head, d_k}).transpose(1, 2);
    auto v = w_vs(kv).view({b, lk, n_head, d_v}).transpose(1, 2);
    // ScaledDotProductAttention of Modules.py: explicit scores, -1e9 fill,
    // softmax, dropout on the probabilities.
    auto attn = torch::matmul(q / temperature, k.transpose(2, 3));
    const double fill = attn.scalar_type() == torch::kHalf ? -65504.0 : -1e9;
    attn = attn.masked_fill(mask.unsqueeze(1) == 0, fill);
    attn = torch::dropout(torch::softmax(attn, -1), dropout_p, is_training());
    auto out = torch::matmul(attn, v).transpose(1, 2).contiguous().view({b, lq, -1});
    out = torch::dropout(fc(out), dropout_p, is_training());
    return layer_norm(out + q_in);
  }

  torch::nn::Linear w_qs, w_ks, w_vs, fc;
  torch::nn::LayerNorm layer_norm;
  int64_t n_head, d_k, d_v;
  double temperature, dropout_p;
};
TORCH_MODULE(MultiHeadAttention);

struct PositionwiseFeedForwardImpl : torch::nn::Module {
  explicit PositionwiseFeedForwardImpl(const Config& c)
      : w_1(register_module("w_1", torch::nn::Linear(c.d_model, c.d_inner))),
        w_2(register_module("w_2", torch::nn::Linear(c.d_inner, c.d_model))),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.d_model))),
        dropout_p(c.dropout) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto out = torch::dropout(w_2(torch::relu(w_1(x))), dropout_p, is_training());
    return layer_norm(out + x);
  }
  torch::nn::Linear w_1, w_2;
  torch::nn::LayerNorm layer_norm;
  double dropout_p;
};
TORCH_MODULE(PositionwiseFeedForward);

struct EncoderLayerImpl : torch::nn::Module {
  explicit EncoderLayerImpl(const Config& c)
      : slf_attn(register_module("slf_attn", MultiHeadAttention(c))),
        pos_ffn(register_module("pos_ffn", PositionwiseFeedForward(c))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) { return pos_ffn(slf_attn(x, x, mask)); }
  MultiHeadAttention slf_attn;
  PositionwiseFeedForward pos_ffn;
};
TORCH_MODULE(EncoderLayer);

struct DecoderLayerImpl : torch::nn::Module {
  explicit DecoderLayerImpl(const Config& c)
      : slf_attn(register_module("slf_attn", MultiHeadAttention(c))),
        enc_attn(register_module("enc_attn", MultiHeadAttention(c))),
        pos_ffn(register_module("pos_ffn", PositionwiseFeedForward(c))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& enc, const torch::Tensor& slf_mask,
                        const torch::Tensor& enc_mask) {
    auto out = slf_attn(x, x, slf_mask);
    out = enc_attn(out, enc, enc_mask);
    return pos_ffn(out);
  }
  MultiHeadAttention slf_attn, enc_attn;
  PositionwiseFeedForward pos_ffn;
};
TORCH_MODULE(DecoderLayer);

// Encoder and Decoder differ only in their layer type and embedding name.
template <typename Layer>
struct StackImpl : torch::nn::Module {
  StackImpl(const Config& c, const char* emb_name, int64_t vocab)
      : word_emb(register_module(
            emb_name, torch::nn::Embedding(torch::nn::EmbeddingOptions(vocab, c.d_model).padding_idx(c.pad_idx)))),
        position_enc(register_module("position_enc", PositionalEncoding(c.d_model, c.n_position))),
        layer_stack(register_module("layer_stack", torch::nn::ModuleList())),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.d_model))),
        dropout_p(c.dropout) {
    for (int64_t i = 0; i < c.n_layers; ++i) layer_stack->push_back(Layer(c));
  }
  torch::Tensor Embed(const torch::Tensor& seq) {
    return layer_norm(torch::dropout(position_enc(word_emb(seq)), dropout_p, is_training()));
  }
  torch::nn::Embedding word_emb;
  PositionalEncoding position_enc;
  torch::nn::ModuleList layer_stack;
  torch::nn::LayerNorm layer_norm;
  double dropout_p;
};

struct EncoderImpl : StackImpl<EncoderLayer> {
  explicit EncoderImpl(const Config& c) : StackImpl(c, "src_word_emb", c.src_vocab_size) {}
  torch::Tensor forward(const torch::Tensor& src_seq, const torch::Tensor& src_mask) {
    auto out = Embed(src_seq);
    for (const auto& l : *layer_stack) out = l->as<EncoderLayerImpl>()->forward(out, src_mask);
    return out;
  }
};
TORCH_MODULE(Encoder);

struct DecoderImpl : StackImpl<DecoderLayer> {
  explicit DecoderImpl(const Config& c) : StackImpl(c, "trg_word_emb", c.trg_vocab_size) {}
  torch::Tensor forward(const torch::Tensor& trg_seq, const torch::Tensor& trg_mask, const torch::Tensor& enc,
                        const torch::Tensor& src_mask) {
    auto out = Embed(trg_seq);
    for (const auto& l : *layer_stack) out = l->as<DecoderLayerImpl>()->forward(out, enc, trg_mask, src_mask);
    return out;
  }
};
TORCH_MODULE(Decoder);

struct TransformerImpl : torch::nn::Module {
  explicit TransformerImpl(const Config& c)
      : config(c),
        encoder(register_module("encoder", Encoder(c))),
        decoder(register_module("decoder", Decoder(c))),
        trg_word_prj(register_module("trg_word_prj", NoBias(c.d_model, c.trg_vocab_size))) {
    // Models.py: Xavier-uniform for every matrix (embeddings included, which
    // also overwrites the zeroed padding row).
    torch::NoGradGuard no_grad;
    for (auto& p : parameters()) {
      if (p.dim() > 1) torch::nn::init::xavier_uniform_(p);
    }
  }

  // Returns logits flattened to [batch * trg_len, vocab], as the original.
  torch::Tensor forward(const torch::Tensor& src_seq, const torch::Tensor& trg_seq) {
    auto src_mask = (src_seq != config.pad_idx).unsqueeze(-2);
    const auto len = trg_seq.size(1);
    // 1 - triu(ones, 1), as get_subsequent_mask writes it; torch::rsub, not
    // C++'s 1 - tensor, which LibTorch computes in place on a new tensor (an
    // in-place op the exporter rejects in the inductor backend's graph).
    auto subsequent = torch::rsub(torch::triu(torch::ones({1, len, len}, torch::TensorOptions(trg_seq.device())), 1), 1)
                          .to(torch::kBool);
    auto trg_mask = (trg_seq != config.pad_idx).unsqueeze(-2) & subsequent;
    auto enc = encoder(src_seq, src_mask);
    auto dec = decoder(trg_seq, trg_mask, enc, src_mask);
    auto logits = trg_word_prj(dec);
    return logits.view({-1, logits.size(2)});
  }

  Config config;
  Encoder encoder;
  Decoder decoder;
  torch::nn::Linear trg_word_prj;
};
TORCH_MODULE(Transformer);

// Multi30k batches are short and padded to the longest sentence of the
// bucket; with the dataset unavailable here, inputs are random word ids
// (no padding) of a fixed, typical bucket length.
constexpr int64_t kSrcLen = 32;
constexpr int64_t kTrgLen = 32;
constexpr int64_t kFirstWordId = 4;  // after <unk>, <blank>, <s>, </s>

class TransformerWorkload : public LossWorkload {
 public:
  // train.py's train_epoch: zero_grad first.
  explicit TransformerWorkload(const WorkloadOptions& opt) : LossWorkload(ZeroGradAt::kBeforeForward), net_(Config{}) {
    TORCH_CHECK(opt.batch_size > 0, "attention_is_all_you_need_pytorch: batch size must be positive");
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const Config c;
    auto ids = torch::TensorOptions(opt.device).dtype(torch::kLong);
    inputs_["src_seq"] = torch::randint(kFirstWordId, c.src_vocab_size, {opt.batch_size, kSrcLen}, ids);
    // train.py patch_trg: the decoder reads trg[:, :-1] and predicts trg[:, 1:].
    auto trg = torch::randint(kFirstWordId, c.trg_vocab_size, {opt.batch_size, kTrgLen + 1}, ids);
    inputs_["trg_seq"] = trg.slice(1, 0, -1).contiguous();
    inputs_["gold"] = trg.slice(1, 1).contiguous().view(-1);
    if (opt.mode == Mode::kTrain) {
      // ScheduledOptim.step_and_update_lr: the learning rate is updated before
      // every step (lr_mul 2, d_model 512, n_warmup_steps 128).
      optimizer_ =
          std::make_unique<HookedAdam>(net_->parameters(), torch::optim::AdamOptions(0.0).betas({0.9, 0.98}).eps(1e-9),
                                       [this](HookedAdam& o) { SetLearningRate(o, NoamRate(2.0, 512, 128, ++step_)); });
    }
    samples_per_step_ = opt.batch_size;
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_.at("src_seq"), inputs_.at("trg_seq")); }

 private:
  torch::Tensor Loss(const torch::Tensor& pred) override {
    return torch::nn::functional::cross_entropy(
        pred, inputs_.at("gold"),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(Config{}.pad_idx).reduction(torch::kSum));
  }

  Transformer net_;
  int64_t step_ = 0;
};

}  // namespace

void AddTransformerModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "attention_is_all_you_need_pytorch";
  info.paper_name = "attention_is_all_you_need_pytorch";
  info.domain = Domain::kNlp;
  info.task = "translation";
  info.reference = "jadore801120/attention-is-all-you-need-pytorch (Vaswani et al. 2017), TorchBench copy";
  // torchbenchmark/models/attention_is_all_you_need_pytorch/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 256, DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {256, 32};
  // The CPU suite's sizes (the full suite on a CPU device): 32/32.
  info.cpu_batch = BatchSizes{32, 32};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<TransformerWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
