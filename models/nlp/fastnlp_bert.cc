#include "models/nlp/fastnlp_bert.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace torchgauge::models {
namespace {

// cmrc2018_simulator.py: characters per field (its _GBK2312(n) draws n + 1).
constexpr int64_t kQuestionChars = 16, kAnswerChars = 8;
constexpr int64_t kTrainQas = 5, kDevQas = 4, kDevAnswers = 3;
constexpr int64_t kTrainTitleChars = 6, kDevTitleChars = 5;
// context_length 456 (train) and 455 (dev); smoke runs keep 65 and 64.
constexpr int64_t kTrainContext = 457, kDevContext = 456, kSmokeTrainContext = 65, kSmokeDevContext = 64;
// fastNLP_Bert/__init__.py: DEFAULT_TRAIN_BSIZE = 6, DEFAULT_EVAL_BSIZE = 1.
constexpr int64_t kDefaultTrainBatch = 6, kDefaultEvalBatch = 1;
// A [SEP] among the words (characters are GB2312 codes).
constexpr int64_t kSepWord = kFastNlpSepWord;

torch::nn::Linear MakeLinear(int64_t in, int64_t out) { return torch::nn::Linear(in, out); }

torch::nn::LayerNorm MakeNorm(const FastNlpBertConfig& c) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps));
}

// modules/encoder/bert.py's gelu, spelled as it is.
// One op per statement, in Python's order: the order in which ops are
// created decides the order in which autograd sums x's gradient.
torch::Tensor FastNlpGelu(const torch::Tensor& x) {
  auto half = x * 0.5;
  auto cdf = 1.0 + torch::erf(x / std::sqrt(2.0));
  return half * cdf;
}

struct SelfAttentionImpl : torch::nn::Module {
  explicit SelfAttentionImpl(const FastNlpBertConfig& c)
      : query(register_module("query", MakeLinear(c.hidden_size, c.hidden_size))),
        key(register_module("key", MakeLinear(c.hidden_size, c.hidden_size))),
        value(register_module("value", MakeLinear(c.hidden_size, c.hidden_size))),
        heads(c.num_attention_heads),
        head_size(c.hidden_size / c.num_attention_heads),
        dropout_p(c.attention_probs_dropout_prob) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "fastnlp_bert: hidden size ", c.hidden_size,
                " is not a multiple of ", c.num_attention_heads, " heads");
  }
  torch::Tensor Scores(const torch::Tensor& x) {
    return x.view({x.size(0), x.size(1), heads, head_size}).permute({0, 2, 1, 3});
  }
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& mask) {
    auto q = Scores(query(hidden)), k = Scores(key(hidden)), v = Scores(value(hidden));
    auto scores = torch::matmul(q, k.transpose(-1, -2));
    scores = scores / std::sqrt(static_cast<double>(head_size));
    scores = scores + mask;
    auto probs = torch::dropout(torch::softmax(scores, -1), dropout_p, is_training());
    auto context = torch::matmul(probs, v).permute({0, 2, 1, 3}).contiguous();
    return context.view({context.size(0), context.size(1), heads * head_size});
  }
  torch::nn::Linear query, key, value;
  int64_t heads, head_size;
  double dropout_p;
};
TORCH_MODULE(SelfAttention);

