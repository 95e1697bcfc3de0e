#include "collector/backends/backend.h"

#include "collector/backends/inductor_backend.h"
#include "core/contract/vocabulary.h"
#include "models/unsupported_error.h"

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace torchgauge::collector {

namespace jit = torch::jit;

namespace {

// Calls of the compiled forward before timing: the executor's profiling runs
// (jit::getNumProfiledRuns(), 1 by default) and its first optimised runs.
constexpr int kCompileRuns = 3;

// The traced graph's inputs, in a fixed order: parameters and buffers (read
// once: they are updated in place, never replaced), then the workload's
// inputs traced, by name, read again on every call since a workload may
// replace an input tensor between steps (the RL environments do).
jit::Stack GraphInputs(const std::vector<torch::Tensor>& state, models::Workload& w,
                       const std::vector<std::string>& names) {
  jit::Stack s;
  s.reserve(state.size() + names.size());
  s.insert(s.end(), state.begin(), state.end());
  for (const auto& name : names) s.emplace_back(TracedInput(w, name));
  return s;
}

std::function<torch::Tensor()> TraceForward(models::Workload& w) {
  std::vector<torch::Tensor> state = w.net().parameters();
  for (auto& b : w.net().buffers()) state.push_back(b);
  std::vector<std::string> names = TracedInputNames(w);
  auto [trace, outputs] = jit::tracer::trace(
      GraphInputs(state, w, names), [&w](jit::Stack) -> jit::Stack { return {w.Forward()}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false);
  if (outputs.size() != 1 || !outputs[0].isTensor())
    throw std::runtime_error("the traced forward does not return one tensor");
  auto executor = std::make_shared<jit::GraphExecutor>(trace->graph, "forward");
  return [executor, state = std::move(state), names = std::move(names), &w] {
    jit::Stack s = GraphInputs(state, w, names);
    executor->run(s);
    return s.back().toTensor();
  };
}

}  // namespace

std::vector<std::string> TracedInputNames(models::Workload& w) {
  std::vector<std::string> names;
  for (const auto& [name, t] : w.inputs()) {
    if (t.defined()) names.push_back(name);
  }
  return names;
}

const torch::Tensor& TracedInput(models::Workload& w, const std::string& name) {
  auto it = w.inputs().find(name);
  if (it == w.inputs().end() || !it->second.defined())
    throw std::runtime_error("the traced input '" + name + "' is no longer among the workload's inputs");
  return it->second;
}

std::vector<torch::Tensor> TracedInputs(models::Workload& w, const std::vector<std::string>& names) {
  std::vector<torch::Tensor> in;
  in.reserve(names.size());
  for (const auto& name : names) in.push_back(TracedInput(w, name));
  return in;
}

// Largest absolute difference, and the reference's largest magnitude.
std::pair<double, double> Difference(const torch::Tensor& got, const torch::Tensor& want) {
  auto g = got.detach().to(torch::kCPU, torch::kDouble);
  auto w = want.detach().to(torch::kCPU, torch::kDouble);
  if (g.sizes() != w.sizes()) return {INFINITY, 0};
  return {(g - w).abs().max().item<double>(), w.abs().max().item<double>()};
}

std::optional<std::string> BackendUnsupported(const std::string& backend, const std::string& precision) {
  if (backend == "eager") return std::nullopt;
  if (backend == "torchscript" || core::IsInductorBackend(backend)) {
    if (precision.starts_with("amp")) {
      return backend + " runs a graph traced outside autocast; this collector does not trace under autocast (" +
             precision + ")";
    }
    return std::nullopt;
  }
  return "backend '" + backend + "' is not implemented in this collector version (eager, torchscript, inductor and inductor_frozen run)";
}

namespace {
// The eval check of a compiled forward: its output against eager's from the
// same inputs, recorded in `compile`; a mismatch throws CompiledResultMismatch.
void CheckCompiledForward(const std::string& backend, models::Workload& workload,
                          const std::function<torch::Tensor()>& compiled, std::optional<core::CompileInfo>* compile) {
  // Both sides from the same inputs: a forward may update its inputs in
  // place (pyhpc_turbulent_kinetic_energy integrates tke on), so they are
  // put back, in place, between eager's forward and the compiled one.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> before;  // (input, its values)
  for (auto& [name, t] : workload.inputs()) {
    if (t.defined()) before.emplace_back(t, t.clone());
  }
  const torch::Tensor want = workload.Forward().clone();
  {
    torch::NoGradGuard no_grad;
    for (auto& [t, values] : before) t.copy_(values);
  }
  const torch::Tensor got = compiled();
  const auto [diff, scale] = Difference(got, want);
  const bool half = want.scalar_type() == torch::kHalf || want.scalar_type() == torch::kBFloat16;
  const double tolerance = (half ? 1e-2 : 1e-4) * std::max(scale, 1.0);
  if (compile && *compile) {
    (*compile)->check = "output";
    (*compile)->check_error = diff / std::max(scale, 1.0);
  }
  if (!(diff <= tolerance)) {
    std::ostringstream msg;
    msg << backend << ": the compiled forward's output differs from eager by " << diff << " (tolerance " << tolerance
        << ")";
    throw CompiledResultMismatch(msg.str());
  }
}
}  // namespace

std::optional<std::string> InstallBackend(const std::string& backend, models::Workload& workload, models::Mode mode,
                                          std::optional<core::CompileInfo>* compile) {
  if (backend == "eager") return std::nullopt;
  if (auto why = workload.CompiledForwardUnsupported(mode)) return backend + ": " + *why;
  const bool eval = mode == models::Mode::kEval;
  // Autograd as the mode's steps run: off in eval, on in train (so the graph
  // executor differentiates the graph).
  torch::AutoGradMode grad_mode(!eval);
  std::function<torch::Tensor()> compiled;
  core::CompileInfo info;
  try {
    if (core::IsInductorBackend(backend)) {
      CompiledInductor c;
      try {
        c = CompileInductor(workload, mode, info, /*freeze=*/backend == "inductor_frozen");
      } catch (...) {
        if (compile) *compile = info;  // the phases that ran, and the check that failed
        throw;
      }
      if (compile) *compile = info;
      if (c.unsupported) return c.unsupported;
      if (c.train_step) {
        // Checked against eager's loss and gradients by CompileInductor; the
        // package has no profiling runs to warm up.
        workload.SetCompiledTrainStep(std::move(c.train_step));
        return std::nullopt;
      }
      compiled = std::move(c.forward);
    } else {
      compiled = TraceForward(workload);
    }
  } catch (const CompiledResultMismatch&) {
    throw;  // a wrong result, not an unsupported configuration
  } catch (const models::UnsupportedError&) {
    throw;  // the model's own reason (a run-time library it cannot load, say)
  } catch (const std::exception& e) {
    // A forward that fails in eager too is the model's error, not the
    // compiler's: let that error through. Otherwise the compiler broke on a
    // model that eager runs: a failure (status error), which a comparison
    // sees as worse than ok, never "unsupported".
    workload.Forward();
    throw std::runtime_error(backend + ": the compiler failed on this model (eager runs it): " + e.what());
  }
  if (eval) CheckCompiledForward(backend, workload, compiled, compile);
  // The graph executor profiles the first calls and then optimises (and, for
  // train, builds the differentiated graph); do that here, outside the timed
  // steps, as a user's warm-up would. Train passes also run backward; their
  // gradients are dropped.
  for (int i = 0; i < kCompileRuns; ++i) {
    torch::Tensor out = compiled();
    if (!eval && out.requires_grad()) out.to(torch::kFloat).sum().backward();
  }
  if (!eval) {
    for (auto& p : workload.net().parameters()) p.mutable_grad().reset();
  }
  workload.SetCompiledForward(std::move(compiled));
  return std::nullopt;
}

}  // namespace torchgauge::collector
