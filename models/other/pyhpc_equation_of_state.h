// pyhpc_equation_of_state: TorchBench's pyhpc_equation_of_state, the seawater
// equation-of-state kernel of dionhaefner/pyhpc-benchmarks
// (benchmarks/equation_of_state). It evaluates gsw_dHdT, the analytical
// derivative with respect to Conservative Temperature of the dynamic
// enthalpy, for the computationally efficient 48-term expression of
// specific volume in terms of (SA, CT, p) (IOC, SCOR and IAPSO 2010, TEOS-10;
// McDougall and Barker's GSW toolbox). It has no parameters: it is a long
// chain of element-wise fp64 operations, which is what the benchmark probes.
//
// Inputs follow TorchBench's _generate_inputs(size): a grid of shape
// (ceil(2 n^(1/3)), ceil(2 n^(1/3)), ceil(n^(1/3) / 4)) for problem size n,
// Absolute Salinity s ~ U(0.01, 10) g/kg, Conservative Temperature
// t ~ U(-12, 20) degC on that grid and sea pressure p ~ U(0, 1000) dbar of
// shape (1, 1, nz), all float64 (NumPy's default dtype there).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <array>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// The 48 coefficients v01..v48 of the specific-volume expression, as in
// GSW's gsw_specvol (48-term): v = N(SA, CT, p) / D(SA, CT, p) with the
// denominator D using v01..v20 and the numerator N using v21..v48.
extern const std::array<double, 48> kGsw48Coefficients;

// The pyhpc grid shape TorchBench uses for problem size n.
std::vector<int64_t> PyhpcGridShape(int64_t size);

// TorchBench wraps the kernel in a parameterless nn.Module (EquationOfState);
// so do we, so that net() is a real (empty) module.
struct EquationOfStateImpl : torch::nn::Module {
  // dH/dCT in J/(kg K) for Absolute Salinity `sa`, Conservative Temperature
  // `ct` and sea pressure `p` (broadcastable).
  torch::Tensor forward(const torch::Tensor& sa, const torch::Tensor& ct, const torch::Tensor& p);
};
TORCH_MODULE(EquationOfState);

void AddPyhpcEquationOfStateModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
