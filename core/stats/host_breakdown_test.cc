#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/io/json_io.h"
#include "core/stats/host_breakdown.h"

using namespace torchgauge::core;

namespace {
CpuOpEvent Op(const char* name, int64_t s, int64_t e, uint64_t thread = 1) {
  return {name, thread, s, e, ClassifyCpuEvent(name)};
}
void CheckSums(const HostBreakdown& b) {
  CHECK(b.compute_ms + b.data_movement_ms + b.outside_operators_ms == doctest::Approx(b.wall_ms));
  CHECK(b.operator_ms == doctest::Approx(b.compute_ms + b.data_movement_ms));
  if (b.wall_ms > 0) {
    CHECK(b.compute_fraction + b.data_movement_fraction + b.outside_operators_fraction == doctest::Approx(1.0));
  }
}
}  // namespace

TEST_CASE("event kinds: operators, backward wrappers, user scopes") {
  CHECK(ClassifyCpuEvent("aten::mm") == CpuEventKind::kOperator);
  CHECK(ClassifyCpuEvent("torchvision::nms") == CpuEventKind::kOperator);
  CHECK(ClassifyCpuEvent("autograd::engine::evaluate_function: MmBackward0") == CpuEventKind::kBackwardFunction);
  CHECK(ClassifyCpuEvent("MmBackward0") == CpuEventKind::kBackwardFunction);
  CHECK(ClassifyCpuEvent("CudnnConvolutionBackward") == CpuEventKind::kBackwardFunction);
  CHECK(ClassifyCpuEvent("torch::autograd::AccumulateGrad") == CpuEventKind::kBackwardFunction);
  CHECK(ClassifyCpuEvent("AccumulateGrad") == CpuEventKind::kBackwardFunction);
  CHECK(ClassifyCpuEvent("## forward ##") == CpuEventKind::kUserScope);
  CHECK(ClassifyCpuEvent("ProfilerStep#3") == CpuEventKind::kUserScope);
  CHECK(ClassifyCpuEvent("torchgauge::profile_window") == CpuEventKind::kUserScope);
  CHECK(ClassifyCpuEvent("forward") == CpuEventKind::kOther);
  CHECK(ClassifyCpuEvent("cudaLaunchKernel") == CpuEventKind::kOther);
  // The profiler's scope wins over the name.
  CHECK(ClassifyCpuEvent("my::scope", false, true) == CpuEventKind::kUserScope);
  CHECK(ClassifyCpuEvent("aten::weird", true, false) == CpuEventKind::kBackwardFunction);
}

TEST_CASE("the data movement list is sorted, so the lookup finds every entry") {
  CHECK(std::is_sorted(std::begin(kDataMovementOps), std::end(kDataMovementOps),
                       [](const char* a, const char* b) { return std::string_view(a) < std::string_view(b); }));
  for (const char* op : kDataMovementOps) CHECK(IsDataMovementOp(op));
  CHECK(!IsDataMovementOp("aten::mm"));
  CHECK(!IsDataMovementOp("aten::view"));
  CHECK(!IsDataMovementOp("aten::copy"));
}

TEST_CASE("nested ops count once, under their top-level op's class") {
  // aten::linear [10,50) holds aten::addmm [15,45) which holds aten::copy_ [20,25):
  // all of it is compute, because the top-level op is compute.
  // aten::to [60,80) holds aten::_to_copy and aten::empty_strided: data movement.
  std::vector<CpuOpEvent> ev{Op("aten::linear", 10, 50),   Op("aten::addmm", 15, 45),
                             Op("aten::copy_", 20, 25),    Op("aten::to", 60, 80),
                             Op("aten::_to_copy", 61, 79), Op("aten::empty_strided", 62, 63)};
  auto top = TopLevelOperators(ev);
  REQUIRE(top.size() == 2);
  CHECK(top[0].name == "aten::linear");
  CHECK(top[1].name == "aten::to");
  auto b = ComputeHostBreakdown(ev, {{0, 100}}, 1);
  CHECK(b.operator_ms == doctest::Approx(60e-6));
  CHECK(b.compute_ms == doctest::Approx(40e-6));
  CHECK(b.data_movement_ms == doctest::Approx(20e-6));
  CHECK(b.outside_operators_ms == doctest::Approx(40e-6));
  CHECK(b.top_level_op_count == 2);
  CheckSums(b);
}

TEST_CASE("backward wrappers and user scopes do not hide the ops inside them") {
  // A user scope spans the window and a backward node spans [10,90): were they
  // operators, everything would be one compute op. The ops inside are the
  // top-level ones: aten::mm [20,40) and aten::copy_ [50,60).
  std::vector<CpuOpEvent> ev{
      Op("## train step ##", 0, 100), Op("autograd::engine::evaluate_function: MmBackward0", 10, 90),
      Op("MmBackward0", 11, 89),      Op("aten::mm", 20, 40),
      Op("aten::t", 21, 22),          Op("aten::copy_", 50, 60)};
  auto b = ComputeHostBreakdown(ev, {{0, 100}}, 1);
  CHECK(b.compute_fraction == doctest::Approx(0.2));
  CHECK(b.data_movement_fraction == doctest::Approx(0.1));
  CHECK(b.outside_operators_fraction == doctest::Approx(0.7));
  CHECK(b.top_level_op_count == 2);
  CheckSums(b);
}

