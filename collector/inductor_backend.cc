#include "collector/inductor_backend.h"

#include <ATen/Version.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/fixup_trace_scope_blocks.h>
#include <torch/csrc/jit/passes/normalize_ops.h>
#include <torch/serialize.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "core/hash.h"
#include "core/json_io.h"
#include "core/remove_tree.h"
#include "core/shell.h"

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
  f.Add(std::string_view("torchgauge.aoti.v1")).Add(graph).Add(torch_version).Add(device).Add(isa).Add(inputs);
  f.Add(static_cast<int64_t>(threads));
  return f.Hex();
}

namespace {

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
  for (const auto& p : net.named_parameters(/*recurse=*/true)) s.parameters.emplace_back(AttributeName(p.key()), p.value());
  for (const auto& b : net.named_buffers(/*recurse=*/true)) {
    if (b.value().defined()) s.buffers.emplace_back(AttributeName(b.key()), b.value());
  }
  return s;
}

std::vector<torch::Tensor> InputsOf(models::Workload& w) {
  std::vector<torch::Tensor> in;
  for (auto& [name, t] : w.inputs()) {
    if (t.defined()) in.push_back(t);
  }
  return in;
}

// A TorchScript module holding the workload's state as attributes, with the
// traced forward as its "forward" method.
jit::Module TraceToModule(models::Workload& w, const NamedState& state) {
  jit::Module m("__torch__.TorchGaugeInductor");
  for (const auto& [name, t] : state.parameters) m.register_parameter(name, t, /*is_buffer=*/false);
  for (const auto& [name, t] : state.buffers) m.register_buffer(name, t);
  jit::Stack inputs;
  for (auto& t : InputsOf(w)) inputs.emplace_back(t);
  auto [trace, outputs] = jit::tracer::trace(
      std::move(inputs), [&w](jit::Stack) -> jit::Stack { return {w.Forward()}; },
      [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false, &m);
  if (outputs.size() != 1 || !outputs[0].isTensor()) throw std::runtime_error("the traced forward does not return one tensor");
  auto graph = trace->graph;
  jit::FixupTraceScopeBlocks(graph, &m);
  jit::NormalizeOps(graph);
  auto fn = m._ivalue()->compilation_unit()->create_function(c10::QualifiedName(*m.type()->name(), "forward"), graph);
  m.type()->addMethod(fn);
  return m;
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

// Runs tools/aoti_compile.py; returns the failure message or nullopt.
std::optional<std::string> CompilePackage(const fs::path& graph, const fs::path& inputs, const fs::path& package,
                                          int threads, core::CompileInfo& compile) {
  const std::string python = Setting("TORCHGAUGE_PYTHON", TORCHGAUGE_DEFAULT_PYTHON);
  const std::string script = Setting("TORCHGAUGE_AOTI_COMPILE", TORCHGAUGE_AOTI_COMPILE_SCRIPT);
  if (python.empty() || script.empty()) {
    return std::string("no Python with torch for the AOTInductor compile step (set TORCHGAUGE_PYTHON)");
  }
  const std::string cmd = core::ShellQuote(python) + " " + core::ShellQuote(script) + " --graph " +
                          core::ShellQuote(graph.string()) + " --inputs " + core::ShellQuote(inputs.string()) +
                          " --out " + core::ShellQuote(package.string()) + " --threads " + std::to_string(threads) +
                          " 2>" + core::ShellQuote((graph.parent_path() / "compile.log").string());
  const core::CommandOutput out = core::RunCapture(cmd);
  if (out.exit_code != 0) {
    std::ifstream log(graph.parent_path() / "compile.log");
    std::stringstream text;
    text << log.rdbuf();
    return "the export or compile failed: " + Tail(text.str(), 3);
  }
  const auto j = nlohmann::json::parse(Tail(out.output, 1), nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (j.contains("convert_ms") && j["convert_ms"].is_number()) compile.convert_ms = j["convert_ms"].get<double>();
    if (j.contains("compile_ms") && j["compile_ms"].is_number()) compile.compile_ms = j["compile_ms"].get<double>();
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
// run's own before it is loaded, whatever the key says.
bool MetadataMatches(const fs::path& meta, const PackageKey& key) {
  std::ifstream in(meta);
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("isa", "") == key.isa && j.value("threads", -1) == key.threads &&
         j.value("torch", "") == key.torch_version && j.value("device", "") == key.device;
}

}  // namespace

CompiledForward CompileInductor(models::Workload& w, models::Mode mode, core::CompileInfo& compile) {
  CompiledForward out;
  if (mode == models::Mode::kTrain) {
    out.unsupported = "inductor: train runs need the joint forward-backward package, which this collector version "
                      "does not build yet (eval runs are compiled)";
    return out;
  }
  torch::NoGradGuard no_grad;
  const NamedState state = StateOf(w.net());
  const std::vector<torch::Tensor> inputs = InputsOf(w);
  Scratch scratch;
  auto start = Clock::now();
  jit::Module traced = TraceToModule(w, state);
  compile.trace_ms = MsSince(start);

  const torch::Device device = inputs.empty() ? torch::Device(torch::kCPU) : inputs.front().device();
  PackageKey key{traced.get_method("forward").graph()->toString(), TORCH_VERSION, device.str(), at::get_cpu_capability(),
                 InputSignature(inputs), at::get_num_threads()};
  compile.cache_key = key.Hex();
  const fs::path dir = CacheDir();
  fs::create_directories(dir);
  const fs::path package = dir / (compile.cache_key + ".pt2");
  const fs::path meta = dir / (compile.cache_key + ".json");
  compile.cache_hit = fs::exists(package) && MetadataMatches(meta, key);
  if (!compile.cache_hit) {
    traced.save((scratch.dir / "graph.pt").string());
    const std::vector<char> bytes = torch::pickle_save(c10::ivalue::Tuple::create(
        std::vector<c10::IValue>(inputs.begin(), inputs.end())));
    std::ofstream((scratch.dir / "inputs.pt").string(), std::ios::binary).write(bytes.data(), bytes.size());
    if (auto why = CompilePackage(scratch.dir / "graph.pt", scratch.dir / "inputs.pt", package, key.threads, compile)) {
      out.unsupported = "inductor: " + *why;
      return out;
    }
    core::WriteJsonAtomic(meta, {{"isa", key.isa}, {"threads", key.threads}, {"torch", key.torch_version},
                                     {"device", key.device}, {"inputs", key.inputs}});
  }

  start = Clock::now();
  auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
      package.string(), "model", /*run_single_threaded=*/false, /*num_runners=*/1,
      device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
  // The package reads the module's own tensors: never weights baked in by
  // another run that happened to share the key.
  std::unordered_map<std::string, at::Tensor> constants;
  std::map<std::string, torch::Tensor> by_name;
  for (const auto& [name, t] : state.parameters) by_name[name] = t;
  for (const auto& [name, t] : state.buffers) by_name[name] = t;
  for (const auto& fqn : loader->get_constant_fqns()) {
    if (auto it = by_name.find(fqn); it != by_name.end()) constants[fqn] = it->second;
  }
  loader->load_constants(constants, /*use_inactive=*/false, /*check_full_update=*/false, /*user_managed=*/true);
  compile.load_ms = MsSince(start);
  out.forward = [loader, &w] { return loader->run(InputsOf(w)).at(0); };
  return out;
}

}  // namespace torchgauge::collector
