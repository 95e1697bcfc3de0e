// Parity and smoke tests for the docTR pair (models/vision/detection/doctr.cc) against
// python-doctr 1.1.0 itself (tests/parity/ref_doctr.py): the reference's
// state dict (BatchNorm statistics calibrated on the input, see the script)
// is loaded into the C++ models by name.
//  - doctr_det_predictor (eval only, as TorchBench): names, shapes and count
//    of every parameter and buffer; the sigmoid probability map of
//    db_resnet50 on a 1 x 3 x 128 x 128 input.
//  - doctr_reco_predictor: the same structure check; the logits of
//    crnn_vgg16_bn on a 2 x 3 x 32 x 128 batch; then one train step (CTC loss
//    of CRNN.compute_loss, clip_grad_norm_ 5, train.py's Adam): the loss and
//    every parameter after the step.
#include <doctest/doctest.h>

#include <iostream>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

std::unique_ptr<models::Workload> Build(const std::string& id, models::Mode mode, int64_t batch, bool smoke) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.smoke = smoke;
  models::SeedAll(0);
  return info->create(opt);
}

}  // namespace

TEST_CASE("parity doctr_det_predictor") {
  const auto saved = parity::RunReferenceScript("ref_doctr.py", "doctr_det_predictor");
  parity::Reference ref;
  ref.params = parity::Tensors(saved.at("params"), "params");
  ref.inputs = parity::Tensors(saved.at("inputs"), "inputs");
  ref.output = saved.at("output").toTensor();
  ref.param_count = saved.at("param_count").toInt();
  auto w = Build("doctr_det_predictor", models::Mode::kEval, ref.inputs.at("images").size(0), /*smoke=*/true);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  net.eval();
  torch::NoGradGuard no_grad;
  const double err = parity::RelError(w->Forward(), ref.output);
  std::cout << "parity doctr_det_predictor: params " << ref.param_count << " (ours " << parity::ParameterCount(net)
            << "), output rel err " << err << " (prob map " << ref.output.sizes() << ", range "
            << ref.output.min().item<double>() << " .. " << ref.output.max().item<double>() << ")" << std::endl;
  CHECK(ref.param_count == 25412162);
  CHECK(err <= 1e-4);
  // Not a saturated map: the calibrated statistics keep the sigmoid off 0 / 1.
  CHECK(ref.output.min().item<double>() > 1e-3);
  CHECK(ref.output.max().item<double>() < 1 - 1e-3);
}

TEST_CASE("parity doctr_reco_predictor") {
  auto ref = parity::RunReference("ref_doctr.py", "doctr_reco_predictor");
  auto w = Build("doctr_reco_predictor", models::Mode::kTrain, ref.inputs.at("images").size(0), /*smoke=*/true);
  const parity::ParityErrors e = parity::MeasureParity(*w, ref, 1234);  // parity_common.TRAIN_SEED
  int64_t moved = 0;
  for (const auto& [name, t] : ref.updated) {
    if (!torch::equal(t, ref.params.at(name))) ++moved;
  }
  std::cout << "parity doctr_reco_predictor: params " << ref.param_count << ", logits rel err " << e.output
            << ", CTC loss " << ref.loss.item<double>() << " rel err " << e.loss << ", updated params max rel err "
            << e.updated_max << " (" << e.worst_param << "), " << moved << " of " << ref.updated.size()
            << " parameters moved" << std::endl;
  CHECK(ref.param_count == 15808447);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
  CHECK(moved == static_cast<int64_t>(ref.updated.size()));  // Adam moves every parameter with a gradient
}

TEST_CASE("smoke doctr_det_predictor") {
  parity::SmokeCheck("doctr_det_predictor", {.eval_batch_first = true});
  CHECK_FALSE(models::FindModel("doctr_det_predictor")->supports_train);
}
