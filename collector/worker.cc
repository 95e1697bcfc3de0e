#include "collector/worker.h"

#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <new>
#include <thread>

#include "collector/backend.h"
#include "collector/cuda_support.h"
#include "collector/environment.h"
#include "collector/precision.h"
#include "collector/profiling.h"
#include "core/stats.h"
#include "models/workload.h"

namespace torchgauge::collector {

namespace {

using Clock = std::chrono::steady_clock;

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
    r.model = {info->id, info->paper_name, models::DomainName(info->domain), info->task, info->reference};
  }
  r.settings = core::RunSettings{spec.warmup, spec.repeat, spec.seed, spec.timeout_s, spec.profile_iterations, spec.smoke, 1, spec.threads};
  return r;
}

core::RunResult RunWorker(const RunSpec& spec) {
  const auto t_start = Clock::now();
  core::RunResult r = ResultSkeleton(spec);
  auto finish = [&](core::RunResult& res) -> core::RunResult& {
    res.duration_s = std::chrono::duration<double>(Clock::now() - t_start).count();
    return res;
  };
  auto unsupported = [&](const std::string& why) -> core::RunResult {
    r.status = "unsupported";
    r.reason = why;
    return finish(r);
  };

  const auto* info = models::FindModel(spec.model);
  if (!info) {
    r.status = "error";
    r.reason = "unknown model '" + spec.model + "'";
    return finish(r);
  }
  const auto mode = *models::ParseMode(spec.mode);
  if (mode == models::Mode::kTrain && !info->supports_train) return unsupported(info->unsupported_reason);
  if (mode == models::Mode::kEval && !info->supports_eval) return unsupported(info->unsupported_reason);
  if (auto why = BackendUnsupported(spec.backend, spec.precision)) return unsupported(*why);
  const bool gpu = spec.device == "cuda";
  if (gpu && !CudaAvailable()) return unsupported("no CUDA or ROCm device is visible to LibTorch on this machine");
  const auto device_type = gpu ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  if (auto why = PrecisionUnsupported(spec.precision, device_type)) return unsupported(*why);

  try {
    if (spec.threads > 0) at::set_num_threads(spec.threads);
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.device = gpu ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    opt.batch_size = spec.batch_size;
    opt.seed = spec.seed;
    opt.smoke = spec.smoke;
    models::SeedAll(spec.seed);
    auto workload = info->create(opt);
    ApplyPrecision(spec.precision, *workload);
    if (mode == models::Mode::kTrain) workload->net().train();
    else workload->net().eval();
    const auto setup_start = Clock::now();
    if (auto why = InstallBackend(spec.backend, *workload, mode)) return unsupported(FirstLines(*why));
    std::optional<double> backend_setup_ms;
    if (spec.backend != "eager") {
      if (gpu) CudaSynchronize();
      backend_setup_ms = std::chrono::duration<double, std::milli>(Clock::now() - setup_start).count();
    }

    auto sync = [gpu] {
      if (gpu) CudaSynchronize();
    };
    std::optional<core::PrecisionFlags> flags;
    auto step = [&] {
      AutocastScope autocast(spec.precision, device_type);
      if (!flags) flags = EffectiveFlags(spec.precision, device_type);
      const auto s0 = Clock::now();
      workload->Step(mode);
      if (spec.slowdown > 0) {
        // Planted regression for tests: wait a fraction of the step's own host time.
        sync();
        std::this_thread::sleep_for((Clock::now() - s0) * spec.slowdown);
      }
    };

    for (int i = 0; i < spec.warmup; ++i) step();
    sync();

    core::Memory mem;
    mem.cpu_rss_after_warmup_bytes = CurrentRssBytes();
    // VmHWM from here on is the measured region's peak (where the kernel allows the reset).
    ResetPeakRss();
    if (gpu) {
      mem.gpu_allocated_after_warmup_bytes = CudaMemory().allocated;
      CudaResetPeakMemory();
    }

    std::vector<double> samples;
    samples.reserve(spec.repeat);
    std::unique_ptr<CudaTimer> timer;
    if (gpu) timer = std::make_unique<CudaTimer>();
    for (int i = 0; i < spec.repeat; ++i) {
      sync();
      if (gpu) {
        timer->Start();
        step();
        samples.push_back(timer->StopMs());
      } else {
        const auto t0 = Clock::now();
        step();
        samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
    sync();
    mem.cpu_peak_rss_bytes = PeakRssBytes();
    if (gpu) {
      auto m = CudaMemory();
      mem.gpu_peak_allocated_bytes = m.peak_allocated;
      mem.gpu_peak_reserved_bytes = m.peak_reserved;
    }
    r.memory = mem;
    r.precision_flags = flags;

    core::Timing t;
    t.samples_ms = samples;
    t.warmup_iterations = spec.warmup;
    t.repetitions = spec.repeat;
    t.clock = gpu ? "cuda_event" : "steady_clock";
    t.samples_per_step = workload->samples_per_step();
    t.backend_setup_ms = backend_setup_ms;
    core::SummarizeTiming(t);
    r.timing = t;

    core::Flops flops;
    flops.analytic_flops_per_iter = workload->AnalyticFlops(mode);
    if (spec.profile_iterations > 0) {
      std::string trace;
      if (spec.trace) {
        trace = (std::filesystem::path(spec.platform_dir) / "traces" / (spec.key().FileStem() + ".trace.json")).string();
        std::filesystem::create_directories(std::filesystem::path(trace).parent_path());
      }
      auto p = ProfileSteps(step, sync, spec.profile_iterations, device_type, trace);
      core::Profiling prof;
      prof.iterations = spec.profile_iterations;
      prof.wall_ms_per_iter = p.wall_ms_per_iter;
      if (!trace.empty()) prof.trace_file = std::filesystem::path(trace).filename().string();
      r.profiling = prof;
      r.gpu_breakdown = p.breakdown;
      r.operators = p.operators;
      flops.profiler_flops_per_iter = p.flops_per_iter;
      flops.profiler_counted_ops = p.flop_counted_ops;
    }
    r.flops = flops;
    core::DeriveRates(r);
    r.status = "ok";
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
  return finish(r);
}

}  // namespace torchgauge::collector
