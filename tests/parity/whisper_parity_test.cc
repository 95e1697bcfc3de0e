// Parity of hf_whisper, hf_distil_whisper and whisper_tiny
// (models/speech/whisper.h) against transformers 4.57.1's
// WhisperForAudioClassification and WhisperForConditionalGeneration
// (ref_whisper.py, eager attention, fp32), each at the reduced configuration
// that its smoke runs build, with the reference's weights: the eval logits,
// the train step's loss, every gradient, and the parameters after Adam's
// first step. Each published configuration's parameter count is checked
// against the reference built on the meta device. whisper_tiny's generator
// (what the collector's generation measurement times) decodes, greedy over
// its key-value cache, the tokens transformers' own cached decoding gives.
#include <doctest/doctest.h>

#include <iostream>
#include <vector>
#include <string>

#include "models/speech/whisper.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kWhisperScript = "ref_whisper.py";

void WhisperParity(const std::string& id) {
  const auto* info = models::FindModel(id);
  REQUIRE(info != nullptr);
  const auto ref = parity::RunReference(kWhisperScript, id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.smoke = true;  // the reduced configuration, which the reference builds
  models::SeedAll(0);
  auto w = info->create(opt);
  const auto e = parity::MeasureParity(*w, ref, 1234);
  parity::CheckParityErrors(id, ref, e, 1e-4);
  CHECK(e.output <= 1e-5);
  CHECK(e.loss <= 1e-5);
  // Every trained parameter's gradient (all but the frozen position table).
  int64_t trained = 0;
  for (const auto& p : w->net().parameters()) trained += p.requires_grad() ? 1 : 0;
  CHECK(e.grads == static_cast<size_t>(trained));
  CHECK(trained + 1 == static_cast<int64_t>(w->net().parameters().size()));
  CHECK(e.grads_max <= 1e-4);
}

// The published configuration's parameter count. The encoder-only head of
// hf_distil_whisper has 307M parameters: its count is the C++ model's at 1
// and 2 encoder layers (the layers are alike), extrapolated; whisper_tiny's
// 38M are built whole.
void WhisperParameterCount(const std::string& id, models::WhisperConfig config, models::WhisperHead head,
                           int64_t published) {
  const int64_t reference = parity::MetaParameterCount(kWhisperScript, id);
  int64_t full = 0;
  if (head == models::WhisperHead::kAudioClassification) {
    full = parity::CountByLayers(config.encoder_layers, [&](int64_t n) {
      auto c = config;
      c.encoder_layers = n;
      return parity::ParameterCount(*models::MakeWhisper(c, head));
    });
  } else {
    full = parity::ParameterCount(*models::MakeWhisper(config, head));
  }
  std::cout << "parity " << id << " parameter count: " << full << ", reference (meta) " << reference << std::endl;
  CHECK(full == reference);
  CHECK(full == published);
}

}  // namespace

TEST_CASE("parity hf_whisper") { WhisperParity("hf_whisper"); }
TEST_CASE("parity hf_distil_whisper") { WhisperParity("hf_distil_whisper"); }
TEST_CASE("parity whisper_tiny") { WhisperParity("whisper_tiny"); }

TEST_CASE("parity whisper parameter counts") {
  using models::WhisperHead;
  WhisperParameterCount("hf_whisper", models::WhisperDefaultConfig(), WhisperHead::kAudioClassification, 8307458);
  WhisperParameterCount("hf_distil_whisper", models::DistilWhisperMediumEnConfig(), WhisperHead::kAudioClassification,
                        307479298);
  WhisperParameterCount("whisper_tiny", models::WhisperTinyConfig(), WhisperHead::kConditionalGeneration, 37760640);
}

TEST_CASE("whisper_tiny greedy generation over the cache matches transformers'") {
  const auto saved = parity::RunReferenceScript(kWhisperScript, "whisper_tiny");
  const auto ref = parity::ReferenceFromDict(saved);
  const auto prompt = saved.at("generation_prompt").toTensor();
  const auto generated = saved.at("generated").toTensor();
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kEval;
  opt.batch_size = prompt.size(0);
  opt.smoke = true;
  models::SeedAll(0);
  auto w = models::FindModel("whisper_tiny")->create(opt);
  parity::LoadWeights(w->net(), ref);
  // The reference's audio (its labels are a train input; eval decodes).
  w->inputs().at("input_features") = ref.inputs.at("input_features");
  w->net().eval();
  auto* generative = dynamic_cast<models::GenerativeWorkload*>(w.get());
  REQUIRE(generative != nullptr);
  auto* generator = generative->generator();
  REQUIRE(generator != nullptr);
  torch::NoGradGuard no_grad;
  const int64_t n = generated.size(1);
  std::vector<torch::Tensor> tokens = {generator->Prefill(prompt, n)};
  while (static_cast<int64_t>(tokens.size()) < n) tokens.push_back(generator->Decode(tokens.back()));
  const auto ours = torch::cat(tokens, 1);
  std::cout << "whisper_tiny greedy decoding: ours " << ours << "\n  transformers' " << generated << std::endl;
  CHECK(torch::equal(ours, generated));
  // Random weights decode few distinct tokens; the rows' own prompts give
  // three here, with changes at different steps, so that a wrong cache shows.
  CHECK(std::get<0>(at::_unique(generated)).numel() >= 3);
  // The cache: per decoder layer, keys and values of every position fed
  // (the prompt and n - 1 tokens) and of the encoder's 100 positions.
  const auto config = models::WhisperSmokeConfig();
  const int64_t fed = prompt.size(1) + n - 1;
  const int64_t expected = config.decoder_layers * 2 * opt.batch_size * config.d_model * (fed + 100) * 4;
  CHECK(generator->KvCacheBytes() == expected);
  // The classification heads generate nothing.
  auto classifier = models::FindModel("hf_whisper")->create(opt);
  auto* none = dynamic_cast<models::GenerativeWorkload*>(classifier.get());
  CHECK((none == nullptr || none->generator() == nullptr));
}
