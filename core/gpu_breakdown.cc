#include "core/gpu_breakdown.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace torchgauge::core {

GpuBreakdown ComputeBreakdown(const std::vector<DeviceActivity>& activities, int64_t window_start_ns,
                              int64_t window_end_ns, int iterations, size_t top_n) {
  if (iterations < 1) throw std::invalid_argument("ComputeBreakdown: iterations must be >= 1");
  if (window_end_ns < window_start_ns) throw std::invalid_argument("ComputeBreakdown: window ends before it starts");
  std::vector<Interval> active, copies;
  int64_t kernels = 0, kernel_ns = 0;
  int64_t h2d = 0, d2h = 0;
  bool h2d_known = true, d2h_known = true;
  bool any_h2d = false, any_d2h = false;
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
        any_h2d = true;
        if (a.bytes)
          h2d += *a.bytes;
        else
          h2d_known = false;
        break;
      case ActivityKind::kCopyDeviceToHost:
        copies.push_back(iv);
        any_d2h = true;
        if (a.bytes)
          d2h += *a.bytes;
        else
          d2h_known = false;
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
  if (!any_h2d)
    b.h2d_bytes = 0.0;  // no copies happened: zero bytes is measured, not assumed
  else if (h2d_known)
    b.h2d_bytes = static_cast<double>(h2d) / n;
  if (!any_d2h)
    b.d2h_bytes = 0.0;
  else if (d2h_known)
    b.d2h_bytes = static_cast<double>(d2h) / n;

  std::vector<KernelTotal> tops;
  for (const auto& [name, v] : per_kernel) tops.push_back({name, static_cast<double>(v.first) / 1e6, v.second});
  std::sort(tops.begin(), tops.end(), [](const KernelTotal& a, const KernelTotal& b) {
    return a.total_ms != b.total_ms ? a.total_ms > b.total_ms : a.name < b.name;
  });
  if (tops.size() > top_n) tops.resize(top_n);
  b.top_kernels = std::move(tops);
  return b;
}

}  // namespace torchgauge::core
