#include "reporter/testing/fixtures.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/peaks.h"
#include "core/contract/result.h"
#include "core/contract/vocabulary.h"
#include "core/io/hash.h"
#include "core/stats/stats.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
};

uint64_t Mix(uint64_t a, uint64_t b) {
  Rng r{a * 0x100000001B3ull ^ b};
  return r.Next();
}

const char* kModelNames[] = {"resnet50",           "hf_bert",   "dlrm",      "soft_actor_critic",
                             "speech_transformer", "pyhpc_eos", "vgg16",     "hf_gpt2",
                             "timm_vit",           "drq",       "tacotron2", "mobilenet_v3"};
// The paper's six domains: the first six of core::kDomains (the test domain comes after them).
const char* DomainAt(int i) { return core::kDomains[i]; }
// Per-domain (active, movement) centres, roughly the paper's Table 2.
const double kCentres[][2] = {{0.55, 0.02}, {0.8, 0.013}, {0.7, 0.004}, {0.15, 0.06}, {0.35, 0.003}, {0.5, 0.01}};

struct Config {
  const char* mode;
  const char* backend;
  const char* precision;
};
const Config kConfigs[] = {{"train", "eager", "fp32"},     {"eval", "eager", "fp32"},
                           {"train", "eager", "tf32"},     {"eval", "eager", "tf32"},
                           {"train", "cudagraph", "fp32"}, {"eval", "cudagraph", "fp32"},
                           {"train", "eager", "amp-bf16"}, {"eval", "eager", "amp-bf16"}};

std::vector<std::string> OpPool() {
  const char* base[] = {"aten::addmm",
                        "aten::mm",
                        "aten::bmm",
                        "aten::convolution",
                        "aten::_convolution",
                        "aten::cudnn_convolution",
                        "aten::relu",
                        "aten::relu_",
                        "aten::gelu",
                        "aten::softmax",
                        "aten::_softmax",
                        "aten::layer_norm",
                        "aten::native_layer_norm",
                        "aten::batch_norm",
                        "aten::native_batch_norm",
                        "aten::add",
                        "aten::add_",
                        "aten::mul",
                        "aten::mul_",
                        "aten::div",
                        "aten::sum",
                        "aten::mean",
                        "aten::view",
                        "aten::reshape",
                        "aten::permute",
                        "aten::transpose",
                        "aten::t",
                        "aten::contiguous",
                        "aten::copy_",
                        "aten::to",
                        "aten::embedding",
                        "aten::embedding_backward",
                        "aten::dropout",
                        "aten::max_pool2d",
                        "aten::adaptive_avg_pool2d",
                        "aten::cat",
                        "aten::stack",
                        "aten::slice",
                        "aten::select",
                        "aten::index",
                        "aten::index_put_",
                        "aten::lstm",
                        "aten::tanh",
                        "aten::sigmoid",
                        "aten::zeros",
                        "aten::ones",
                        "aten::empty",
                        "aten::fill_",
                        "aten::zero_",
                        "aten::nll_loss",
                        "aten::cross_entropy_loss",
                        "aten::mse_loss",
                        "aten::_foreach_add_",
                        "aten::_foreach_mul_",
                        "aten::_foreach_zero_",
                        "aten::sqrt",
                        "aten::rsqrt",
                        "aten::pow",
                        "aten::exp",
                        "aten::log"};
  std::vector<std::string> pool;
  for (const char* b : base) {
    pool.push_back(std::string(b) + ".Tensor");
    pool.push_back(std::string(b));
  }
  return pool;
}

std::string Date(int day_offset, int hour) {
  using namespace std::chrono;
  sys_days d = sys_days(year{2026} / January / 1) + days(day_offset);
  year_month_day ymd{d};
  char buf[64];  // room for any int in each field, so no output can be cut (-Wformat-truncation)
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:00:00Z", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hour);
  return buf;
}

void WriteText(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(p.string() + ": write failed");
}