// BertSelfOutput and BertOutput: dense, dropout, LayerNorm(x + input).
struct ResidualOutputImpl : torch::nn::Module {
  ResidualOutputImpl(int64_t in, const FastNlpBertConfig& c)
      : dense(register_module("dense", MakeLinear(in, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeNorm(c))),
        dropout_p(c.hidden_dropout_prob) {}
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& input) {
    return LayerNorm(torch::dropout(dense(hidden), dropout_p, is_training()) + input);
  }
  torch::nn::Linear dense;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(ResidualOutput);

struct AttentionImpl : torch::nn::Module {
  explicit AttentionImpl(const FastNlpBertConfig& c)
      : self(register_module("self", SelfAttention(c))),
        output(register_module("output", ResidualOutput(c.hidden_size, c))) {}
  torch::Tensor forward(const torch::Tensor& input, const torch::Tensor& mask) {
    return output(self(input, mask), input);
  }
  SelfAttention self;
  ResidualOutput output;
};
TORCH_MODULE(Attention);

struct IntermediateImpl : torch::nn::Module {
  explicit IntermediateImpl(const FastNlpBertConfig& c)
      : dense(register_module("dense", MakeLinear(c.hidden_size, c.intermediate_size))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return FastNlpGelu(dense(hidden)); }
  torch::nn::Linear dense;
};
TORCH_MODULE(Intermediate);

struct LayerImpl : torch::nn::Module {
  explicit LayerImpl(const FastNlpBertConfig& c)
      : attention(register_module("attention", Attention(c))),
        intermediate(register_module("intermediate", Intermediate(c))),
        output(register_module("output", ResidualOutput(c.intermediate_size, c))) {}
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& mask) {
    auto attended = attention(hidden, mask);
    return output(intermediate(attended), attended);
  }
  Attention attention;
  Intermediate intermediate;
  ResidualOutput output;
};
TORCH_MODULE(Layer);

// BertModel.init_bert_weights, applied to every submodule: N(0, range) for
// Linear and Embedding weights (the padding row too), zero Linear biases,
// LayerNorm 1 and 0.
void InitBertWeights(torch::nn::Module& model, double range) {
  torch::NoGradGuard no_grad;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::LinearImpl>()) {
      linear->weight.normal_(0.0, range);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = m->as<torch::nn::EmbeddingImpl>()) {
      embedding->weight.normal_(0.0, range);
    } else if (auto* norm = m->as<torch::nn::LayerNormImpl>()) {
      norm->weight.fill_(1.0);
      norm->bias.zero_();
    }
  }
}

// One CMRC2018 question: its context and question characters (the words
// are context, [SEP], question).
using Instance = FastNlpQuestion;

// cmrc2018_simulator.py's draws, as GB2312 codes: rows 0xB0-0xF7 but 0xD7,
// cells 0xA1-0xFE.
std::vector<int64_t> DrawChars(int64_t n, std::set<int64_t>& drawn) {
  auto rows = torch::randint(0, 0xF7 - 0xB0, {n}, torch::kLong);
  auto cells = torch::randint(0xA1, 0xFF, {n}, torch::kLong);
  const auto r = rows.accessor<int64_t, 1>();
  const auto c = cells.accessor<int64_t, 1>();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = 0xB0 + r[i];
    if (row >= 0xD7) ++row;
    out[static_cast<size_t>(i)] = row * 256 + c[i];
    drawn.insert(out[static_cast<size_t>(i)]);
  }
  return out;
}

// _generate_cmrc2018(spec): `items` paragraphs of `qas` questions each.
std::vector<Instance> Simulate(int64_t items, int64_t title, int64_t context, int64_t qas, int64_t answers,
                               std::set<int64_t>& drawn) {
  std::vector<Instance> out;
  for (int64_t i = 0; i < items; ++i) {
    DrawChars(title, drawn);
    auto paragraph = DrawChars(context, drawn);
    for (int64_t q = 0; q < qas; ++q) {
      out.push_back({paragraph, DrawChars(kQuestionChars, drawn)});
      for (int64_t a = 0; a < answers; ++a) DrawChars(kAnswerChars, drawn);
    }
  }
  return out;
}

std::vector<int64_t> Words(const Instance& ins) {
  std::vector<int64_t> words = ins.context;
  words.push_back(kSepWord);
  words.insert(words.end(), ins.question.begin(), ins.question.end());
  return words;
}

