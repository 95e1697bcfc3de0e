// Parity of sam and sam_fast (models/vision/segmentation/sam.h) with
// transformers' SamModel (tests/parity/ref_sam.py): the reduced
// configuration's weights loaded by name (transformers' names), the
// reference's two images and points, then TorchBench's eval: the image
// embeddings, the low-resolution masks, the IoU scores and the masks upscaled
// to the original size (before the threshold) within 1e-5, and the
// thresholded masks equal wherever the reference's logit is not within
// rounding of 0. sam_fast is checked twice: its attention (through
// scaled_dot_product_attention) in float32 at the same tolerance, and its
// bfloat16 run against the float32 reference at bfloat16's. SAM does not train
// in TorchBench, so there is no train step to compare. The full configuration
// (ViT-H) is checked by its parameter count against the reference's built on
// the meta device.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <iostream>
#include <map>
#include <string>

#include "models/vision/segmentation/sam.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kSamScript = "ref_sam.py";

struct SamErrors {
  std::map<std::string, double> rel;
  int64_t flipped = 0;      // thresholded mask elements that differ
  int64_t flipped_far = 0;  // ... where the reference's logit is not near 0
  int64_t elements = 0;
};

SamErrors MeasureSam(const parity::Reference& ref, const std::map<std::string, torch::Tensor>& expected,
                     const models::SamSettings& settings, double near_zero) {
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kEval;
  opt.batch_size = 2;
  opt.smoke = true;
  models::SeedAll(0);
  auto workload = models::MakeSamWorkload(opt, settings);
  parity::CheckSameStructure(workload->net(), ref);
  parity::LoadWeights(workload->net(), ref);
  parity::UseReferenceInputs(*workload, ref);
  const auto ours = models::SamEvalOutputs(*workload);
  SamErrors e;
  for (const char* name : {"image_embeddings", "pred_masks", "iou_scores", "mask_logits"}) {
    INFO(name);
    const auto& actual = ours.at(name);
    REQUIRE(actual.sizes() == expected.at(name).sizes());
    e.rel[name] = parity::RelError(actual.to(torch::kFloat), expected.at(name));
  }
  const auto& logits = expected.at("mask_logits");
  auto differ = ours.at("masks") != (logits > 0.0);
  e.flipped = differ.sum().item<int64_t>();
  e.flipped_far = (differ & (logits.abs() > near_zero * logits.abs().max())).sum().item<int64_t>();
  e.elements = logits.numel();
  return e;
}

void ReportSam(const std::string& what, const SamErrors& e) {
  std::cout << "parity " << what << ":";
  for (const auto& [name, err] : e.rel) std::cout << " " << name << " " << err;
  std::cout << "; thresholded masks: " << e.flipped << " of " << e.elements << " differ (" << e.flipped_far
            << " away from 0)" << std::endl;
}

struct SamReference {
  parity::Reference ref;
  std::map<std::string, torch::Tensor> eval;
};

SamReference LoadSamReference() {
  auto dict = parity::RunReferenceScript(kSamScript, "sam");
  SamReference r;
  r.ref.params = parity::Tensors(dict.at("params"), "params");
  r.ref.inputs = parity::Tensors(dict.at("inputs"), "inputs");
  r.ref.param_count = dict.at("param_count").toInt();
  r.eval = parity::Tensors(dict.at("eval"), "eval");
  return r;
}

void CheckSamTight(const std::string& what, const SamReference& r, const models::SamSettings& settings) {
  // Masks flip only where the reference's logit is within 1e-5 of the
  // largest of 0.
  const auto e = MeasureSam(r.ref, r.eval, settings, 1e-5);
  ReportSam(what, e);
  for (const auto& entry : e.rel) {
    const double err = entry.second;
    INFO(entry.first);
    CHECK(err <= 1e-5);
  }
  CHECK(e.flipped_far == 0);
}

}  // namespace

// Image embeddings, masks and IoU scores against transformers' SamModel.
TEST_CASE("parity sam") {
  const auto r = LoadSamReference();
  CheckSamTight("sam", r, models::SamSmokeSettings(/*fast=*/false));
}

// SDPA attention in float32, and the bfloat16 run, against transformers'
// SamModel.
TEST_CASE("parity sam_fast") {
  const auto r = LoadSamReference();
  auto settings = models::SamSmokeSettings(/*fast=*/true);
  REQUIRE(settings.config.sdpa);
  REQUIRE((settings.dtype == torch::kBFloat16));
  auto fp32 = settings;
  fp32.dtype = torch::kFloat;
  CheckSamTight("sam_fast (float32)", r, fp32);

  // bfloat16 keeps 8 significant bits: a few per cent through the 2-block
  // encoder and the decoder, and masks flip where the logit is within a few
  // per cent of the largest of 0.
  const auto e = MeasureSam(r.ref, r.eval, settings, 0.05);
  ReportSam("sam_fast (bfloat16)", e);
  for (const auto& entry : e.rel) {
    const double err = entry.second;
    INFO(entry.first);
    CHECK(err <= 0.05);
  }
  CHECK(e.flipped_far == 0);
  CHECK(e.flipped < e.elements / 100);
}

// ViT-H's 641M parameters without building all of them: the C++ model at
// the full widths with 2 blocks (one windowed, one global) and 3 (one more of
// each kind) gives the rest and one block of each kind.
TEST_CASE("parity sam parameter count") {
  const int64_t reference = parity::MetaParameterCount(kSamScript, "sam");
  auto config = models::SamVitHConfig();
  const int64_t blocks = config.vision.num_hidden_layers;
  const auto globals = static_cast<int64_t>(config.vision.global_attn_indexes.size());
  auto count = [&](int64_t depth, std::vector<int64_t> global) {
    auto c = config;
    c.vision.num_hidden_layers = depth;
    c.vision.global_attn_indexes = std::move(global);
    return parity::ParameterCount(*models::SamModel(c));
  };
  const int64_t two = count(2, {1});
  const int64_t windowed = count(3, {1}) - two;
  const int64_t global = count(3, {1, 2}) - two;
  const int64_t full = two + (blocks - globals - 1) * windowed + (globals - 1) * global;
  const int64_t smoke = parity::ParameterCount(*models::SamModel(models::SamSmokeConfig()));
  std::cout << "parity sam parameter count: " << full << " (windowed block " << windowed << ", global block " << global
            << "), reference (meta) " << reference << "; reduced configuration " << smoke << std::endl;
  CHECK(full == reference);
  CHECK(full == 641090608);  // SAM ViT-H's published 641M (sam_vit_h_4b8939.pth)
}
