// The framework-time breakdown on the host, on every device: where a profiled
// iteration's wall time goes, from the profiler's CPU operator events.
//   operator time     = union of top-level operator intervals over all threads
//                       (top-level: not inside another operator on the same
//                       thread; backward-function and user-scope wrappers are
//                       not operators, so they do not hide what runs in them);
//   data movement     = the part of the operator time spent in top-level ops
//                       of kDataMovementOps (copies, no arithmetic);
//   compute           = the rest of the operator time;
//   outside operators = wall - operator time: dispatch, allocation, the
//                       harness's own loop, on GPU the launch path (what
//                       TorchBench calls idle, seen from the host).
// The three parts sum to the wall by construction. LibTorch-free so that the
// interval arithmetic is unit-tested on synthetic event lists; the collector
// turns Kineto events into CpuOpEvent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/stats/intervals.h"

namespace torchgauge::core {

enum class CpuEventKind {
  kOperator,          // a dispatcher operator (aten::mm, prim::..., torchvision::nms)
  kBackwardFunction,  // autograd node (MmBackward0) or the engine's evaluate_function wrapper
  kUserScope,         // record_function / RECORD_USER_SCOPE, "## name ##", ProfilerStep#N
  kOther,             // anything else on the CPU timeline; never counted, never nests
};

struct CpuOpEvent {
  std::string name;
  uint64_t thread_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  CpuEventKind kind = CpuEventKind::kOperator;
};

// Kind of a profiler CPU event from its name and, where the profiler gives
// it, its RecordFunction scope (the collector maps at::RecordScope to the two
// flags). Names decide where the scope does not: the engine's
// "autograd::engine::evaluate_function: X" wrapper is recorded with the
// ordinary function scope, and traces read back from JSON have no scope.
CpuEventKind ClassifyCpuEvent(std::string_view name, bool backward_scope = false, bool user_scope = false);

// The one list of pure data-movement operators: ops whose output holds the
// input's values, copied, moved between devices, relaid out or converted in
// type, with no arithmetic on them. Views (view, t, permute, expand) are not
// here: they move no bytes. Neither are gather-like ops (index_select,
// embedding): they are a model's own work (an embedding lookup is the compute
// of a recommendation model). cat/stack are here: their output is their
// inputs' bytes side by side. Sorted.
inline constexpr const char* kDataMovementOps[] = {
    "aten::_copy_from",  "aten::_copy_from_and_resize",
    "aten::_pin_memory", "aten::_to_copy",
    "aten::cat",         "aten::clone",
    "aten::contiguous",  "aten::copy_",
    "aten::pin_memory",  "aten::stack",
    "aten::to",
};
bool IsDataMovementOp(std::string_view name);

struct HostBreakdown {
  int iterations = 0;
  // Per iteration.
  double wall_ms = 0, operator_ms = 0, compute_ms = 0, data_movement_ms = 0, outside_operators_ms = 0;
  // Of the wall; compute + data movement + outside operators = 1.
  double compute_fraction = 0, data_movement_fraction = 0, outside_operators_fraction = 0;
  double top_level_op_count = 0;               // per iteration
  std::vector<std::string> data_movement_ops;  // the list used (kDataMovementOps)
  // The profiler's own cost per recorded operator, from a null step timed
  // with and without the profiler (MeasureProfilerOverhead). Unset: not measured.
  std::optional<double> profiler_overhead_per_op_us;
};

// Breakdown over the profiling windows (one per iteration, or one spanning
// all of them), which must not overlap. `iterations` is the number of steps
// the windows hold together; milliseconds are per iteration. Events are
// clipped to the windows. Throws std::invalid_argument for iterations < 1 or
// a window that ends before it starts.
HostBreakdown ComputeHostBreakdown(const std::vector<CpuOpEvent>& events, const std::vector<Interval>& windows,
                                   int iterations);

// Top-level operator events (kind kOperator, not contained in another
// operator of the same thread), in thread then start order. Exposed for tests
// and for per-op tables.
std::vector<CpuOpEvent> TopLevelOperators(const std::vector<CpuOpEvent>& events);

// Per-op overhead of the profiler in microseconds from a null step of
// `ops_per_step` operators timed without and with the profiler (ms per step).
// Unset when the inputs cannot give one (no ops, non-positive times); may be
// negative within noise, which is kept as measured.
std::optional<double> ProfilerOverheadPerOpUs(double step_ms_without, double step_ms_with, int64_t ops_per_step);

// JSON in the run result's "host_breakdown" object (schemas/run_result.schema.json).
nlohmann::json ToJson(const HostBreakdown& b);
// Throws FileError naming `file` and "host_breakdown.<field>".
HostBreakdown HostBreakdownFromJson(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace torchgauge::core
