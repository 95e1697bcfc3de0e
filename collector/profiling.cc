#include "collector/profiling.h"

#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <chrono>
#include <map>
#include <mutex>
#include <regex>

#include "collector/platform/kineto.h"
#include "collector/platform/flop_formulas.h"
#include "collector/platform/host_events.h"
#include "core/stats/gpu_breakdown.h"
#include "models/torch_compat.h"

namespace torchgauge::collector {

namespace {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

using kineto::kConcurrentKernel;
using kineto::kGpuMemcpy;
using kineto::kGpuMemset;

// Collects operator names with overloads from every thread (autograd's
// backward runs on engine threads for GPU work).
struct OperatorCollector {
  std::mutex mu;
  std::set<std::string> names;
};

std::optional<int64_t> CopyBytes(const prof::KinetoEvent& e) {
  if (e.nBytes() > 0) return e.nBytes();
  static const std::regex kBytes("\"bytes\"\\s*:\\s*([0-9]+)");
  std::smatch m;
  const std::optional<std::string> meta = compat::KinetoEventMetadataJson(e);
  if (meta && std::regex_search(*meta, m, kBytes)) return std::stoll(m[1].str());
  return std::nullopt;
}

// The device-timeline activity an event stands for: a kernel, a memset or a
// classified copy; nullopt for anything else.
std::optional<core::DeviceActivity> DeviceActivityOf(const prof::KinetoEvent& e) {
  const uint8_t type = e.activityType();
  core::DeviceActivity a;
  a.start_ns = static_cast<int64_t>(e.startNs());
  a.end_ns = static_cast<int64_t>(e.endNs());
  a.stream = e.deviceResourceId();
  a.name = e.name();
  if (type == kConcurrentKernel) {
    a.kind = core::ActivityKind::kKernel;
  } else if (type == kGpuMemset) {
    a.kind = core::ActivityKind::kMemset;
  } else if (type == kGpuMemcpy) {
    auto kind = core::CopyKindOf(a.name);
    if (!kind) return std::nullopt;
    a.kind = *kind;
    a.bytes = CopyBytes(e);
  } else {
    return std::nullopt;
  }
  return a;
}

// A capture-less callback (RecordFunction takes function pointers) reaches
// the collector through this pointer; one profiling pass runs at a time.
OperatorCollector* g_active_collector = nullptr;

// Records every ATen operator (name.overload) into `ops` until the returned
// callback is removed.
at::CallbackHandle CollectOperators(OperatorCollector& ops) {
  g_active_collector = &ops;
  return at::addGlobalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (auto op = fn.operator_name()) {
          std::string name = op->name;
          if (!op->overload_name.empty()) name += "." + op->overload_name;
          std::lock_guard<std::mutex> lock(g_active_collector->mu);
          g_active_collector->names.insert(std::move(name));
        }
        return nullptr;
      })
          .needsInputs(false)
          .scopes({at::RecordScope::FUNCTION}));
}

}  // namespace

ProfileOutput ProfileSteps(const std::function<void()>& step, const std::function<void()>& sync, int iterations,
                           c10::DeviceType device, const std::string& trace_path) {
  ProfileOutput out;
  if (iterations < 1) return out;
  const bool gpu = device == c10::DeviceType::CUDA;

  OperatorCollector ops;
  auto handle = CollectOperators(ops);
  std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  if (gpu) activities.insert(impl::ActivityType::CUDA);
  const impl::ProfilerConfig config = kineto::PassConfig();
  prof::prepareProfiler(config, activities);
  sync();
  prof::enableProfiler(config, activities);
  const auto t0 = std::chrono::steady_clock::now();
  {
    RECORD_USER_SCOPE(kineto::kProfileWindow);
    for (int i = 0; i < iterations; ++i) step();
    sync();
  }
  const auto t1 = std::chrono::steady_clock::now();
  auto result = prof::disableProfiler();
  at::removeCallback(handle);
  g_active_collector = nullptr;

  out.wall_ms_per_iter = std::chrono::duration<double, std::milli>(t1 - t0).count() / iterations;
  out.operators.assign(ops.names.begin(), ops.names.end());

  int64_t window_start = -1, window_end = -1;
  std::vector<core::DeviceActivity> activity;
  std::vector<OpCall> flop_calls;
  for (const auto& e : result->events()) {
    const std::string name = e.name();
    // The CPU-side annotation: Kineto also copies a user scope onto the GPU
    // timeline (gpu_user_annotation), whose span is the device's, not the
    // host's window.
    if (name == kineto::kProfileWindow && e.deviceType() == c10::DeviceType::CPU) {
      window_start = static_cast<int64_t>(e.startNs());
      window_end = static_cast<int64_t>(e.endNs());
      continue;
    }
    if (e.deviceType() == c10::DeviceType::CPU && e.activityType() == kineto::kCpuOp && HasFlopFormula(name)) {
      OpCall c;
      c.name = name;
      c.shapes.assign(e.shapes().begin(), e.shapes().end());
      c.args.assign(e.concreteInputs().begin(), e.concreteInputs().end());
      c.thread = e.startThreadId();
      c.start_ns = static_cast<int64_t>(e.startNs());
      c.end_ns = static_cast<int64_t>(e.endNs());
      flop_calls.push_back(std::move(c));
    }
    if (!gpu) continue;
    if (auto a = DeviceActivityOf(e)) activity.push_back(std::move(*a));
  }
  // Null, with the reason, when no operator with a formula ran (Inductor's
  // generated kernels, or only elementwise work): never 0 FLOPs and "0 % of
  // peak".
  FlopCount count = CountFlops(std::move(flop_calls));
  if (count.flops) out.flops_per_iter = *count.flops / iterations;
  out.flops_reason = count.reason;
  for (const auto& [name, _] : count.by_op) out.flop_counted_ops.push_back(name);
  TORCH_CHECK(window_start >= 0, "profiler did not record the profiling window");
  if (gpu) out.breakdown = core::ComputeBreakdown(activity, window_start, window_end, iterations);
  out.host_breakdown = HostBreakdownFromProfile(*result, kineto::kProfileWindow, iterations);
  if (!trace_path.empty()) result->save(trace_path);
  return out;
}

}  // namespace torchgauge::collector
