// Parity and smoke tests for the NLP family: hf_bert, hf_gpt2 and hf_t5
// against transformers (ref_transformers.py), and the parameter count of
// attention_is_all_you_need_pytorch against the published architecture.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// Builds the workload at its smoke batch size for each supported mode, runs
// Step() twice and checks that what it produced is finite.
void Smoke(const std::string& id) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    if (mode == models::Mode::kTrain && !info->supports_train) continue;
    if (mode == models::Mode::kEval && !info->supports_eval) continue;
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.batch_size = info->smoke_batch.For(mode);
    models::SeedAll(0);
    auto w = info->create(opt);
    w->Step(mode);  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    w->Step(mode);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    torch::Tensor out;
    if (mode == models::Mode::kTrain) {
      out = w->TrainStep();
    } else {
      c10::InferenceMode guard;
      out = w->Forward();
    }
    CHECK(out.defined());
    CHECK(torch::isfinite(out).all().item<bool>());
    if (mode == models::Mode::kTrain) {
      for (const auto& p : w->net().parameters()) {
        REQUIRE(torch::isfinite(p).all().item<bool>());
      }
    }
    std::cout << "smoke " << id << " " << models::ModeName(mode) << " batch " << opt.batch_size << ": " << ms
              << " ms/step" << std::endl;
  }
}

}  // namespace

TEST_CASE("parity hf_bert") { parity::CheckModelParity("hf_bert", "ref_transformers.py"); }
TEST_CASE("smoke hf_bert") { Smoke("hf_bert"); }
