#include "collector/worker.h"

#include <c10/util/Exception.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <thread>

#include "collector/backends/backend.h"
#include "collector/counted.h"
#include "collector/cuda_support.h"
#include "collector/environment.h"
#include "collector/generation.h"
#include "collector/platform/host_events.h"
#include "collector/precision.h"
#include "collector/profiling.h"
#include "core/contract/layout.h"
#include "core/contract/vocabulary.h"
#include "core/io/json_io.h"
#include "core/stats/stats.h"
#include "core/stats/system_load.h"
#include "models/generator.h"
#include "models/unsupported_error.h"
#include "models/workload.h"

namespace torchgauge::collector {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kInductorHostBreakdownReason =
    "inductor: the package's generated kernels are no profiler operators, so the breakdown would file their time "
    "outside operators and read 0 % compute";

bool LooksLikeOom(const std::string& what) {
  return what.find("out of memory") != std::string::npos || what.find("can't allocate memory") != std::string::npos ||
         what.find("Out of memory") != std::string::npos;
}

std::string FirstLines(const std::string& s, size_t max_chars = 2000) {
  // c10::Error messages carry a C++ backtrace after the message; keep the message.
  std::string out = s;
  if (auto pos = out.find("\nException raised from"); pos != std::string::npos) out = out.substr(0, pos);
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "…";
  return out;
}

// Why this run cannot be measured here, checked before building anything.
std::optional<std::string> Unsupported(const RunSpec& spec, const models::ModelInfo& info, models::Mode mode) {
  if (mode == models::Mode::kTrain && !info.supports_train) return info.unsupported_reason;
  if (mode == models::Mode::kEval && !info.supports_eval) return info.unsupported_reason;
  if (auto why = BackendUnsupported(spec.backend, spec.precision)) return why;
  if (spec.settings.measure == "counted" && core::IsInductorBackend(spec.backend)) {
    return spec.backend + std::string(": not counted: its AOTInductor package is compiled in Python for the host's vector ") +
           "width, which may be AVX-512, and Valgrind emulates none; count eager and torchscript";
  }
  const bool gpu = spec.device == "cuda";
  if (gpu && !CudaAvailable()) return "no CUDA or ROCm device is visible to LibTorch on this machine";
  return PrecisionUnsupported(spec.precision, gpu ? c10::DeviceType::CUDA : c10::DeviceType::CPU);
}

// One measured iteration and the device it runs on.
struct Stepper {
  const RunSpec& spec;
  models::Workload& workload;
  models::Mode mode;
  bool gpu = false;
  std::optional<core::PrecisionFlags> flags;    // as in effect during the first step
  std::mt19937_64 rng{std::random_device{}()};  // --jitter's noise: another stream in every process

