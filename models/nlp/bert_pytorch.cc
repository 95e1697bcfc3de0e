#include "models/nlp/bert_pytorch.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace torchgauge::models {
namespace {

// bert_pytorch/__init__.py parse_args defaults, which TorchBench keeps.
constexpr int64_t kHidden = 768;
constexpr int64_t kLayers = 12;
constexpr int64_t kHeads = 12;
constexpr int64_t kSeqLen = 128;
constexpr double kDropout = 0.1;  // BERT(dropout=0.1), BERTEmbedding(dropout=0.1), MultiHeadedAttention(dropout=0.1)
// len(vocab) of TorchBench's WordVocab (see the header).
constexpr int64_t kVocabSize = 20005;
constexpr int64_t kMaxLen = 512;  // PositionalEmbedding(max_len=512)
constexpr int64_t kSmokeSeqLen = 32;
// dataset/vocab.py: <pad> 0, <unk> 1, <eos> 2, <sos> 3, <mask> 4; then the
// tokens by decreasing frequency: "\t" (once per corpus line) is index 5,
// the words follow.
constexpr int64_t kPad = 0, kEos = 2, kSos = 3, kMask = 4, kFirstWord = 6;
// parse_args: --lr 1e-3 (overwritten by the schedule before the first step),
// --adam_beta1 0.9, --adam_beta2 0.999, --adam_weight_decay 0.01;
// BERTTrainer(warmup_steps=10000).
constexpr double kAdamLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kWeightDecay = 0.01;
constexpr double kWarmupSteps = 10000;

// model/utils/layer_norm.py: scale and shift around the unbiased std.
struct BertLayerNormImpl : torch::nn::Module {
  explicit BertLayerNormImpl(int64_t features, double eps_arg = 1e-6)
      : a_2(register_parameter("a_2", torch::ones({features}))),
        b_2(register_parameter("b_2", torch::zeros({features}))),
        eps(eps_arg) {}
  // One op per statement, in the reference's evaluation order (it decides
  // the order autograd accumulates gradients, i.e. their rounding).
  torch::Tensor forward(const torch::Tensor& x) {
    auto mean = x.mean(-1, /*keepdim=*/true);
    auto sd = x.std(-1, /*unbiased=*/true, /*keepdim=*/true);
    auto centered = x - mean;
    auto scaled = a_2 * centered;
    auto denom = sd + eps;
    auto normed = scaled / denom;
    return normed + b_2;
  }
  torch::Tensor a_2, b_2;
  double eps;
};
TORCH_MODULE(BertLayerNorm);

// model/embedding/position.py: the fixed sinusoidal table, a buffer.
struct PositionalEmbeddingImpl : torch::nn::Module {
  PositionalEmbeddingImpl(int64_t d_model, int64_t max_len) {
    auto table = torch::zeros({max_len, d_model});
    auto position = torch::arange(0, max_len).to(torch::kFloat).unsqueeze(1);
    auto div_term = (torch::arange(0, d_model, 2).to(torch::kFloat) * -(std::log(10000.0) / d_model)).exp();
    table.slice(1, 0, c10::nullopt, 2).copy_(torch::sin(position * div_term));
    table.slice(1, 1, c10::nullopt, 2).copy_(torch::cos(position * div_term));
    pe = register_buffer("pe", table.unsqueeze(0));
  }
  torch::Tensor forward(const torch::Tensor& x) { return pe.slice(1, 0, x.size(1)); }
  torch::Tensor pe;
};
TORCH_MODULE(PositionalEmbedding);

torch::nn::Embedding PaddedEmbedding(int64_t num, int64_t dim) {
  return torch::nn::Embedding(torch::nn::EmbeddingOptions(num, dim).padding_idx(kPad));
}

// model/embedding/bert.py: token + position + segment, then dropout.
struct BertEmbeddingImpl : torch::nn::Module {
  BertEmbeddingImpl(int64_t vocab_size, int64_t embed_size)
      : token(register_module("token", PaddedEmbedding(vocab_size, embed_size))),
        position(register_module("position", PositionalEmbedding(embed_size, kMaxLen))),
        segment(register_module("segment", PaddedEmbedding(3, embed_size))) {}
  torch::Tensor forward(const torch::Tensor& sequence, const torch::Tensor& segment_label) {
    auto x = token(sequence) + position(sequence);
    x = x + segment(segment_label);
    return torch::dropout(x, kDropout, is_training());
  }
  torch::nn::Embedding token;
  PositionalEmbedding position;
  torch::nn::Embedding segment;
};
TORCH_MODULE(BertEmbedding);

// model/attention/multi_head.py and single.py.
struct MultiHeadedAttentionImpl : torch::nn::Module {
  MultiHeadedAttentionImpl(int64_t h_arg, int64_t d_model)
      : linear_layers(register_module("linear_layers", torch::nn::ModuleList())),
        output_linear(register_module("output_linear", torch::nn::Linear(d_model, d_model))),
        h(h_arg),
        d_k(d_model / h_arg) {
    TORCH_CHECK(d_model % h_arg == 0, "bert_pytorch: d_model not divisible by the number of heads");
    for (int i = 0; i < 3; ++i) linear_layers->push_back(torch::nn::Linear(d_model, d_model));
  }

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const auto batch = x.size(0);
    std::vector<torch::Tensor> qkv;
    for (const auto& layer : *linear_layers) {
      qkv.push_back(layer->as<torch::nn::LinearImpl>()->forward(x).view({batch, -1, h, d_k}).transpose(1, 2));
    }
    auto scores = torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(d_k));
    // -1e9 on the padding keys (fp16: its lowest finite value, as single.py does).
    const double min_mask = scores.scalar_type() == torch::kHalf ? -65504.0 : -1e9;
    scores = scores.masked_fill(mask == 0, min_mask);
    auto p_attn = torch::softmax(scores, -1);
    p_attn = torch::dropout(p_attn, kDropout, is_training());
    auto out = torch::matmul(p_attn, qkv[2]).transpose(1, 2).contiguous().view({batch, -1, h * d_k});
    return output_linear(out);
  }

  torch::nn::ModuleList linear_layers;
  torch::nn::Linear output_linear;
  int64_t h, d_k;
};
TORCH_MODULE(MultiHeadedAttention);

