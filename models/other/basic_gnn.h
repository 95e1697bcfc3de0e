// The four basic_gnn models TorchBench added after the paper (issue 38):
// basic_gnn_gcn, basic_gnn_gin, basic_gnn_sage and basic_gnn_edgecnn,
// torch_geometric's GCN, GIN, GraphSAGE and EdgeCNN (torch_geometric.nn.models,
// the BasicGNN classes) as torchbenchmark/util/framework/gnn/model_factory.py's
// BasicGNNModel builds them: Model(64, 64, num_layers=3), so 64 input and
// 64 hidden channels, no out_channels (the last layer maps to 64), dropout 0,
// ReLU between layers (none after the last), no normalisation, no jumping
// knowledge; the input is a random graph of 10,000 nodes with 64 features
// (randn) and 200,000 edges (randint(num_nodes, (2, num_edges)), self loops
// and repeats included), edge_index[0] the sources and edge_index[1] the
// targets (PyG's flow "source_to_target").
//
// Message passing is written natively with index_select, index_add_ and
// scatter_reduce_ (deterministic on the CPU), as torch_geometric 2.8.1 does
// without torch_scatter:
//   - GCNConv (Kipf & Welling 2017): add_remaining_self_loops (self loops
//     removed, then one per node, weight 1), deg = in-degree over the targets,
//     norm = deg^-1/2[src] * deg^-1/2[dst]; out = sum_src norm * (x W^T)[src]
//     + bias. The normalisation is recomputed in every forward (cached=False).
//   - GINConv (Xu et al. 2019): nn(sum_src x[src] + (1 + eps) x) with eps a
//     buffer at 0 (train_eps=False) and nn = MLP([in, out, out]): Linear, ReLU,
//     Linear.
//   - SAGEConv (Hamilton et al. 2017): lin_l(mean_src x[src]) + lin_r(x), lin_r
//     without bias; a node without in-edges averages to 0.
//   - EdgeConv (Wang et al. 2019, DGCNN): max over in-edges of
//     nn([x_dst, x_src - x_dst]), nn = MLP([2 in, out, out]); a node without
//     in-edges gets 0 (scatter_reduce amax, include_self=False, on zeros).
// Module names follow torch_geometric's (convs.<i>.lin.weight, convs.<i>.bias,
// convs.<i>.nn.lins.<j>.*, convs.<i>.eps, convs.<i>.lin_l.*, lin_r.weight), so
// its state dict loads by name in the parity test.
//
// The workload: eval is one forward pass. TorchBench's train is forward,
// out.backward(torch.randn_like(out)) and no optimizer step; here the loss is
// sum(out * randn_like(out)) (the same gradient, the randn drawn in every step
// as TorchBench draws it) and one Adam(lr 1e-3) step follows, the optimizer of
// TorchBench's other GNN harness (GNNModel in the same file), so that the step
// is the paper's Listing 1. TorchBench does not allow another batch size
// (ALLOW_CUSTOMIZE_BSIZE = False, batch 1); a batch of b here is b such
// graphs as one disjoint union, as PyG batches graphs. Smoke runs shrink the
// graph to 1,000 nodes and 20,000 edges (the same mean degree of 20).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

enum class GnnKind { kGcn, kGin, kSage, kEdgeCnn };

// One message-passing layer: x [nodes, in] and edge_index [2, edges] (sources,
// targets) to [nodes, out].
struct GnnConvImpl : torch::nn::Module {
  virtual torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index) = 0;
};

// torch_geometric's BasicGNN with `kind`'s convolution: num_layers layers,
// ReLU between them.
struct BasicGnnImpl : torch::nn::Module {
  BasicGnnImpl(GnnKind kind, int64_t in_channels, int64_t hidden_channels, int64_t num_layers);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index);
  torch::nn::ModuleList convs{nullptr};
};
TORCH_MODULE(BasicGnn);

// Registers basic_gnn_gcn, basic_gnn_gin, basic_gnn_sage and basic_gnn_edgecnn.
void AddBasicGnnModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
