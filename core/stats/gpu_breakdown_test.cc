#include <doctest/doctest.h>

#include "core/stats/gpu_breakdown.h"

using namespace torchgauge::core;

namespace {
DeviceActivity K(int64_t s, int64_t e, int64_t stream = 7, const char* name = "k") {
  return {ActivityKind::kKernel, s, e, stream, name, std::nullopt};
}
DeviceActivity H2D(int64_t s, int64_t e, int64_t bytes = 100) {
  return {ActivityKind::kCopyHostToDevice, s, e, 7, "Memcpy HtoD", bytes};
}
void CheckSums(const GpuBreakdown& b) {
  CHECK(b.active_ms + b.data_movement_ms + b.idle_ms == doctest::Approx(b.wall_ms));
  CHECK(b.active_fraction + b.data_movement_fraction + b.idle_fraction == doctest::Approx(1.0));
}
}  // namespace

TEST_CASE("overlapping kernels on two streams count once") {
  // stream 7: [0,40) ; stream 8: [20,60) -> union [0,60) of a 100 ns window
  auto b = ComputeBreakdown({K(0, 40, 7), K(20, 60, 8)}, 0, 100, 1);
  CHECK(b.active_ms == doctest::Approx(60e-6));
  CHECK(b.idle_ms == doctest::Approx(40e-6));
  CHECK(b.data_movement_ms == 0);
  CHECK(b.kernel_count == 2);
  CheckSums(b);
}

TEST_CASE("copies overlapped by kernels are not data movement") {
  // copy [10,30) fully under kernel [0,50); copy [60,80) in a gap
  auto b = ComputeBreakdown({K(0, 50), H2D(10, 30), H2D(60, 80)}, 0, 100, 1);
  CHECK(b.active_fraction == doctest::Approx(0.5));
  CHECK(b.data_movement_fraction == doctest::Approx(0.2));
  CHECK(b.idle_fraction == doctest::Approx(0.3));
  CHECK(*b.h2d_bytes == 200);
  CheckSums(b);
}

TEST_CASE("a copy that spans a kernel counts only its uncovered parts") {
  // copy [0,100) with kernel [40,60) inside it
  auto b = ComputeBreakdown({H2D(0, 100), K(40, 60)}, 0, 100, 1);
  CHECK(b.active_fraction == doctest::Approx(0.2));
  CHECK(b.data_movement_fraction == doctest::Approx(0.8));
  CHECK(b.idle_fraction == doctest::Approx(0.0));
  CheckSums(b);
}

TEST_CASE("gaps are idle and activity is clipped to the window") {
  // kernel straddles the window start; a kernel after the window is ignored
  auto b = ComputeBreakdown({K(-50, 20), K(30, 40), K(200, 300)}, 0, 100, 2);
  CHECK(b.active_ms == doctest::Approx(30e-6 / 2));
  CHECK(b.idle_ms == doctest::Approx(70e-6 / 2));
  CHECK(b.kernel_count == doctest::Approx(1.0));  // 2 kernels overlap the window, over 2 iterations
  CheckSums(b);
}

TEST_CASE("an empty window is all idle and has no copies") {
  auto b = ComputeBreakdown({}, 1000, 3000, 1);
  CHECK(b.idle_fraction == doctest::Approx(1.0));
  CHECK(b.kernel_count == 0);
  CHECK(!b.mean_kernel_us);
  CHECK(*b.h2d_bytes == 0);
  CheckSums(b);
  auto z = ComputeBreakdown({}, 5, 5, 1);
  CHECK(z.wall_ms == 0);
}

TEST_CASE("copy bytes unknown are not reported as zero") {
  DeviceActivity c = H2D(0, 10);
  c.bytes = std::nullopt;
  auto b = ComputeBreakdown({c}, 0, 100, 1);
  CHECK(!b.h2d_bytes);
}

TEST_CASE("top kernels are ordered by total time") {
  auto b = ComputeBreakdown({K(0, 10, 7, "a"), K(10, 40, 7, "b"), K(40, 50, 7, "a")}, 0, 100, 1, 1);
  REQUIRE(b.top_kernels.size() == 1);
  CHECK(b.top_kernels[0].name == "b");
}

TEST_CASE("set arithmetic") {
  auto a = UnionClipped({{0, 10}, {5, 20}, {30, 40}}, 0, 100);
  REQUIRE(a.size() == 2);
  CHECK(TotalLength(a) == 30);
  CHECK(LengthNotCovered(a, UnionClipped({{8, 35}}, 0, 100)) == 13);
}

TEST_CASE("copy kinds from the profiler's names; host-to-host is no CPU-GPU movement") {
  CHECK(CopyKindOf("Memcpy HtoD (Pageable -> Device)") == ActivityKind::kCopyHostToDevice);
  CHECK(CopyKindOf("Memcpy DtoH (Device -> Pinned)") == ActivityKind::kCopyDeviceToHost);
  CHECK(CopyKindOf("Memcpy DtoD (Device -> Device)") == ActivityKind::kCopyDeviceToDevice);
  CHECK(CopyKindOf("Memcpy PtoP (Device -> Device)") == ActivityKind::kCopyDeviceToDevice);
  // Was counted as host-to-device movement (collector/profiling.cc before).
  CHECK_FALSE(CopyKindOf("Memcpy HtoH (Pinned -> Pageable)").has_value());
  CHECK_FALSE(CopyKindOf("Memcpy").has_value());
}
