// Checks the parity machinery itself on the harness's tiny MLP, and that it
// fails when the weights differ.
#include <doctest/doctest.h>

#include "tests/parity/parity.h"

using namespace torchgauge;

TEST_CASE("parity test_tiny") { parity::CheckModelParity("test_tiny", "ref_test_models.py"); }

TEST_CASE("parity machinery detects a wrong weight") {
  auto ref = parity::RunReference("ref_test_models.py", "test_tiny");
  models::WorkloadOptions opt;
  opt.batch_size = 8;
  auto w = models::FindModel("test_tiny")->create(opt);
  parity::LoadWeights(w->net(), ref);
  parity::UseReferenceInputs(*w, ref);
  {
    torch::NoGradGuard g;
    w->net().named_parameters()["fc2.bias"].add_(1e-2);
    CHECK(parity::RelError(w->Forward(), ref.output) > 1e-4);
  }
}
