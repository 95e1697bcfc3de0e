#include "models/nlp/gpt2.h"

#include <torch/torch.h>

#include <cmath>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

struct Gpt2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double resid_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
};

// GPT-2's Conv1D: a linear layer whose weight is stored transposed,
// [in_features, out_features], applied with addmm.
struct Conv1DImpl : torch::nn::Module {
  Conv1DImpl(int64_t nf, int64_t nx)
      : weight(register_parameter("weight", torch::empty({nx, nf}))),
        bias(register_parameter("bias", torch::zeros({nf}))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto out_shape = x.sizes().vec();
    out_shape.back() = weight.size(1);
    return torch::addmm(bias, x.view({-1, x.size(-1)}), weight).view(out_shape);
  }
  torch::Tensor weight, bias;
};
TORCH_MODULE(Conv1D);

struct Gpt2AttentionImpl : torch::nn::Module {
  explicit Gpt2AttentionImpl(const Gpt2Config& c)
      : c_attn(register_module("c_attn", Conv1D(3 * c.n_embd, c.n_embd))),
        c_proj(register_module("c_proj", Conv1D(c.n_embd, c.n_embd))),
        embed_dim(c.n_embd),
        head_dim(c.n_embd / c.n_head),
        attn_pdrop(c.attn_pdrop),
        resid_pdrop(c.resid_pdrop) {
    TORCH_CHECK(c.n_embd % c.n_head == 0, "GPT-2: n_embd not divisible by n_head");
  }

  torch::Tensor forward(const torch::Tensor& hidden) {
    auto qkv = c_attn(hidden).split(embed_dim, 2);
    auto heads = [&](const torch::Tensor& t) {
      auto shape = t.sizes().vec();
      shape.back() = -1;
      shape.push_back(head_dim);
      return t.view(shape).transpose(1, 2);
    };
    auto q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
    // transformers' default SDPA path: causal flag instead of a mask tensor,
    // attention dropout inside the kernel. Calling the same ATen op keeps the
    // dropout RNG stream identical to the reference.
    const bool causal = q.size(2) > 1;
    auto out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? attn_pdrop : 0.0, causal);
    out = out.transpose(1, 2).contiguous();
    auto shape = out.sizes().vec();
    shape.pop_back();
    shape.back() = -1;
    out = out.reshape(shape).contiguous();
    return torch::dropout(c_proj(out), resid_pdrop, is_training());
  }

  Conv1D c_attn, c_proj;
  int64_t embed_dim, head_dim;
  double attn_pdrop, resid_pdrop;
};
TORCH_MODULE(Gpt2Attention);

struct Gpt2MlpImpl : torch::nn::Module {
  explicit Gpt2MlpImpl(const Gpt2Config& c)
      : c_fc(register_module("c_fc", Conv1D(4 * c.n_embd, c.n_embd))),
        c_proj(register_module("c_proj", Conv1D(c.n_embd, 4 * c.n_embd))),
        resid_pdrop(c.resid_pdrop) {}

  torch::Tensor forward(const torch::Tensor& hidden) {
    return torch::dropout(c_proj(GeluNew(c_fc(hidden))), resid_pdrop, is_training());
  }

  Conv1D c_fc, c_proj;
  double resid_pdrop;
};
TORCH_MODULE(Gpt2Mlp);

struct Gpt2BlockImpl : torch::nn::Module {
  explicit Gpt2BlockImpl(const Gpt2Config& c)
      : ln_1(register_module("ln_1", MakeLayerNorm(c.n_embd, c.layer_norm_epsilon))),
        attn(register_module("attn", Gpt2Attention(c))),
        ln_2(register_module("ln_2", MakeLayerNorm(c.n_embd, c.layer_norm_epsilon))),
        mlp(register_module("mlp", Gpt2Mlp(c))) {}
  torch::Tensor forward(torch::Tensor hidden) {
    hidden = attn(ln_1(hidden)) + hidden;
    return hidden + mlp(ln_2(hidden));
  }
  torch::nn::LayerNorm ln_1;
  Gpt2Attention attn;
  torch::nn::LayerNorm ln_2;
  Gpt2Mlp mlp;
};
TORCH_MODULE(Gpt2Block);

