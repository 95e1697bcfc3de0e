// BERT_pytorch: codertimo/BERT-pytorch (Junseong Kim's implementation of
// Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers
// for Language Understanding") as TorchBench vendors and runs it
// (torchbenchmark/models/BERT_pytorch/__init__.py and its bert_pytorch
// package). Parameter names follow that package's modules, so a state dict
// written with its names loads by name.
//
// Architecture facts (bert_pytorch/model/*.py; sizes from parse_args's
// defaults, which TorchBench keeps: hidden 768, 12 layers, 12 heads,
// seq_len 128, dropout 0.1):
//  - BERTEmbedding: token Embedding(vocab, 768, padding_idx=0) + sinusoidal
//    PositionalEmbedding (a fixed "pe" buffer, max_len 512) + segment
//    Embedding(3, 768, padding_idx=0), then dropout.
//  - 12 TransformerBlocks: pre-norm SublayerConnection (x + dropout(f(norm(x))))
//    around MultiHeadedAttention (three Linear projections, scores / sqrt(64),
//    masked_fill(mask == 0, -1e9) on the padding keys, softmax, dropout on the
//    weights, output Linear) and around PositionwiseFeedForward (Linear 768 ->
//    3072, nn.GELU() (erf), dropout, Linear 3072 -> 768); dropout after the
//    block. The padding mask is (x > 0) repeated over the query positions.
//  - Its own LayerNorm: a_2 * (x - mean) / (std + 1e-6) + b_2 with the
//    unbiased standard deviation (not nn.LayerNorm's biased variance inside
//    the square root).
//  - BERTLM heads: NextSentencePrediction (Linear(768, 2) on position 0,
//    LogSoftmax) and MaskedLanguageModel (Linear(768, vocab), LogSoftmax).
//  - Vocabulary: TorchBench builds a WordVocab from a random corpus of 50,000
//    lines of 20,000 possible words (CorpusGenerator, seeded with 1337): it
//    holds 19,999 distinct words, the "\t" separator token and 5 specials,
//    20,005 entries (computed by replaying that generator).
// Parameters: 115,805,991.
//
// Workload: TorchBench's batch is a sentence pair per sample as BERTDataset
// lays it out ([SOS] t1 [EOS] t2 [EOS], padding to 128; each sentence 1-3
// random words; 15% of the words masked 80/10/10 with the original word as
// label, 0 elsewhere; is_next 1 or 0 with probability 1/2), drawn here with
// the same distribution from the seeded generator. Loss: NLLLoss(ignore_index
// = 0) on the NSP output plus NLLLoss(ignore_index = 0) on the MLM output
// (transposed to [batch, vocab, seq]). Optimizer: BERTTrainer's Adam(betas
// (0.9, 0.999), weight_decay 0.01) whose learning rate ScheduledOptim sets
// before every step to 768^-0.5 * min(n^-0.5, 10000^-1.5 * n).
//
// Deviations: (1) with ignore_index 0, a batch without any masked word or
// without any is_next = 1 pair has an undefined (0/0, NaN) loss; TorchBench's
// fixed seeded batch of 16 has both, and the workload redraws its batch until
// it has both (which matters only at small batch sizes). (2) Forward() returns
// the masked-LM output (the NSP head runs too); the eval step does not compute
// the two NLL losses that TorchBench's _eval computes and discards. (3) The
// LambdaModule alias of each block's attention (a TorchScript helper with no
// parameters of its own) is not repeated, so each attention weight has one
// state-dict name. (4) Smoke runs pad to 32 positions instead of 128 (the
// sentence pairs hold at most 9 tokens either way).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers bert_pytorch.
void AddBertPytorchModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