// CMRC2018BertPipe's vocabulary: Vocabulary.from_dataset over the train
// words, with the dev words as no_create_entry_dataset, which still adds
// them (the flag only marks them for pretrained embeddings). Order: <pad>,
// <unk>, then Counter.most_common over both splits, ties in order of first
// appearance, train first. BertEmbedding's min_freq is 1, so every word
// keeps its own word piece. Then _BertWordModel's word to word-piece table
// over vocab.txt (every character drawn and the five specials; here in code
// order, in TorchBench Python's set order).
std::pair<std::map<int64_t, int64_t>, FastNlpVocab> BuildVocab(const std::vector<Instance>& train,
                                                               const std::vector<Instance>& dev,
                                                               const std::set<int64_t>& drawn,
                                                               std::vector<int64_t>& words_in_order) {
  std::map<int64_t, std::pair<int64_t, int64_t>> counts;  // word -> (count, first seen)
  int64_t seen = 0;
  for (const auto* split : {&train, &dev}) {
    for (const auto& ins : *split) {
      for (int64_t w : Words(ins)) {
        auto [it, inserted] = counts.try_emplace(w, 0, seen++);
        ++it->second.first;
      }
    }
  }
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> order(counts.begin(), counts.end());
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.second.second < b.second.second;
  });
  // vocab.txt sorted: [CLS] [MASK] [PAD] [SEP] [UNK], then the characters.
  FastNlpVocab vocab;
  vocab.piece_cls = 0;
  vocab.piece_pad = 2;
  vocab.piece_sep = 3;
  const int64_t piece_unk = 4;
  std::map<int64_t, int64_t> piece_of;
  for (int64_t ch : drawn) piece_of.emplace(ch, 5 + static_cast<int64_t>(piece_of.size()));
  std::map<int64_t, int64_t> index;
  vocab.word_to_piece = {vocab.piece_pad, piece_unk};
  for (const auto& [word, unused] : order) {
    index.emplace(word, static_cast<int64_t>(vocab.word_to_piece.size()));
    words_in_order.push_back(word);
    vocab.word_to_piece.push_back(word == kSepWord ? vocab.piece_sep : piece_of.at(word));
  }
  vocab.word_sep = index.at(kSepWord);
  return {index, vocab};
}

struct SimulatedBatch {
  torch::Tensor words, target_start, target_end, context_len;
  FastNlpVocab vocab;
};

// TorchBench's generate_inputs for `mode` at `batch`, then the first batch of
// the mode's dataset (DataSetIter, sequential).
SimulatedBatch SimulateBatch(Mode mode, int64_t batch, bool smoke, FastNlpSimulation* simulation = nullptr) {
  TORCH_CHECK(batch > 0, "fastnlp_bert: batch size must be positive, got ", batch);
  const bool train = mode == Mode::kTrain;
  const int64_t train_items = train ? batch : kDefaultTrainBatch, dev_items = train ? kDefaultEvalBatch : batch;
  std::set<int64_t> drawn;
  const auto dev =
      Simulate(dev_items, kDevTitleChars, smoke ? kSmokeDevContext : kDevContext, kDevQas, kDevAnswers, drawn);
  const auto train_set =
      Simulate(train_items, kTrainTitleChars, smoke ? kSmokeTrainContext : kTrainContext, kTrainQas, 1, drawn);
  std::vector<int64_t> words_in_order;
  auto [index, vocab] = BuildVocab(train_set, dev, drawn, words_in_order);
  const auto& data = train ? train_set : dev;
  const int64_t length = static_cast<int64_t>(Words(data[0]).size());
  auto words = torch::empty({batch, length}, torch::kLong);
  auto w = words.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    const auto row = Words(data[static_cast<size_t>(b)]);
    for (int64_t i = 0; i < length; ++i) w[b][i] = index.at(row[static_cast<size_t>(i)]);
  }
  if (simulation != nullptr) *simulation = {train_set, dev, std::move(words_in_order), words};
  const auto context = static_cast<int64_t>(data[0].context.size());
  return {words, torch::zeros({batch}, torch::kLong), torch::full({batch}, kAnswerChars - 1, torch::kLong),
          torch::full({batch}, context, torch::kLong), vocab};
}

}  // namespace

FastNlpBertEmbeddingsImpl::FastNlpBertEmbeddingsImpl(const FastNlpBertConfig& c)
    : word_embeddings(register_module(
          "word_embeddings",
          torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(0)))),
      position_embeddings(
          register_module("position_embeddings", torch::nn::Embedding(c.max_position_embeddings, c.hidden_size))),
      token_type_embeddings(
          register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size))),
      LayerNorm(register_module("LayerNorm", MakeNorm(c))),
      dropout_p(c.hidden_dropout_prob) {}

