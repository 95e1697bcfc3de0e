// Parity of llama_3_2_1b and llama_v2_7b_16h (models/nlp/llama.h) against
// transformers' LlamaForCausalLM (ref_llama.py), each at the reduced
// configuration that its smoke runs build, with the reference's weights: the
// eval logits, the train step (loss, every gradient, the parameters after
// Adam's first step), the 16 tokens of greedy generation through the
// key-value cache against model.generate (exactly equal), and the cache's
// logits (a prefill, a several-token chunk, then single tokens) against a full
// forward over the whole sequence, ours and the reference's. Each published
// configuration's parameter count is checked against the reference built on
// the meta device.
#include <doctest/doctest.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "models/nlp/llama.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kScript = "ref_llama.py";

double MaxAbs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.detach().to(torch::kDouble) - b.detach().to(torch::kDouble)).abs().max().item<double>();
}

// The logits of `sequence` [batch, n] computed through the cache: a prefill
// of `prompt` positions, one chunk of `chunk` positions (queries that see a
// cached prefix and each other, causally), then one position at a time.
torch::Tensor CachedLogits(models::LlamaForCausalLMImpl& lm, const torch::Tensor& sequence, int64_t prompt,
                           int64_t chunk) {
  const int64_t n = sequence.size(1);
  auto cache = lm.NewCache(sequence.size(0), n);
  std::vector<torch::Tensor> logits = {lm.forward(sequence.slice(1, 0, prompt), cache)};
  logits.push_back(lm.forward(sequence.slice(1, prompt, prompt + chunk), cache));
  for (int64_t t = prompt + chunk; t < n; ++t) logits.push_back(lm.forward(sequence.slice(1, t, t + 1), cache));
  CHECK(cache.length == n);
  return torch::cat(logits, 1);
}

}  // namespace