struct Gpt2ModelImpl : torch::nn::Module {
  explicit Gpt2ModelImpl(const Gpt2Config& c)
      : wte(register_module("wte", torch::nn::Embedding(c.vocab_size, c.n_embd))),
        wpe(register_module("wpe", torch::nn::Embedding(c.n_positions, c.n_embd))),
        h(register_module("h", torch::nn::ModuleList())),
        ln_f(register_module("ln_f", MakeLayerNorm(c.n_embd, c.layer_norm_epsilon))),
        embd_pdrop(c.embd_pdrop) {
    for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(Gpt2Block(c));
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto seq = input_ids.size(-1);
    TORCH_CHECK(seq <= wpe->weight.size(0), "GPT-2: sequence length ", seq, " exceeds n_positions");
    auto position_ids = torch::arange(seq, input_ids.options()).unsqueeze(0);
    auto token_embeds = wte(input_ids);
    auto position_embeds = wpe(position_ids);
    auto hidden = token_embeds + position_embeds;
    hidden = torch::dropout(hidden, embd_pdrop, is_training());
    for (const auto& block : *h) hidden = block->as<Gpt2BlockImpl>()->forward(hidden);
    return ln_f(hidden);
  }

  torch::nn::Embedding wte, wpe;
  torch::nn::ModuleList h;
  torch::nn::LayerNorm ln_f;
  double embd_pdrop;
};
TORCH_MODULE(Gpt2Model);

// lm_head is tied to transformer.wte.
struct Gpt2LMHeadModelImpl : torch::nn::Module {
  explicit Gpt2LMHeadModelImpl(const Gpt2Config& c)
      : transformer(register_module("transformer", Gpt2Model(c))),
        lm_head(register_module("lm_head", TiedWeights(transformer->wte->weight))) {
    InitWeights(c);
  }

  torch::Tensor forward(const torch::Tensor& input_ids) { return lm_head(transformer(input_ids)); }

  // GPT2PreTrainedModel._init_weights: N(0, 0.02) weights, zero biases,
  // LayerNorm (1, 0), and the residual output projections (c_proj) scaled by
  // 1/sqrt(2 * n_layer) as in the GPT-2 paper (section 2.3).
  void InitWeights(const Gpt2Config& c) {
    torch::NoGradGuard no_grad;
    for (const auto& item : named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
      const auto& m = item.value();
      if (auto* conv = m->as<Conv1DImpl>()) {
        const bool residual_proj = item.key().size() >= 6 && item.key().substr(item.key().size() - 6) == "c_proj";
        conv->weight.normal_(0.0,
                             residual_proj ? c.initializer_range / std::sqrt(2.0 * c.n_layer) : c.initializer_range);
        conv->bias.zero_();
      } else if (auto* emb = m->as<torch::nn::EmbeddingImpl>()) {
        emb->weight.normal_(0.0, c.initializer_range);
      } else if (auto* ln = m->as<torch::nn::LayerNormImpl>()) {
        ln->weight.fill_(1.0);
        ln->bias.zero_();
      }
    }
  }

  Gpt2Model transformer;
  TiedWeights lm_head;
};
TORCH_MODULE(Gpt2LMHeadModel);

}  // namespace

namespace {

LanguageModelSpec Gpt2Spec(LanguageModelSpec spec, const Gpt2Config& config) {
  spec.objective = LmObjective::kCausalLm;
  spec.vocab_size = config.vocab_size;
  spec.build = BuildFromIds<Gpt2LMHeadModel>(config);
  return spec;
}

}  // namespace

ModelInfo Gpt2LargeInfo(int64_t num_layers) {
  TORCH_CHECK(num_layers > 0, "hf_gpt2_large: the number of layers must be positive");
  Gpt2Config config;
  config.n_embd = 1280;
  config.n_layer = num_layers;
  config.n_head = 20;
  auto info = LanguageModelInfo(Gpt2Spec(
      {
          .id = "hf_gpt2_large",
          .paper_name = "hf_ptg1_large (GPT-2 large)",
          .reference = "transformers.GPT2LMHeadModel(\"gpt2-large\" config) (TorchBench hf_GPT2_large: "
                       "AutoModelForCausalLM)",
          // torchbenchmark/models/hf_GPT2_large/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {4, 1},
          // TorchBench's Hugging Face model table (basic_configs.py, "hf_GPT2_large").
          .train_seq_len = 512,
          .eval_seq_len = 1024,
      },
      config));
  // 774M parameters at 4 x 512 tokens: far over a few seconds per train step
  // on 2 CPU cores, and about 12 GB with Adam's state; batch 1 is the
  // smallest the suite can run.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

void AddGpt2Models(std::vector<ModelInfo>& out) {
  out.push_back(LanguageModelInfo(Gpt2Spec(
      {
          .id = "hf_gpt2",
          .paper_name = "hf_ptg1 (GPT-2)",
          .reference =
              "transformers.GPT2LMHeadModel(GPT2Config()) (\"gpt2\"; TorchBench hf_GPT2: AutoModelForCausalLM)",
          // torchbenchmark/models/hf_GPT2/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {4, 1},
          // TorchBench's Hugging Face model table (basic_configs.py, "hf_GPT2").
          .train_seq_len = 512,
          .eval_seq_len = 1024,
      },
      Gpt2Config{})));
  out.push_back(Gpt2LargeInfo());
}

}  // namespace torchgauge::models