torch::Tensor FastNlpBertEmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  auto position_ids = torch::arange(input_ids.size(1), input_ids.options()).unsqueeze(0).expand_as(input_ids);
  auto embeddings =
      word_embeddings(input_ids) + position_embeddings(position_ids) + token_type_embeddings(token_type_ids);
  return torch::dropout(LayerNorm(embeddings), dropout_p, is_training());
}

FastNlpBertModelImpl::FastNlpBertModelImpl(const FastNlpBertConfig& c)
    : embeddings(register_module("embeddings", FastNlpBertEmbeddings(c))),
      encoder(register_module("encoder", std::make_shared<torch::nn::Module>())),
      layers(encoder->register_module("layer", torch::nn::ModuleList())),
      pooler(register_module("pooler", std::make_shared<torch::nn::Module>())),
      pooler_dense(pooler->register_module("dense", MakeLinear(c.hidden_size, c.hidden_size))) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(Layer(c));
  InitBertWeights(*this, c.initializer_range);
}

std::vector<torch::Tensor> FastNlpBertModelImpl::forward(const torch::Tensor& input_ids,
                                                         const torch::Tensor& token_type_ids,
                                                         const torch::Tensor& attention_mask) {
  auto mask = attention_mask.unsqueeze(1).unsqueeze(2).to(embeddings->LayerNorm->weight.scalar_type());
  mask = (1.0 - mask) * -10000.0;
  std::vector<torch::Tensor> all{embeddings(input_ids, token_type_ids)};
  for (const auto& layer : *layers) all.push_back(layer->as<LayerImpl>()->forward(all.back(), mask));
  // The pooled [CLS], which BertForQuestionAnswering never reads.
  torch::tanh(pooler_dense(all.back().select(1, 0)));
  return all;
}

FastNlpBertWordModelImpl::FastNlpBertWordModelImpl(const FastNlpBertConfig& c, const FastNlpVocab& v)
    : encoder(register_module("encoder", FastNlpBertModel(c))), max_position_embeddings(c.max_position_embeddings) {
  word_pieces_lengths = register_buffer("word_pieces_lengths", torch::empty({0}, torch::kLong));
  UseVocab(v);
}

void FastNlpBertWordModelImpl::UseVocab(const FastNlpVocab& v) {
  vocab = v;
  // Every word is one piece: a character in vocab.txt, [SEP], [PAD] or [UNK].
  // set_ keeps the registered buffer's tensor, so the state dict sees it.
  torch::NoGradGuard no_grad;
  word_pieces_lengths.set_(
      torch::ones({static_cast<int64_t>(v.word_to_piece.size())},
                  word_pieces_lengths.options().device(encoder->embeddings->LayerNorm->weight.device())));
}

namespace {

// _BertWordModel.forward's first half, under no_grad: the word pieces with
// [CLS] and [SEP], the attention mask and the token types.
struct WordPieces {
  torch::Tensor pieces, attn_masks, token_type_ids, word_mask, seq_len, batch_lengths, batch_indexes;
  int64_t max_pieces = 0;
};

WordPieces MapToPieces(const torch::Tensor& words, const FastNlpVocab& vocab, const torch::Tensor& piece_lengths,
                       int64_t max_positions) {
  using torch::indexing::None;
  using torch::indexing::Slice;
  torch::NoGradGuard no_grad;
  WordPieces out;
  const int64_t batch = words.size(0);
  out.word_mask = words.ne(vocab.word_pad);
  out.seq_len = out.word_mask.sum(-1);
  out.batch_lengths = piece_lengths.index({words}).masked_fill(out.word_mask.eq(false), 0);
  auto lengths = out.batch_lengths.sum(-1);
  out.max_pieces = out.batch_lengths.sum(-1).max().item<int64_t>();
  if (out.max_pieces + 2 > max_positions) {
    lengths = lengths.masked_fill(lengths + 2 > max_positions, max_positions - 2);  // auto_truncate
  }
  out.pieces = words.new_full({batch, std::min(out.max_pieces + 2, max_positions)}, vocab.piece_pad);
  out.attn_masks = torch::zeros_like(out.pieces);
  // The host loop: each row's pieces as a list, copied into its row.
  const auto host_words = words.cpu().contiguous(), host_seq = out.seq_len.cpu(), host_lengths = lengths.cpu();
  const auto w = host_words.accessor<int64_t, 2>();
  const auto seq = host_seq.accessor<int64_t, 1>();
  const auto piece_lengths_of = host_lengths.accessor<int64_t, 1>();
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<int64_t> row;
    row.reserve(static_cast<size_t>(seq[i]));
    for (int64_t j = 0; j < seq[i]; ++j) row.push_back(vocab.word_to_piece.at(static_cast<size_t>(w[i][j])));
    if (static_cast<int64_t>(row.size()) > max_positions - 2) row.resize(static_cast<size_t>(max_positions - 2));
    const int64_t n = piece_lengths_of[i];
    out.pieces.index_put_({i, Slice(1, n + 1)}, torch::tensor(row, torch::kLong));
    out.attn_masks.index({i, Slice(None, n + 2)}).fill_(1);
  }
  out.pieces.index({Slice(), 0}).fill_(vocab.piece_cls);
  out.batch_indexes = torch::arange(batch).to(words);
  out.pieces.index_put_({out.batch_indexes, lengths + 1}, vocab.piece_sep);
  // [SEP] is among the words (CMRC2018BertPipe puts one between context and
  // question): types alternate at each [SEP], counted from the end.
  auto sep_mask = out.pieces.eq(vocab.piece_sep).to(torch::kLong);
  auto types = sep_mask.flip({-1}).cumsum(-1).flip({-1}).fmod(2);
  out.token_type_ids = types.index({Slice(), Slice(None, 1)}).bitwise_xor(types);
  return out;
}

}  // namespace

