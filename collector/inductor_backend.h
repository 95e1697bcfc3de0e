// The `inductor` backend: TorchInductor through AOTInductor, from C++.
//
// Prepare (collector side, C++): the workload's native module is traced with
// LibTorch's tracer into a TorchScript graph that reads its parameters and
// buffers as module attributes (prim::GetAttr, not constants), and saved with
// the example inputs.
// Compile (tools/aoti_compile.py in the bootstrap's venv, the only Python at
// collect time and never timed as a step): TorchScript -> ExportedProgram ->
// aoti_compile_and_package, at the run's thread count.
// Run (C++): torch::inductor::AOTIModelPackageLoader runs the package, which
// reads the native module's own tensors (user-managed constants), so a cached
// package never carries another run's weights.
//
// Packages are cached under ~/.cache/torchgauge/aoti/ (TORCHGAUGE_CACHE) by a
// key of the traced graph, torch version, device, CPU ISA, thread count and
// input shapes and dtypes; a package whose recorded ISA or thread count does
// not match the run is never loaded. Eval only in this version: train runs
// are recorded as unsupported with the reason.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/result.h"
#include "models/workload.h"

namespace torchgauge::collector {

struct CompiledForward {
  std::function<torch::Tensor()> forward;   // set when compiled and loaded
  std::optional<std::string> unsupported;  // else why, in the exporter's or compiler's own words
};
// Traces, compiles (or finds in the cache) and loads the workload's forward,
// filling `compile` with the latency split and the cache outcome. The caller
// (InstallBackend) checks the output against eager and installs it.
CompiledForward CompileInductor(models::Workload& workload, models::Mode mode, core::CompileInfo& compile);

// The cache key's fields, in the order they are hashed; exposed for tests.
struct PackageKey {
  std::string graph, torch_version, device, isa, inputs;
  int threads = 0;
  std::string Hex() const;
};

}  // namespace torchgauge::collector
