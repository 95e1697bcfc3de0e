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
// not match the run is never loaded.
//
// Eval compiles the forward pass. Train compiles the joint forward-backward
// of the model's loss (Workload::SplitTrainStep): one package call returns
// the loss and every parameter's gradient and updates the buffers in place;
// the model's own optimizer then steps in C++. Models whose train step does
// not split into one loss and one optimizer are unsupported, with the reason.
// Known limit of the export: BatchNorm's num_batches_tracked is not advanced
// (it matters only to BatchNorm with momentum = None, a cumulative average).
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/contract/result.h"
#include "models/workload.h"

namespace torchgauge::collector {

// A compiled backend whose result differs from eager's: a wrong result, which
// the run records as an error, never as unsupported.
struct CompiledResultMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CompiledInductor {
  std::function<torch::Tensor()> forward;     // eval: set when compiled and loaded
  std::function<torch::Tensor()> train_step;  // train: the joint package, then the optimizer step; returns the loss
  std::optional<std::string> unsupported;     // else why, in the exporter's or compiler's own words
};
// Traces, compiles (or finds in the cache) and loads the workload's forward
// (eval) or its joint forward-backward (train), filling `compile` with the
// latency split and the cache outcome. A train package is checked here
// against eager's loss and gradients (compile.check, compile.check_error; a
// mismatch throws); the caller (InstallBackend) checks an eval forward's
// output and installs what was compiled.
//
// With `freeze` (the inductor_frozen backend, eval only), Inductor compiles
// with freezing: the weights are constants of the graph, folded and
// prepacked (oneDNN's blocked layouts on CPU) into the package, as
// torch.compile does with torch._inductor.config.freezing. Such a package
// carries the weights of the run that built it, so its cache key holds a
// digest of every parameter and buffer; a train run is unsupported.
CompiledInductor CompileInductor(models::Workload& workload, models::Mode mode, core::CompileInfo& compile,
                                 bool freeze = false);

// The train check's float64 judgement of one output (the loss or a gradient)
// whose float32 difference from eager exceeds the plain tolerance, as
// PyTorch's compiler benchmarks judge accuracy (torch._dynamo.utils.same with
// fp64_ref): it passes when the compiled output's RMSE from the float64 eager
// output is at most `multiplier` times float32 eager's RMSE from it, plus
// tolerance / 10. The multiplier is 3 for a tensor of under 1,000 elements or
// a 1x1 kernel, where noise dominates the measure, else 2. Exposed for tests.
struct Fp64Judgement {
  bool pass = false;
  double compiled_rmse = 0, eager_rmse = 0, multiplier = 0, bound = 0;
};
Fp64Judgement JudgeAgainstFloat64(const torch::Tensor& compiled, const torch::Tensor& eager,
                                  const torch::Tensor& float64, double tolerance);

// The cache key's fields, in the order they are hashed; exposed for tests.
// kind: "forward" (eval) or "joint" (train).
struct PackageKey {
  std::string graph, torch_version, device, isa, inputs;
  int threads = 0;
  std::string kind = "forward";
  std::string Hex() const;
};

}  // namespace torchgauge::collector
