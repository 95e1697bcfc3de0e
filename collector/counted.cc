#include "collector/counted.h"

#include <ATen/Version.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/relu_cpu_dispatch.h>
#include <torch/library.h>
#include <valgrind/callgrind.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace torchgauge::collector {

namespace fs = std::filesystem;

std::optional<std::string> ValgrindVersion() {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen("valgrind --version 2>/dev/null", "r"), pclose);
  if (!p) return std::nullopt;
  char buf[128] = {};
  if (!std::fgets(buf, sizeof buf, p.get())) return std::nullopt;
  std::string v(buf);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  if (v.rfind("valgrind-", 0) != 0) return std::nullopt;
  return v;
}

std::vector<std::string> CountedOptions() {
  std::vector<std::string> o = {"--tool=callgrind", "--cache-sim=yes"};
  for (const char* c : core::kCountedCacheOptions) o.push_back(c);
  // Off until the worker's client requests switch them on: the process
  // loads torch and builds the model without the instrumentation's cost.
  o.push_back("--collect-atstart=no");
  o.push_back("--instr-atstart=no");
  return o;
}

std::vector<std::string> CountedCommand(const fs::path& out_file) {
  std::vector<std::string> argv = {"valgrind", "--quiet"};
  for (const auto& o : CountedOptions()) argv.push_back(o);
  argv.push_back("--callgrind-out-file=" + out_file.string());
  return argv;
}

void CapCpuIsa(const std::string& isa) {
  if (isa.empty()) return;
  // ATen reads lower case (default | avx2 | avx512); oneDNN its ISA names in
  // upper case (SSE41, AVX2, ...).
  std::string upper = isa;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  setenv("ATEN_CPU_CAPABILITY", isa.c_str(), 1);
  setenv("ONEDNN_MAX_CPU_ISA", isa == "default" ? "SSE41" : upper.c_str(), 1);
}

std::string AtenCpuCapability() {
  std::string c = at::get_cpu_capability();
  std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return std::toupper(ch); });
  return c;
}

bool RunningOnValgrind() { return RUNNING_ON_VALGRIND != 0; }

namespace {

// Compresses `from` into `to` (gzip) and removes `from`.
void GzipFile(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + from.string());
  fs::create_directories(to.parent_path());
  const fs::path tmp = to.string() + ".tmp";
  gzFile out = gzopen(tmp.c_str(), "wb9");
  if (!out) throw std::runtime_error("cannot write " + tmp.string());
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (gzwrite(out, buf, static_cast<unsigned>(in.gcount())) <= 0) {
      gzclose(out);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  if (gzclose(out) != Z_OK) throw std::runtime_error("cannot write " + tmp.string());
  fs::rename(tmp, to);
  fs::remove(from);
}

fs::path DumpPath(const fs::path& out_file, int n) { return out_file.string() + "." + std::to_string(n); }

}  // namespace

core::Counted CountSteps(const std::function<void()>& step, int repeat, const fs::path& out_file,
                         const std::optional<fs::path>& keep_profile) {
  if (!RunningOnValgrind()) {
    throw std::runtime_error("measure counted: the worker is not running under Valgrind's Callgrind");
  }
  core::Counted out;
  CALLGRIND_START_INSTRUMENTATION;
  // Two steps uncounted: translations made, the simulated caches warm and the
  // allocator's free lists in their steady state (a first instrumented step
  // still missed the last level where later ones did not).
  step();
  step();
  for (int i = 0; i < repeat; ++i) {
    CALLGRIND_TOGGLE_COLLECT;
    step();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("torchgauge counted step");
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  std::vector<int64_t> instructions;
  for (int i = 1; i <= repeat; ++i) {
    out.steps.push_back(core::StepFromEvents(core::ReadCallgrindTotals(DumpPath(out_file, i))));
    instructions.push_back(out.steps.back().instructions);
  }
  // The median step's profile is the one kept (the lower median for an even count).
  std::vector<int64_t> sorted = instructions;
  std::sort(sorted.begin(), sorted.end());
  const int64_t median = sorted[(sorted.size() - 1) / 2];
  const int keep = static_cast<int>(std::find(instructions.begin(), instructions.end(), median) - instructions.begin());
  for (int i = 1; i <= repeat; ++i) {
    if (keep_profile && i == keep + 1) {
      GzipFile(DumpPath(out_file, i), *keep_profile);
    } else {
      fs::remove(DumpPath(out_file, i));
    }
  }
  out.options = CountedOptions();
  std::string cache;
  for (const char* c : core::kCountedCacheOptions) cache += (cache.empty() ? "" : " ") + std::string(c + 2);
  out.cache_model = cache;
  out.cpu_capability = AtenCpuCapability();
  return out;
}

// ---------------------------------------------------------------- the planted cost

// A fixed loop whose iterations the optimiser cannot remove (volatile), in a
// function of its own that the profile names.
extern "C" __attribute__((noinline)) void torchgauge_planted_cost(long iterations) {
  volatile long sink = 0;
  for (long i = 0; i < iterations; ++i) sink = sink + i;
}

namespace {

long g_planted_iterations = 0;

at::Tensor PlantedRelu(const at::Tensor& self) {
  torchgauge_planted_cost(g_planted_iterations);
  return at::cpu::relu(self);
}

at::Tensor PlantedAddmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                        const at::Scalar& alpha) {
  torchgauge_planted_cost(g_planted_iterations);
  return at::cpu::addmm(self, mat1, mat2, beta, alpha);
}

}  // namespace

void PlantCost(const std::string& spec) {
  const auto eq = spec.find('=');
  const std::string op = spec.substr(0, eq);
  long n = 0;
  try {
    n = eq == std::string::npos ? 0 : std::stol(spec.substr(eq + 1));
  } catch (const std::exception&) {
    n = 0;
  }
  if (n <= 0) throw std::invalid_argument("--plant-cost '" + spec + "': expected OP=ITERATIONS, ITERATIONS > 0");
  if (op != "aten::relu" && op != "aten::addmm") {
    throw std::invalid_argument("--plant-cost: only aten::relu and aten::addmm can be wrapped, not '" + op + "'");
  }
  g_planted_iterations = n;
  // Lives for the process: the registration ends with the Library.
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
  if (op == "aten::relu") {
    lib->impl("relu", TORCH_FN(PlantedRelu));
  } else {
    lib->impl("addmm", TORCH_FN(PlantedAddmm));
  }
}

}  // namespace torchgauge::collector
