// The paper's GPU time breakdown (section 3.1, Figures 1-2, Table 2) from a
// list of device activity intervals taken in a profiling window:
//   active        = union of kernel, memset and device-to-device copy intervals
//                   across all streams;
//   data movement = host<->device copy time not overlapped by active work;
//   idle          = window wall time minus both.
// The three parts sum to the wall time by construction. LibTorch-free so that
// the interval arithmetic is unit-tested on synthetic event lists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/stats/intervals.h"

namespace torchgauge::core {

// The breakdown as a result keeps it (core/contract/result.h, gpu_breakdown).
struct KernelTotal {
  std::string name;
  double total_ms = 0;
  int64_t count = 0;
};

struct GpuBreakdown {
  int iterations = 0;
  double wall_ms = 0, active_ms = 0, data_movement_ms = 0, idle_ms = 0;
  double active_fraction = 0, data_movement_fraction = 0, idle_fraction = 0;
  double kernel_count = 0;  // per iteration
  std::optional<double> mean_kernel_us;
  std::optional<double> h2d_bytes, d2h_bytes;  // per iteration
  std::vector<KernelTotal> top_kernels;
};

enum class ActivityKind { kKernel, kMemset, kCopyDeviceToDevice, kCopyHostToDevice, kCopyDeviceToHost };

struct DeviceActivity {
  ActivityKind kind = ActivityKind::kKernel;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = 0;
  std::string name;
  std::optional<int64_t> bytes;  // copies only, when the profiler reports it
};

// The kind of a copy on the device timeline, from the profiler's name
// ("Memcpy HtoD (Pageable -> Device)"): host-to-device, device-to-host, or
// device-to-device (peer-to-peer included). Host-to-host copies ("HtoH") move
// nothing between CPU and GPU and are no device work: nullopt, as for a name
// that says no direction, so they count as neither active nor movement.
std::optional<ActivityKind> CopyKindOf(const std::string& name);

// Breakdown over the window [window_start_ns, window_end_ns] that spans
// `iterations` steps; milliseconds are per iteration. Activities outside the
// window are clipped. top_n kernels by total time are kept.
GpuBreakdown ComputeBreakdown(const std::vector<DeviceActivity>& activities, int64_t window_start_ns,
                              int64_t window_end_ns, int iterations, size_t top_n = 10);

}  // namespace torchgauge::core