// What `torchgauge-collect probe` would have found: an A100's attainable
// rates (with the raw-kernel peaks) or a small CPU's (no fp16 matmul).
core::ProbeResult Peaks(bool gpu, const std::string& start) {
  core::ProbeResult p;
  p.device = gpu ? "cuda:0" : "cpu";
  p.measured_at = start;
  auto mm = [](const char* precision, int64_t n, double tflops) {
    core::MatmulPeak m;
    m.precision = precision;
    m.n = n;
    m.repeats = 5;
    m.tflops = tflops;
    m.best_ms = 2.0 * static_cast<double>(n) * n * n / (tflops * 1e12) * 1e3;
    return m;
  };
  core::TriadPeak t;
  t.elements = gpu ? 268435456 : 33554432;
  t.bytes_moved = 3.0 * 4.0 * static_cast<double>(t.elements);
  t.llc_bytes = gpu ? 41943040 : 8388608;
  t.repeats = 10;
  t.gb_per_s = gpu ? 1450.0 : 18.5;
  t.best_ms = t.bytes_moved / (t.gb_per_s * 1e9) * 1e3;
  p.triad = t;
  if (gpu) {
    p.matmul = {mm("fp32", 8192, 18.4), mm("tf32", 8192, 121.0), mm("bf16", 8192, 232.0), mm("fp16", 8192, 240.0)};
    p.kernels = core::KernelPeaks{"raw CUDA kernels (nvcc)", 1380.0, 1420.0, 1310.0, 18.9};
    return p;
  }
  p.threads = 2;
  core::MatmulPeak fp16;
  fp16.precision = "fp16";
  fp16.status = "unsupported";
  fp16.reason = "no fp16 matmul on this CPU";
  p.matmul = {mm("fp32", 2048, 0.105), mm("bf16", 2048, 0.052), fp16};
  return p;
}

json Manifest(const std::string& build, const std::string& platform, bool gpu, const std::string& start,
              const std::string& end, bool other_machine) {
  // A torch commit per build, stable across runs of the generator: 40 hex
  // digits from the build id's fingerprint.
  const std::string h = core::Fingerprint().Add(build).Hex();
  const std::string commit = (h + h + h).substr(0, 40);
  json m = {{"schema_version", 1},
            {"kind", "torchgauge.manifest"},
            {"build_id", build},
            {"platform_id", platform},
            {"collector", {{"version", "0.1.0"}, {"git_sha", "fixture"}}},
            {"libtorch",
             {{"version", "2.11.0"},
              {"git_commit", commit},
              {"build_version", gpu ? "2.11.0+cu130" : "2.11.0+cpu"},
              {"origin", {{"kind", "python-package"}, {"path", "/fixture/site-packages/torch"}}},
              {"cuda_runtime", gpu ? json("13.0") : json(nullptr)},
              {"cudnn", gpu ? json("9.10") : json(nullptr)},
              {"cuda_available", gpu}}},
            {"cpu", other_machine
                        ? json{{"model", "Other Synthetic CPU @ 3.1GHz"}, {"logical_cores", 8}, {"torch_threads", 2}}
                        : json{{"model", "Synthetic CPU @ 2.0GHz"}, {"logical_cores", 2}, {"torch_threads", 2}}},
            {"host", {{"hostname", "fixture-host"}, {"os", "Linux"}, {"kernel", "6.1"}}},
            {"started_at", start},
            {"finished_at", end},
            {"interrupted", false},
            {"suite", {{"name", "fixture"}}}};
  if (gpu) {
    m["device"] = {{"vendor", "NVIDIA"},          {"name", "NVIDIA A100-SXM4-40GB"}, {"compute_capability", "8.0"},
                   {"multiprocessor_count", 108}, {"memory_bytes", 42505273344LL},   {"driver", "580.00"}};
  } else {
    m["device"] = {{"vendor", "CPU"}, {"name", "Synthetic CPU"}};
  }
  m["peaks"] = core::ToJson(Peaks(gpu, start));
  return m;
}

}  // namespace

std::string FixtureBuildId(const FixtureSpec& spec, int index) {
  std::string d = Date(spec.first_day + index, 2);
  return "2.11.0-" + d.substr(0, 4) + d.substr(5, 2) + d.substr(8, 2);
}

