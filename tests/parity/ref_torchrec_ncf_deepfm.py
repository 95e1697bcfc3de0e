"""Plain-torch references for the recommendation models beyond the paper's 84
(torchrec_dlrm, ncf, deepfm). None has a pip reference that this project may
install (torchrec needs fbgemm_gpu; NeuMF and DeepFM live in training repos),
so each is re-stated here from its published source, with the module
structure of that source so that the state-dict names are the reference's:

  torchrec_dlrm  torchrec.models.dlrm.DLRM_DCN with the layers of
                 torchrec.modules (MLP/Perceptron, LowRankCrossNet,
                 EmbeddingBagCollection), configured as TorchBench's
                 torchrec_dlrm (args.py defaults), trained as DLRMTrain
                 (BCEWithLogitsLoss) with Adagrad at MLPerf DLRMv2's lr 0.005
                 (TorchBench's 15.0 diverges; see models/recommendation/torchrec_dlrm.h).
  ncf            NeuMF of mlcommons/training recommendation/pytorch/neumf.py
                 with MLPerf v0.5's configuration (-f 64, --layers 256 256
                 128 64), BCEWithLogitsLoss, Adam(lr=0.0005).
  deepfm         DeepFM-D of Guo et al. 2017 (the paper publishes no code;
                 re-stated from its section 2.1 equations) with its Criteo
                 settings, binary cross-entropy on the sigmoid, Adam.

Dataset dimensions (table rows) are the smoke sizes the C++ test builds; the
architecture is the full one. The driver is parity_common.main.
"""
import math

import torch
from torch import nn

from parity_common import main


# ------------------------------------------------------------ torchrec_dlrm

DLRM_TABLES, DLRM_SMOKE_ROWS, DLRM_DIM, DLRM_DENSE_IN = 26, 1_000, 64, 13


class Perceptron(nn.Module):
    def __init__(self, in_size, out_size):
        super().__init__()
        self._linear = nn.Linear(in_size, out_size)

    def forward(self, x):
        return torch.relu(self._linear(x))


class MLP(nn.Module):
    def __init__(self, in_size, layer_sizes):
        super().__init__()
        self._mlp = nn.Sequential(
            *[Perceptron(layer_sizes[i - 1] if i > 0 else in_size, layer_sizes[i]) for i in range(len(layer_sizes))]
        )

    def forward(self, x):
        return self._mlp(x)


