// pyhpc_turbulent_kinetic_energy: TorchBench's pyhpc_turbulent_kinetic_energy,
// the turbulent_kinetic_energy kernel of dionhaefner/pyhpc-benchmarks, taken
// from the Veros ocean model (integrate_tke, the TKE closure of Gaspar et al.
// 1990 as used in MPIOM/Veros). One time step of the turbulent kinetic energy
// equation on the W grid:
//   1. vertical mixing and dissipation, implicit in z: one tridiagonal system
//      per water column (below the column's bottom cell kbot the rows are
//      identity rows), solved by a forward sweep / back substitution over the
//      depth levels (the Thomas algorithm, as a Python loop over k there);
//   2. a surface correction where the surface flux drains TKE;
//   3. lateral diffusion (explicit, K_h_tke = 2000);
//   4. advection with the superbee flux limiter in x, y and z;
//   5. Adams-Bashforth time stepping of the tendency (AB_eps = 0.1).
// Constants of the kernel: dt_tracer = dt_mom = 1, alpha_tke = 1,
// c_eps = 0.7; time levels tau = 0, taup1 = 1, taum1 = 2.
//
// It has no parameters: like the other pyhpc kernels it probes many small
// strided slices, element-wise ops and in-place updates on fp64 arrays. As in
// the reference the kernel updates tke and dtke in place and returns
// (tke, dtke, tke_surf_corr); tke_surf_corr is float32 there (it is created
// with torch.zeros and no dtype) and so it is here.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// The 21 kernel arguments in TorchBench's order (also the input names).
extern const std::vector<std::string> kTkeArgumentNames;

// TorchBench's parameterless nn.Module (TurbulentKineticEnergy).
struct TurbulentKineticEnergyImpl : torch::nn::Module {
  // Runs integrate_tke on the named arguments, updating fields["tke"] and
  // fields["dtke"] in place and storing tke_surf_corr under that name.
  // Returns tke.
  torch::Tensor forward(std::map<std::string, torch::Tensor>& fields);
};
TORCH_MODULE(TurbulentKineticEnergy);

// Seeded random kernel arguments for problem size n, following TorchBench's
// _generate_inputs: masks ~ Bernoulli(0.8), kbot ~ U{0, nz-1} (int64), all
// other arrays ~ N(0, 1), float64 on `device`.
std::map<std::string, torch::Tensor> MakeTkeInputs(int64_t size, torch::Device device);

void AddPyhpcTurbulentKineticEnergyModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
