#include "models/speech/speech_transformer.h"

#include <torch/torch.h>

#include "models/optimizers.h"
#include "models/unsupported_error.h"

#include <cmath>

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kFeatureDim = 80 * 4;  // 80 filter banks x LFR_m 4
constexpr int64_t kLayers = 6;
constexpr int64_t kHeads = 8;
constexpr int64_t kDk = 64;
constexpr int64_t kDv = 64;
constexpr int64_t kModel = 512;
constexpr int64_t kInner = 2048;
constexpr double kDropout = 0.1;
constexpr int64_t kPeMaxLen = 5000;
constexpr int64_t kVocab = 1014;
constexpr int64_t kSos = 1, kEos = 2;  // ids of <sos> and <eos> in train_chars.txt
constexpr int64_t kIgnoreId = -1;
constexpr double kLabelSmoothing = 0.1;
// Example utterance shape: AISHELL-1 averages about 4.5 s (450 10-ms frames,
// 150 after 3x LFR subsampling) and about 15 characters per transcript.
constexpr int64_t kInputFrames = 160;
constexpr int64_t kTargetChars = 20;

struct PositionalEncodingImpl : torch::nn::Module {
  PositionalEncodingImpl() {
    auto position = torch::arange(kPeMaxLen, torch::kFloat).unsqueeze(1);
    auto div_term = torch::exp(torch::arange(0, kModel, 2, torch::kFloat) * (-std::log(10000.0) / kModel));
    auto table = torch::zeros({kPeMaxLen, kModel});
    table.slice(1, 0, kModel, 2).copy_(torch::sin(position * div_term));
    table.slice(1, 1, kModel, 2).copy_(torch::cos(position * div_term));
    pe = register_buffer("pe", table.unsqueeze(0));
  }
  torch::Tensor forward(int64_t length) { return pe.slice(1, 0, length); }
  torch::Tensor pe;
};
TORCH_MODULE(PositionalEncoding);

