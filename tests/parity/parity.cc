#include "tests/parity/parity.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/io/shell.h"

extern char** environ;

namespace torchgauge::parity {

std::map<std::string, torch::Tensor> Tensors(const c10::IValue& v, const std::string& what) {
  TORCH_CHECK(v.isGenericDict(), "reference field '", what, "' is not a dict");
  std::map<std::string, torch::Tensor> out;
  for (const auto& e : v.toGenericDict()) out[e.key().toStringRef()] = e.value().toTensor();
  return out;
}

namespace {

// Runs the script through the fork server of tests/parity/ref_server.py (the
// ctest fixture ref_server starts it and names its socket in
// TORCHGAUGE_REF_SERVER): the server has imported torch, torchvision and
// transformers once, so the script skips the 7 to 10 s they take to import.
// Returns the script's exit status, or nullopt when no server answers, for
// the caller to run the script itself.
std::optional<int> RunOnRefServer(const std::filesystem::path& script, const std::vector<std::string>& args,
                                  const std::filesystem::path& log) {
  const char* path = std::getenv("TORCHGAUGE_REF_SERVER");
  if (path == nullptr || *path == '\0') return std::nullopt;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path)) return std::nullopt;
  std::strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return std::nullopt;
  }
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const nlohmann::json request = {{"script", script.string()},
                                  {"args", args},
                                  {"log", log.string()},
                                  {"cwd", std::filesystem::current_path().string()},
                                  {"env", env}};
  const std::string line = request.dump() + "\n";
  bool sent = true;
  for (size_t off = 0; sent && off < line.size();) {
    const ssize_t n = send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    sent = n > 0;
    if (sent) off += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[64];
  for (ssize_t n; sent && (n = recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  // No status (the server went away mid-run): a failure, with the log.
  if (!sent || reply.empty() || reply.back() != '\n') return 1;
  return std::stoi(reply);
}

}  // namespace

c10::impl::GenericDict RunReferenceScript(const std::string& script, const std::string& model_id,
                                          const std::vector<std::string>& extra_args) {
  const std::filesystem::path src = TORCHGAUGE_SOURCE_DIR;
  const std::filesystem::path out_dir = std::filesystem::path(TORCHGAUGE_BINARY_DIR) / "parity";
  std::filesystem::create_directories(out_dir);
  // One file per model, arguments and test process: ctest runs a model's
  // cases side by side (pytorch_struct in float64 and float32), and a shared
  // file would hand one case the other's reference.
  std::string tag = model_id;
  for (const auto& a : extra_args) {
    tag += "_";
    for (char c : a) tag += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  tag += '.';
  tag += std::to_string(getpid());
  const auto out = out_dir / (tag + ".pt");
  const auto log = out_dir / (tag + ".log");
  std::filesystem::remove(out);
  const auto script_path = src / "tests/parity" / script;
  std::vector<std::string> args = {"--model", model_id, "--out", out.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::string cmd = core::ShellQuote(TORCHGAUGE_PYTHON) + " " + core::ShellQuote(script_path.string());
  // Appended piece by piece: GCC 12 reports `" " + std::string` at -O2
  // (-Wstringop-overflow, a false positive fixed in 13).
  for (const auto& a : args) {
    cmd += ' ';
    cmd += core::ShellQuote(a);
  }
  std::optional<int> served = RunOnRefServer(script_path, args, log);
  if (!served) {
    // Correct, but each script then imports torch and its libraries again
    // (7 to 10 s on 2 cores): a fixture that failed to keep its server.
    if (const char* server = std::getenv("TORCHGAUGE_REF_SERVER")) {
      std::cerr << "parity: no reference server answers at " << server << "; running " << script
                << " in a new interpreter\n";
    }
    cmd += " > ";
    cmd += core::ShellQuote(log.string());
    cmd += " 2>&1";
  } else {
    cmd = "ref_server: " + cmd;
  }
  const int rc = served ? *served : std::system(cmd.c_str());
  if (rc != 0 || !std::filesystem::exists(out)) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    throw std::runtime_error("reference script failed (" + cmd + "):\n" + ss.str());
  }
  std::vector<char> bytes;
  {
    std::ifstream in(out, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove(out);
  std::filesystem::remove(log);
  return torch::pickle_load(bytes).toGenericDict();
}

Reference ReferenceFromDict(const c10::impl::GenericDict& dict) {
  Reference ref;
  ref.params = Tensors(dict.at("params"), "params");
  ref.inputs = Tensors(dict.at("inputs"), "inputs");
  ref.updated = Tensors(dict.at("updated"), "updated");
  if (dict.contains("grads")) ref.grads = Tensors(dict.at("grads"), "grads");
  ref.output = dict.at("output").toTensor();
  ref.loss = dict.at("loss").toTensor();
  ref.param_count = dict.at("param_count").toInt();
  return ref;
}

Reference RunReference(const std::string& script, const std::string& model_id,
                       const std::vector<std::string>& extra_args) {
  return ReferenceFromDict(RunReferenceScript(script, model_id, extra_args));
}

double RelError(const torch::Tensor& actual, const torch::Tensor& expected) {
  TORCH_CHECK(actual.sizes() == expected.sizes(), "shape mismatch: ", actual.sizes(), " vs ", expected.sizes());
  auto a = actual.detach().to(torch::kCPU, torch::kDouble);
  auto b = expected.detach().to(torch::kCPU, torch::kDouble);
  if (a.numel() == 0) return 0;
  double diff = (a - b).abs().max().item<double>();
  double scale = std::max(b.abs().max().item<double>(), 1e-12);
  return diff / scale;
}

std::map<std::string, std::vector<int64_t>> NamedShapes(torch::nn::Module& net) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& p : net.named_parameters()) out[p.key()] = p.value().sizes().vec();
  for (const auto& b : net.named_buffers()) out[b.key()] = b.value().sizes().vec();
  return out;
}

int64_t ParameterCount(torch::nn::Module& net) {
  int64_t n = 0;
  for (const auto& p : net.parameters()) n += p.numel();
  return n;
}

int64_t MetaParameterCount(const std::string& script, const std::string& model_id) {
  return RunReferenceScript(script, model_id + ".meta").at("param_count").toTensor().item<int64_t>();
}

int64_t CountByLayers(int64_t layers, const std::function<int64_t(int64_t)>& count_at) {
  const int64_t one = count_at(1);
  return one + (layers - 1) * (count_at(2) - one);
}

void CheckSameStructure(torch::nn::Module& net, const Reference& ref) {
  auto ours = NamedShapes(net);
  std::map<std::string, std::vector<int64_t>> theirs;
  for (const auto& [name, t] : ref.params) theirs[name] = t.sizes().vec();
  for (const auto& entry : theirs) {
    const auto& name = entry.first;
    const auto& shape = entry.second;
    INFO("reference tensor ", name);
    auto it = ours.find(name);
    CHECK_MESSAGE(it != ours.end(), "missing in the C++ model: ", name);
    if (it != ours.end()) CHECK(it->second == shape);
  }
  for (const auto& entry : ours) {
    const auto& name = entry.first;
    CHECK_MESSAGE(theirs.count(name) == 1, "not in the reference: ", name);
  }
  CHECK(ParameterCount(net) == ref.param_count);
}

void LoadWeights(torch::nn::Module& net, const Reference& ref) {
  torch::NoGradGuard no_grad;
  auto params = net.named_parameters();
  auto buffers = net.named_buffers();
  for (const auto& [name, t] : ref.params) {
    if (auto* p = params.find(name)) {
      p->copy_(t);
    } else if (auto* b = buffers.find(name)) {
      b->copy_(t);
    } else {
      throw std::runtime_error("reference tensor '" + name + "' has no counterpart in the C++ model");
    }
  }
}

void UseReferenceInputs(models::Workload& workload, const Reference& ref) {
  for (const auto& [name, t] : ref.inputs) {
    auto it = workload.inputs().find(name);
    if (it == workload.inputs().end())
      throw std::runtime_error("reference input '" + name + "' is not a workload input");
    it->second = t.to(it->second.device()).clone();
  }
}

namespace {

// AdamFirstStep: a gradient tensor whose largest element is at most this
// share of the model's largest is rounding noise.
constexpr double kRoundingGradient = 1e-7;

// The worst relative error after the step over the elements Adam's first
// step is well conditioned for (AdamFirstStep); counts the others into `e`.
double AdamStepError(const torch::Tensor& param, const std::string& name, const Reference& ref,
                     const AdamFirstStep& adam, ParityErrors& e) {
  REQUIRE_MESSAGE(ref.grads.count(name) == 1, "AdamFirstStep needs the reference's gradient of ", name);
  REQUIRE_MESSAGE(param.grad().defined(), "no gradient for ", name);
  const auto &g = param.grad(), &g_ref = ref.grads.at(name);
  const auto &expected = ref.updated.at(name), &before = ref.params.at(name);
  // Well conditioned: the first step's direction g / (|g| + eps) is the same
  // to 1e-5 from either side's gradient.
  auto direction = [&](const torch::Tensor& x) {
    auto d = x.to(torch::kDouble);
    return d / (d.abs() + adam.eps);
  };
  auto clear = (direction(g) - direction(g_ref)).abs() <= 1e-5;
  e.elements += param.numel();
  auto unclear = clear.logical_not();
  if (unclear.any().item<bool>()) {
    e.adam_bounded += unclear.sum().item<int64_t>();
    for (const auto& after : {param.detach(), expected}) {
      const double step = (after - before).index({unclear}).abs().max().item<double>() / adam.lr;
      e.adam_bounded_step = std::max(e.adam_bounded_step, step);
    }
  }
  return clear.any().item<bool>() ? RelError(param.detach().index({clear}), expected.index({clear})) : 0.0;
}

// Whether AdamFirstStep's rule covers the parameter `name`.
bool AdamCovers(const std::optional<AdamFirstStep>& adam, const std::string& name) {
  if (!adam) return false;
  if (adam->only.empty()) return true;
  for (const auto& prefix : adam->only) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

ParityErrors MeasureParity(models::Workload& workload, const Reference& ref, uint64_t train_seed,
                           const std::optional<AdamFirstStep>& adam, const std::vector<std::string>& zero_grads) {
  auto& net = workload.net();
  CheckSameStructure(net, ref);
  LoadWeights(net, ref);
  UseReferenceInputs(workload, ref);
  ParityErrors e;
  {
    net.eval();
    torch::NoGradGuard no_grad;
    e.output = RelError(workload.Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(train_seed);
  e.loss = RelError(workload.TrainStep(), ref.loss);
  auto ours = net.named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    const double err = AdamCovers(adam, name) ? AdamStepError(*p, name, ref, *adam, e) : RelError(*p, t);
    if (err > e.updated_max) {
      e.updated_max = err;
      e.worst_param = name;
    }
  }
  double largest_grad = 0;  // the reference's largest gradient element
  for (const auto& [name, g] : ref.grads) largest_grad = std::max(largest_grad, g.abs().max().item<double>());
  for (const auto& entry : ref.grads) {
    const auto& name = entry.first;
    const auto& g = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "gradient of a missing parameter: ", name);
    REQUIRE_MESSAGE(p->grad().defined(), "no gradient for ", name);
    if (std::any_of(zero_grads.begin(), zero_grads.end(), [&](const std::string& s) { return name.ends_with(s); })) {
      ++e.noise_grads;
      e.noise_grad_max = std::max({e.noise_grad_max, p->grad().abs().max().item<double>() / largest_grad,
                                   g.abs().max().item<double>() / largest_grad});
      continue;
    }
    if (AdamCovers(adam, name) && g.abs().max().item<double>() <= kRoundingGradient * largest_grad) {
      // Rounding noise on the reference's side (a gradient that is zero in
      // exact arithmetic): ours must be noise too, not equal to it.
      ++e.noise_grads;
      e.noise_grad_max = std::max(e.noise_grad_max, p->grad().abs().max().item<double>() / largest_grad);
      continue;
    }
    const double err = RelError(p->grad(), g);
    ++e.grads;
    if (err >= e.grads_max) {
      e.grads_max = err;
      e.worst_grad = name;
    }
  }
  return e;
}

ParityErrors CheckModelParity(const std::string& model_id, const std::string& script, double tol, uint64_t train_seed,
                              const std::optional<AdamFirstStep>& adam) {
  const auto* info = models::FindModel(model_id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", model_id);
  auto ref = RunReference(script, model_id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.seed = 0;
  models::SeedAll(0);
  auto workload = info->create(opt);
  ParityErrors e = MeasureParity(*workload, ref, train_seed, adam);
  CheckParityErrors(model_id, ref, e, tol, adam);
  return e;
}

void CheckParityErrors(const std::string& model_id, const Reference& ref, const ParityErrors& e, double tol,
                       const std::optional<AdamFirstStep>& adam) {
  std::cout << "parity " << model_id << ": params " << ref.param_count << ", output rel err " << e.output
            << ", loss rel err " << e.loss << ", updated params max rel err " << e.updated_max << " (" << e.worst_param
            << ")";
  if (e.grads > 0)
    std::cout << ", " << e.grads << " gradients max rel err " << e.grads_max << " (" << e.worst_grad << ")";
  if (adam) {
    std::cout << "; " << e.adam_bounded << " of " << e.elements
              << " elements (first-step directions apart by over 1e-5) held to Adam's bound lr " << adam->lr
              << ": largest step " << e.adam_bounded_step << " lr";
  }
  if (adam || e.noise_grads > 0) {
    std::cout << "; " << e.noise_grads << " gradients rounding noise on both sides: largest " << e.noise_grad_max
              << " of the largest";
  }
  std::cout << std::endl;
  if (adam) {
    CHECK(e.adam_bounded_step <= 1 + 1e-3);
    CHECK(e.adam_bounded * 100 < e.elements);  // the exception stays an exception
  }
  if (adam || e.noise_grads > 0) CHECK(e.noise_grad_max <= 1e-6);
  CHECK(e.output <= tol);
  CHECK(e.loss <= tol);
  CHECK(e.updated_max <= tol);
  CHECK(e.grads_max <= tol);
}

namespace {

// One mode of SmokeCheck; returns the last step's wall and CPU milliseconds.
std::pair<double, double> SmokeMode(const models::ModelInfo& info, models::Mode mode, int steps, bool batch_first) {
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = info.smoke_batch.For(mode);
  opt.smoke = true;
  opt.seed = 0;
  models::SeedAll(0);
  auto w = info.create(opt);
  const bool train = mode == models::Mode::kTrain;
  if (train)
    w->net().train();
  else
    w->net().eval();
  for (int i = 1; i < steps; ++i) w->Step(mode);
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  torch::Tensor out;
  if (train) {
    out = w->TrainStep();
  } else {
    // No-grad, not inference mode: Forward() of the models whose eval needs
    // autograd (lennard_jones' forces, maml's inner loop) turns grad back on.
    torch::NoGradGuard no_grad;
    out = w->Forward();
  }
  const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  INFO(info.id, " ", models::ModeName(mode));
  REQUIRE(out.defined());
  CHECK(torch::isfinite(out).all().item<bool>());
  if (!train && batch_first) CHECK((out.dim() > 0 && out.size(0) == opt.batch_size));
  if (train) {
    for (const auto& item : w->net().named_parameters()) {
      INFO("parameter ", item.key());
      CHECK(torch::isfinite(item.value()).all().item<bool>());
    }
  }
  return {ms, cpu_ms};
}

}  // namespace

void SmokeCheck(const std::string& model_id, const SmokeOptions& options) {
  const auto* info = models::FindModel(model_id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", model_id);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    const bool train = mode == models::Mode::kTrain;
    if (train && options.skip_train) continue;
    if (!(train ? info->supports_train : info->supports_eval)) {
      CHECK_FALSE(info->unsupported_reason.empty());
      std::cout << "smoke " << model_id << " " << models::ModeName(mode) << ": unsupported ("
                << info->unsupported_reason << ")" << std::endl;
      continue;
    }
    const int steps = train ? options.train_steps : options.eval_steps;
    const auto [ms, cpu_ms] = SmokeMode(*info, mode, steps, options.eval_batch_first);
    std::cout << "smoke " << model_id << " " << models::ModeName(mode) << " batch " << info->smoke_batch.For(mode)
              << ": step " << steps << " of " << steps << " " << ms << " ms wall, " << cpu_ms << " ms CPU" << std::endl;
  }
}

}  // namespace torchgauge::parity
