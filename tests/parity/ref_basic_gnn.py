"""Parity reference for basic_gnn_{gcn,gin,sage,edgecnn}, against torch_geometric 2.8.1.

torch_geometric.nn.models' GCN, GIN, GraphSAGE and EdgeCNN as TorchBench's
BasicGNNModel (torchbenchmark/util/framework/gnn/model_factory.py) builds
them: Model(64, 64, num_layers=3), random weights, on a random graph of
10,000 nodes with 64 features and 200,000 edges (randint, self loops and
repeated edges included) drawn here and carried to the C++ model by file.
The train step is the workload's (models/other/basic_gnn.h): the loss
sum(out * randn_like(out)), whose gradient is TorchBench's
out.backward(randn_like(out)), then Adam(lr=1e-3). Without torch_scatter
installed, PyG aggregates with scatter_add_ and scatter_reduce_ on the CPU.
The driver is parity_common.main; every gradient is saved.
"""
import torch
from torch_geometric.nn import GCN, GIN, EdgeCNN, GraphSAGE

from parity_common import main

NODES, EDGES, CHANNELS, LAYERS = 10_000, 200_000, 64, 3
MODELS = {"basic_gnn_gcn": GCN, "basic_gnn_gin": GIN, "basic_gnn_sage": GraphSAGE, "basic_gnn_edgecnn": EdgeCNN}


def loss(model, inputs):
    out = model(inputs["x"], inputs["edge_index"])
    return (out * torch.randn_like(out)).sum()


def build(model_id):
    if model_id not in MODELS:
        raise SystemExit(f"unknown model id {model_id}")
    model = MODELS[model_id](CHANNELS, CHANNELS, num_layers=LAYERS)
    inputs = {"x": torch.randn(NODES, CHANNELS), "edge_index": torch.randint(NODES, (2, EDGES))}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["x"], i["edge_index"]),
        "loss": loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=1e-3),
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