namespace {

// Per-model constants, stable across builds. `mr` goes on to draw the
// model's kernel counts, so it is kept by the caller.
struct ModelTraits {
  std::string id;
  int dom = 0;
  double base_ms = 0, active = 0, movement = 0;
  std::vector<std::string> ops;
};

ModelTraits Traits(const FixtureSpec& spec, int m, const std::vector<std::string>& pool, Rng& mr) {
  ModelTraits t;
  const int nnames = static_cast<int>(std::size(kModelNames));
  t.id = m < nnames ? kModelNames[m] : "model_" + std::to_string(m);
  t.dom = m % 6;
  t.base_ms = 2.0 + 200.0 * mr.Uniform();
  t.active = std::clamp(kCentres[t.dom][0] + 0.25 * (mr.Uniform() - 0.5), 0.02, 0.97);
  t.movement = std::clamp(kCentres[t.dom][1] * (0.5 + mr.Uniform()), 0.0, 0.2);
  for (int k = 0; k < spec.ops_per_model; ++k) t.ops.push_back(pool[(mr.Next() % pool.size())]);
  std::sort(t.ops.begin(), t.ops.end());
  t.ops.erase(std::unique(t.ops.begin(), t.ops.end()), t.ops.end());
  return t;
}

core::GpuBreakdown Breakdown(const ModelTraits& mt, double median_ms, Rng& rr, Rng& mr) {
  core::GpuBreakdown g;
  g.iterations = 5;
  g.wall_ms = median_ms;
  double a = std::clamp(mt.active + 0.02 * (rr.Uniform() - 0.5), 0.0, 1.0);
  double mv = std::clamp(mt.movement, 0.0, 1.0 - a);
  g.active_fraction = a;
  g.data_movement_fraction = mv;
  g.idle_fraction = std::max(0.0, 1.0 - a - mv);
  g.active_ms = a * median_ms;
  g.data_movement_ms = mv * median_ms;
  g.idle_ms = g.idle_fraction * median_ms;
  g.kernel_count = 100 + (mr.Next() % 900);
  g.mean_kernel_us = g.active_ms * 1000.0 / g.kernel_count;
  g.top_kernels = {{"ampere_sgemm_128x64_tn", g.active_ms * 0.4, 12},
                   {"void at::native::vectorized_elementwise_kernel<4>", g.active_ms * 0.2, 40}};
  return g;
}

// The host breakdown of a CPU run: the model's compute share stands in for
// the GPU's active share, a copy-heavy model moves more, the rest is outside
// operators. Drawn from its own stream so every other value stays as it was.
core::HostBreakdown HostBreakdownOf(const ModelTraits& mt, double median_ms, Rng& hr) {
  core::HostBreakdown h;
  h.iterations = 5;
  h.wall_ms = median_ms;
  const double compute = std::clamp(0.6 + 0.5 * (mt.active - 0.5) + 0.04 * (hr.Uniform() - 0.5), 0.05, 0.95);
  const double movement = std::clamp(mt.movement * 3.0, 0.0, 1.0 - compute);
  h.compute_fraction = compute;
  h.data_movement_fraction = movement;
  h.outside_operators_fraction = std::max(0.0, 1.0 - compute - movement);
  h.compute_ms = compute * median_ms;
  h.data_movement_ms = movement * median_ms;
  h.outside_operators_ms = h.outside_operators_fraction * median_ms;
  h.operator_ms = h.compute_ms + h.data_movement_ms;
  h.top_level_op_count = 40 + static_cast<double>(hr.Next() % 400);
  for (const char* op : core::kDataMovementOps) h.data_movement_ops.push_back(op);
  h.profiler_overhead_per_op_us = std::round((1.5 + hr.Uniform()) * 100) / 100;
  return h;
}

// What the machine did while the run was timed. About one run in nine (never
// resnet50, whose first configuration the site tests slow down on purpose)
// ran beside another busy process, so the pages show noisy runs.
core::SystemLoad LoadOf(double window_ms, bool gpu, bool busy, Rng& hr) {
  core::SystemLoad l;
  l.window_s = window_ms / 1000.0;
  l.cpus = 2;
  l.own_cpu_cores = gpu ? 1.0 : 1.9 + 0.1 * hr.Uniform();
  l.outside_cpu_cores = busy ? 1.3 + 0.4 * hr.Uniform() : 0.1 * hr.Uniform();
  l.outside_cpu_cores = std::round(l.outside_cpu_cores * 1000) / 1000;
  l.resolution_cores = l.window_s > 0 ? 2.0 * l.cpus / (100.0 * l.window_s) : 0;
  l.loadavg_1m_before = std::round((busy ? 2.5 : 0.4) * (1 + hr.Uniform()) * 100) / 100;
  l.loadavg_1m_after = std::round((busy ? 3.0 : 0.5) * (1 + hr.Uniform()) * 100) / 100;
  return l;
}

// The CPU platform's runs are measured in two worker processes, as
// `torchgauge-collect run --processes 2` pools them.
core::RunResult SplitInTwoProcesses(const core::RunResult& r, int samples) {
  core::RunResult first = r, second = r;
  const auto half = r.timing->samples_ms.begin() + samples / 2;
  first.timing->samples_ms.assign(r.timing->samples_ms.begin(), half);
  second.timing->samples_ms.assign(half, r.timing->samples_ms.end());
  core::SummarizeTiming(*first.timing);
  core::SummarizeTiming(*second.timing);
  return core::PoolProcesses({first, second});
}

// Whether run (m, c) on the GPU carries an alerts-acceptance plant.
bool AcceptancePlanted(const FixtureSpec& spec, int m, int c, bool gpu) {
  if (!gpu || c != 1) return false;
  return (spec.step_at >= 0 && m < spec.step_models) || (spec.drift_model >= 0 && m == spec.drift_model);
}

// The slowdown FixtureSpec plants in run (m, c) of build b.
double Planted(const FixtureSpec& spec, int m, int c, int b, bool gpu) {
  if (!gpu || c != 1) return 1.0;
  double f = 1.0;
  if (spec.plant_at >= 0) {
    const bool step = m == 1 && b >= spec.plant_at, spike = m == 2 && b == spec.plant_at;
    if (step || spike) f *= 1.3;
  }
  if (spec.step_at >= 0 && m < spec.step_models && b >= spec.step_at && (spec.step_until < 0 || b < spec.step_until))
    f *= 1.3;
  if (spec.drift_model >= 0 && m == spec.drift_model && b > spec.drift_from)
    f *= std::pow(1.03, std::min(b - spec.drift_from, spec.drift_builds));
  return f;
}

// Timing, memory, FLOPs and (GPU) breakdown of an ok run.
void Measure(core::RunResult& r, const FixtureSpec& spec, const ModelTraits& mt, const Config& cfg, bool gpu, int m,
             int c, int b, Rng& rr, Rng& mr) {
  double scale = (gpu ? 1.0 : 40.0) * (std::string(cfg.mode) == "train" ? 3.0 : 1.0) *
                 (std::string(cfg.backend) == "cudagraph" ? 0.8 : 1.0) *
                 (std::string(cfg.precision) == "fp32" ? 1.0 : 0.7) * (1.0 + 0.01 * std::sin(b * 0.3 + m));
  scale *= Planted(spec, m, c, b, gpu);
  std::vector<double> samples;
  for (int s = 0; s < spec.samples; ++s) {
    samples.push_back(std::round(mt.base_ms * scale * (1.0 + 0.03 * (rr.Uniform() - 0.5)) * 1e4) / 1e4);
  }
  core::Timing t;
  t.samples_ms = samples;
  t.warmup_iterations = 3;
  t.repetitions = spec.samples;
  t.clock = gpu ? "cuda_event" : "steady_clock";
  t.samples_per_step = r.batch_size;
  // A compiled backend's one-off setup: about twenty steps' worth.
  if (std::string(cfg.backend) != "eager") t.backend_setup_ms = std::round(mt.base_ms * scale * 200) / 10;
  core::SummarizeTiming(t);
  r.timing = t;
  const double median_ms = t.median_ms;
  core::Memory mem;
  // Stable across builds (per model and configuration), as real peaks
  // are, so comparing builds flags only the changes a test plants.
  Rng mc{Mix(Mix(spec.seed, static_cast<uint64_t>(m * 16 + c)), 0x6d656d)};
  mem.cpu_peak_rss_bytes = static_cast<int64_t>(5e8 + 1e9 * mc.Uniform());
  const double gpu_peak = 1e9 + 8e9 * mc.Uniform();
  if (gpu) {
    mem.gpu_peak_allocated_bytes = static_cast<int64_t>(gpu_peak);
    (void)rr.Uniform();  // keeps the per-build stream (and every other value) as it was
  }
  r.memory = mem;
  core::Flops f;
  f.analytic_flops_per_iter = mt.base_ms * 1e9;
  f.achieved_tflops_analytic = *f.analytic_flops_per_iter / (median_ms * 1e-3) / 1e12;
  r.flops = f;
  r.operators = mt.ops;
  if (gpu) r.gpu_breakdown = Breakdown(mt, median_ms, rr, mr);
  if (!gpu && spec.samples >= 4) r = SplitInTwoProcesses(r, spec.samples);
  Rng hr{Mix(Mix(spec.seed, static_cast<uint64_t>(m * 16 + c)),
             static_cast<uint64_t>(b * 4 + (gpu ? 0 : 1)) + 0x686f7374)};
  if (!gpu) r.host_breakdown = HostBreakdownOf(mt, r.timing->median_ms, hr);
  // The runs a test plants changes in are never busy: a noisy side is
  // reported, not counted, and the tests look for the planted regressions.
  const bool planted_run =
      (spec.plant_at >= 0 && gpu && c == 1 && (m == 1 || m == 2)) || AcceptancePlanted(spec, m, c, gpu);
  const bool busy = (m != 0 && hr.Next() % 9 == 0 && !planted_run) || (spec.busy_from >= 0 && b >= spec.busy_from);
  double window_ms = 0;
  for (double v : r.timing->samples_ms) window_ms += v;
  r.system_load = LoadOf(window_ms, gpu, busy, hr);
}

struct FixturePlatform {
  std::string id;
  bool gpu;
};

// One run of model `m` in configuration `c` of build `b` on platform `pi`.
core::RunResult FixtureRun(const FixtureSpec& spec, const ModelTraits& mt, int m, int c, int b, size_t pi,
                           const FixturePlatform& plat, const std::string& build, const std::string& start, Rng& mr) {
  const Config& cfg = kConfigs[c];
  Rng rr{Mix(Mix(spec.seed, static_cast<uint64_t>(m * 16 + c)), static_cast<uint64_t>(b * 4 + pi))};
  core::RunResult r;
  r.build_id = build;
  r.platform_id = plat.id;
  r.model = {mt.id, mt.id, DomainAt(mt.dom), mt.dom == 0 ? "image classification" : "synthetic task",
             "fixture generator"};
  r.mode = cfg.mode;
  r.backend = cfg.backend;
  r.precision = cfg.precision;
  r.batch_size = std::string(cfg.mode) == "train" ? 32 : 64;
  r.device = plat.gpu ? "cuda:0" : "cpu";
  r.started_at = start;
  r.duration_s = 5.0 + rr.Uniform();
  r.settings = core::RunSettings{};
  uint64_t fail = Mix(static_cast<uint64_t>(m * 31 + c), static_cast<uint64_t>(b + 7 * pi)) % 53;
  if (AcceptancePlanted(spec, m, c, plat.gpu)) fail = 2;
  if (fail == 0) {
    r.status = "oom";
    r.reason = "CUDA out of memory. Tried to allocate 2.00 GiB";
  } else if (fail == 1 && std::string(cfg.backend) == "cudagraph") {
    r.status = "unsupported";
    r.reason = "model has data-dependent control flow";
  } else {
    Measure(r, spec, mt, cfg, plat.gpu, m, c, b, rr, mr);
  }
  return r;
}

}  // namespace

