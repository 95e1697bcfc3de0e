// Parity and smoke tests for opacus_cifar10 (DP-SGD with per-sample
// gradients from layer hooks, models/other/opacus.h) against ref_opacus.py, which
// computes the per-sample gradients by an independent method (torch.func
// vmap(grad(...)) over torchvision's resnet18 with GroupNorm) and re-states
// the clipping, noise and Adam step. Compared: eval logits, the loss, the
// flat per-sample gradient norms, whole per-sample gradients of a few layers,
// the clipped sums of every parameter before the noise, and every parameter
// after the step (the noise drawn from the same seeded global generator in
// the same parameter order).
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <chrono>
#include <iostream>

#include "models/other/opacus.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr double kTol = 1e-4;
const std::string kId = "opacus_cifar10";

std::unique_ptr<models::Workload> MakeWorkload(models::Mode mode, int64_t batch) {
  const auto* info = models::FindModel(kId);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", kId);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  models::SeedAll(0);
  return info->create(opt);
}

// The fields ref_opacus.py saves beyond parity::Reference's.
struct DpReference {
  torch::Tensor per_sample_norms;
  std::map<std::string, torch::Tensor> grad_samples, summed_clipped;
};

DpReference DpFields(const c10::impl::GenericDict& saved) {
  return {saved.at("per_sample_norms").toTensor(), parity::Tensors(saved.at("grad_samples"), "grad_samples"),
          parity::Tensors(saved.at("summed_clipped"), "summed_clipped")};
}

// The worst relative error over the reference's tensors, with its name.
std::pair<double, std::string> WorstOf(const std::map<std::string, torch::Tensor>& ours,
                                       const std::map<std::string, torch::Tensor>& theirs) {
  std::pair<double, std::string> worst{0.0, ""};
  for (const auto& entry : theirs) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto it = ours.find(name);
    REQUIRE_MESSAGE(it != ours.end(), "missing: ", name);
    const double err = parity::RelError(it->second, t);
    if (err > worst.first) worst = {err, name};
  }
  return worst;
}

int64_t ConvWeights(int64_t out, int64_t in, int64_t k) { return out * in * k * k; }

}  // namespace

TEST_CASE("parity opacus_cifar10") {
  const auto saved = parity::RunReferenceScript("ref_opacus.py", kId);
  auto ref = parity::ReferenceFromDict(saved);
  auto dp = DpFields(saved);
  auto w = MakeWorkload(models::Mode::kTrain, ref.output.size(0));
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  const auto& record = models::KeepDpStepRecord(*w);
  double output_err = 0;
  {
    net.eval();
    torch::NoGradGuard no_grad;
    output_err = parity::RelError(w->Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(1234);  // parity_common.TRAIN_SEED, as ref_opacus.py
  const double loss_err = parity::RelError(w->TrainStep(), ref.loss);
  const double norms_err = parity::RelError(record.per_sample_norms, dp.per_sample_norms);
  const auto samples = WorstOf(record.grad_samples, dp.grad_samples);
  const auto summed = WorstOf(record.summed_clipped, dp.summed_clipped);
  std::map<std::string, torch::Tensor> updated;
  for (const auto& p : net.named_parameters()) updated[p.key()] = p.value();
  const auto after = WorstOf(updated, ref.updated);
  std::cout << "parity " << kId << ": params " << ref.param_count << ", output rel err " << output_err
            << ", loss rel err " << loss_err << ", per-sample norms rel err " << norms_err
            << ", per-sample grads max rel err " << samples.first << " (" << samples.second << ")"
            << ", clipped sums max rel err " << summed.first << " (" << summed.second << ")"
            << ", updated params max rel err " << after.first << " (" << after.second << ")" << std::endl;
  std::cout << "  per-sample norms " << record.per_sample_norms << std::endl;
  CHECK(output_err <= kTol);
  CHECK(loss_err <= kTol);
  CHECK(norms_err <= kTol);
  CHECK(samples.first <= kTol);
  CHECK(summed.first <= kTol);
  CHECK(after.first <= kTol);
  CHECK(dp.summed_clipped.size() == 62);  // every parameter
  // The figures are per sample: each sample's gradient differs from the others'.
  const auto& fc = record.grad_samples.at("fc.weight");
  CHECK(parity::RelError(fc[0], fc[1]) > 0.1);
  // Clipping is active (norms above max_grad_norm 1), and the step moved the
  // weights by more than the tolerance (Adam's first step is about lr).
  CHECK(record.per_sample_norms.min().item<double>() > 1.0);
  CHECK(parity::RelError(updated.at("fc.weight"), ref.params.at("fc.weight")) > 10 * kTol);
}

TEST_CASE("parity opacus_cifar10 parameter count") {
  // torchvision resnet18 (BasicBlock x [2, 2, 2, 2], widths 64..512), every
  // norm layer GroupNorm(min(32, C), C) with C weights and C biases, fc 512->10.
  int64_t convs = ConvWeights(64, 3, 7), norms = 2 * 64, in = 64;
  for (int64_t width : {64, 128, 256, 512}) {
    convs += ConvWeights(width, in, 3) + 3 * ConvWeights(width, width, 3);
    norms += 4 * 2 * width;
    if (width != in) {
      convs += ConvWeights(width, in, 1);
      norms += 2 * width;
    }
    in = width;
  }
  const int64_t expected = convs + norms + 512 * 10 + 10;
  CHECK(expected == 11181642);
  auto w = MakeWorkload(models::Mode::kTrain, 1);
  std::cout << "parity " << kId << ": params " << parity::ParameterCount(w->net()) << " (expected " << expected << ")"
            << std::endl;
  CHECK(parity::ParameterCount(w->net()) == expected);
  CHECK(w->net().parameters().size() == 62);
  CHECK(w->net().buffers().empty());  // GroupNorm keeps no running statistics
  auto names = parity::NamedShapes(w->net());
  CHECK(names.at("layer2.0.downsample.1.weight") == std::vector<int64_t>{128});
}

TEST_CASE("smoke opacus_cifar10") {
  const auto* info = models::FindModel(kId);
  REQUIRE(info != nullptr);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    auto w = MakeWorkload(mode, info->smoke_batch.For(mode));
    double ms[2];
    for (double& m : ms) {
      const auto t0 = std::chrono::steady_clock::now();
      w->Step(mode);
      m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    torch::Tensor result;
    if (mode == models::Mode::kTrain) {
      result = w->TrainStep();
    } else {
      torch::NoGradGuard no_grad;
      result = w->Forward();
    }
    CHECK(torch::isfinite(result).all().item<bool>());
    std::cout << "smoke " << kId << " " << models::ModeName(mode) << " batch " << info->smoke_batch.For(mode) << ": "
              << ms[0] << " ms (first), " << ms[1] << " ms (second) per step" << std::endl;
  }
}