// Heads are folded into the batch dimension (head-major), masks repeated per
// head, and attention is explicit bmm / masked_fill / softmax / dropout / bmm,
// as in the reference; then fc, dropout, residual and post-LayerNorm.
struct MultiHeadAttentionImpl : torch::nn::Module {
  MultiHeadAttentionImpl()
      : w_qs(register_module("w_qs", torch::nn::Linear(kModel, kHeads * kDk))),
        w_ks(register_module("w_ks", torch::nn::Linear(kModel, kHeads * kDk))),
        w_vs(register_module("w_vs", torch::nn::Linear(kModel, kHeads * kDv))),
        layer_norm(register_module("layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
        fc(register_module("fc", torch::nn::Linear(kHeads * kDv, kModel))),
        attn_dropout(register_module("attn_dropout", torch::nn::Dropout(kDropout))),
        dropout(register_module("dropout", torch::nn::Dropout(kDropout))) {
    // The reference's initialisation (later overwritten for matrices by the
    // Transformer's Xavier-uniform pass, which the net applies as well).
    torch::NoGradGuard g;
    w_qs->weight.normal_(0, std::sqrt(2.0 / (kModel + kDk)));
    w_ks->weight.normal_(0, std::sqrt(2.0 / (kModel + kDk)));
    w_vs->weight.normal_(0, std::sqrt(2.0 / (kModel + kDv)));
    torch::nn::init::xavier_normal_(fc->weight);
  }

  // mask: batch x len_q x len_k, true where attention is forbidden.
  torch::Tensor forward(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                        const torch::Tensor& mask) {
    const int64_t b = q_in.size(0), len_q = q_in.size(1), len_k = k_in.size(1), len_v = v_in.size(1);
    auto split = [b](const torch::Tensor& x, int64_t len, int64_t d) {
      return x.view({b, len, kHeads, d}).permute({2, 0, 1, 3}).contiguous().view({-1, len, d});
    };
    auto q = split(w_qs(q_in), len_q, kDk);
    auto k = split(w_ks(k_in), len_k, kDk);
    auto v = split(w_vs(v_in), len_v, kDv);
    auto attn = torch::bmm(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(kDk));
    if (mask.defined()) attn = attn.masked_fill(mask.repeat({kHeads, 1, 1}), -INFINITY);
    attn = attn_dropout(torch::softmax(attn, 2));
    auto out =
        torch::bmm(attn, v).view({kHeads, b, len_q, kDv}).permute({1, 2, 0, 3}).contiguous().view({b, len_q, -1});
    return layer_norm(dropout(fc(out)) + q_in);
  }

  torch::nn::Linear w_qs, w_ks, w_vs;
  torch::nn::LayerNorm layer_norm;
  torch::nn::Linear fc;
  torch::nn::Dropout attn_dropout, dropout;
};
TORCH_MODULE(MultiHeadAttention);

struct PositionwiseFeedForwardImpl : torch::nn::Module {
  PositionwiseFeedForwardImpl()
      : w_1(register_module("w_1", torch::nn::Linear(kModel, kInner))),
        w_2(register_module("w_2", torch::nn::Linear(kInner, kModel))),
        dropout(register_module("dropout", torch::nn::Dropout(kDropout))),
        layer_norm(register_module("layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))) {}
  torch::Tensor forward(const torch::Tensor& x) { return layer_norm(dropout(w_2(torch::relu(w_1(x)))) + x); }
  torch::nn::Linear w_1, w_2;
  torch::nn::Dropout dropout;
  torch::nn::LayerNorm layer_norm;
};
TORCH_MODULE(PositionwiseFeedForward);

struct EncoderLayerImpl : torch::nn::Module {
  EncoderLayerImpl()
      : slf_attn(register_module("slf_attn", MultiHeadAttention())),
        pos_ffn(register_module("pos_ffn", PositionwiseFeedForward())) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& non_pad_mask, const torch::Tensor& slf_attn_mask) {
    auto out = slf_attn(x, x, x, slf_attn_mask) * non_pad_mask;
    return pos_ffn(out) * non_pad_mask;
  }
  MultiHeadAttention slf_attn;
  PositionwiseFeedForward pos_ffn;
};
TORCH_MODULE(EncoderLayer);

struct DecoderLayerImpl : torch::nn::Module {
  DecoderLayerImpl()
      : slf_attn(register_module("slf_attn", MultiHeadAttention())),
        enc_attn(register_module("enc_attn", MultiHeadAttention())),
        pos_ffn(register_module("pos_ffn", PositionwiseFeedForward())) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& enc, const torch::Tensor& non_pad_mask,
                        const torch::Tensor& slf_attn_mask, const torch::Tensor& dec_enc_attn_mask) {
    auto out = slf_attn(x, x, x, slf_attn_mask) * non_pad_mask;
    out = enc_attn(out, enc, enc, dec_enc_attn_mask) * non_pad_mask;
    return pos_ffn(out) * non_pad_mask;
  }
  MultiHeadAttention slf_attn, enc_attn;
  PositionwiseFeedForward pos_ffn;
};
TORCH_MODULE(DecoderLayer);

// batch x frames x 1, zero at padded frames.
torch::Tensor NonPadMask(const torch::Tensor& lengths, int64_t frames, const torch::TensorOptions& opts) {
  auto positions = torch::arange(frames, opts.dtype(torch::kLong));
  return (positions.unsqueeze(0) < lengths.unsqueeze(1)).to(opts.dtype()).unsqueeze(-1);
}

// batch x expand x frames, true at padded key positions.
torch::Tensor KeyPadMask(const torch::Tensor& lengths, int64_t frames, int64_t expand) {
  auto positions = torch::arange(frames, lengths.options().dtype(torch::kLong));
  return (positions.unsqueeze(0) >= lengths.unsqueeze(1)).unsqueeze(1).expand({-1, expand, -1});
}

struct EncoderImpl : torch::nn::Module {
  EncoderImpl()
      : linear_in(register_module("linear_in", torch::nn::Linear(kFeatureDim, kModel))),
        layer_norm_in(register_module("layer_norm_in", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
        positional_encoding(register_module("positional_encoding", PositionalEncoding())),
        dropout(register_module("dropout", torch::nn::Dropout(kDropout))),
        layer_stack(register_module("layer_stack", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < kLayers; ++i) {
      layers.push_back(EncoderLayer());
      layer_stack->push_back(layers.back());
    }
  }

  torch::Tensor forward(const torch::Tensor& padded_input, const torch::Tensor& input_lengths) {
    const int64_t frames = padded_input.size(1);
    auto non_pad_mask = NonPadMask(input_lengths, frames, padded_input.options());
    auto slf_attn_mask = KeyPadMask(input_lengths, frames, frames);
    auto x = dropout(layer_norm_in(linear_in(padded_input)) + positional_encoding(frames));
    for (auto& layer : layers) x = layer(x, non_pad_mask, slf_attn_mask);
    return x;
  }

  torch::nn::Linear linear_in;
  torch::nn::LayerNorm layer_norm_in;
  PositionalEncoding positional_encoding;
  torch::nn::Dropout dropout;
  torch::nn::ModuleList layer_stack;
  std::vector<EncoderLayer> layers;
};
TORCH_MODULE(Encoder);

struct DecoderImpl : torch::nn::Module {
  DecoderImpl()
      : tgt_word_emb(register_module("tgt_word_emb", torch::nn::Embedding(kVocab, kModel))),
        positional_encoding(register_module("positional_encoding", PositionalEncoding())),
        dropout(register_module("dropout", torch::nn::Dropout(kDropout))),
        layer_stack(register_module("layer_stack", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < kLayers; ++i) {
      layers.push_back(DecoderLayer());
      layer_stack->push_back(layers.back());
    }
    // The reference Xavier-normal-initialises tgt_word_prj, which is the
    // embedding matrix once the two are tied.
    torch::nn::init::xavier_normal_(tgt_word_emb->weight);
  }

  // The reference's preprocess(): decoder input <sos> + y padded with <eos>,
  // target y + <eos> padded with IGNORE_ID. Targets are left-aligned.
  std::pair<torch::Tensor, torch::Tensor> Preprocess(const torch::Tensor& padded_target) {
    auto valid = padded_target.ne(kIgnoreId);
    auto lengths = valid.sum(1);
    const int64_t width = lengths.max().item<int64_t>() + 1;
    const int64_t n = padded_target.size(0);
    auto ys = padded_target.slice(1, 0, width - 1);
    auto ys_in = torch::cat({torch::full({n, 1}, kSos, ys.options()), ys.masked_fill(ys.eq(kIgnoreId), kEos)}, 1);
    auto ys_out = torch::cat({ys, torch::full({n, 1}, kIgnoreId, ys.options())}, 1)
                      .scatter(1, lengths.unsqueeze(1), torch::full({n, 1}, kEos, ys.options()));
    return {ys_in, ys_out};
  }

  // Returns (logits before softmax, gold targets).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& padded_target, const torch::Tensor& enc_output,
                                                  const torch::Tensor& enc_lengths) {
    auto [ys_in, ys_out] = Preprocess(padded_target);
    const int64_t len = ys_in.size(1);
    auto non_pad_mask = ys_in.ne(kEos).to(enc_output.dtype()).unsqueeze(-1);
    auto subsequent = torch::triu(torch::ones({len, len}, ys_in.options().dtype(torch::kUInt8)), 1)
                          .unsqueeze(0)
                          .expand({ys_in.size(0), -1, -1});
    auto keypad = ys_in.eq(kEos).unsqueeze(1).expand({-1, len, -1});
    auto slf_attn_mask = (keypad.to(torch::kUInt8) + subsequent).gt(0);
    auto dec_enc_attn_mask = KeyPadMask(enc_lengths, enc_output.size(1), len);
    auto x = dropout(tgt_word_emb(ys_in) * std::sqrt(static_cast<double>(kModel)) + positional_encoding(len));
    for (auto& layer : layers) x = layer(x, enc_output, non_pad_mask, slf_attn_mask, dec_enc_attn_mask);
    return {F::linear(x, tgt_word_emb->weight), ys_out};
  }

  torch::nn::Embedding tgt_word_emb;
  PositionalEncoding positional_encoding;
  torch::nn::Dropout dropout;
  torch::nn::ModuleList layer_stack;
  std::vector<DecoderLayer> layers;
};
TORCH_MODULE(Decoder);

struct TransformerImpl : torch::nn::Module {
  TransformerImpl() : encoder(register_module("encoder", Encoder())), decoder(register_module("decoder", Decoder())) {
    torch::NoGradGuard g;
    for (auto& p : parameters()) {
      if (p.dim() > 1) torch::nn::init::xavier_uniform_(p);
    }
  }
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& padded_input, const torch::Tensor& input_lengths,
                                                  const torch::Tensor& padded_target) {
    return decoder(padded_target, encoder(padded_input, input_lengths), input_lengths);
  }
  Encoder encoder;
  Decoder decoder;
};
TORCH_MODULE(Transformer);

// The reference's cal_loss with smoothing: uniform eps / classes mass on
// every class, 1 - eps on the gold one, averaged over non-padded positions.
torch::Tensor LabelSmoothedLoss(const torch::Tensor& logits, const torch::Tensor& gold_in) {
  auto pred = logits.view({-1, logits.size(2)});
  auto gold = gold_in.contiguous().view(-1);
  auto non_pad = gold.ne(kIgnoreId);
  auto one_hot = torch::zeros_like(pred).scatter(1, (gold * non_pad.to(torch::kLong)).view({-1, 1}), 1);
  one_hot = one_hot * (1 - kLabelSmoothing) + (1 - one_hot) * kLabelSmoothing / pred.size(1);
  auto per_token = -(one_hot * torch::log_softmax(pred, 1)).sum(1);
  const auto words = non_pad.sum().item<int64_t>();
  // cal_performance also counts correct tokens (a host sync per step).
  (void)pred.argmax(1).eq(gold).masked_select(non_pad).sum().item<int64_t>();
  return per_token.masked_select(non_pad).sum() / static_cast<double>(words);
}

class SpeechTransformerWorkload : public LossWorkload {
 public:
  explicit SpeechTransformerWorkload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive");
    const int64_t n = opt.batch_size;
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    auto l = f.dtype(torch::kLong);
    // Lengths vary across the batch; the first utterance is the longest, so
    // the padded shapes are fixed (n x 160 x 320 features, n x 20 characters).
    auto input_lengths = torch::randint(kInputFrames / 2, kInputFrames + 1, {n}, l);
    input_lengths[0] = kInputFrames;
    auto target_lengths = torch::randint(kTargetChars / 2, kTargetChars + 1, {n}, l);
    target_lengths[0] = kTargetChars;
    auto features = torch::randn({n, kInputFrames, kFeatureDim}, f);
    inputs_["padded_input"] = features * NonPadMask(input_lengths, kInputFrames, f);
    inputs_["input_lengths"] = input_lengths;
    auto chars = torch::randint(kEos + 1, kVocab, {n, kTargetChars}, l);
    auto pad = torch::arange(kTargetChars, l).unsqueeze(0) >= target_lengths.unsqueeze(1);
    inputs_["padded_target"] = chars.masked_fill(pad, kIgnoreId);
    samples_per_step_ = n;
    // TransformerOptimizer: Noam learning rate, updated before every step.
    optimizer_ = std::make_unique<HookedAdam>(
        net_->parameters(), torch::optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9),
        [this](HookedAdam& o) { SetLearningRate(o, NoamRate(kK, kModel, kWarmup, ++step_)); });
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    return net_->forward(inputs_["padded_input"], inputs_["input_lengths"], inputs_["padded_target"]).first;
  }

