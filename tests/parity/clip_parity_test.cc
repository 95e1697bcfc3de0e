// Parity of the CLIP family (models/vision/multimodal/clip.h) against
// transformers 4.57.1 (ref_clip.py), at the reduced configurations that the
// smoke runs build, with the reference's weights:
//  - hf_clip: CLIPModel's eval output ([image_embeds | text_embeds |
//    logits_per_image]) on 4 distinct images and 4 padded captions of
//    different lengths, then one train step (TorchBench's contrastive loss,
//    AdamW): the loss, every gradient, the parameters after the step.
//  - stable_diffusion_text_encoder (eval only, as TorchBench): CLIPTextModel's
//    last hidden state and pooled output.
// Each published configuration's parameter count is checked against the
// reference built on the meta device, and each model's smoke check.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "models/vision/multimodal/clip.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kClipScript = "ref_clip.py";

// A tower's parameters without its layers, plus its layers counted on one.
int64_t ClipTowerLayers(const models::ClipTowerConfig& c) {
  return c.num_hidden_layers * parity::ParameterCount(*models::ClipEncoderLayer(c));
}

// The attention key biases: softmax ignores a shift shared by all keys, so
// their gradient is zero in exact arithmetic and rounding noise on either
// side (transformers' separate k_proj makes it a tensor of its own). Adam's
// first step moves such a tensor by lr g / (|g| + eps), in directions the
// noise decides: they are held to half of lr (a real gradient moves an
// element by about lr; here it is a few hundredths) instead of compared.
bool ClipKeyBias(const std::string& name) { return name.ends_with("self_attn.k_proj.bias"); }

}  // namespace

TEST_CASE("parity hf_clip") {
  const auto* info = models::FindModel("hf_clip");
  REQUIRE(info != nullptr);
  auto ref = parity::RunReference(kClipScript, "hf_clip");
  std::map<std::string, torch::Tensor> key_bias_after;
  for (auto it = ref.updated.begin(); it != ref.updated.end();) {
    if (!ClipKeyBias(it->first)) {
      ++it;
      continue;
    }
    key_bias_after.insert(*it);
    it = ref.updated.erase(it);
  }
  REQUIRE(key_bias_after.size() == 4);  // 2 layers in each tower
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.smoke = true;  // the reduced configuration, which the reference builds
  models::SeedAll(0);
  auto w = info->create(opt);
  // AdamW's first step (lr 5e-4, eps 1e-6) over the parameters the loss
  // reaches; logit_scale gets no gradient on either side and must not move.
  const parity::AdamFirstStep adam{
      .lr = 5e-4, .eps = 1e-6, .only = {"text_model.", "vision_model.", "visual_projection.", "text_projection."}};
  const auto e = parity::MeasureParity(*w, ref, 1234, adam);
  parity::CheckParityErrors("hf_clip", ref, e, 1e-4, adam);
  auto params = w->net().named_parameters();
  double key_bias_step = 0;  // the largest first step of a key bias, either side, in units of lr
  for (const auto& [name, theirs] : key_bias_after) {
    const auto& before = ref.params.at(name);
    for (const auto& after : {params[name].detach(), theirs}) {
      key_bias_step = std::max(key_bias_step, (after - before).abs().max().item<double>() / adam.lr);
    }
  }
  std::cout << "parity hf_clip: attention key biases' first step at most " << key_bias_step << " lr" << std::endl;
  CHECK(key_bias_step <= 0.5);
  auto* scale = params.find("logit_scale");
  REQUIRE(scale != nullptr);
  CHECK_FALSE(scale->grad().defined());
  CHECK(torch::equal(*scale, ref.updated.at("logit_scale")));
  CHECK(ref.param_count == 323649);
  CHECK(e.output <= 1e-5);
  CHECK(e.loss <= 1e-5);
  CHECK(e.grads > 0);
  CHECK(e.grads_max <= 1e-4);
}

TEST_CASE("parity stable_diffusion_text_encoder") {
  const auto saved = parity::RunReferenceScript(kClipScript, "stable_diffusion_text_encoder");
  parity::Reference ref;
  ref.params = parity::Tensors(saved.at("params"), "params");
  ref.inputs = parity::Tensors(saved.at("inputs"), "inputs");
  ref.output = saved.at("output").toTensor();
  ref.param_count = saved.at("param_count").toInt();
  const auto* info = models::FindModel("stable_diffusion_text_encoder");
  REQUIRE(info != nullptr);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kEval;
  opt.batch_size = ref.inputs.at("input_ids").size(0);
  opt.smoke = true;
  models::SeedAll(0);
  auto w = info->create(opt);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  net.eval();
  torch::NoGradGuard no_grad;
  const auto out = w->Forward();
  const double err = parity::RelError(out, ref.output);
  // The pooled row alone: the state at the argmax of the ids.
  const double pooled_err = parity::RelError(out.select(1, -1), ref.output.select(1, -1));
  std::cout << "parity stable_diffusion_text_encoder: params " << ref.param_count << ", output rel err " << err
            << ", pooled rel err " << pooled_err << std::endl;
  CHECK(ref.param_count == 169024);
  CHECK(err <= 1e-5);
  CHECK(pooled_err <= 1e-5);
}

// 151,277,313 (openai/clip-vit-base-patch32) and 340,387,840 (Stable
// Diffusion 2's text encoder) parameters, counted without building every
// layer: the towers without layers, plus one layer times their number.
TEST_CASE("parity hf_clip parameter count") {
  auto config = models::ClipVitBasePatch32Config();
  const int64_t text_layers = ClipTowerLayers(config.text), vision_layers = ClipTowerLayers(config.vision);
  config.text.num_hidden_layers = config.vision.num_hidden_layers = 0;
  const int64_t ours = parity::ParameterCount(*models::ClipModel(config)) + text_layers + vision_layers;
  const int64_t reference = parity::MetaParameterCount(kClipScript, "hf_clip");
  std::cout << "parity hf_clip parameter count: " << ours << ", reference (meta) " << reference << std::endl;
  CHECK(ours == reference);
  CHECK(ours == 151277313);
}

TEST_CASE("parity stable_diffusion_text_encoder parameter count") {
  auto config = models::StableDiffusion2TextConfig();
  const int64_t layers = ClipTowerLayers(config);
  config.num_hidden_layers = 0;
  const int64_t ours = parity::ParameterCount(*models::ClipTextModel(config)) + layers;
  const int64_t reference = parity::MetaParameterCount(kClipScript, "stable_diffusion_text_encoder");
  std::cout << "parity stable_diffusion_text_encoder parameter count: " << ours << ", reference (meta) " << reference
            << std::endl;
  CHECK(ours == reference);
  CHECK(ours == 340387840);
}

TEST_CASE("smoke hf_clip") { parity::SmokeCheck("hf_clip", {.eval_batch_first = true}); }

TEST_CASE("smoke stable_diffusion_text_encoder") {
  parity::SmokeCheck("stable_diffusion_text_encoder", {.eval_batch_first = true});
  CHECK_FALSE(models::FindModel("stable_diffusion_text_encoder")->supports_train);
}