torch::Tensor FastNlpBertWordModelImpl::forward(const torch::Tensor& words) {
  using torch::indexing::None;
  using torch::indexing::Slice;
  const int64_t batch = words.size(0), max_words = words.size(1);
  auto p = MapToPieces(words, vocab, word_pieces_lengths, max_position_embeddings);
  auto layers = encoder(p.pieces, p.token_type_ids, p.attn_masks);
  auto last = layers.back();
  auto outputs = last.new_zeros({1, batch, max_words, last.size(-1)});
  auto cum = p.batch_lengths.new_zeros({batch, max_words + 1});
  cum.index_put_({Slice(), Slice(1, None)}, p.batch_lengths.cumsum(-1));
  // pool_method 'first': each word's first piece.
  cum = cum.index({Slice(), Slice(None, p.seq_len.max().item<int64_t>())});
  cum.masked_fill_(cum.ge(p.max_pieces), 0);
  auto rows = p.batch_indexes.index({Slice(), None}).expand({batch, cum.size(1)});
  const int64_t real = last.size(1) - 2;
  if (p.max_pieces > real) {
    last = torch::cat({last, last.new_zeros({batch, p.max_pieces - real, last.size(2)})}, 1).contiguous();
  }
  auto truncated = last.index({Slice(), Slice(1, -1)});
  auto first = truncated.index({rows, cum});
  first = first.masked_fill(p.word_mask.index({Slice(), Slice(None, cum.size(1)), None}).eq(false), 0);
  outputs.index_put_({0, Slice(), Slice(0, cum.size(1))}, first);
  return outputs;
}

FastNlpBertEmbeddingImpl::FastNlpBertEmbeddingImpl(const FastNlpBertConfig& c, const FastNlpVocab& vocab)
    : model(register_module("model", FastNlpBertWordModel(c, vocab))),
      word_dropout(c.word_dropout),
      dropout_p(c.embed_dropout) {}

torch::Tensor FastNlpBertEmbeddingImpl::forward(const torch::Tensor& input) {
  auto words = input;
  const auto& v = model->vocab;
  if (word_dropout > 0 && is_training()) {  // drop_word
    torch::NoGradGuard no_grad;
    auto mask = torch::full_like(words, word_dropout, torch::kFloat).bernoulli().eq(1);
    mask = mask.bitwise_and(words.ne(v.word_pad));
    mask = mask.bitwise_and(words.ne(v.word_sep));
    words = words.masked_fill(mask, v.word_unk);
  }
  auto outputs = model(words);
  return torch::dropout(torch::cat(outputs.unbind(0), -1), dropout_p, is_training());
}

