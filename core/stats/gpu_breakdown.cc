#include "core/stats/gpu_breakdown.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace torchgauge::core {

namespace {

// The bytes of one copy direction over the window.
struct CopyBytes {
  int64_t total = 0;
  bool any = false, known = true;
  void Add(const std::optional<int64_t>& bytes) {
    any = true;
    if (bytes) {
      total += *bytes;
    } else {
      known = false;
    }
  }
  // Per iteration; no copies at all is zero bytes measured, not assumed.
  std::optional<double> PerIteration(double n) const {
    if (!any) return 0.0;
    if (!known) return std::nullopt;
    return static_cast<double>(total) / n;
  }
};

// The kernels by total time, longest first (ties by name), at most top_n.
std::vector<KernelTotal> TopKernels(const std::map<std::string, std::pair<int64_t, int64_t>>& per_kernel,
                                    size_t top_n) {
  std::vector<KernelTotal> tops;
  for (const auto& [name, v] : per_kernel) tops.push_back({name, static_cast<double>(v.first) / 1e6, v.second});
  std::sort(tops.begin(), tops.end(), [](const KernelTotal& x, const KernelTotal& y) {
    return x.total_ms != y.total_ms ? x.total_ms > y.total_ms : x.name < y.name;
  });
  if (tops.size() > top_n) tops.resize(top_n);
  return tops;
}

}  // namespace

std::optional<ActivityKind> CopyKindOf(const std::string& name) {
  if (name.find("HtoD") != std::string::npos) return ActivityKind::kCopyHostToDevice;
  if (name.find("DtoH") != std::string::npos) return ActivityKind::kCopyDeviceToHost;
  if (name.find("DtoD") != std::string::npos || name.find("PtoP") != std::string::npos) {
    return ActivityKind::kCopyDeviceToDevice;
  }
  return std::nullopt;
}

GpuBreakdown ComputeBreakdown(const std::vector<DeviceActivity>& activities, int64_t window_start_ns,
                              int64_t window_end_ns, int iterations, size_t top_n) {
  if (iterations < 1) throw std::invalid_argument("ComputeBreakdown: iterations must be >= 1");
  if (window_end_ns < window_start_ns) throw std::invalid_argument("ComputeBreakdown: window ends before it starts");
  std::vector<Interval> active, copies;
  int64_t kernels = 0, kernel_ns = 0;
  CopyBytes h2d, d2h;
  std::map<std::string, std::pair<int64_t, int64_t>> per_kernel;  // name -> (ns, count)
  for (const auto& a : activities) {
    // Only activity that overlaps the window counts, for totals and counts alike.
    if (a.end_ns <= window_start_ns || a.start_ns >= window_end_ns) continue;
    Interval iv{a.start_ns, a.end_ns};
    switch (a.kind) {
      case ActivityKind::kKernel: {
        ++kernels;
        kernel_ns += a.end_ns - a.start_ns;
        auto& k = per_kernel[a.name];
        k.first += a.end_ns - a.start_ns;
        k.second += 1;
        active.push_back(iv);
        break;
      }
      case ActivityKind::kMemset:
      case ActivityKind::kCopyDeviceToDevice:
        active.push_back(iv);
        break;
      case ActivityKind::kCopyHostToDevice:
        copies.push_back(iv);
        h2d.Add(a.bytes);
        break;
      case ActivityKind::kCopyDeviceToHost:
        copies.push_back(iv);
        d2h.Add(a.bytes);
        break;
    }
  }
  const auto active_set = UnionClipped(active, window_start_ns, window_end_ns);
  const auto copy_set = UnionClipped(copies, window_start_ns, window_end_ns);
  const int64_t wall = window_end_ns - window_start_ns;
  const int64_t active_ns = TotalLength(active_set);
  const int64_t movement_ns = LengthNotCovered(copy_set, active_set);
  const int64_t idle_ns = wall - active_ns - movement_ns;

  const double n = iterations;
  auto ms = [n](int64_t ns) { return static_cast<double>(ns) / 1e6 / n; };
  GpuBreakdown b;
  b.iterations = iterations;
  b.wall_ms = ms(wall);
  b.active_ms = ms(active_ns);
  b.data_movement_ms = ms(movement_ns);
  b.idle_ms = ms(idle_ns);
  if (wall > 0) {
    b.active_fraction = static_cast<double>(active_ns) / static_cast<double>(wall);
    b.data_movement_fraction = static_cast<double>(movement_ns) / static_cast<double>(wall);
    b.idle_fraction = static_cast<double>(idle_ns) / static_cast<double>(wall);
  }
  b.kernel_count = static_cast<double>(kernels) / n;
  if (kernels > 0) b.mean_kernel_us = static_cast<double>(kernel_ns) / 1e3 / static_cast<double>(kernels);
  b.h2d_bytes = h2d.PerIteration(n);
  b.d2h_bytes = d2h.PerIteration(n);
  b.top_kernels = TopKernels(per_kernel, top_n);
  return b;
}

}  // namespace torchgauge::core
