// Parity of detectron2_fcos_r_50_fpn (models/vision/detection/fcos.h) with torchvision's FCOS
// ResNet-50-FPN carrying detectron2's config (tests/parity/ref_fcos.py):
// torchvision's weights loaded by name, the reference's two tiny images and
// targets, then the eval outputs (the head's cls_logits, bbox_regression and
// bbox_ctrness, and per image boxes, scores and labels, non-empty), the three
// training losses and every parameter after one SGD step, each within 1e-4.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <iostream>

#include "models/vision/detection/fcos.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr double kTol = 1e-4;

// Compares every tensor of `expected`: same shape, integer tensors equal,
// floating ones within kTol. Returns the worst relative error.
double CompareAll(const std::map<std::string, torch::Tensor>& actual,
                  const std::map<std::string, torch::Tensor>& expected, const std::string& what) {
  double worst = 0;
  for (const auto& entry : expected) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    INFO(what, " ", name);
    auto it = actual.find(name);
    REQUIRE_MESSAGE(it != actual.end(), "missing in the C++ outputs: ", name);
    REQUIRE(it->second.sizes() == t.sizes());
    if (!t.is_floating_point()) {
      CHECK(torch::equal(it->second.cpu(), t));
      continue;
    }
    const double err = parity::RelError(it->second, t);
    CHECK(err <= kTol);
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace

TEST_CASE("detectron2_fcos_r_50_fpn parity: eval detections, three losses and one SGD step against torchvision") {
  // ref_fcos.py saves eval outputs and losses in place of Reference's single
  // output and loss, so only its weight fields are read into one.
  auto dict = parity::RunReferenceScript("ref_fcos.py", "detectron2_fcos_r_50_fpn");
  parity::Reference ref;
  ref.params = parity::Tensors(dict.at("params"), "params");
  ref.inputs = parity::Tensors(dict.at("inputs"), "inputs");
  ref.updated = parity::Tensors(dict.at("updated"), "updated");
  ref.param_count = dict.at("param_count").toInt();
  // fcos_resnet50_fpn's documented 32,269,600 (FrozenBatchNorm2d, 91 classes)
  // less 11 classes of cls_logits (11 x (256 x 9 + 1) = 25,355): 80 classes.
  CHECK(ref.param_count == 32269600 - 25355);

  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = 2;
  models::SeedAll(0);
  models::FcosSettings settings{112, 160, 0.75};  // ref_fcos.py: MIN_SIZE, MAX_SIZE, SCORE_THRESH
  auto workload = models::MakeFcosWorkload(opt, settings);
  parity::CheckSameStructure(workload->net(), ref);
  parity::LoadWeights(workload->net(), ref);
  parity::UseReferenceInputs(*workload, ref);

  const auto expected_eval = parity::Tensors(dict.at("eval"), "eval");
  for (const char* k : {"boxes0", "boxes1"}) REQUIRE(expected_eval.at(k).size(0) > 0);
  const double eval_err = CompareAll(models::FcosEvalOutputs(*workload), expected_eval, "eval");

  torch::manual_seed(1234);  // ref_fcos.py: TRAIN_SEED, before the train step (the transform's torch_choice)
  const double loss_err =
      CompareAll(models::FcosTrainLosses(*workload), parity::Tensors(dict.at("losses"), "losses"), "loss");
  std::map<std::string, torch::Tensor> ours;
  for (const auto& p : workload->net().named_parameters()) ours[p.key()] = p.value();
  const double updated_err = CompareAll(ours, ref.updated, "updated");
  std::cout << "parity detectron2_fcos_r_50_fpn: params " << ref.param_count << ", eval worst rel err " << eval_err
            << ", losses worst rel err " << loss_err << ", updated params worst rel err " << updated_err << std::endl;
}