  c10::DeviceType device_type() const { return gpu ? c10::DeviceType::CUDA : c10::DeviceType::CPU; }
  void Sync() const {
    if (gpu) CudaSynchronize();
  }
  void Step() {
    AutocastScope autocast(spec.precision, device_type());
    if (!flags) flags = EffectiveFlags(spec.precision, device_type());
    const auto s0 = Clock::now();
    workload.Step(mode);
    if (spec.slowdown > 0 || spec.jitter > 0) {
      // Planted regression and noise for tests: wait a fraction of the
      // step's own host time, fixed (slowdown) plus random (jitter).
      Sync();
      const double f =
          spec.slowdown + (spec.jitter > 0 ? std::uniform_real_distribution<double>(0, spec.jitter)(rng) : 0);
      std::this_thread::sleep_for((Clock::now() - s0) * f);
    }
  }
};

// Test hook (--ballast-mib): memory that the process holds, every page
// written, from before the warm-up to its end, as a bigger model would. A
// global, so that the compiler cannot elide the allocation.
std::unique_ptr<char[]> g_ballast;
void HoldBallast(int mib) {
  if (mib <= 0) return;
  const size_t bytes = static_cast<size_t>(mib) << 20;
  g_ballast = std::make_unique<char[]>(bytes);
  std::memset(g_ballast.get(), 1, bytes);
}

// One timed call: CUDA events on a GPU (`timer`), the steady clock
// otherwise, after the device has finished what came before.
double TimedCall(const Stepper& s, CudaTimer* timer, const std::function<void()>& work) {
  s.Sync();
  if (timer) {
    timer->Start();
    work();
    return timer->StopMs();
  }
  const auto t0 = Clock::now();
  work();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One timed step.
double TimedStep(Stepper& s, CudaTimer* timer) {
  return TimedCall(s, timer, [&] { s.Step(); });
}

// The timing pass: warm-up, then settings.repeat timed steps. Fills the
// result's memory and timing (without backend_setup_ms).
void TimingPass(Stepper& s, core::RunResult& r) {
  const auto& settings = s.spec.settings;
  for (int i = 0; i < settings.warmup; ++i) s.Step();
  s.Sync();
  core::Memory mem;
  mem.cpu_rss_after_warmup_bytes = CurrentRssBytes();
  // VmHWM from here on is the measured region's peak, where the kernel
  // allows the reset; otherwise the peak is the process's, and says so.
  mem.cpu_peak_rss_scope = ResetPeakRss() ? "timed_steps" : "process";
  if (s.gpu) {
    mem.gpu_allocated_after_warmup_bytes = CudaMemory().allocated;
    CudaResetPeakMemory();
  }
  std::vector<double> samples;
  samples.reserve(settings.repeat);
  std::unique_ptr<CudaTimer> timer;
  if (s.gpu) timer = std::make_unique<CudaTimer>();
  for (int i = 0; i < settings.repeat; ++i) samples.push_back(TimedStep(s, timer.get()));
  s.Sync();
  mem.cpu_peak_rss_bytes = PeakRssBytes();
  if (s.gpu) {
    auto m = CudaMemory();
    mem.gpu_peak_allocated_bytes = m.peak_allocated;
    mem.gpu_peak_reserved_bytes = m.peak_reserved;
  }
  r.memory = mem;
  r.precision_flags = s.flags;
  core::Timing t;
  t.samples_ms = samples;
  t.warmup_iterations = settings.warmup;
  t.repetitions = settings.repeat;
  t.clock = s.gpu ? "cuda_event" : "steady_clock";
  t.samples_per_step = s.workload.samples_per_step();
  core::SummarizeTiming(t);
  r.timing = t;
}

// The counted pass (settings.measure "counted", collector/counted.h): the
// warm-up, then settings.repeat steps counted under Callgrind. Fills the
// result's counted steps. Timing and memory are not measured: the wall time
// is the simulator's and the process is Valgrind's.
void CountedPass(Stepper& s, core::RunResult& r) {
  const auto& spec = s.spec;
  for (int i = 0; i < spec.settings.warmup; ++i) s.Step();
  std::optional<std::filesystem::path> keep;
  if (!spec.keep_profile.empty()) keep = spec.keep_profile;
  core::Counted c = CountSteps([&] { s.Step(); }, spec.settings.repeat, spec.callgrind_out, keep);
  c.valgrind_version = spec.valgrind_version;
  if (keep) c.profile_file = std::filesystem::relative(*keep, spec.platform_dir).string();
  r.counted = std::move(c);
  r.precision_flags = s.flags;
}

// The paired pass of a backend other than eager (RunSettings::pairing):
// settings.repeat eager and settings.repeat compiled steps in this process,
// on the same weights and inputs, switching the workload's compiled forward
// (or compiled train step) off and on between steps. The eager path is warmed
// up first (the timing pass warmed the compiled one). Leaves the compiled
// code installed.
std::optional<core::PairedTiming> PairedPass(Stepper& s) {
  const auto& settings = s.spec.settings;
  const auto compiled = s.workload.compiled_forward();
  const auto compiled_train = s.workload.compiled_train_step();
  if (s.spec.backend == "eager" || settings.pairing == "off" || (!compiled && !compiled_train)) return std::nullopt;
  std::unique_ptr<CudaTimer> timer;
  if (s.gpu) timer = std::make_unique<CudaTimer>();
  auto step = [&](bool use_compiled) {
    s.workload.SetCompiledForward(use_compiled ? compiled : nullptr);
    s.workload.SetCompiledTrainStep(use_compiled ? compiled_train : nullptr);
    return TimedStep(s, timer.get());
  };
  for (int i = 0; i < std::max(1, settings.warmup); ++i) step(false);
  core::PairedTiming p;
  p.order = settings.pairing;
  if (settings.pairing == "interleaved") {
    // Pairs in alternating order (eager first, then compiled first, ...), so
    // that a steady drift does not always favour the side that runs first.
    for (int i = 0; i < settings.repeat; ++i) {
      const bool compiled_first = i % 2 == 1;
      if (compiled_first) p.compiled_samples_ms.push_back(step(true));
      p.eager_samples_ms.push_back(step(false));
      if (!compiled_first) p.compiled_samples_ms.push_back(step(true));
    }
  } else {
    for (int i = 0; i < settings.repeat; ++i) p.eager_samples_ms.push_back(step(false));
    for (int i = 0; i < settings.repeat; ++i) p.compiled_samples_ms.push_back(step(true));
  }
  s.workload.SetCompiledForward(compiled);
  s.workload.SetCompiledTrainStep(compiled_train);
  core::SummarizePaired(p);
  return p;
}

// The generation measurement of a generative workload in eval mode
// (collector/generation.h), after the timing pass. Sets the result's
// generation, or generation_reason where it cannot be measured here.
void GenerationPass(Stepper& s, core::RunResult& r) {
  auto* generative = dynamic_cast<models::GenerativeWorkload*>(&s.workload);
  models::Generator* generator = generative != nullptr ? generative->generator() : nullptr;
  if (s.mode != models::Mode::kEval || generator == nullptr) return;
  if (s.spec.backend != "eager") {
    // The compiled package holds the forward pass over a whole sequence of
    // fixed shape; a decode step's growing cache is outside it.
    r.generation_reason = s.spec.backend + ": prefill and decode are not compiled (the package holds the " +
                          "fixed-shape forward pass); generation is measured on the eager backend's run";
    return;
  }
  std::unique_ptr<CudaTimer> timer;
  if (s.gpu) timer = std::make_unique<CudaTimer>();
  const torch::Device device = s.gpu ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  GenerationSetup setup{s.spec.settings, s.spec.batch_size, device,
                        [&](const std::function<void()>& work) { return TimedCall(s, timer.get(), work); }};
  try {
    AutocastScope autocast(s.spec.precision, s.device_type());
    r.generation = MeasureGeneration(*generator, setup);
  } catch (const c10::OutOfMemoryError&) {
    throw;  // the run's status: oom
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    r.generation_reason = FirstLines(e.what());
  }
}

// The profiling pass (when settings.profile_iterations > 0) and the FLOPs.
void ProfilingPass(Stepper& s, core::RunResult& r) {
  const auto& spec = s.spec;
  core::Flops flops;
  flops.analytic_flops_per_iter = s.workload.AnalyticFlops(s.mode);
  if (spec.settings.profile_iterations > 0) {
    std::string trace;
    if (spec.trace) {
      trace = core::TracePath(spec.platform_dir, spec.key()).string();
      std::filesystem::create_directories(core::TracesDir(spec.platform_dir));
    }
    auto p =
        ProfileSteps([&] { s.Step(); }, [&] { s.Sync(); }, spec.settings.profile_iterations, s.device_type(), trace);
    core::Profiling prof;
    prof.iterations = spec.settings.profile_iterations;
    prof.wall_ms_per_iter = p.wall_ms_per_iter;
    if (!trace.empty()) prof.trace_file = std::filesystem::path(trace).filename().string();
    r.profiling = prof;
    r.gpu_breakdown = p.breakdown;
    r.host_breakdown = p.host_breakdown;
    if (core::IsInductorBackend(spec.backend) && r.host_breakdown) {
      // The package's generated kernels are no profiler operators: their time
      // would be filed outside operators, and compute would read 0 %.
      r.host_breakdown.reset();
      r.host_breakdown_reason = kInductorHostBreakdownReason;
    }
    if (r.host_breakdown) {
      // Once per worker (one run), after the timed samples so it cannot touch
      // them: a null step of 1000 one-element adds, best of 3, with and
      // without the profiler (about a tenth of a second).
      r.host_breakdown->profiler_overhead_per_op_us = MeasureProfilerOverheadPerOpUs(1000, 3);
    }
    r.operators = p.operators;
    if (core::IsInductorBackend(spec.backend)) {
      // A formula sees only the ATen calls the compiled code makes; its
      // generated kernels do the rest, so a count would understate the work.
      flops.profiler_flops_reason = "inductor: the generated kernels are outside the FLOP formulas";
    } else {
      flops.profiler_flops_per_iter = p.flops_per_iter;
      flops.profiler_counted_ops = p.flop_counted_ops;
      if (!p.flops_reason.empty()) flops.profiler_flops_reason = p.flops_reason;
    }
  } else {
    flops.profiler_flops_reason = "no profiling pass (profile_iterations 0)";
  }
  r.flops = flops;
}

// What the measured steps computed, checked after them: every parameter
// after the train steps, or the output of one more eval forward. A run whose
// model produced NaN or infinity is an error, not a measurement; the ci
// suite (tests/ci_suite_test.cc) holds every model to it.
std::optional<std::string> NonFinite(Stepper& s) {
  if (s.mode == models::Mode::kTrain) {
    for (const auto& p : s.workload.net().named_parameters()) {
      if (!torch::isfinite(p.value()).all().item<bool>())
        return "parameter " + p.key() + " is not finite after the train steps";
    }
    return std::nullopt;
  }
  torch::Tensor out;
  {
    AutocastScope autocast(s.spec.precision, s.device_type());
    // No-grad, not inference mode: the models whose eval needs autograd
    // (lennard_jones' forces, maml's inner loop) turn grad back on.
    torch::NoGradGuard no_grad;
    out = s.workload.RunForward();
  }
  if (out.defined() && !torch::isfinite(out).all().item<bool>()) return std::string("the eval output is not finite");
  return std::nullopt;
}

// Builds the workload, installs the backend and runs both passes. Returns an
// unsupported reason when the backend cannot take the workload.
std::optional<std::string> Measure(const RunSpec& spec, const models::ModelInfo& info, models::Mode mode,
                                   core::RunResult& r) {
  const bool gpu = spec.device == "cuda";
  if (spec.settings.threads > 0) at::set_num_threads(spec.settings.threads);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.device = gpu ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  opt.batch_size = spec.batch_size;
  opt.seed = spec.settings.seed;
  opt.smoke = spec.settings.smoke;
  models::SeedAll(spec.settings.seed);
  auto workload = info.create(opt);
  ApplyPrecision(spec.precision, *workload);
  if (mode == models::Mode::kTrain)
    workload->net().train();
  else
    workload->net().eval();
  const auto setup_start = Clock::now();
  if (auto why = InstallBackend(spec.backend, *workload, mode, &r.compile)) return FirstLines(*why);
  std::optional<double> backend_setup_ms;
  if (spec.backend != "eager") {
    if (gpu) CudaSynchronize();
    backend_setup_ms = std::chrono::duration<double, std::milli>(Clock::now() - setup_start).count();
  }
  Stepper stepper{spec, *workload, mode, gpu, std::nullopt};
  HoldBallast(spec.ballast_mib);
  // What the machine did during the timing pass, warm-up included (a longer
  // window reads /proc/stat's ticks more finely; core/stats/system_load.h).
  if (spec.settings.measure == "counted") {
    CountedPass(stepper, r);
    if (auto why = NonFinite(stepper)) throw std::runtime_error(*why);
    r.status = "ok";
    return std::nullopt;
  }
  const auto load_before = core::SampleSystem();
  TimingPass(stepper, r);
  r.system_load = core::LoadBetween(load_before, core::SampleSystem());
  r.timing->backend_setup_ms = backend_setup_ms;
  r.paired = PairedPass(stepper);
  GenerationPass(stepper, r);
  ProfilingPass(stepper, r);
  if (auto why = NonFinite(stepper)) throw std::runtime_error(*why);
  core::DeriveRates(r);
  r.status = "ok";
  return std::nullopt;
}

}  // namespace

core::RunResult ResultSkeleton(const RunSpec& spec) {
  core::RunResult r;
  r.build_id = spec.build_id;
  r.platform_id = spec.platform_id;
  r.mode = spec.mode;
  r.backend = spec.backend;
  r.precision = spec.precision;
  r.batch_size = spec.batch_size;
  r.device = spec.device == "cuda" ? "cuda:0" : "cpu";
  r.started_at = core::NowUtc();
  r.model.id = spec.model;
  if (const auto* info = models::FindModel(spec.model)) {
    r.model = {info->id, info->paper_name, core::Name(info->domain), info->task, info->reference};
  }
  r.settings = spec.settings;
  // One worker's result describes one process; core::PoolProcesses records
  // how many were pooled.
  r.settings->processes = 1;
  return r;
}

core::RunResult RunWorker(const RunSpec& spec) {
  const auto t_start = Clock::now();
  core::RunResult r = ResultSkeleton(spec);
  auto finish = [&](core::RunResult& res) -> core::RunResult& {
    res.duration_s = std::chrono::duration<double>(Clock::now() - t_start).count();
    return res;
  };
  const auto* info = models::FindModel(spec.model);
  if (!info) {
    r.status = "error";
    r.reason = "unknown model '" + spec.model + "'";
    return finish(r);
  }
  const auto mode = core::Parse<core::Mode>(spec.mode);
  std::optional<std::string> unsupported = Unsupported(spec, *info, mode);
  try {
    if (!unsupported) unsupported = Measure(spec, *info, mode, r);
  } catch (const models::UnsupportedError& e) {
    unsupported = std::string(e.what());
  } catch (const c10::OutOfMemoryError& e) {
    r.status = "oom";
    r.reason = FirstLines(e.what());
  } catch (const std::bad_alloc& e) {
    r.status = "oom";
    r.reason = std::string("std::bad_alloc: ") + e.what();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    r.status = LooksLikeOom(what) ? "oom" : "error";
    r.reason = FirstLines(what);
  }
  if (unsupported) {
    r.status = "unsupported";
    r.reason = *unsupported;
  }
  return finish(r);
}

// Fixes glibc malloc's thresholds for the worker's life. By default glibc
// adapts them as a process runs: a young process returns freed tensor memory
// to the kernel (munmap, heap trim) and takes fresh zeroed pages at the next
// step, where a process that has run for a while reuses its heap. A worker
// lives for one run, so its steps paid that page-fault churn: resnet18 train
// (batch 1, CPU) took 590,000 minor faults and a 38-40 ms median against 31 ms
// for the same loop in a long-lived process (tests/harness_overhead_bench.cc);
// with these thresholds, 181,000 faults and 33 ms. The mmap threshold is
// glibc's own ceiling for its adaptive one (32 MiB on 64-bit); the trim
// threshold keeps freed memory at the heap's top. Peak RSS is unaffected
// (memory is kept, not newly touched).
void SteadyHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

int WorkerMain(const std::filesystem::path& spec_file) {
  SteadyHeap();
  auto spec = RunSpec::FromJson(core::ReadJsonFile(spec_file, core::JsonKind::kRunSpec));
  // Before the first kernel: ATen and oneDNN read their ISA cap once.
  CapCpuIsa(spec.settings.cpu_isa);
  if (!spec.plant_cost.empty()) PlantCost(spec.plant_cost);
  auto result = RunWorker(spec);
  const auto path =
      spec.result_file.empty() ? core::RunPath(spec.platform_dir, spec.key()) : std::filesystem::path(spec.result_file);
  core::WriteJsonAtomic(path, core::ToJson(result));
  return 0;
}

}  // namespace torchgauge::collector
