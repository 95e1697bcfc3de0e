// Parity of basic_gnn_{gcn,gin,sage,edgecnn} (models/other/basic_gnn.h)
// against torch_geometric 2.8.1's GCN, GIN, GraphSAGE and EdgeCNN
// (ref_basic_gnn.py) with the reference's weights and graph (10,000 nodes,
// 200,000 edges, TorchBench's size): the eval output, the train step's loss,
// every gradient and the parameters after Adam's first step (AdamFirstStep's
// rule for the elements whose gradients nearly cancel over the graph).
#include <doctest/doctest.h>

#include <string>

#include "models/other/basic_gnn.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

void GnnParity(const std::string& id) {
  const auto* info = models::FindModel(id);
  REQUIRE(info != nullptr);
  const auto ref = parity::RunReference("ref_basic_gnn.py", id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = 1;  // one graph, as TorchBench
  models::SeedAll(0);
  auto w = info->create(opt);
  const parity::AdamFirstStep adam{.lr = 1e-3};
  const auto e = parity::MeasureParity(*w, ref, 1234, adam);
  CHECK(e.grads + e.noise_grads == ref.grads.size());
  parity::CheckParityErrors(id, ref, e, 1e-4, adam);
}

}  // namespace

TEST_CASE("parity basic_gnn_gcn") { GnnParity("basic_gnn_gcn"); }
TEST_CASE("parity basic_gnn_gin") { GnnParity("basic_gnn_gin"); }
TEST_CASE("parity basic_gnn_sage") { GnnParity("basic_gnn_sage"); }
TEST_CASE("parity basic_gnn_edgecnn") { GnnParity("basic_gnn_edgecnn"); }