// model/utils/feed_forward.py: TorchBench's copy uses nn.GELU() (erf).
struct PositionwiseFeedForwardImpl : torch::nn::Module {
  PositionwiseFeedForwardImpl(int64_t d_model, int64_t d_ff)
      : w_1(register_module("w_1", torch::nn::Linear(d_model, d_ff))),
        w_2(register_module("w_2", torch::nn::Linear(d_ff, d_model))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return w_2(torch::dropout(torch::gelu(w_1(x)), kDropout, is_training()));
  }
  torch::nn::Linear w_1, w_2;
};
TORCH_MODULE(PositionwiseFeedForward);

// model/utils/sublayer.py: x + dropout(sublayer(norm(x))).
struct SublayerConnectionImpl : torch::nn::Module {
  explicit SublayerConnectionImpl(int64_t size) : norm(register_module("norm", BertLayerNorm(size))) {}
  torch::Tensor forward(const torch::Tensor& x, const std::function<torch::Tensor(const torch::Tensor&)>& sublayer) {
    return x + torch::dropout(sublayer(norm(x)), kDropout, is_training());
  }
  BertLayerNorm norm;
};
TORCH_MODULE(SublayerConnection);

// model/transformer.py.
struct TransformerBlockImpl : torch::nn::Module {
  TransformerBlockImpl(int64_t hidden, int64_t attn_heads, int64_t feed_forward_hidden)
      : attention(register_module("attention", MultiHeadedAttention(attn_heads, hidden))),
        feed_forward(register_module("feed_forward", PositionwiseFeedForward(hidden, feed_forward_hidden))),
        input_sublayer(register_module("input_sublayer", SublayerConnection(hidden))),
        output_sublayer(register_module("output_sublayer", SublayerConnection(hidden))) {}
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& mask) {
    x = input_sublayer(x, [&](const torch::Tensor& t) { return attention(t, mask); });
    x = output_sublayer(x, [&](const torch::Tensor& t) { return feed_forward(t); });
    return torch::dropout(x, kDropout, is_training());
  }
  MultiHeadedAttention attention;
  PositionwiseFeedForward feed_forward;
  SublayerConnection input_sublayer, output_sublayer;
};
TORCH_MODULE(TransformerBlock);