namespace {

// The parity case of one registration (id's header comment).
void LlamaParity(const std::string& id) {
  const auto* info = models::FindModel(id);
  REQUIRE(info != nullptr);
  const auto saved = parity::RunReferenceScript(kScript, id);
  const auto ref = parity::ReferenceFromDict(saved);
  const auto generated = saved.at("generated").toTensor();
  const auto sequence_logits = saved.at("sequence_logits").toTensor();
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.smoke = true;  // the reduced configuration, which the reference builds
  models::SeedAll(0);
  auto w = info->create(opt);
  const auto e = parity::MeasureParity(*w, ref, 1234, parity::AdamFirstStep{.lr = 1e-3});

  // Generation and the cache from the reference's initial weights again.
  auto& net = w->net();
  parity::LoadWeights(net, ref);
  net.eval();
  torch::NoGradGuard no_grad;
  auto* lm = net.as<models::LlamaForCausalLMImpl>();
  REQUIRE(lm != nullptr);
  const auto prompt = ref.inputs.at("input_ids");
  const auto logits = lm->forward(prompt);
  const auto tokens = lm->Generate(prompt, generated.size(1));
  const bool same_tokens = torch::equal(tokens, generated);
  const auto sequence = torch::cat({prompt, generated}, 1);
  const auto full = lm->forward(sequence);
  const auto cached = CachedLogits(*lm, sequence, prompt.size(1), 4);

  std::cout << "parity " << id << ": params " << ref.param_count << ", logits max abs err "
            << MaxAbs(logits, ref.output) << " rel err " << e.output << ", loss rel err " << e.loss << ", " << e.grads
            << " gradients max rel err " << e.grads_max << " (" << e.worst_grad << "), updated params max rel err "
            << e.updated_max << " (" << e.worst_param << "); " << e.adam_bounded << " of " << e.elements
            << " elements held to Adam's bound; greedy tokens " << (same_tokens ? "equal" : "DIFFERENT")
            << "\n  ours    " << tokens << "\n  theirs  " << generated << "\n  cache vs our full forward: max abs err "
            << MaxAbs(cached, full) << " rel err " << parity::RelError(cached, full)
            << "; vs the reference's full forward: max abs err " << MaxAbs(cached, sequence_logits) << " rel err "
            << parity::RelError(cached, sequence_logits) << std::endl;
  CHECK(e.output <= 1e-5);
  CHECK(e.loss <= 1e-5);
  CHECK(e.grads > 0);
  CHECK(e.grads_max <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
  CHECK(e.adam_bounded_step <= 1 + 1e-3);
  CHECK(e.adam_bounded * 1000 < e.elements);
  CHECK(same_tokens);
  CHECK(parity::RelError(cached, full) <= 1e-5);
  CHECK(parity::RelError(cached, sequence_logits) <= 1e-5);
  CHECK(parity::RelError(full, sequence_logits) <= 1e-5);
}

// The published configuration's parameter count, without building all of it:
// the C++ model at the full widths with 1 and 2 layers and a one-row
// vocabulary gives one layer and the rest, and each further vocabulary row
// adds a row of `hidden` to the embedding and to an untied head; against the
// reference built on the meta device.
void LlamaParameterCount(const std::string& id, models::LlamaConfig config, const models::LlamaConfig& smoke_config,
                         int64_t published) {
  const int64_t reference = parity::MetaParameterCount(kScript, id);
  const int64_t vocab = config.vocab_size;
  config.vocab_size = 1;
  const int64_t tables = config.tie_word_embeddings ? 1 : 2;
  const int64_t full = parity::CountByLayers(config.num_hidden_layers,
                                             [&](int64_t n) {
                                               auto c = config;
                                               c.num_hidden_layers = n;
                                               return parity::ParameterCount(*models::LlamaForCausalLM(c));
                                             }) +
                       (vocab - 1) * config.hidden_size * tables;
  const int64_t smoke = parity::ParameterCount(*models::LlamaForCausalLM(smoke_config));
  std::cout << "parity " << id << " parameter count: " << full << ", reference (meta) " << reference
            << "; smoke configuration " << smoke << std::endl;
  CHECK(full == reference);
  CHECK(full == published);
}

}  // namespace

TEST_CASE("parity llama_3_2_1b") { LlamaParity("llama_3_2_1b"); }
TEST_CASE("parity llama_v2_7b_16h") { LlamaParity("llama_v2_7b_16h"); }

// 1.24B parameters (5 GB) and 3.50B (14 GB): Llama-3.2-1B's and TorchBench's
// 16-layer Llama-2-7B.
TEST_CASE("parity llama_3_2_1b parameter count") {
  LlamaParameterCount("llama_3_2_1b", models::Llama32_1BConfig(), models::LlamaSmokeConfig(), 1235814400);
}
TEST_CASE("parity llama_v2_7b_16h parameter count") {
  LlamaParameterCount("llama_v2_7b_16h", models::Llama2_7B16hConfig(), models::Llama2SmokeConfig(), 3500281856);
}

// The later variants (models/nlp/llama.cc): Qwen3's head_dim and q/k norms,
// Mistral's sliding window (8 at the reduced size, so the 16-token prompt and
// the 16 generated tokens cross it), Llama 3.1's rope and CodeLlama's.
TEST_CASE("parity qwen3_0_6b") { LlamaParity("qwen3_0_6b"); }
TEST_CASE("parity mistral_7b_instruct") { LlamaParity("mistral_7b_instruct"); }
TEST_CASE("parity llama_v31_8b") { LlamaParity("llama_v31_8b"); }
TEST_CASE("parity codellama") { LlamaParity("codellama"); }
// Llama-2-13B differs from -7B only in widths, which the reduced
// configuration replaces: the one parity run covers both (their full sizes
// are counted below).
TEST_CASE("parity llama_v2_7b") {
  LlamaParity("llama_v2_7b");
  const auto a = models::LlamaVariantOf("llama_v2_7b").smoke, b = models::LlamaVariantOf("llama_v2_13b").smoke;
  CHECK(a.vocab_size == b.vocab_size);
  CHECK(a.hidden_size == b.hidden_size);
  CHECK(a.intermediate_size == b.intermediate_size);
  CHECK(a.num_hidden_layers == b.num_hidden_layers);
  CHECK(a.num_attention_heads == b.num_attention_heads);
  CHECK(a.num_key_value_heads == b.num_key_value_heads);
  CHECK(a.max_position_embeddings == b.max_position_embeddings);
  CHECK(a.rope_theta == b.rope_theta);
  CHECK(a.rms_norm_eps == b.rms_norm_eps);
  CHECK(a.tie_word_embeddings == b.tie_word_embeddings);
}

// The published sizes: 596M (Qwen3-0.6B), 7.24B (Mistral-7B), 8.03B
// (Llama-3.1-8B), 6.74B (CodeLlama-7B), 6.74B and 13.0B (Llama-2-7B and
// -13B), built on the meta device in the reference.
TEST_CASE("parity llama variants parameter count") {
  const std::vector<std::pair<std::string, int64_t>> published = {
      {"qwen3_0_6b", 596049920}, {"mistral_7b_instruct", 7241732096}, {"llama_v31_8b", 8030261248},
      {"codellama", 6738546688}, {"llama_v2_7b", 6738415616},         {"llama_v2_13b", 13015864320}};
  for (const auto& [id, count] : published) {
    const auto variant = models::LlamaVariantOf(id);
    LlamaParameterCount(id, variant.config, variant.smoke, count);
  }
}
