#include "models/nlp/nanogpt.h"

#include <torch/torch.h>

#include <cmath>
#include <utility>

#include "models/generator.h"
#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

// TorchBench's nanogpt/__init__.py: prompt_size and GPTTrainingConfig.
constexpr int64_t kPromptSize = 64;
constexpr double kLr = 6e-4, kBeta1 = 0.9, kBeta2 = 0.95, kWeightDecay = 0.1;
constexpr double kLayerNormEps = 1e-5;

// bias=True (TorchBench's GPTConfig): every Linear but lm_head has a bias.
torch::nn::Linear MakeLinear(int64_t in, int64_t out) { return torch::nn::Linear(torch::nn::LinearOptions(in, out)); }

torch::nn::LayerNorm MakeNorm(const NanoGptConfig& c) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd}).eps(kLayerNormEps));
}

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const NanoGptConfig& c)
      : c_attn(register_module("c_attn", MakeLinear(c.n_embd, 3 * c.n_embd))),
        c_proj(register_module("c_proj", MakeLinear(c.n_embd, c.n_embd))),
        n_head(c.n_head),
        n_embd(c.n_embd) {
    TORCH_CHECK(c.n_embd % c.n_head == 0, "nanogpt: n_embd not divisible by n_head");
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t b = x.size(0), t = x.size(1);
    auto qkv = c_attn(x).split(n_embd, 2);
    auto heads = [&](const torch::Tensor& y) { return y.view({b, t, n_head, n_embd / n_head}).transpose(1, 2); };
    auto y = at::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), /*attn_mask=*/{},
                                              /*dropout_p=*/0.0, /*is_causal=*/true);
    return c_proj(y.transpose(1, 2).contiguous().view({b, t, n_embd}));
  }
  torch::nn::Linear c_attn, c_proj;
  int64_t n_head, n_embd;
};
TORCH_MODULE(CausalSelfAttention);

struct NanoGptMlpImpl : torch::nn::Module {
  explicit NanoGptMlpImpl(const NanoGptConfig& c)
      : c_fc(register_module("c_fc", MakeLinear(c.n_embd, 4 * c.n_embd))),
        c_proj(register_module("c_proj", MakeLinear(4 * c.n_embd, c.n_embd))) {}
  torch::Tensor forward(const torch::Tensor& x) { return c_proj(GeluNew(c_fc(x))); }
  torch::nn::Linear c_fc, c_proj;
};
TORCH_MODULE(NanoGptMlp);

struct NanoGptBlockImpl : torch::nn::Module {
  explicit NanoGptBlockImpl(const NanoGptConfig& c)
      : ln_1(register_module("ln_1", MakeNorm(c))),
        attn(register_module("attn", CausalSelfAttention(c))),
        ln_2(register_module("ln_2", MakeNorm(c))),
        mlp(register_module("mlp", NanoGptMlp(c))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln_1(x));
    return x + mlp(ln_2(x));
  }
  torch::nn::LayerNorm ln_1;
  CausalSelfAttention attn;
  torch::nn::LayerNorm ln_2;
  NanoGptMlp mlp;
};
TORCH_MODULE(NanoGptBlock);

// Generation as model.py's generate does it, greedy: no key-value cache, so
// every decode step runs the whole (cropped) context again. TorchBench's
// nanogpt eval generates this way; its tokens are Generate()'s.
class NanoGptGenerator : public Generator {
 public:
  explicit NanoGptGenerator(NanoGpt net) : net_(std::move(net)) {}

  torch::Tensor Prefill(const torch::Tensor& prompt_ids, int64_t max_new_tokens) override {
    TORCH_CHECK(prompt_ids.dim() == 2 && prompt_ids.size(1) > 0, "nanogpt: the prompt must be [batch, length > 0]");
    TORCH_CHECK(max_new_tokens > 0, "nanogpt: max_new_tokens must be positive");
    sequence_ = prompt_ids;
    return net_->NextToken(sequence_);
  }

  torch::Tensor Decode(const torch::Tensor& token) override {
    TORCH_CHECK(sequence_.defined(), "nanogpt: Decode before Prefill");
    sequence_ = torch::cat({sequence_, token}, 1);
    return net_->NextToken(sequence_);
  }

  // model.py keeps no cache.
  std::optional<int64_t> KvCacheBytes() const override { return std::nullopt; }
  int64_t vocab_size() const override { return net_->config.vocab_size; }

 private:
  NanoGpt net_;
  torch::Tensor sequence_;
};