// model/bert.py.
struct BertImpl : torch::nn::Module {
  explicit BertImpl(int64_t vocab_size)
      : embedding(register_module("embedding", BertEmbedding(vocab_size, kHidden))),
        transformer_blocks(register_module("transformer_blocks", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < kLayers; ++i) transformer_blocks->push_back(TransformerBlock(kHidden, kHeads, 4 * kHidden));
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& segment_info) {
    // [batch, 1, seq, seq]: which keys are not padding, for every query.
    auto mask = (x > 0).unsqueeze(1).repeat({1, x.size(1), 1}).unsqueeze(1);
    auto hidden = embedding(x, segment_info);
    for (const auto& block : *transformer_blocks) hidden = block->as<TransformerBlockImpl>()->forward(hidden, mask);
    return hidden;
  }
  BertEmbedding embedding;
  torch::nn::ModuleList transformer_blocks;
};
TORCH_MODULE(Bert);

// A Linear followed by LogSoftmax (NextSentencePrediction, MaskedLanguageModel).
struct LogSoftmaxHeadImpl : torch::nn::Module {
  LogSoftmaxHeadImpl(int64_t hidden, int64_t classes)
      : linear(register_module("linear", torch::nn::Linear(hidden, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::log_softmax(linear(x), -1); }
  torch::nn::Linear linear;
};
TORCH_MODULE(LogSoftmaxHead);

struct BertLmOutput {
  torch::Tensor next_sentence, mask_lm;
};

// model/language_model.py: BERTLM.
struct BertLmImpl : torch::nn::Module {
  explicit BertLmImpl(int64_t vocab_size)
      : bert(register_module("bert", Bert(vocab_size))),
        next_sentence(register_module("next_sentence", LogSoftmaxHead(kHidden, 2))),
        mask_lm(register_module("mask_lm", LogSoftmaxHead(kHidden, vocab_size))) {}
  BertLmOutput forward(const torch::Tensor& x, const torch::Tensor& segment_label) {
    auto hidden = bert(x, segment_label);
    BertLmOutput out;
    out.next_sentence = next_sentence(hidden.select(1, 0));
    out.mask_lm = mask_lm(hidden);
    return out;
  }
  Bert bert;
  LogSoftmaxHead next_sentence, mask_lm;
};
TORCH_MODULE(BertLm);

// One sentence of CorpusGenerator (random.randrange(1, 4) words), masked as
// BERTDataset.random_word does: 15% of the words are predicted, of those 80%
// become <mask>, 10% a random vocabulary index, 10% stay.
int64_t Draw(int64_t low, int64_t high) { return torch::randint(low, high, {1}).item<int64_t>(); }

void AppendSentence(std::vector<int64_t>& tokens, std::vector<int64_t>& labels) {
  const int64_t words = Draw(1, 4);
  for (int64_t i = 0; i < words; ++i) {
    const int64_t word = Draw(kFirstWord, kVocabSize);
    double prob = torch::rand({1}, torch::kDouble).item<double>();
    if (prob < 0.15) {
      prob /= 0.15;
      tokens.push_back(prob < 0.8 ? kMask : (prob < 0.9 ? Draw(0, kVocabSize) : word));
      labels.push_back(word);
    } else {
      tokens.push_back(word);
      labels.push_back(kPad);
    }
  }
}

// BERTDataset.__getitem__ for `batch` samples, padded to `seq`.
std::map<std::string, torch::Tensor> DrawBatch(int64_t batch, int64_t seq) {
  auto input = torch::zeros({batch, seq}, torch::kLong), label = torch::zeros({batch, seq}, torch::kLong);
  auto segment = torch::zeros({batch, seq}, torch::kLong), is_next = torch::zeros({batch}, torch::kLong);
  auto input_a = input.accessor<int64_t, 2>(), label_a = label.accessor<int64_t, 2>();
  auto segment_a = segment.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int64_t> tokens{kSos}, labels{kPad};
    AppendSentence(tokens, labels);
    tokens.push_back(kEos);
    labels.push_back(kPad);
    const auto first = static_cast<int64_t>(tokens.size());
    AppendSentence(tokens, labels);  // t2 or a random line's: the same distribution
    tokens.push_back(kEos);
    labels.push_back(kPad);
    const auto n = std::min<int64_t>(seq, static_cast<int64_t>(tokens.size()));
    for (int64_t i = 0; i < n; ++i) {
      input_a[b][i] = tokens[i];
      label_a[b][i] = labels[i];
      segment_a[b][i] = i < first ? 1 : 2;
    }
    is_next.accessor<int64_t, 1>()[b] = torch::rand({1}, torch::kDouble).item<double>() > 0.5 ? 1 : 0;
  }
  return {{"bert_input", input}, {"segment_label", segment}, {"is_next", is_next}, {"bert_label", label}};
}

// A batch whose two NLL terms are defined (see the header's deviation 1).
std::map<std::string, torch::Tensor> DrawDefinedBatch(int64_t batch, int64_t seq) {
  while (true) {
    auto inputs = DrawBatch(batch, seq);
    if (inputs["bert_label"].ne(kPad).any().item<bool>() && inputs["is_next"].ne(kPad).any().item<bool>()) {
      return inputs;
    }
  }
}

class BertPytorchWorkload : public Workload {
 public:
  explicit BertPytorchWorkload(const WorkloadOptions& opt) : net_(kVocabSize) {
    TORCH_CHECK(opt.batch_size > 0, "bert_pytorch: batch size must be positive");
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    for (auto& [name, t] : DrawDefinedBatch(opt.batch_size, opt.smoke ? kSmokeSeqLen : kSeqLen)) {
      inputs_[name] = t.to(opt.device);
    }
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(
          net_->parameters(), torch::optim::AdamOptions(kAdamLr).betas({kBeta1, kBeta2}).weight_decay(kWeightDecay));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return Run().mask_lm; }

