// The host breakdown on real Kineto events: three phases the test times
// itself (a busy-wait outside any operator, one large copy_, a run of
// matmuls) must come back as outside operators, data movement and compute,
// each within 15 %, the parts summing to the window's wall.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "collector/platform/kineto.h"
#include "collector/platform/host_events.h"

using namespace torchgauge;
namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

std::unique_ptr<prof::ProfilerResult> Profile(const std::function<void()>& body) {
  const std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  const impl::ProfilerConfig config = collector::kineto::PassConfig();
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  {
    RECORD_USER_SCOPE(collector::kineto::kProfileWindow);
    body();
  }
  return prof::disableProfiler();
}

struct ThreadsGuard {
  int before = at::get_num_threads();
  // One intra-op thread: on a loaded machine a pool worker that is switched
  // out stalls the op it serves, which the test would see as noise.
  ThreadsGuard() { at::set_num_threads(1); }
  ~ThreadsGuard() { at::set_num_threads(before); }
};

}  // namespace

// The test's own clocks around each call: the copy_ and each matmul are
// timed one by one, so a gap between two calls (the loop, or the scheduler
// taking the thread away there) is outside every operator on both sides,
// as the breakdown counts it, and a preemption inside a call is inside its
// operator on both sides.
TEST_CASE("three known phases: outside operators, data movement, compute") {
  ThreadsGuard threads;
  torch::NoGradGuard no_grad;
  auto src = torch::rand({int64_t{1} << 24});  // 64 MiB
  auto dst = torch::empty_like(src);
  auto a = torch::rand({384, 384});
  auto b = torch::rand({384, 384});
  dst.copy_(src);
  (void)torch::mm(a, b);

  double copy_ms = 0, mm_ms = 0, whole_ms = 0;
  auto result = Profile([&] {
    const auto t0 = Clock::now();
    while (Ms(t0, Clock::now()) < 30.0) {
    }
    const auto t1 = Clock::now();
    dst.copy_(src);
    copy_ms = Ms(t1, Clock::now());
    for (int i = 0; i < 20; ++i) {
      const auto c0 = Clock::now();
      (void)torch::mm(a, b);
      mm_ms += Ms(c0, Clock::now());
    }
    whole_ms = Ms(t0, Clock::now());
  });
  const double outside_ms = whole_ms - copy_ms - mm_ms;
  const auto h = collector::HostBreakdownFromProfile(*result, collector::kineto::kProfileWindow, 1);
  MESSAGE("timed by the test: outside " << outside_ms << " ms, copy_ " << copy_ms << " ms, mm " << mm_ms
                                        << " ms; breakdown: outside " << h.outside_operators_ms << " ms, movement "
                                        << h.data_movement_ms << " ms, compute " << h.compute_ms << " ms, wall "
                                        << h.wall_ms << " ms, " << h.top_level_op_count << " top-level ops");
  CHECK(h.outside_operators_ms == doctest::Approx(outside_ms).epsilon(0.15));
  CHECK(h.data_movement_ms == doctest::Approx(copy_ms).epsilon(0.15));
  CHECK(h.compute_ms == doctest::Approx(mm_ms).epsilon(0.15));
  CHECK(h.compute_ms + h.data_movement_ms + h.outside_operators_ms == doctest::Approx(h.wall_ms).epsilon(0.01));
  CHECK(h.wall_ms == doctest::Approx(whole_ms).epsilon(0.01));
  CHECK(h.top_level_op_count == 21);
}

TEST_CASE("backward: the ops inside autograd's wrappers are the top-level ones") {
  ThreadsGuard threads;
  auto a = torch::rand({256, 256}, torch::requires_grad());
  auto b = torch::rand({256, 256});
  auto result = Profile([&] {
    auto y = torch::mm(a, b).sum();
    y.backward();
  });
  const auto events = collector::CpuOpEvents(*result);
  bool wrapper = false, node = false;
  for (const auto& e : events) {
    if (e.name.rfind("autograd::engine::evaluate_function:", 0) == 0) {
      wrapper = true;
      CHECK(e.kind == core::CpuEventKind::kBackwardFunction);
    }
    if (e.name == "MmBackward0") {
      node = true;
      CHECK(e.kind == core::CpuEventKind::kBackwardFunction);
    }
    if (e.name == collector::kineto::kProfileWindow) CHECK(e.kind == core::CpuEventKind::kUserScope);
  }
  CHECK(wrapper);
  CHECK(node);
  int backward_mm = 0;
  for (const auto& e : core::TopLevelOperators(events)) {
    if (e.name == "aten::mm") ++backward_mm;
  }
  CHECK(backward_mm == 2);  // the forward mm and the gradient's mm in MmBackward0
  const auto h = collector::HostBreakdownFromProfile(*result, collector::kineto::kProfileWindow, 1);
  CHECK(h.compute_ms > 0);
  CHECK(h.compute_ms + h.data_movement_ms + h.outside_operators_ms == doctest::Approx(h.wall_ms));
  CHECK_THROWS_AS(collector::HostBreakdownFromProfile(*result, "no such window", 1), std::runtime_error);
}

TEST_CASE("the profiler's per-op overhead is measured") {
  auto us = collector::MeasureProfilerOverheadPerOpUs(2000, 5);
  REQUIRE(us);
  MESSAGE("profiler overhead: " << *us << " us per op");
  CHECK(std::isfinite(*us));
  CHECK(*us < 1000.0);
}
