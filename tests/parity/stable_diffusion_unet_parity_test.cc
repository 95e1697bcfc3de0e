// Parity and smoke tests for Stable Diffusion's conditional UNet
// (models/vision/generation/stable_diffusion_unet.cc) against diffusers'
// UNet2DConditionModel (tests/parity/ref_stable_diffusion_unet.py, diffusers
// 0.39.0, fp32), for stable_diffusion_unet (SD2's UNet) and
// stable_diffusion_xl (SDXL's, with the text_time added embedding), both at
// their reduced configurations:
//  - names, shapes and count of every parameter, the reference's weights
//    loaded by name;
//  - the eval output (2 x 4 x 32 x 32 latents, timesteps 1 and 981, 8 text
//    tokens);
//  - the backward pass of that forward: every parameter's gradient of
//    sum(output * cotangent). TorchBench trains neither model (train()
//    raises NotImplementedError), so there is no loss or optimizer step to
//    compare; the gradients check the backward the compiled backends see.
// The published configurations' parameter counts (865,910,724 and
// 2,567,463,684) are checked against diffusers' models built on the meta
// device, through SdUnetParameterCount, which is itself checked against the
// whole C++ model at the reduced configurations.
#include <doctest/doctest.h>

#include <iostream>
#include <string>

#include "models/vision/generation/stable_diffusion_unet.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kScript = "ref_stable_diffusion_unet.py";

void SdUnetParity(const std::string& id) {
  const auto saved = parity::RunReferenceScript(kScript, id);
  parity::Reference ref;
  ref.params = parity::Tensors(saved.at("params"), "params");
  ref.inputs = parity::Tensors(saved.at("inputs"), "inputs");
  ref.output = saved.at("output").toTensor();
  ref.param_count = saved.at("param_count").toInt();
  const auto grads = parity::Tensors(saved.at("grads"), "grads");
  const auto cotangent = saved.at("cotangent").toTensor();

  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kEval;
  opt.batch_size = ref.inputs.at("sample").size(0);
  opt.smoke = true;
  models::SeedAll(0);
  auto w = info->create(opt);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  net.eval();

  double output_err = 0;
  {
    torch::NoGradGuard no_grad;
    output_err = parity::RelError(w->Forward(), ref.output);
  }
  net.zero_grad();
  (w->Forward() * cotangent).sum().backward();
  double grads_max = 0;
  std::string worst;
  size_t compared = 0;
  for (const auto& item : net.named_parameters()) {
    INFO("gradient of ", item.key());
    auto it = grads.find(item.key());
    REQUIRE_MESSAGE(it != grads.end(), "no reference gradient for ", item.key());
    REQUIRE(item.value().grad().defined());
    const double err = parity::RelError(item.value().grad(), it->second);
    ++compared;
    if (err > grads_max) grads_max = err, worst = item.key();
  }
  std::cout << "parity " << id << ": params " << ref.param_count << ", output rel err " << output_err << " (|max| "
            << ref.output.abs().max().item<double>() << "), " << compared << " gradients max rel err " << grads_max
            << " (" << worst << ")" << std::endl;
  CHECK(compared == grads.size());
  CHECK(output_err <= 1e-5);
  CHECK(grads_max <= 2e-5);
  // Not a degenerate output: the UNet at random weights gives O(1) values.
  CHECK(ref.output.std().item<double>() > 0.1);
}

void SdUnetParameterCountCheck(const std::string& id, const models::SdUnetConfig& full,
                               const models::SdUnetConfig& smoke, int64_t published) {
  const int64_t reference = parity::MetaParameterCount(kScript, id);
  const int64_t ours = models::SdUnetParameterCount(full);
  const int64_t smoke_counted = models::SdUnetParameterCount(smoke);
  const int64_t smoke_whole = parity::ParameterCount(*models::SdUnet(smoke));
  std::cout << "parity " << id << " parameter count: " << ours << ", reference (meta) " << reference
            << "; reduced configuration " << smoke_whole << " (counted by parts " << smoke_counted << ")" << std::endl;
  CHECK(smoke_counted == smoke_whole);
  CHECK(ours == reference);
  CHECK(ours == published);
}

}  // namespace

TEST_CASE("parity stable_diffusion_unet") { SdUnetParity("stable_diffusion_unet"); }
TEST_CASE("parity stable_diffusion_xl") { SdUnetParity("stable_diffusion_xl"); }

TEST_CASE("parity stable_diffusion_unet parameter count") {
  SdUnetParameterCountCheck("stable_diffusion_unet", models::StableDiffusion2UnetConfig(),
                            models::StableDiffusionUnetSmokeConfig(), 865910724);
}
TEST_CASE("parity stable_diffusion_xl parameter count") {
  SdUnetParameterCountCheck("stable_diffusion_xl", models::StableDiffusionXlUnetConfig(),
                            models::StableDiffusionXlSmokeConfig(), 2567463684);
}

TEST_CASE("smoke stable_diffusion_unet") { parity::SmokeCheck("stable_diffusion_unet", {.eval_batch_first = true}); }
TEST_CASE("smoke stable_diffusion_xl") { parity::SmokeCheck("stable_diffusion_xl", {.eval_batch_first = true}); }
