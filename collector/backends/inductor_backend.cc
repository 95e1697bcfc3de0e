#include "collector/backends/inductor_backend.h"

#include "collector/backends/backend.h"

#include <ATen/Version.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/fixup_trace_scope_blocks.h>
#include <torch/csrc/jit/passes/normalize_ops.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/hash.h"
#include "core/io/json_io.h"
#include "core/io/remove_tree.h"
#include "core/io/shell.h"
#include "models/unsupported_error.h"

#ifndef TORCHGAUGE_DEFAULT_PYTHON
#define TORCHGAUGE_DEFAULT_PYTHON ""
#endif
#ifndef TORCHGAUGE_AOTI_COMPILE_SCRIPT
#define TORCHGAUGE_AOTI_COMPILE_SCRIPT ""
#endif

namespace torchgauge::collector {

namespace fs = std::filesystem;
namespace jit = torch::jit;
using Clock = std::chrono::steady_clock;

std::string PackageKey::Hex() const {
  core::Fingerprint f;
  // v3: packages keep every tensor as a supplied constant (v1 packages
  // inlined tensors of up to 8 elements into their code) and are specialised
  // to static shapes (v1 and v2 packages had symbolic sizes).
  f.Add(std::string_view("torchgauge.aoti.v3")).Add(graph).Add(torch_version).Add(device).Add(isa).Add(inputs);
  f.Add(static_cast<int64_t>(threads)).Add(kind);
  return f.Hex();
}

Fp64Judgement JudgeAgainstFloat64(const torch::Tensor& compiled, const torch::Tensor& eager,
                                  const torch::Tensor& float64, double tolerance) {
  auto rmse = [](const torch::Tensor& got, const torch::Tensor& want) -> double {
    if (!want.defined() || !got.defined()) return want.defined() == got.defined() ? 0.0 : INFINITY;
    auto g = got.detach().to(torch::kCPU, torch::kDouble);
    auto w = want.detach().to(torch::kCPU, torch::kDouble);
    if (g.sizes() != w.sizes()) return INFINITY;
    return (g - w).square().mean().sqrt().item<double>();
  };
  Fp64Judgement j;
  j.compiled_rmse = rmse(compiled, float64);
  j.eager_rmse = rmse(eager, float64);
  const bool small = float64.defined() &&
                     (float64.numel() < 1000 || (float64.dim() == 4 && float64.size(2) == 1 && float64.size(3) == 1));
  j.multiplier = small ? 3.0 : 2.0;
  j.bound = j.multiplier * j.eager_rmse + tolerance / 10;
  j.pass = j.compiled_rmse <= j.bound;
  return j;
}

namespace {

// The train check's tolerances: loss and gradients relative to
// max(|eager|, 1) (the reductions of a fused backward run in another order);
// a step with random numbers compares only the loss, loosely.
constexpr double kJointTolerance = 1e-3;
constexpr double kLooseLossTolerance = 0.25;
double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The module's own state, under the attribute names the graph reads them by:
// TorchScript attribute names cannot hold '.', so "layer1.0.conv1.weight"
// becomes "layer1__0__conv1__weight" (no model has "__" in a name).
struct NamedState {
  std::vector<std::pair<std::string, torch::Tensor>> parameters, buffers;
};
std::string AttributeName(const std::string& fqn) {
  std::string out;
  for (char c : fqn) out += c == '.' ? std::string("__") : std::string(1, c);
  return out;
}
NamedState StateOf(torch::nn::Module& net) {
  NamedState s;
  for (const auto& p : net.named_parameters(/*recurse=*/true))
    s.parameters.emplace_back(AttributeName(p.key()), p.value());
  for (const auto& b : net.named_buffers(/*recurse=*/true)) {
    if (b.value().defined()) s.buffers.emplace_back(AttributeName(b.key()), b.value());
  }
  return s;
}

// A TorchScript module holding the workload's state as attributes, with the
// `traced` function (the forward pass, or forward and loss) as its "forward"
// method, and the names of the inputs() that method takes, in order.
struct TracedModule {
  jit::Module module;
  std::vector<std::string> input_names;
};
TracedModule TraceToModule(models::Workload& w, const NamedState& state, const std::function<torch::Tensor()>& traced) {
  jit::Module m("__torch__.TorchGaugeInductor");
  for (const auto& [name, t] : state.parameters) m.register_parameter(name, t, /*is_buffer=*/false);
  for (const auto& [name, t] : state.buffers) m.register_buffer(name, t);
  std::vector<std::string> names = TracedInputNames(w);
  jit::Stack inputs;
  for (const auto& name : names) inputs.emplace_back(TracedInput(w, name));
  auto [trace, outputs] = jit::tracer::trace(
      std::move(inputs), [&traced](jit::Stack) -> jit::Stack { return {traced()}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false, &m);
  if (outputs.size() != 1 || !outputs[0].isTensor())
    throw std::runtime_error("the traced forward does not return one tensor");
  auto graph = trace->graph;
  jit::FixupTraceScopeBlocks(graph, &m);
  jit::NormalizeOps(graph);
  auto fn = m._ivalue()->compilation_unit()->create_function(c10::QualifiedName(*m.type()->name(), "forward"), graph);
  m.type()->addMethod(fn);
  return {m, names};
}

std::string InputSignature(const std::vector<torch::Tensor>& inputs) {
  std::ostringstream s;
  for (const auto& t : inputs) s << c10::toString(t.scalar_type()) << t.sizes() << t.device() << ";";
  return s.str();
}

fs::path CacheDir() {
  if (const char* c = std::getenv("TORCHGAUGE_CACHE"); c && *c) return fs::path(c) / "aoti";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache/torchgauge/aoti";
}

std::string Setting(const char* env, const char* compiled_in) {
  if (const char* v = std::getenv(env); v && *v) return v;
  return compiled_in;
}

// The last lines of a compiler's output: the exporter's own message, not
// pages of Python traceback.
std::string Tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  size_t end = pos;
  for (size_t n = 0; n < lines && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return text.substr(pos == 0 ? 0 : pos + 1, end - (pos == 0 ? 0 : pos + 1));
}

// Runs tools/aoti_compile.py. Returns why it cannot run on this machine (no
// Python with torch), or nullopt when the package was written; an export or
// compile that fails throws, since that is the compiler failing on the model
// (status error), not a configuration the model declines. A joint compile
// fills `outputs` with the package's outputs by name.
std::optional<std::string> CompilePackage(const fs::path& graph, const fs::path& inputs, const fs::path& package,
                                          int threads, bool joint, bool freeze, core::CompileInfo& compile,
                                          std::vector<std::string>& outputs) {
  // The Python of the LibTorch under test: the package it writes is loaded
  // by this process's LibTorch, so it must be the same release.
  const std::string python = Setting("TORCHGAUGE_TORCH_PYTHON", TORCHGAUGE_DEFAULT_PYTHON);
  const std::string script = Setting("TORCHGAUGE_AOTI_COMPILE", TORCHGAUGE_AOTI_COMPILE_SCRIPT);
  if (python.empty() || script.empty()) {
    return std::string(
        "the LibTorch under test has no Python (a C++ distribution): the AOTInductor compile step needs "
        "torch's Python of the same release (set TORCHGAUGE_TORCH_PYTHON)");
  }
  const std::string cmd = core::ShellQuote(python) + " " + core::ShellQuote(script) + " --graph " +
                          core::ShellQuote(graph.string()) + " --inputs " + core::ShellQuote(inputs.string()) +
                          " --out " + core::ShellQuote(package.string()) + " --threads " + std::to_string(threads) +
                          (joint ? " --joint" : "") + (freeze ? " --freeze" : "") + " 2>" +
                          core::ShellQuote((graph.parent_path() / "compile.log").string());
  const core::CommandOutput out = core::RunCapture(cmd);
  if (out.exit_code != 0) {
    std::ifstream log(graph.parent_path() / "compile.log");
    std::stringstream text;
    text << log.rdbuf();
    // The tool's last line names the failure; without it (killed, say), the
    // log's last lines.
    const std::string last = Tail(text.str(), 1);
    const std::string prefix = "aoti_compile failed: ";
    throw std::runtime_error("the export or compile failed: " +
                             (last.starts_with(prefix) ? last.substr(prefix.size()) : Tail(text.str(), 3)));
  }
  const auto j = nlohmann::json::parse(Tail(out.output, 1), nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (j.contains("convert_ms") && j["convert_ms"].is_number()) compile.convert_ms = j["convert_ms"].get<double>();
    if (j.contains("compile_ms") && j["compile_ms"].is_number()) compile.compile_ms = j["compile_ms"].get<double>();
  }
  if (joint) {
    if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) {
      throw std::runtime_error("the compile step did not say the joint package's outputs");
    }
    outputs = j["outputs"].get<std::vector<std::string>>();
  }
  return std::nullopt;
}

// A scratch directory for the trace and the example inputs, removed on exit.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "torchgauge-aoti-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch directory for the inductor trace");
    dir = tmpl;
  }
  ~Scratch() { core::RemoveTree(dir); }
};