size_t GenerateFixtureTree(const fs::path& root, const FixtureSpec& spec) {
  if (spec.configs < 1 || spec.configs > 8) throw std::invalid_argument("configs must be 1..8");
  const auto pool = OpPool();
  size_t files = 0;
  std::vector<FixturePlatform> platforms = {{"nvidia-a100-40gb-cu130", true}};
  if (spec.cpu_platform) platforms.push_back({"cpu-x86_64-2c", false});
  for (int b = 0; b < spec.builds; ++b) {
    if (b == spec.missing_build) continue;
    const std::string build = FixtureBuildId(spec, b);
    for (size_t pi = 0; pi < platforms.size(); ++pi) {
      const auto& plat = platforms[pi];
      if (!plat.gpu && spec.cpu_stops_after >= 0 && b > spec.cpu_stops_after) continue;
      fs::path dir = core::PlatformDir(root, build, plat.id);
      fs::create_directories(core::RunsDir(dir));
      const std::string start = Date(spec.first_day + b, 2 + static_cast<int>(pi));
      WriteText(core::ManifestPath(dir),
                Manifest(build, plat.id, plat.gpu, start, Date(spec.first_day + b, 3 + static_cast<int>(pi)),
                         plat.gpu && spec.machine_change_at >= 0 && b >= spec.machine_change_at)
                        .dump(2) +
                    "\n");
      for (int m = 0; m < spec.models; ++m) {
        // Per-model constants (stable across builds) and per-build drift.
        Rng mr{Mix(spec.seed, static_cast<uint64_t>(m))};
        const ModelTraits mt = Traits(spec, m, pool, mr);
        for (int c = 0; c < spec.configs; ++c) {
          core::RunResult r = FixtureRun(spec, mt, m, c, b, pi, plat, build, start, mr);
          fs::path file = core::RunPath(dir, {r.model.id, r.mode, r.backend, r.precision});
          WriteText(file, core::ToJson(r).dump(1) + "\n");
          ++files;
        }
      }
    }
  }
  return files;
}

}  // namespace torchgauge::reporter