  // TorchBench's _train: forward, the two NLL terms, zero_grad, backward,
  // ScheduledOptim.step_and_update_lr.
  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "bert_pytorch: TrainStep needs a workload built in train mode");
    auto out = Run();
    auto next_loss = torch::nll_loss_nd(out.next_sentence, inputs_["is_next"], {}, at::Reduction::Mean, kPad);
    auto mask_loss =
        torch::nll_loss_nd(out.mask_lm.transpose(1, 2), inputs_["bert_label"], {}, at::Reduction::Mean, kPad);
    auto loss = next_loss + mask_loss;
    optimizer_->zero_grad();
    loss.backward();
    StepAndUpdateLr();
    return loss.detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string(
          "the loss needs both heads' outputs (next sentence and masked LM); Forward() returns the "
          "masked-LM output only");
    }
    return std::nullopt;
  }

 private:
  BertLmOutput Run() { return net_->forward(inputs_["bert_input"], inputs_["segment_label"]); }

  // trainer/optim_schedule.py ScheduledOptim(d_model 768, n_warmup_steps 10000).
  void StepAndUpdateLr() {
    ++steps_;
    const double n = static_cast<double>(steps_);
    const double lr =
        std::pow(static_cast<double>(kHidden), -0.5) * std::min(std::pow(n, -0.5), std::pow(kWarmupSteps, -1.5) * n);
    for (auto& group : optimizer_->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    optimizer_->step();
  }

  BertLm net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  int64_t steps_ = 0;
};

}  // namespace

void AddBertPytorchModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "bert_pytorch";
  info.paper_name = "BERT_pytorch";
  info.domain = Domain::kNlp;
  // torchbenchmark/models/BERT_pytorch/__init__.py: task = NLP.LANGUAGE_MODELING.
  info.task = "language modeling";
  info.reference =
      "codertimo/BERT-pytorch as vendored by TorchBench BERT_pytorch: BERTLM(BERT(20005 words, hidden 768, 12 "
      "layers, 12 heads)), NLLLoss(ignore_index=0) on NSP + MLM, Adam(betas (0.9, 0.999), weight decay 0.01) "
      "under ScheduledOptim (warmup 10000); synthetic sentence pairs of 128 positions";
  // torchbenchmark/models/BERT_pytorch/__init__.py: DEFAULT_TRAIN_BSIZE = 16, DEFAULT_EVAL_BSIZE = 16.
  info.default_batch = {16, 16};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<BertPytorchWorkload>(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
