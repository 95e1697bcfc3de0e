// pytorch_struct: TorchBench's unsupervised constituency parser
// (torchbenchmark/models/pytorch_struct/__init__.py, after harvardnlp's
// notebooks/Unsupervised_CFG.ipynb), task OTHER.OTHER_TASKS: the neural PCFG
// NeuralCFG(V, T=30, NT=30, H=256) of Kim et al. trained by maximising the
// sentence log-likelihood torch_struct's SentCFG(params, lengths).partition,
// i.e. the inside algorithm of a PCFG in the log semiring (CKY).
//
// Architecture facts (torchbenchmark/models/pytorch_struct/networks/NeuralCFG.py):
//  - Parameters word_emb (V, H), term_emb (T, H), nonterm_emb (NT, H),
//    nonterm_emb_c (NT+T, NT+T, H), root_emb (NT, H), s_emb (1, H) and two
//    residual MLPs mlp1, mlp2 = Res(H): Linear u1, u2, v1, v2, w (H -> H);
//    Res(y): y = w(y); y = y + relu(v1(relu(u1(y)))); y + relu(v2(relu(u2(y)))).
//    Every parameter with more than one dimension is xavier_uniform_;
//    the Linear biases keep nn.Linear's default initialisation.
//  - terms: einsum("vh,th->tv", word_emb, mlp1(term_emb)).log_softmax(-1),
//    expanded to (b, n, T, V) and gathered at the words: (b, n, T).
//  - rules: einsum("sh,tuh->stu", nonterm_emb, nonterm_emb_c) viewed (NT, S*S),
//    log_softmax(-1), viewed (1, NT, S, S) and expanded to b (S = NT + T).
//  - roots: einsum("ah,th->t", s_emb, mlp2(root_emb)).log_softmax(-1),
//    expanded to (b, NT).
// The inside algorithm (harvardnlp/pytorch-struct torch_struct/cky.py,
// CKY._dp with the LogSemiring: times = +, sum = logsumexp): two charts hold
// the nonterminal scores of every span, one indexed by (start, width), one by
// (end, N-1-width), so that all spans of one width and all their split points
// are strided slices; a span of width w sums, over split points and over the
// rule's two children (both nonterminal, nonterminal + terminal, terminal +
// nonterminal, both terminal at w = 1), the children's scores plus the rule
// score, in log space. The sentence's score is logsumexp over the root
// symbol of chart[start 0, width length-1] + roots: sentences shorter than
// the padded width n are read at their own length, as SentCFG does with
// `lengths`.
#pragma once

#include <torch/types.h>

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// log Z of each sentence under a PCFG in the log semiring: terms (b, n, T),
// rules (b, NT, NT+T, NT+T), roots (b, NT), lengths (b) int64 in [2, n].
// Returns (b). Differentiable in terms, rules and roots.
torch::Tensor CfgLogPartition(const torch::Tensor& terms, const torch::Tensor& rules, const torch::Tensor& roots,
                              const torch::Tensor& lengths);

void AddPytorchStructModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