class EmbeddingBagCollection(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.embedding_bags = nn.ModuleDict()
        for k in range(DLRM_TABLES):
            # sparse=True stands for the fused FBGEMM update TorchBench uses;
            # torchrec's unsharded module has dense gradients, same numbers.
            self.embedding_bags[f"t_cat_{k}"] = nn.EmbeddingBag(
                rows, DLRM_DIM, mode="sum", include_last_offset=True, sparse=True
            )
        bound = math.sqrt(1.0 / rows)
        with torch.no_grad():
            for bag in self.embedding_bags.values():
                bag.weight.uniform_(-bound, bound)


class SparseArch(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.embedding_bag_collection = EmbeddingBagCollection(rows)

    def forward(self, values, offsets):
        pooled = [bag(values[k], offsets[k]) for k, bag in enumerate(self.embedding_bag_collection.embedding_bags.values())]
        return torch.cat(pooled, dim=1).reshape(-1, DLRM_TABLES, DLRM_DIM)


class DenseArch(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = MLP(DLRM_DENSE_IN, [512, 256, DLRM_DIM])

    def forward(self, x):
        return self.model(x)


class LowRankCrossNet(nn.Module):
    def __init__(self, in_features, num_layers, low_rank):
        super().__init__()
        self.W_kernels = nn.ParameterList(
            [nn.Parameter(nn.init.xavier_normal_(torch.empty(in_features, low_rank))) for _ in range(num_layers)]
        )
        self.V_kernels = nn.ParameterList(
            [nn.Parameter(nn.init.xavier_normal_(torch.empty(low_rank, in_features))) for _ in range(num_layers)]
        )
        self.bias = nn.ParameterList([nn.Parameter(torch.zeros(in_features)) for _ in range(num_layers)])

    def forward(self, x0):
        xl = x0
        for layer in range(len(self.W_kernels)):
            xv = nn.functional.linear(xl, self.V_kernels[layer])
            xw = nn.functional.linear(xv, self.W_kernels[layer])
            xl = x0 * (xw + self.bias[layer]) + xl
        return xl


class InteractionDCNArch(nn.Module):
    def __init__(self):
        super().__init__()
        self.crossnet = LowRankCrossNet((DLRM_TABLES + 1) * DLRM_DIM, 3, 512)

    def forward(self, dense, sparse):
        combined = torch.cat((dense.unsqueeze(1), sparse), dim=1)
        return self.crossnet(combined.reshape(dense.shape[0], -1))


class OverArch(nn.Module):
    def __init__(self, in_features, layer_sizes):
        super().__init__()
        self.model = nn.Sequential(MLP(in_features, layer_sizes[:-1]), nn.Linear(layer_sizes[-2], layer_sizes[-1]))

    def forward(self, x):
        return self.model(x)


class DLRM_DCN(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.sparse_arch = SparseArch(rows)
        self.dense_arch = DenseArch()
        self.inter_arch = InteractionDCNArch()
        self.over_arch = OverArch((DLRM_TABLES + 1) * DLRM_DIM, [512, 512, 256, 1])

    def forward(self, dense, values, offsets):
        embedded_dense = self.dense_arch(dense)
        embedded_sparse = self.sparse_arch(values, offsets)
        return self.over_arch(self.inter_arch(embedded_dense, embedded_sparse)).squeeze(-1)


def build_torchrec_dlrm():
    batch = 2
    model = DLRM_DCN(DLRM_SMOKE_ROWS)
    inputs = {
        "dense_features": torch.randn(batch, DLRM_DENSE_IN),
        "sparse_values": torch.randint(0, DLRM_SMOKE_ROWS, (DLRM_TABLES, batch)),
        "sparse_offsets": torch.arange(batch + 1).repeat(DLRM_TABLES, 1),
        "labels": torch.randint(0, 2, (batch,)).float(),
    }

    def forward(m, x):
        return m(x["dense_features"], x["sparse_values"], x["sparse_offsets"])

    def loss(m, x):
        return nn.functional.binary_cross_entropy_with_logits(forward(m, x), x["labels"])

    return {
        "module": model,
        "inputs": inputs,
        "forward": forward,
        "loss": loss,
        "optimizer": lambda m: torch.optim.Adagrad(m.parameters(), lr=0.005),
    }


# ------------------------------------------------------------------- ncf

NCF_SMOKE_USERS, NCF_SMOKE_ITEMS, NCF_NEG = 2_000, 1_000, 4


class NeuMF(nn.Module):
    """mlcommons/training recommendation/pytorch/neumf.py (MLPerf v0.5)."""

    def __init__(self, nb_users, nb_items, mf_dim, mlp_layer_sizes):
        super().__init__()
        self.mf_user_embed = nn.Embedding(nb_users, mf_dim)
        self.mf_item_embed = nn.Embedding(nb_items, mf_dim)
        self.mlp_user_embed = nn.Embedding(nb_users, mlp_layer_sizes[0] // 2)
        self.mlp_item_embed = nn.Embedding(nb_items, mlp_layer_sizes[0] // 2)
        self.mlp = nn.ModuleList(
            [nn.Linear(mlp_layer_sizes[i - 1], mlp_layer_sizes[i]) for i in range(1, len(mlp_layer_sizes))]
        )
        self.final = nn.Linear(mlp_layer_sizes[-1] + mf_dim, 1)
        for e in (self.mf_user_embed, self.mf_item_embed, self.mlp_user_embed, self.mlp_item_embed):
            e.weight.data.normal_(0.0, 0.01)
        for layer in self.mlp:
            limit = math.sqrt(6.0 / (layer.in_features + layer.out_features))
            layer.weight.data.uniform_(-limit, limit)
        limit = math.sqrt(3.0 / self.final.in_features)
        self.final.weight.data.uniform_(-limit, limit)

    def forward(self, user, item, sigmoid=False):
        xmf = self.mf_user_embed(user) * self.mf_item_embed(item)
        xmlp = torch.cat((self.mlp_user_embed(user), self.mlp_item_embed(item)), dim=1)
        for layer in self.mlp:
            xmlp = nn.functional.relu(layer(xmlp))
        x = self.final(torch.cat((xmf, xmlp), dim=1))
        return torch.sigmoid(x) if sigmoid else x


def build_ncf():
    batch = 1 + NCF_NEG  # one positive and its four negatives
    model = NeuMF(NCF_SMOKE_USERS, NCF_SMOKE_ITEMS, 64, [256, 256, 128, 64])
    user = torch.randint(0, NCF_SMOKE_USERS, (1,))
    inputs = {
        "user": user.repeat(batch),
        "item": torch.randint(0, NCF_SMOKE_ITEMS, (batch,)),
        "label": torch.tensor([1.0] + [0.0] * NCF_NEG).unsqueeze(1),
    }

    def forward(m, x):
        return m(x["user"], x["item"], sigmoid=not m.training)

    def loss(m, x):
        return nn.functional.binary_cross_entropy_with_logits(forward(m, x), x["label"])

    return {
        "module": model,
        "inputs": inputs,
        "forward": forward,
        "loss": loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=0.0005, betas=(0.9, 0.999), eps=1e-8),
    }


# ---------------------------------------------------------------- deepfm

# Criteo Kaggle cardinalities, capped at the smoke size the C++ test builds.
DEEPFM_VOCAB = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194, 27, 14992,
                5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]
DEEPFM_SMOKE_VOCAB = [min(n, 1_000) for n in DEEPFM_VOCAB]
DEEPFM_DENSE, DEEPFM_K = 13, 10


class DeepFM(nn.Module):
    """DeepFM-D of Guo et al. 2017 (section 2.1) with the paper's Criteo settings."""

    def __init__(self, vocab, k=DEEPFM_K, hidden=(400, 400, 400), dropout=0.5):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(n, k) for n in vocab])
        self.first_order = nn.ModuleList([nn.Embedding(n, 1) for n in vocab])
        with torch.no_grad():
            for e in list(self.embeddings) + list(self.first_order):
                e.weight.normal_(0.0, 0.01)
        self.dense_embedding = nn.Parameter(torch.empty(DEEPFM_DENSE, k).normal_(0.0, 0.01))
        self.dense_first_order = nn.Linear(DEEPFM_DENSE, 1)
        layers, width = [], (DEEPFM_DENSE + len(vocab)) * k
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        layers.append(nn.Linear(width, 1))
        self.dnn = nn.Sequential(*layers)

    def forward(self, dense, sparse):
        vectors = torch.stack([emb(sparse[f]) for f, emb in enumerate(self.embeddings)], dim=1)
        dense_vectors = dense.unsqueeze(2) * self.dense_embedding.unsqueeze(0)
        e = torch.cat((dense_vectors, vectors), dim=1)  # [B, 39, k]
        first = torch.cat([w(sparse[f]) for f, w in enumerate(self.first_order)], dim=1)
        y_first = self.dense_first_order(dense) + first.sum(dim=1, keepdim=True)
        y_pair = 0.5 * (e.sum(dim=1) ** 2 - (e ** 2).sum(dim=1)).sum(dim=1, keepdim=True)
        y_dnn = self.dnn(e.flatten(1))
        return torch.sigmoid(y_first + y_pair + y_dnn)


def build_deepfm():
    batch = 2
    model = DeepFM(DEEPFM_SMOKE_VOCAB)
    inputs = {
        "dense": torch.rand(batch, DEEPFM_DENSE),
        "sparse": torch.stack([torch.randint(0, n, (batch,)) for n in DEEPFM_SMOKE_VOCAB]),
        "label": torch.tensor([[1.0], [0.0]]),
    }

    def forward(m, x):
        return m(x["dense"], x["sparse"])

    def loss(m, x):
        return nn.functional.binary_cross_entropy(forward(m, x), x["label"])

    return {
        "module": model,
        "inputs": inputs,
        "forward": forward,
        "loss": loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=0.001),
    }


BUILDERS = {
    "torchrec_dlrm": build_torchrec_dlrm,
    "ncf": build_ncf,
    "deepfm": build_deepfm,
}


def build(model_id):
    if model_id not in BUILDERS:
        raise SystemExit(f"ref_torchrec_ncf_deepfm.py: unknown model {model_id}")
    return BUILDERS[model_id]()


if __name__ == "__main__":
    main(build)