  torch::Tensor Loss(const torch::Tensor& pred) override { return LabelSmoothedLoss(pred, Gold()); }

  // The step also counts the correctly predicted tokens on the host
  // (cal_performance's .item(), inside the loss), which a joint package,
  // returning the loss and the gradients, would leave out.
  std::optional<TrainParts> SplitTrainStep() override {
    throw UnsupportedError(
        "the train step counts the correctly predicted tokens on the host (cal_performance, a .item() inside the "
        "loss); a joint forward-backward package returns only the loss and the gradients, so it would leave that "
        "work out");
  }

 private:
  // The decoder's gold targets (its forward derives them from the padded
  // targets too); computed once per target tensor, which never changes
  // between steps unless a parity test replaces it.
  const torch::Tensor& Gold() {
    const auto& target = inputs_.at("padded_target");
    if (!gold_.defined() || gold_of_.unsafeGetTensorImpl() != target.unsafeGetTensorImpl()) {
      torch::NoGradGuard g;
      gold_ = net_->decoder->Preprocess(target).second;
      gold_of_ = target;
    }
    return gold_;
  }

  static constexpr double kK = 0.2;
  static constexpr double kWarmup = 1;
  Transformer net_;
  int64_t step_ = 0;
  torch::Tensor gold_, gold_of_;
};

}  // namespace

void AddSpeechTransformerModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "speech_transformer";
  info.paper_name = "speech_transformer";
  info.domain = Domain::kSpeech;
  info.task = "recognition";
  info.reference = "Speech-Transformer (Dong et al. 2018), kaituoxu/Speech-Transformer as in TorchBench";
  // torchbenchmark/models/speech_transformer/__init__.py: DEFAULT_TRAIN_BSIZE
  // = 32 (kaituoxu train.py), DEFAULT_EVAL_BSIZE = 1.
  info.default_batch = {32, 1};
  // The CPU suite's sizes (the full suite on a CPU device): 8/1.
  info.cpu_batch = BatchSizes{8, 1};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<SpeechTransformerWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
