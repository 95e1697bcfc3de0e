// Parity of the torchvision classifiers (resnet18, resnet50, resnext50_32x4d,
// vgg16, alexnet, squeezenet1_1) with torchvision 0.26 through
// ref_resnet_vgg_alexnet_squeezenet.py, and a smoke run of each at its smoke batch sizes.
#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <iostream>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

bool AllFinite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }

// Builds the workload at its smoke batch size for each supported mode, runs
// Step() twice, checks the result is finite and prints the time per step.
// `published_params` is torchvision's num_params for the architecture, a
// check that needs no Python.
void SmokeRun(const std::string& id, int64_t published_params) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    if (mode == models::Mode::kTrain ? !info->supports_train : !info->supports_eval) continue;
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.batch_size = info->smoke_batch.For(mode);
    opt.smoke = true;  // as the smoke suite builds it: 64x64 images, same architecture
    models::SeedAll(0);
    auto w = info->create(opt);
    CHECK(parity::ParameterCount(w->net()) == published_params);
    CHECK(w->samples_per_step() == opt.batch_size);
    // The first step pays one-off costs (oneDNN primitive creation, Adam
    // state); the second is the figure printed. CPU time is printed too, as
    // wall time on a shared machine says little.
    double wall_ms[2], cpu_ms[2];
    for (int i = 0; i < 2; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const auto cpu_start = std::clock();
      w->Step(mode);
      cpu_ms[i] = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
      wall_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    if (mode == models::Mode::kTrain) {
      auto loss = w->TrainStep();
      CHECK(loss.numel() == 1);
      CHECK(AllFinite(loss));
      for (const auto& p : w->net().parameters()) CHECK(AllFinite(p));
    } else {
      c10::InferenceMode guard;
      auto out = w->Forward();
      CHECK(out.sizes() == torch::IntArrayRef({opt.batch_size, 1000}));
      CHECK(AllFinite(out));
    }
    std::cout << "smoke " << id << " " << models::ModeName(mode) << " batch " << opt.batch_size << ": " << wall_ms[1]
              << " ms/step (first step " << wall_ms[0] << " ms; process CPU " << cpu_ms[1] << " ms)" << std::endl;
  }
}

}  // namespace

TEST_CASE("parity resnet18") { parity::CheckModelParity("resnet18", "ref_resnet_vgg_alexnet_squeezenet.py"); }
TEST_CASE("parity resnet50") { parity::CheckModelParity("resnet50", "ref_resnet_vgg_alexnet_squeezenet.py"); }
TEST_CASE("parity resnext50_32x4d") {
  parity::CheckModelParity("resnext50_32x4d", "ref_resnet_vgg_alexnet_squeezenet.py");
}
// vgg16 and alexnet train with dropout active: the masks match because both
// sides seed TRAIN_SEED and draw them with the same ATen op in the same order.
TEST_CASE("parity vgg16") { parity::CheckModelParity("vgg16", "ref_resnet_vgg_alexnet_squeezenet.py"); }
TEST_CASE("parity alexnet") { parity::CheckModelParity("alexnet", "ref_resnet_vgg_alexnet_squeezenet.py"); }
TEST_CASE("parity squeezenet1_1") { parity::CheckModelParity("squeezenet1_1", "ref_resnet_vgg_alexnet_squeezenet.py"); }

// Published parameter counts: torchvision's weight metadata (num_params).
TEST_CASE("smoke resnet18") { SmokeRun("resnet18", 11689512); }
TEST_CASE("smoke resnet50") { SmokeRun("resnet50", 25557032); }
TEST_CASE("smoke resnext50_32x4d") { SmokeRun("resnext50_32x4d", 25028904); }
TEST_CASE("smoke vgg16") { SmokeRun("vgg16", 138357544); }
TEST_CASE("smoke alexnet") { SmokeRun("alexnet", 61100840); }
TEST_CASE("smoke squeezenet1_1") { SmokeRun("squeezenet1_1", 1235496); }

// The zero train-step errors above are only meaningful if dropout is active
// and the step moves the weights: a different dropout seed must change the
// updated weights behind a dropout layer, and the reference's updated weights
// must differ from its initial ones. (The loss is no witness: against soft
// uniform targets it is nearly independent of small initial logits.)
TEST_CASE("parity alexnet dropout masks and update are not vacuous") {
  auto ref = parity::RunReference("ref_resnet_vgg_alexnet_squeezenet.py", "alexnet");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  auto w = models::FindModel("alexnet")->create(opt);
  parity::LoadWeights(w->net(), ref);
  parity::UseReferenceInputs(*w, ref);
  w->net().train();
  torch::manual_seed(1234 + 1);
  w->TrainStep();
  CHECK(parity::RelError(w->net().named_parameters()["classifier.4.weight"], ref.updated.at("classifier.4.weight")) >
        1e-4);
  CHECK(parity::RelError(ref.updated.at("classifier.1.weight"), ref.params.at("classifier.1.weight")) > 1e-4);
}
