// lennard_jones: TorchBench's lennard_jones, a small neural network potential
// fitted to the Lennard-Jones pair potential. TorchBench adapted it from
// muhrin/milad (GPLv3); every fact below comes from
// torchbenchmark/models/lennard_jones/__init__.py:
//   - network: nn.Sequential(Linear(1,16), Tanh, Linear(16,16), Tanh,
//     Linear(16,16), Tanh, Linear(16,16), Tanh, Linear(16,1)), mapping a pair
//     distance r to an energy;
//   - target: V(r) = epsilon ((sigma/r)^12 - (sigma/r)^6) with sigma = 0.5,
//     epsilon = 4.0 (note: epsilon, not the textbook 4 epsilon, multiplies
//     the bracket), and the force magnitude F(r) = -dV/dr =
//     -epsilon (-12 sigma^12 / r^13 + 6 sigma^6 / r^7);
//   - data: batch_size displacement vectors dr = (r, 0, 0) for r =
//     linspace(0.5, 2 sigma, batch_size); energy targets V(|dr|) and force
//     targets F(|dr|) * dr (TorchBench scales the displacement, not the unit
//     vector; we keep that);
//   - prediction: energies E = net(|dr|), forces -dE/dr * dr / |dr|, the
//     derivative taken by autograd through the network (TorchBench:
//     functorch vmap(jacrev(model)); here torch::autograd::grad, which gives
//     the same per-sample derivative because samples are independent);
//   - loss: mse(E) + 0.01 * mse(forces) / 3; optimizer Adam(lr = 1e-3);
//   - DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1000.
// Training therefore differentiates twice (double backward through tanh),
// which is the point of the benchmark. Eval also needs autograd for the
// forces, so it runs with grad mode on rather than under inference mode.
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/types.h>

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

inline constexpr double kLennardJonesSigma = 0.5;
inline constexpr double kLennardJonesEpsilon = 4.0;

// The target functions of TorchBench's lennard_jones (see above).
torch::Tensor LennardJonesEnergy(const torch::Tensor& r);
torch::Tensor LennardJonesForce(const torch::Tensor& r);

// The 1-16-16-16-16-1 tanh MLP, as an nn::Sequential so parameter names are
// "0.weight" ... "8.bias" like the Python nn.Sequential.
torch::nn::Sequential MakeLennardJonesNet();

void AddLennardJonesModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
