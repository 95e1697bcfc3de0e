// pyhpc_isoneutral_mixing: TorchBench's pyhpc_isoneutral_mixing, the
// isoneutral_mixing kernel of dionhaefner/pyhpc-benchmarks, itself taken from
// the Veros ocean model (isoneutral_diffusion_pre, after MOM2.1 and the
// functional formulation of Griffies et al. 1998). It computes the
// isoneutral diffusion tensor: the tapered isopycnal slopes Ai_ez, Ai_nz,
// Ai_bx, Ai_by on the faces of the T cells and the diagonal diffusivities
// K_11, K_22, K_33, from salinity/temperature gradients on a staggered grid.
// It has no parameters: the benchmark probes many small strided slicing,
// element-wise and index_put_ ops on fp64 3-D/5-D arrays.
//
// Constants (from the kernel): a linear equation of state with rho0 = 1024,
// betaT = 1.67e-4, betaTs = 1e-5, gammas = 1.1e-8, betaS = 0.78e-3,
// grav = 9.81, theta0 = 283 - 273.15; slope tapering with iso_slopec =
// iso_dslope = 1e-3; K_iso_steep = 50; epsln = 1e-20; time level tau = 0.
//
// As in the reference, the kernel writes its seven results into the output
// arrays it is given (K_11, K_22, K_33 and the 5-D Ai_* arrays); cells outside
// the computed interior keep their input values.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Names of the 23 kernel arguments in TorchBench's order; these are also the
// workload's input names and the reference script's.
extern const std::vector<std::string> kIsoneutralArgumentNames;
// The seven arrays the kernel updates in place, in TorchBench's return order.
extern const std::vector<std::string> kIsoneutralOutputNames;

// TorchBench wraps the kernel in a parameterless nn.Module (IsoneutralMixing).
struct IsoneutralMixingImpl : torch::nn::Module {
  // Runs the kernel on the named arguments (all of kIsoneutralArgumentNames),
  // updating the output arrays in place. Returns K_33, the last array the
  // kernel completes.
  torch::Tensor forward(std::map<std::string, torch::Tensor>& fields);
};
TORCH_MODULE(IsoneutralMixing);

// Seeded random kernel arguments for TorchBench's problem size n, following
// its _generate_inputs (masks ~ Bernoulli(0.8), other fields ~ N(0, 1), Ai_*
// zero), float64 on `device`.
std::map<std::string, torch::Tensor> MakeIsoneutralInputs(int64_t size, torch::Device device);

void AddPyhpcIsoneutralMixingModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
