// Execution backends (DESIGN.md vocabulary): how a run executes the model.
//   eager        LibTorch's eager mode: each operator dispatched as the model's
//                C++ code calls it.
//   torchscript  the model's forward pass traced once (torch::jit::tracer) into
//                a TorchScript graph, then run by the JIT's graph executor,
//                which optimises the graph after its profiling runs (and fuses
//                it on GPU). Loss, backward, optimizer and host-side work stay
//                eager, as in a Python loop around a compiled model. A trace
//                is specialised to the run's input shapes, which never change.
//   inductor     TorchInductor through AOTInductor (inductor_backend.h): the
//                traced forward (eval), or the joint forward-backward of the
//                model's loss (train, the optimizer stepping in C++),
//                compiled ahead of time into a package that LibTorch runs.
//   cudagraph    not implemented: recorded as unsupported, with the reason.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/contract/result.h"
#include "models/workload.h"

namespace torchgauge::collector {

// The compiled result's largest absolute difference from eager's, and eager's
// largest magnitude ({inf, 0} when the shapes differ): the one measure every
// compiled-against-eager check uses.
std::pair<double, double> Difference(const torch::Tensor& got, const torch::Tensor& want);

// The names of the workload's defined inputs() in the order a trace takes
// them, and those inputs looked up again by name. A forward may add entries
// to inputs() (pyhpc_turbulent_kinetic_energy stores a result there), so a
// traced graph must be given exactly the inputs it was traced with, by name,
// never by position in the map as it is later.
std::vector<std::string> TracedInputNames(models::Workload& w);
const torch::Tensor& TracedInput(models::Workload& w, const std::string& name);
std::vector<torch::Tensor> TracedInputs(models::Workload& w, const std::vector<std::string>& names);

// Why `backend` cannot run at `precision`, or nullopt; decided before the
// workload is built.
std::optional<std::string> BackendUnsupported(const std::string& backend, const std::string& precision);

// Installs `backend`'s compiled forward in `workload` (nothing for eager).
// Call after the precision is applied and the net is in `mode`'s train/eval
// state. Returns why this workload cannot run on the backend (the model or
// the platform says so), or nullopt when installed. A trace, export or
// compile that fails on a forward pass eager runs throws: the compiler
// failed, and the run's status is error with the compiler's message. In eval mode the compiled
// output is checked against Forward() once, and an inductor train package
// against eager's loss and gradients; a mismatch throws
// CompiledResultMismatch, since it is a wrong result rather than an
// unsupported configuration. Inductor train installs a compiled train step
// (Workload::SetCompiledTrainStep), the others a compiled forward.
// `compile`, where given, receives the compile latency split of backends
// that record one (inductor), whether or not the compile succeeded.
std::optional<std::string> InstallBackend(const std::string& backend, models::Workload& workload, models::Mode mode,
                                          std::optional<core::CompileInfo>* compile = nullptr);

}  // namespace torchgauge::collector