// The recorded ISA and thread count of a cached package, checked against the
// run's own before it is loaded, whatever the key says; fills a joint
// package's outputs.
bool MetadataMatches(const fs::path& meta, const PackageKey& key, std::vector<std::string>& outputs) {
  std::ifstream in(meta);
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!(j.is_object() && j.value("isa", "") == key.isa && j.value("threads", -1) == key.threads &&
        j.value("torch", "") == key.torch_version && j.value("device", "") == key.device &&
        j.value("kind", "") == key.kind)) {
    return false;
  }
  if (key.kind == "joint") {
    if (!j.contains("outputs") || !j["outputs"].is_array()) return false;
    outputs = j["outputs"].get<std::vector<std::string>>();
  }
  return true;
}

// Whether a traced graph draws random numbers (dropout, sampling): compiled
// code draws them from its own generator, so its values cannot equal eager's.
bool DrawsRandomNumbers(const jit::Graph& graph) {
  for (const jit::Node* node : graph.nodes()) {
    const std::string kind = node->kind().toQualString();
    for (const char* word : {"dropout", "bernoulli", "rand", "normal", "uniform", "multinomial", "exponential"}) {
      if (kind.find(word) != std::string::npos) return true;
    }
  }
  return false;
}

// Largest |got - want| over max(|want|, 1): the check's relative error.
double RelativeError(const torch::Tensor& got, const torch::Tensor& want) {
  if (!want.defined() || !got.defined()) return want.defined() == got.defined() ? 0.0 : INFINITY;
  const auto [diff, scale] = Difference(got, want);
  return diff / std::max(scale, 1.0);
}