TEST_CASE("nesting is per thread; time on two threads at once counts once") {
  // Thread 1 runs aten::mm [0,50); thread 2's aten::add [20,70) is not nested
  // in it (another thread) and is top-level; the union is [0,70).
  std::vector<CpuOpEvent> ev{Op("aten::mm", 0, 50, 1), Op("aten::add", 20, 70, 2), Op("aten::clone", 80, 90, 2)};
  CHECK(TopLevelOperators(ev).size() == 3);
  auto b = ComputeHostBreakdown(ev, {{0, 100}}, 1);
  CHECK(b.operator_ms == doctest::Approx(80e-6));
  CHECK(b.data_movement_ms == doctest::Approx(10e-6));
  CHECK(b.outside_operators_ms == doctest::Approx(20e-6));
  CheckSums(b);
}

TEST_CASE("movement overlapping compute on another thread counts as movement once") {
  // copy_ [0,60) on thread 1, mm [40,100) on thread 2: movement [0,60), compute [60,100).
  auto b = ComputeHostBreakdown({Op("aten::copy_", 0, 60, 1), Op("aten::mm", 40, 100, 2)}, {{0, 100}}, 1);
  CHECK(b.data_movement_fraction == doctest::Approx(0.6));
  CHECK(b.compute_fraction == doctest::Approx(0.4));
  CHECK(b.outside_operators_fraction == doctest::Approx(0.0));
  CheckSums(b);
}

TEST_CASE("events are clipped to the windows; per-iteration windows add up") {
  // Two iteration windows [0,100) and [200,300); the gap [100,200) is not
  // part of the wall. An op straddles the first window's end; one lies in the gap.
  std::vector<CpuOpEvent> ev{Op("aten::mm", 80, 150), Op("aten::relu", 160, 190), Op("aten::copy_", 250, 260),
                             Op("aten::mm", -50, 10)};
  auto b = ComputeHostBreakdown(ev, {{200, 300}, {0, 100}}, 2);
  CHECK(b.wall_ms == doctest::Approx(100e-6));          // 200 ns over 2 iterations
  CHECK(b.compute_ms == doctest::Approx(15e-6));        // [0,10) + [80,100) = 30 ns / 2
  CHECK(b.data_movement_ms == doctest::Approx(5e-6));   // 10 ns / 2
  CHECK(b.top_level_op_count == doctest::Approx(1.5));  // the gap op is not counted
  CheckSums(b);
}

TEST_CASE("an op that ends after its parent (clock jitter) loses no time") {
  auto b = ComputeHostBreakdown({Op("aten::mm", 0, 50), Op("aten::add", 40, 60)}, {{0, 100}}, 1);
  CHECK(b.operator_ms == doctest::Approx(60e-6));
  CheckSums(b);
}

TEST_CASE("no ops: all outside; bad arguments are refused") {
  auto b = ComputeHostBreakdown({}, {{0, 1000}}, 1);
  CHECK(b.outside_operators_fraction == doctest::Approx(1.0));
  CheckSums(b);
  auto z = ComputeHostBreakdown({Op("aten::mm", 0, 5)}, {{5, 5}}, 1);
  CHECK(z.wall_ms == 0);
  CHECK(z.compute_fraction == 0);
  CHECK_THROWS_AS(ComputeHostBreakdown({}, {{0, 10}}, 0), std::invalid_argument);
  CHECK_THROWS_AS(ComputeHostBreakdown({}, {{10, 0}}, 1), std::invalid_argument);
  CHECK_THROWS_AS(ComputeHostBreakdown({}, {{0, 10}, {5, 20}}, 1), std::invalid_argument);
}

TEST_CASE("profiler overhead per op") {
  CHECK(*ProfilerOverheadPerOpUs(1.0, 3.0, 1000) == doctest::Approx(2.0));
  CHECK(!ProfilerOverheadPerOpUs(1.0, 3.0, 0));
  CHECK(!ProfilerOverheadPerOpUs(0.0, 3.0, 10));
}

TEST_CASE("host breakdown JSON round trip and errors name the field") {
  auto b = ComputeHostBreakdown({Op("aten::mm", 0, 50), Op("aten::copy_", 60, 70)}, {{0, 100}}, 1);
  b.profiler_overhead_per_op_us = 1.5;
  auto j = ToJson(b);
  CHECK(j.at("data_movement_ops").size() == std::size(kDataMovementOps));
  auto back = HostBreakdownFromJson(j, "r.json");
  CHECK(back.compute_ms == b.compute_ms);
  CHECK(back.data_movement_fraction == b.data_movement_fraction);
  CHECK(back.data_movement_ops == b.data_movement_ops);
  CHECK(*back.profiler_overhead_per_op_us == 1.5);
  CHECK(ToJson(back) == j);

  b.profiler_overhead_per_op_us.reset();
  CHECK(ToJson(b).at("profiler_overhead_per_op_us").is_null());
  CHECK(!HostBreakdownFromJson(ToJson(b), "r.json").profiler_overhead_per_op_us);

  auto bad = j;
  bad["compute_ms"] = "fast";
  try {
    HostBreakdownFromJson(bad, "r.json");
    FAIL("expected a FileError");
  } catch (const FileError& e) {
    CHECK(e.field() == "host_breakdown.compute_ms");
    CHECK(std::string(e.what()).find("r.json") != std::string::npos);
  }
  bad = j;
  bad.erase("wall_ms");
  CHECK_THROWS_AS(HostBreakdownFromJson(bad, "r.json"), FileError);
}
