// TorchBench's Hugging Face harness (torchbenchmark/util/framework/
// huggingface/model_factory.py), shared by the families that port a
// transformers model (the NLP ones, and whisper, clip and sam in speech/
// and vision/, hence models/shared/): the counterpart of
// torchvision_harness for language models. The family file owns the network (modules named as transformers
// names them, so the reference's state dict loads by name); this file owns
// the workload around it: random token ids as inputs and labels, the
// sequence length per mode, the loss, Adam with lr 1e-3 (TorchBench's
// optim.Adam(model.parameters(), lr=0.001)), batch sizes and the
// registration fields every such model shares. It also holds what those
// families share from transformers itself: the one module for weights that
// transformers ties across names (the LM head and the embedding), the
// weight initialisation (_init_weights), gelu_new and the LayerNorm.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/generator.h"
#include "models/workload.h"

namespace torchgauge::models {

// Weights tied to another module's tensors (transformers' tie_weights): an
// LM head whose weight is the token embedding's, an embedding that reads a
// shared table. Python's state_dict lists a tied tensor under every name it
// is tied to, while parameters() yields it once. Registering the aliases as
// buffers of the very same tensors reproduces both facts: the names line up
// with the reference, and the optimizer and the parameter count see each
// tensor once. `bias` is optional (BERT ties its decoder bias too).
struct TiedWeightsImpl : torch::nn::Module {
  explicit TiedWeightsImpl(const torch::Tensor& weight, const torch::Tensor& bias = {});
  // As an output projection: x W^T (+ b).
  torch::Tensor forward(const torch::Tensor& hidden);
  // As an embedding: rows of W.
  torch::Tensor Embed(const torch::Tensor& ids);
  torch::Tensor weight, bias;
};
TORCH_MODULE(TiedWeights);

// A LayerNorm over the last dimension with transformers' eps.
torch::nn::LayerNorm MakeLayerNorm(int64_t dim, double eps);

// torch.finfo(dtype).min, the value transformers' additive attention masks
// put on a masked score, for the floating dtypes the models run in (fp32
// for any other).
torch::Scalar FinfoMin(torch::ScalarType dtype);

// gelu_new (transformers' NewGELUActivation), spelled out as the reference
// does rather than the fused gelu(approximate="tanh"). One op per statement:
// C++ leaves the evaluation order of operands unspecified, and the order in
// which ops are created decides the order in which autograd sums the
// gradient contributions to x, i.e. the rounding of the backward pass.
torch::Tensor GeluNew(const torch::Tensor& x);

// transformers' _init_weights as most of its PreTrainedModels write it
// (BERT, RoBERTa/XLM-R, BigBird, Longformer, ALBERT, DistilBERT, BART):
// N(0, stddev) for every Linear and Embedding weight (the config's
// initializer_range or init_std), zero Linear biases and padding rows,
// LayerNorm weight 1 and bias 0. Visits `model`'s submodules in
// registration order, as Python's apply() does, so the generator's draws
// land on the same tensors. Biases or parameters outside these modules (an
// MLM head's bias) are the caller's.
void InitHfWeights(torch::nn::Module& model, double stddev);

// What the loss compares the logits with.
enum class LmObjective {
  kMaskedLm,  // each position predicts its own label (BERT's MLM head)
  kCausalLm,  // position t predicts label t + 1, in fp32 (GPT-2)
  kSeq2Seq,   // the decoder reads the labels shifted right and predicts them (T5)
};

// The logits for `input_ids`. decoder_input_ids is defined only for
// kSeq2Seq models.
using LmForward = std::function<torch::Tensor(const torch::Tensor& input_ids, const torch::Tensor& decoder_input_ids)>;

struct LanguageModel {
  std::shared_ptr<torch::nn::Module> net;
  LmForward forward;
  // A decoder-only model's greedy decoding with its key-value cache, over
  // `net` (models/generator.h); null for a model that does not generate.
  std::shared_ptr<Generator> generator = {};
};

// Families fill it with designated initializers; every field a family may
// leave out has a default member initializer (= {} for the strings and the
// function), so -Wmissing-field-initializers holds its peace.
struct LanguageModelSpec {
  std::string id, paper_name, reference;
  BatchSizes default_batch = {};  // the model's TorchBench DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE
  LmObjective objective = LmObjective::kMaskedLm;
  int64_t vocab_size = 0;
  // TorchBench's sequence lengths (its Hugging Face model table).
  int64_t train_seq_len = 0, eval_seq_len = 0;
  // Smoke runs' sequence lengths (0: the harness's short default). A model
  // whose architecture fixes the length (Reformer's axial position
  // embeddings in training) states the lengths it allows.
  int64_t smoke_train_seq_len = 0, smoke_eval_seq_len = 0;
  // kSeq2Seq: how the decoder inputs are derived from the labels
  // (transformers' shift_tokens_right).
  int64_t pad_token_id = 0, decoder_start_token_id = 0;
  // Why a compiled forward (torchscript, inductor) cannot stand for the
  // model's forward, in both modes; empty when it can.
  std::string compiled_forward_unsupported = {};
  // Builds the initialised network on the CPU. It draws from the seeded
  // generator before the inputs do, so the order is fixed here.
  std::function<LanguageModel()> build = {};
  // A reduced configuration for smoke runs, where the model states one
  // (llama_3_2_1b: the published size does not train on the CPU suite's
  // machines): its vocabulary and its builder. Empty: smoke runs build `build`.
  int64_t smoke_vocab_size = 0;
  std::function<LanguageModel()> build_smoke = {};
};

// LanguageModelSpec::build for a model whose forward reads the input ids
// only (every objective but kSeq2Seq): builds Net(config), a TORCH_MODULE
// holder, and forwards the ids to it.
template <typename Net, typename Config>
std::function<LanguageModel()> BuildFromIds(Config config) {
  return [config] {
    Net net(config);
    auto forward = [net](const torch::Tensor& ids, const torch::Tensor&) mutable { return net->forward(ids); };
    return LanguageModel{net.ptr(), forward};
  };
}

// The registry entry for a language model: NLP domain, "language modeling",
// smoke batch {1, 1}, and a factory for its workload.
ModelInfo LanguageModelInfo(LanguageModelSpec spec);

// TorchBench's long-document masked LMs (hf_Longformer, hf_BigBird), whose
// settings it fills in: batch {2, 1} (their DEFAULT_TRAIN_BSIZE and
// DEFAULT_EVAL_BSIZE), 1024 tokens for train and 4096 for eval (TorchBench's
// Hugging Face table). On the CPU, batch {1, 1}: one step at batch 1 already
// takes several seconds on 2 cores.
ModelInfo LongDocumentMaskedLmInfo(LanguageModelSpec spec);

// transformers' shift_tokens_right: decoder inputs are the labels moved one
// position right behind the start token, with the ignore index (-100)
// replaced by padding.
torch::Tensor ShiftTokensRight(const torch::Tensor& labels, int64_t pad_token_id, int64_t decoder_start_token_id);

}  // namespace torchgauge::models