// The loss and the gradients of `trained` from one eager step in float64,
// from the same weights, buffers and inputs: the reference that tells float32
// rounding from a wrong result. The workload goes to float64 and back
// (Workload::CastTo), then every parameter and buffer gets its own float32
// storage back (set_data), so the optimizer's and the package's tensors hold
// exactly what they held, and the inputs are put back as they were.
// Empty, with `why`, where the step cannot run in float64.
std::vector<torch::Tensor> Float64Step(models::Workload& w, const std::function<torch::Tensor()>& loss_fn,
                                       const std::vector<torch::Tensor>& trained, std::string& why) {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> state;  // (tensor, its float32 data)
  for (const auto& p : w.net().parameters()) state.emplace_back(p, p.data());
  for (const auto& b : w.net().buffers()) state.emplace_back(b, b.data());
  const auto inputs = w.inputs();
  std::vector<torch::Tensor> out;
  w.CastTo(torch::kDouble);
  try {
    torch::AutoGradMode on(true);
    const torch::Tensor loss = loss_fn();
    out = torch::autograd::grad({loss}, trained, {}, /*retain_graph=*/false, /*create_graph=*/false,
                                /*allow_unused=*/true);
    out.insert(out.begin(), loss.detach());
  } catch (const std::exception& e) {
    out.clear();
    why = e.what();
    why = why.substr(0, why.find('\n'));
  }
  w.CastTo(torch::kFloat);
  for (auto& [t, data] : state) t.set_data(data);
  w.inputs() = inputs;
  return out;
}

