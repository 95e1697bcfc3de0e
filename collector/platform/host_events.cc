#include "collector/platform/host_events.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "collector/platform/kineto.h"

namespace torchgauge::collector {

namespace {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

using kineto::kCpuOp;
using kineto::kUserAnnotation;

double NullStepMs(const torch::Tensor& x, int ops) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ops; ++i) (void)torch::add(x, x);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<core::CpuOpEvent> CpuOpEvents(const prof::ProfilerResult& result) {
  std::vector<core::CpuOpEvent> out;
  for (const auto& e : result.events()) {
    const uint8_t type = e.activityType();
    if (type != kCpuOp && type != kUserAnnotation) continue;
    if (e.deviceType() != c10::DeviceType::CPU) continue;
    const auto scope = static_cast<at::RecordScope>(e.scope());
    core::CpuOpEvent c;
    c.name = e.name();
    c.thread_id = e.startThreadId();
    c.start_ns = static_cast<int64_t>(e.startNs());
    c.end_ns = static_cast<int64_t>(e.endNs());
    c.kind = core::ClassifyCpuEvent(c.name, scope == at::RecordScope::BACKWARD_FUNCTION,
                                    scope == at::RecordScope::USER_SCOPE || type == kUserAnnotation);
    out.push_back(std::move(c));
  }
  return out;
}

core::HostBreakdown HostBreakdownFromProfile(const prof::ProfilerResult& result, const std::string& window_name,
                                             int iterations) {
  const auto events = CpuOpEvents(result);
  std::vector<core::Interval> windows;
  for (const auto& e : events) {
    if (e.name == window_name) windows.push_back({e.start_ns, e.end_ns});
  }
  if (windows.empty()) throw std::runtime_error("the profile has no '" + window_name + "' window");
  return core::ComputeHostBreakdown(events, windows, iterations);
}

std::optional<double> MeasureProfilerOverheadPerOpUs(int ops_per_step, int repeats) {
  if (ops_per_step < 1 || repeats < 1) return std::nullopt;
  torch::NoGradGuard no_grad;
  const auto x = torch::ones({1});
  NullStepMs(x, ops_per_step);  // warm the dispatcher and the allocator
  double without = 0, with = 0;
  for (int r = 0; r < repeats; ++r) {
    const double ms = NullStepMs(x, ops_per_step);
    without = r == 0 ? ms : std::min(without, ms);
  }
  const std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  const auto config = kineto::PassConfig();
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  for (int r = 0; r < repeats; ++r) {
    const double ms = NullStepMs(x, ops_per_step);
    with = r == 0 ? ms : std::min(with, ms);
  }
  auto result = prof::disableProfiler();
  // Count what the profiler recorded rather than assume one event per call.
  int64_t recorded = 0;
  for (const auto& e : result->events()) {
    if (e.activityType() == kCpuOp && e.name() == "aten::add") ++recorded;
  }
  if (recorded < repeats) return std::nullopt;
  return core::ProfilerOverheadPerOpUs(without, with, recorded / repeats);
}

}  // namespace torchgauge::collector