class NanoGptWorkload : public LossWorkload, public GenerativeWorkload {
 public:
  NanoGptWorkload(const WorkloadOptions& opt, const NanoGptConfig& config) : net_(config), generator_(net_) {
    TORCH_CHECK(opt.batch_size >= 1, "nanogpt: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    inputs_["input_ids"] = torch::randint(1, config.vocab_size, {opt.batch_size, kPromptSize},
                                          torch::TensorOptions(opt.device).dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      // configure_optimizers: decay the parameters of two or more dimensions
      // (matmul weights, embeddings), not biases and LayerNorm weights.
      std::vector<torch::Tensor> decay, no_decay;
      for (const auto& p : net_->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
      auto options = [](double wd) {
        auto o = std::make_unique<torch::optim::AdamWOptions>(kLr);
        o->betas({kBeta1, kBeta2}).weight_decay(wd);
        return o;
      };
      optimizer_ = std::make_unique<torch::optim::AdamW>(std::vector<torch::optim::OptimizerParamGroup>{
          torch::optim::OptimizerParamGroup(decay, options(kWeightDecay)),
          torch::optim::OptimizerParamGroup(no_decay, options(0.0))});
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_.at("input_ids")); }

  Generator* generator() override { return &generator_; }

 protected:
  torch::Tensor Loss(const torch::Tensor& logits) override { return logits.sum() / logits.numel(); }

 private:
  NanoGpt net_;
  NanoGptGenerator generator_;
};

}  // namespace

NanoGptTransformerImpl::NanoGptTransformerImpl(const NanoGptConfig& c)
    : wte(register_module("wte", torch::nn::Embedding(c.vocab_size, c.n_embd))),
      wpe(register_module("wpe", torch::nn::Embedding(c.block_size, c.n_embd))),
      h(register_module("h", torch::nn::ModuleList())),
      ln_f(register_module("ln_f", MakeNorm(c))) {
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(NanoGptBlock(c));
}

NanoGptImpl::NanoGptImpl(const NanoGptConfig& c)
    : transformer(register_module("transformer", NanoGptTransformer(c))), config(c) {
  lm_head = register_module("lm_head", TiedWeights(transformer->wte->weight));
  // model.py's _init_weights, then the scaled residual projections.
  torch::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    auto& p = item.value();
    const auto& name = item.key();
    if (p.dim() < 2) {
      if (name.ends_with("bias")) p.zero_();
      continue;
    }
    const bool residual = name.ends_with("c_proj.weight");
    p.normal_(0.0, residual ? c.init_std / std::sqrt(2.0 * static_cast<double>(c.n_layer)) : c.init_std);
  }
}

torch::Tensor NanoGptImpl::Hidden(const torch::Tensor& idx) {
  const int64_t t = idx.size(1);
  TORCH_CHECK(t <= config.block_size, "nanogpt: sequence of ", t, " exceeds block_size ", config.block_size);
  auto pos = torch::arange(t, idx.options()).unsqueeze(0);
  auto x = transformer->wte(idx) + transformer->wpe(pos);
  for (const auto& block : *transformer->h) x = block->as<NanoGptBlockImpl>()->forward(x);
  return transformer->ln_f(x);
}

torch::Tensor NanoGptImpl::forward(const torch::Tensor& idx) {
  return lm_head->as<TiedWeightsImpl>()->forward(Hidden(idx).slice(1, -1));
}

torch::Tensor NanoGptImpl::Logits(const torch::Tensor& idx) {
  return lm_head->as<TiedWeightsImpl>()->forward(Hidden(idx));
}

torch::Tensor NanoGptImpl::Generate(const torch::Tensor& idx, int64_t max_new_tokens) {
  TORCH_CHECK(idx.dim() == 2 && idx.size(1) > 0, "nanogpt: the prompt must be [batch, length > 0]");
  TORCH_CHECK(max_new_tokens > 0, "nanogpt: max_new_tokens must be positive");
  torch::NoGradGuard no_grad;
  auto sequence = idx;
  for (int64_t step = 0; step < max_new_tokens; ++step) sequence = torch::cat({sequence, NextToken(sequence)}, 1);
  return sequence.slice(1, idx.size(1));
}

torch::Tensor NanoGptImpl::NextToken(const torch::Tensor& sequence) {
  const int64_t t = sequence.size(1);
  auto context = t <= config.block_size ? sequence : sequence.slice(1, t - config.block_size);
  return forward(context).select(1, 0).argmax(-1, /*keepdim=*/true);
}

ModelInfo NanoGptInfo(const NanoGptConfig& config) {
  ModelInfo info;
  info.id = "nanogpt";
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kNlp;
  info.task = "language modeling";
  info.reference =
      "TorchBench nanogpt (added since the paper): Karpathy's nanoGPT GPT(GPTConfig()) as "
      "torchbenchmark/models/nanogpt/model.py (vocab 50304, 12 layers, 12 heads, n_embd 768, bias, dropout 0), "
      "AdamW from configure_optimizers; parity against transformers.GPT2LMHeadModel with the same weights";
  // nanogpt/__init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  info.create = [config](const WorkloadOptions& opt) { return std::make_unique<NanoGptWorkload>(opt, config); };
  return info;
}

void AddNanoGptModels(std::vector<ModelInfo>& out) { out.push_back(NanoGptInfo()); }

}  // namespace torchgauge::models