// Train packages: the loss and every gradient against eager's, from the same
// weights and inputs (each side updates the buffers once, as a warm-up step
// would). Where they differ by more than kJointTolerance, the difference can
// be float32 rounding that the model amplifies: BatchNorm over a 2x2 map at
// batch 1 (resnet50, shufflenet_v2 at the smoke size) leaves eager's own
// float32 gradients 6-9 % from float64's. Then, as PyTorch's compiler
// benchmarks judge accuracy, a float64 eager step is the reference: an output
// within kJointTolerance of eager passes; any other must pass
// JudgeAgainstFloat64. Throws on a mismatch: a wrong result is not an
// unsupported one.
void CheckJoint(torch::inductor::AOTIModelPackageLoader& loader, models::Workload& w,
                const std::vector<std::string>& input_names, const std::function<torch::Tensor()>& loss_fn,
                const std::vector<torch::Tensor>& trained, bool random, core::CompileInfo& compile) {
  std::vector<torch::Tensor> want;  // eager's loss, then its gradients
  {
    torch::AutoGradMode on(true);
    const torch::Tensor loss = loss_fn();
    want = torch::autograd::grad({loss}, trained, {}, /*retain_graph=*/false, /*create_graph=*/false,
                                 /*allow_unused=*/true);
    want.insert(want.begin(), loss.detach());
  }
  const std::vector<torch::Tensor> got = loader.run(TracedInputs(w, input_names));
  double err = RelativeError(got.at(0), want[0]);
  if (random) {
    compile.check = "loss_loose";
    compile.check_error = err;
    if (!(err <= kLooseLossTolerance)) {
      std::ostringstream msg;
      msg << "inductor: the compiled train step's loss " << got.at(0).item<double>() << " is far from eager's "
          << want[0].item<double>() << " (relative " << err << ", tolerance " << kLooseLossTolerance
          << " for a step that draws random numbers)";
      throw CompiledResultMismatch(msg.str());
    }
    return;
  }
  auto name = [](size_t i) { return i == 0 ? std::string("loss") : "gradient " + std::to_string(i - 1); };
  std::vector<double> errors = {err};  // per output, for the float64 stage
  std::string worst = name(0);
  for (size_t i = 1; i < want.size(); ++i) {
    errors.push_back(RelativeError(got.at(i), want[i]));
    if (!(errors[i] <= err)) err = errors[i], worst = name(i);
  }
  compile.check = "loss_and_gradients";
  compile.check_error = err;
  if (err <= kJointTolerance) return;
  std::ostringstream msg;
  msg << "inductor: the compiled train step differs from eager by " << err << " (relative, in the " << worst
      << "; tolerance " << kJointTolerance << ")";
  if (want[0].scalar_type() != torch::kFloat) throw CompiledResultMismatch(msg.str());
  std::string why;
  const std::vector<torch::Tensor> ref = Float64Step(w, loss_fn, trained, why);
  if (ref.size() != want.size()) {
    msg << "; no float64 reference: " << why;
    throw CompiledResultMismatch(msg.str());
  }
  // Recorded: the failing output, or else the one nearest its bound (compiled
  // RMSE over the bound).
  compile.check = "loss_and_gradients_fp64";
  double nearest = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (errors[i] <= kJointTolerance) continue;
    const Fp64Judgement j = JudgeAgainstFloat64(got.at(i), want[i], ref[i], kJointTolerance);
    if (!j.pass || j.compiled_rmse / j.bound > nearest) {
      nearest = j.compiled_rmse / j.bound;
      compile.check_error = j.compiled_rmse;
      compile.check_reference_error = j.eager_rmse;
    }
    if (!j.pass) {
      msg << ", and in the " << name(i) << " its RMSE from a float64 eager step is " << j.compiled_rmse
          << ", more than " << j.multiplier << " times float32 eager's " << j.eager_rmse << " plus "
          << kJointTolerance / 10;
      throw CompiledResultMismatch(msg.str());
    }
  }
}

