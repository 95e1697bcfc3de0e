// fastnlp_bert: the paper's fastNLP_Bert, TorchBench's torchbenchmark/models/
// fastNLP_Bert: fastNLP 0.6.0's BertForQuestionAnswering over its
// BertEmbedding, the "BertEmbedding Q&A" tutorial on a simulated CMRC2018
// (Chinese reading comprehension).
//
// The network is fastNLP's, not transformers': its BertModel (the
// pytorch-pretrained-bert code it vendors) states attention as matmul,
// scale, an additive mask of -10000 from the attention mask, softmax,
// dropout and matmul, and gelu as x * 0.5 * (1 + erf(x / sqrt 2)); it runs
// the pooler although the QA head never reads it. Around it, BertEmbedding's
// _BertWordModel maps each word to its word pieces on the host (a loop over
// the batch's rows), adds [CLS] and [SEP], derives token types from the
// [SEP]s (flip, cumsum, fmod, xor), and gathers each word's first piece
// back; BertEmbedding drops words to [UNK] (p 0.01) and its output (p 0.5) in
// training; BertForQuestionAnswering is one Linear(hidden, 2) whose two
// columns are the start and end logits. Module names follow fastNLP's
// (bert.model.encoder.encoder.layer.<i>.attention.self.query, qa_outputs,
// the buffer bert.model.word_pieces_lengths), so its state dict loads by
// name. The encoder is TorchBench's bert_config.json: BERT-base with the
// 21,128-row vocabulary of Chinese BERT (102,269,186 parameters with the head).
//
// The data, as TorchBench's cmrc2018_simulator.py draws them: random GB2312
// characters at CMRC2018's lengths, one word each: context (457 characters
// in train, 456 in dev), [SEP], question (16); the answer spans positions
// 0 to 7. The words' vocabulary is CMRC2018BertPipe's (after <pad>, <unk>,
// the train and dev characters by frequency: the dev split is its
// no_create_entry_dataset, which still adds its words, so no word is <unk>),
// and the word-piece vocabulary every character drawn plus BERT's five
// specials.
//
// TorchBench's train() runs fastNLP's trainer loop body: forward,
// CMRC2018Loss (cross entropy of start and end over the context positions,
// the rest masked to -inf), backward, with update_every = 10 over 5 batches,
// so its AdamW never steps and its gradient clipping never runs. One train
// step here is one such batch: zero_grad, forward, loss, backward. One eval
// step is one batch of its eval() (which runs 4).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// bert_config.json's fields that shape the network, and BertEmbedding's two
// dropouts as TorchBench passes them.
struct FastNlpBertConfig {
  int64_t vocab_size = 21128;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-12;  // fastNLP's BertConfig default (the json has none)
  double initializer_range = 0.02;
  double embed_dropout = 0.5;  // BertEmbedding(dropout=0.5)
  double word_dropout = 0.01;  // BertEmbedding(word_dropout=0.01)
};

// The words' and word pieces' vocabularies as _BertWordModel holds them.
struct FastNlpVocab {
  std::vector<int64_t> word_to_piece;  // word index -> its one word piece
  int64_t word_pad = 0, word_unk = 1, word_sep = 2;
  int64_t piece_cls = 0, piece_sep = 0, piece_pad = 0;
};

// fastNLP's BertEmbeddings (word, position, token type; LayerNorm; dropout).
struct FastNlpBertEmbeddingsImpl : torch::nn::Module {
  explicit FastNlpBertEmbeddingsImpl(const FastNlpBertConfig& c);
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr}, token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  double dropout_p;
};
TORCH_MODULE(FastNlpBertEmbeddings);

// fastNLP's BertModel: embeddings, encoder.layer[i], pooler.dense.
struct FastNlpBertModelImpl : torch::nn::Module {
  explicit FastNlpBertModelImpl(const FastNlpBertConfig& c);
  // Every layer's output, the embeddings' first (output_all_encoded_layers).
  std::vector<torch::Tensor> forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                     const torch::Tensor& attention_mask);
  FastNlpBertEmbeddings embeddings{nullptr};
  std::shared_ptr<torch::nn::Module> encoder;  // holds `layer`
  torch::nn::ModuleList layers{nullptr};
  std::shared_ptr<torch::nn::Module> pooler;  // holds `dense`
  torch::nn::Linear pooler_dense{nullptr};
};
TORCH_MODULE(FastNlpBertModel);

// _BertWordModel(layers='-1', pool_method='first', include_cls_sep=False,
// auto_truncate=True).
struct FastNlpBertWordModelImpl : torch::nn::Module {
  FastNlpBertWordModelImpl(const FastNlpBertConfig& c, const FastNlpVocab& vocab);
  torch::Tensor forward(const torch::Tensor& words);
  void UseVocab(const FastNlpVocab& vocab);
  FastNlpBertModel encoder{nullptr};
  torch::Tensor word_pieces_lengths;
  FastNlpVocab vocab;
  int64_t max_position_embeddings;
};
TORCH_MODULE(FastNlpBertWordModel);

// fastNLP's BertEmbedding: word dropout, _BertWordModel, dropout.
struct FastNlpBertEmbeddingImpl : torch::nn::Module {
  FastNlpBertEmbeddingImpl(const FastNlpBertConfig& c, const FastNlpVocab& vocab);
  torch::Tensor forward(const torch::Tensor& words);
  FastNlpBertWordModel model{nullptr};
  double word_dropout, dropout_p;
};
TORCH_MODULE(FastNlpBertEmbedding);

// BertForQuestionAnswering: the [batch, words, 2] logits (start, end).
struct FastNlpBertForQaImpl : torch::nn::Module {
  FastNlpBertForQaImpl(const FastNlpBertConfig& c, const FastNlpVocab& vocab);
  torch::Tensor forward(const torch::Tensor& words);
  FastNlpBertEmbedding bert{nullptr};
  torch::nn::Linear qa_outputs{nullptr};
};
TORCH_MODULE(FastNlpBertForQa);

// The registry entry at `config`. The parity test builds a reduced encoder.
ModelInfo FastNlpBertInfo(const FastNlpBertConfig& config = {});

// One run's simulated CMRC2018, as TorchBench's generate_inputs draws it for
// `mode` at `batch`: each split's questions in order (context and question
// as GB2312 codes; a paragraph's questions share its context), the word
// vocabulary CMRC2018BertPipe builds over them (word index -> GB2312 code,
// kFastNlpSepWord for [SEP]; indexes 0 and 1 are <pad> and <unk>), and the
// first batch of the mode's split (train, or dev in eval) as word indexes.
// tests/parity/fastnlp_bert_parity_test.cc feeds the same splits to
// fastNLP's own pipe and compares.
inline constexpr int64_t kFastNlpSepWord = -1;
struct FastNlpQuestion {
  std::vector<int64_t> context, question;
};
struct FastNlpSimulation {
  std::vector<FastNlpQuestion> train, dev;
  std::vector<int64_t> vocabulary;
  torch::Tensor words;
};
FastNlpSimulation SimulateFastNlp(Mode mode, int64_t batch, bool smoke);

void AddFastNlpBertModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