FastNlpBertForQaImpl::FastNlpBertForQaImpl(const FastNlpBertConfig& c, const FastNlpVocab& vocab)
    : bert(register_module("bert", FastNlpBertEmbedding(c, vocab))),
      qa_outputs(register_module("qa_outputs", MakeLinear(c.hidden_size, 2))) {}

torch::Tensor FastNlpBertForQaImpl::forward(const torch::Tensor& words) { return qa_outputs(bert(words)); }

namespace {

class FastNlpBertWorkload : public Workload {
 public:
  FastNlpBertWorkload(const WorkloadOptions& opt, const FastNlpBertConfig& config)
      : FastNlpBertWorkload(opt, config, SimulateBatch(opt.mode, opt.batch_size, opt.smoke)) {}

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_.at("words")); }

  // One batch of TorchBench's train(): zero_grad (its first batch's),
  // forward, CMRC2018Loss, backward. Its AdamW never steps (update_every 10
  // over 5 batches).
  torch::Tensor TrainStep() override {
    net_->zero_grad();
    auto loss = Loss(RunForward());
    loss.backward();
    return loss.detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "fastNLP's _BertWordModel maps words to word pieces on the host (a loop over the batch's rows, "
        "sized by .item()), which a traced forward would freeze to the example batch's pieces");
  }

 private:
  // CMRC2018Loss: start and end cross entropy (sum) over the context, the
  // other positions masked to -inf; their sum over the batch, halved.
  torch::Tensor Loss(const torch::Tensor& logits) {
    auto start = logits.select(2, 0), end = logits.select(2, 1);
    const int64_t batch = end.size(0), max_len = end.size(1);
    const auto& context_len = inputs_.at("context_len");
    auto mask = torch::arange(max_len).expand({batch, -1}).to(context_len).lt(context_len.unsqueeze(1)).eq(false);
    const double inf = std::numeric_limits<double>::infinity();
    namespace F = torch::nn::functional;
    const auto sum = F::CrossEntropyFuncOptions().reduction(torch::kSum);
    auto start_loss = F::cross_entropy(start.masked_fill(mask, -inf), inputs_.at("target_start"), sum);
    auto end_loss = F::cross_entropy(end.masked_fill(mask, -inf), inputs_.at("target_end"), sum);
    return (start_loss + end_loss) / batch / 2;
  }

  FastNlpBertWorkload(const WorkloadOptions& opt, const FastNlpBertConfig& config, const SimulatedBatch& batch)
      : net_(config, batch.vocab) {
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    inputs_["words"] = batch.words.to(opt.device);
    inputs_["target_start"] = batch.target_start.to(opt.device);
    inputs_["target_end"] = batch.target_end.to(opt.device);
    inputs_["context_len"] = batch.context_len.to(opt.device);
    samples_per_step_ = opt.batch_size;
  }

  FastNlpBertForQa net_;
};

}  // namespace

ModelInfo FastNlpBertInfo(const FastNlpBertConfig& config) {
  ModelInfo info;
  info.id = "fastnlp_bert";
  info.paper_name = "fastNLP_Bert";
  info.domain = Domain::kNlp;
  info.task = "question answering";
  info.reference =
      "fastNLP 0.6.0 BertForQuestionAnswering(BertEmbedding(vocab, bert_config.json: BERT-base, 21128-row "
      "vocabulary; include_cls_sep False, auto_truncate, dropout 0.5, word_dropout 0.01)) as TorchBench "
      "fastNLP_Bert builds it (its fastnlp.patch: random weights), CMRC2018Loss, on simulated CMRC2018 "
      "(context 457/456 + [SEP] + question 16 characters); train = forward, loss, backward (AdamW never steps)";
  info.default_batch = {kDefaultTrainBatch, kDefaultEvalBatch};
  info.smoke_batch = {1, 1};
  info.create = [config](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<FastNlpBertWorkload>(opt, config);
  };
  return info;
}

FastNlpSimulation SimulateFastNlp(Mode mode, int64_t batch, bool smoke) {
  FastNlpSimulation out;
  (void)SimulateBatch(mode, batch, smoke, &out);
  return out;
}

void AddFastNlpBertModels(std::vector<ModelInfo>& out) { out.push_back(FastNlpBertInfo()); }

}  // namespace torchgauge::models