// Loads a package and hands it the module's own tensors (`by_name`, by
// attribute name). The package reads them where they are: never weights baked
// in by another run that happened to share the key, and a train step's
// optimizer updates reach it. The graph's own tensor constants (a tensor the
// forward creates from literals, which the trace records as a constant and the
// exporter names "_tensor_constantN" or "lifted_tensor_N") stay the
// package's. Any other tensor the package wants and the module lacks is a
// broken package, not a quiet default.
// A frozen package (`frozen`) keeps the weights it folded: nothing is handed.
std::shared_ptr<torch::inductor::AOTIModelPackageLoader> LoadPackage(
    const fs::path& package, const torch::Device& device, const std::map<std::string, torch::Tensor>& by_name,
    bool frozen) {
  auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
      package.string(), "model", /*run_single_threaded=*/false, /*num_runners=*/1,
      device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
  if (frozen) return loader;
  std::unordered_map<std::string, at::Tensor> constants;
  for (const auto& fqn : loader->get_constant_fqns()) {
    auto it = by_name.find(fqn);
    if (it != by_name.end()) {
      constants[fqn] = it->second;
    } else if (!fqn.starts_with("_tensor_constant") && !fqn.starts_with("lifted_tensor")) {
      throw std::runtime_error("inductor: the package reads a tensor the model lacks: " + fqn);
    }
  }
  loader->load_constants(constants, /*use_inactive=*/false, /*check_full_update=*/false, /*user_managed=*/true);
  return loader;
}

// The compiled train step of a joint package whose outputs are `outputs`
// ("loss", then the trained parameters' attribute names), after checking it
// against eager (CheckJoint): the package's gradients go to .grad, then the
// model's optimizer steps.
std::function<torch::Tensor()> JointTrainStep(std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader,
                                              models::Workload& w, const std::vector<std::string>& input_names,
                                              const std::vector<std::string>& outputs,
                                              const std::map<std::string, torch::Tensor>& by_name,
                                              const models::Workload::TrainParts& parts, bool random,
                                              core::CompileInfo& compile) {
  std::vector<torch::Tensor> trained;
  for (size_t i = 1; i < outputs.size(); ++i) {
    auto it = by_name.find(outputs[i]);
    if (it == by_name.end()) {
      throw std::runtime_error("inductor: the joint package returns the gradient of " + outputs[i] +
                               ", which the model lacks");
    }
    trained.push_back(it->second);
  }
  CheckJoint(*loader, w, input_names, parts.loss, trained, random, compile);
  return [loader, &w, input_names, trained, optimizer = parts.optimizer] {
    std::vector<torch::Tensor> result = loader->run(TracedInputs(w, input_names));
    for (size_t i = 0; i < trained.size(); ++i) {
      torch::Tensor param = trained[i];
      // A package may return a gradient as a view of another output (the
      // Whisper encoder's, say); the optimizer's zero_grad detaches .grad in
      // place, which a view refuses, so a view is stored as its own copy.
      const torch::Tensor& grad = result[i + 1];
      param.mutable_grad() = grad.is_view() ? grad.clone() : grad;
    }
    optimizer->step();
    return result[0].detach();
  };
}

// A digest of every parameter's and buffer's name, dtype, shape and bytes:
// the weights a frozen package folds in.
std::string WeightsDigest(const NamedState& state) {
  core::Fingerprint f;
  for (const auto* list : {&state.parameters, &state.buffers}) {
    for (const auto& [name, t] : *list) {
      const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
      f.Add(name).Add(std::string_view(c10::toString(c.scalar_type()))).Add(c10::str(c.sizes()));
      f.Add(std::string_view(static_cast<const char*>(c.data_ptr()), c.nbytes()));
    }
  }
  return f.Hex();
}

}  // namespace

