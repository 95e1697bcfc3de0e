// Parity of nanogpt (models/nlp/nanogpt.h) against transformers'
// GPT2LMHeadModel, through a plain-torch nanoGPT that holds its weights
// (ref_nanogpt.py), at a reduced configuration (2 layers, 4 heads, n_embd
// 128, vocab 1024, block 1024): the eval logits (last position, as model.py
// returns them, and every position), the train step (loss, every gradient,
// the parameters after AdamW's first step) and the 16 tokens of greedy
// generation against model.generate (exactly equal). The published
// configuration's parameter count is checked against the reference's GPT
// built on the meta device.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "models/generator.h"
#include "models/nlp/nanogpt.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

models::NanoGptConfig SmallConfig() {
  models::NanoGptConfig c;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 128;
  c.vocab_size = 1024;
  return c;
}

}  // namespace

TEST_CASE("parity nanogpt") {
  const auto saved = parity::RunReferenceScript("ref_nanogpt.py", "nanogpt");
  const auto ref = parity::ReferenceFromDict(saved);
  const auto generated = saved.at("generated").toTensor();
  const auto logits = saved.at("logits").toTensor();
  const int64_t full_count = saved.at("full_param_count").toTensor().item<int64_t>();
  const auto info = models::NanoGptInfo(SmallConfig());
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = info.create(opt);
  // AdamW's first step moves an element by lr times its gradient's sign
  // (Adam's bound) plus the decoupled decay lr * 0.1 * |p|: the bound
  // CheckParityErrors holds the unclear elements to, widened by the decay.
  const parity::AdamFirstStep adam{.lr = 6e-4};
  const auto e = parity::MeasureParity(*w, ref, 1234, adam);
  double largest_param = 0;
  for (const auto& [name, p] : ref.params) largest_param = std::max(largest_param, p.abs().max().item<double>());
  const double bound = 1 + 0.1 * largest_param;
  parity::CheckParityErrors("nanogpt", ref, e, 1e-4);
  std::cout << "parity nanogpt: " << e.adam_bounded << " of " << e.elements
            << " elements (first-step directions apart by over 1e-5) held to AdamW's bound: largest step "
            << e.adam_bounded_step << " lr (bound " << bound << " lr); " << e.noise_grads
            << " gradients rounding noise on both sides" << std::endl;
  CHECK(e.adam_bounded_step <= bound + 1e-3);
  CHECK(e.adam_bounded * 100 < e.elements);
  CHECK(e.noise_grad_max <= 1e-6);

  auto& net = w->net();
  parity::LoadWeights(net, ref);
  net.eval();
  torch::NoGradGuard no_grad;
  auto* gpt = net.as<models::NanoGptImpl>();
  REQUIRE(gpt != nullptr);
  const auto prompt = ref.inputs.at("input_ids");
  const double logits_err = parity::RelError(gpt->Logits(prompt), logits);
  const auto tokens = gpt->Generate(prompt, generated.size(1));
  const bool same_tokens = torch::equal(tokens, generated);
  const int64_t count = parity::ParameterCount(*models::NanoGpt(models::NanoGptConfig{}));
  std::cout << "parity nanogpt: every position's logits rel err " << logits_err << "; greedy tokens "
            << (same_tokens ? "equal" : "DIFFERENT") << "\n  ours    " << tokens << "\n  theirs  " << generated
            << "\n  parameters of TorchBench's configuration " << count << ", reference (meta) " << full_count
            << std::endl;
  CHECK(logits_err <= 1e-5);
  CHECK(same_tokens);
  // The workload's generator (what the collector's generation measurement
  // times) decodes the same tokens, one Decode per token after the prefill.
  auto* generative = dynamic_cast<models::GenerativeWorkload*>(w.get());
  REQUIRE(generative != nullptr);
  auto* generator = generative->generator();
  REQUIRE(generator != nullptr);
  std::vector<torch::Tensor> decoded = {generator->Prefill(prompt, generated.size(1))};
  while (static_cast<int64_t>(decoded.size()) < generated.size(1)) decoded.push_back(generator->Decode(decoded.back()));
  CHECK(torch::equal(torch::cat(decoded, 1), generated));
  CHECK_FALSE(generator->KvCacheBytes().has_value());
  CHECK(count == full_count);
  CHECK(count == 124475904);
}