CompiledInductor CompileInductor(models::Workload& w, models::Mode mode, core::CompileInfo& compile, bool freeze) {
  CompiledInductor out;
  const bool train = mode == models::Mode::kTrain;
  if (freeze && train) {
    out.unsupported =
        "inductor_frozen: freezing folds the weights into the package as constants, and a train step updates "
        "them; frozen packages run eval only (torch.compile freezes only inference graphs too)";
    return out;
  }
  std::optional<models::Workload::TrainParts> parts;
  if (train) {
    try {
      parts = w.SplitTrainStep();
    } catch (const models::UnsupportedError& e) {  // the model's own reason
      out.unsupported = std::string("inductor: ") + e.what();
      return out;
    }
    if (!parts || !parts->loss || !parts->optimizer) {
      out.unsupported =
          "inductor: a train run compiles the model's forward pass and loss into one joint "
          "forward-backward package and steps the model's optimizer; this model's train step does "
          "not split into one loss and one optimizer step (Workload::SplitTrainStep)";
      return out;
    }
  }
  // Eval traces without autograd; train traces with it, as its steps run.
  torch::AutoGradMode grad_mode(train);
  const std::function<torch::Tensor()> traced_fn =
      train ? parts->loss : std::function<torch::Tensor()>([&w] { return w.Forward(); });
  const NamedState state = StateOf(w.net());
  Scratch scratch;
  auto start = Clock::now();
  TracedModule traced = TraceToModule(w, state, traced_fn);
  const std::vector<std::string>& input_names = traced.input_names;
  compile.trace_ms = MsSince(start);
  const std::vector<torch::Tensor> inputs = TracedInputs(w, input_names);
  const auto graph = traced.module.get_method("forward").graph();
  const bool random = DrawsRandomNumbers(*graph);

  const torch::Device device = inputs.empty() ? torch::Device(torch::kCPU) : inputs.front().device();
  PackageKey key{graph->toString(),          TORCH_VERSION,          device.str(),
                 at::get_cpu_capability(),   InputSignature(inputs), at::get_num_threads(),
                 train ? "joint" : (freeze ? "forward_frozen " + WeightsDigest(state) : "forward")};
  compile.cache_key = key.Hex();
  const fs::path dir = CacheDir();
  fs::create_directories(dir);
  const fs::path package = dir / (compile.cache_key + ".pt2");
  const fs::path meta = dir / (compile.cache_key + ".json");
  std::vector<std::string> outputs;
  compile.cache_hit = fs::exists(package) && MetadataMatches(meta, key, outputs);
  if (!compile.cache_hit) {
    traced.module.save((scratch.dir / "graph.pt").string());
    const std::vector<char> bytes =
        torch::pickle_save(c10::ivalue::Tuple::create(std::vector<c10::IValue>(inputs.begin(), inputs.end())));
    std::ofstream((scratch.dir / "inputs.pt").string(), std::ios::binary).write(bytes.data(), bytes.size());
    if (auto why = CompilePackage(scratch.dir / "graph.pt", scratch.dir / "inputs.pt", package, key.threads, train,
                                  freeze, compile, outputs)) {
      out.unsupported = (freeze ? "inductor_frozen: " : "inductor: ") + *why;
      return out;
    }
    nlohmann::json m = {{"isa", key.isa},       {"threads", key.threads}, {"torch", key.torch_version},
                        {"device", key.device}, {"inputs", key.inputs},   {"kind", key.kind}};
    if (train) m["outputs"] = outputs;
    core::WriteJsonAtomic(meta, m);
  }

  start = Clock::now();
  std::map<std::string, torch::Tensor> by_name;
  for (const auto& [name, t] : state.parameters) by_name[name] = t;
  for (const auto& [name, t] : state.buffers) by_name[name] = t;
  auto loader = LoadPackage(package, device, by_name, freeze);
  compile.load_ms = MsSince(start);
  if (!train) {
    out.forward = [loader, &w, input_names] { return loader->run(TracedInputs(w, input_names)).at(0); };
    return out;
  }

  out.train_step = JointTrainStep(loader, w, input_names, outputs, by_name, *parts, random, compile);
  return out;
}

}  // namespace torchgauge::collector
