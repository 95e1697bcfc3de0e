#include "core/stats/host_breakdown.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Autograd node names end in "Backward" and an optional version digit
// (MmBackward0, AddmmBackward0, CudnnConvolutionBackward); AccumulateGrad is
// a node too. Operator names carry a namespace ("aten::"), node names do not
// (except the torch::autograd:: prefix some nodes print).
bool LooksLikeAutogradNode(std::string_view name) {
  if (StartsWith(name, "torch::autograd::")) return true;
  if (name.find("::") != std::string_view::npos) return false;
  if (name == "AccumulateGrad") return true;
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  return EndsWith(name.substr(0, end), "Backward");
}

// Intersection of two sorted disjoint interval sets.
std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return out;
}

bool Overlaps(const Interval& iv, const std::vector<Interval>& set) {
  for (const auto& w : set) {
    if (iv.start < w.end && iv.end > w.start) return true;
    // A zero-length op at a window's edge belongs to it.
    if (iv.start == iv.end && iv.start >= w.start && iv.start <= w.end) return true;
  }
  return false;
}

}  // namespace

CpuEventKind ClassifyCpuEvent(std::string_view name, bool backward_scope, bool user_scope) {
  if (backward_scope) return CpuEventKind::kBackwardFunction;
  if (StartsWith(name, "autograd::engine::evaluate_function:")) return CpuEventKind::kBackwardFunction;
  if (user_scope) return CpuEventKind::kUserScope;
  // TorchBench's harness names its record_function scopes "## name ##";
  // Kineto's schedule marks steps "ProfilerStep#N"; ours are torchgauge::.
  if (StartsWith(name, "## ") || StartsWith(name, "ProfilerStep#") || StartsWith(name, "torchgauge::")) {
    return CpuEventKind::kUserScope;
  }
  if (LooksLikeAutogradNode(name)) return CpuEventKind::kBackwardFunction;
  // Dispatcher operators carry a namespace; TorchScript function frames
  // ("forward"), runtime calls (cudaLaunchKernel) and the like do not.
  if (name.find("::") != std::string_view::npos) return CpuEventKind::kOperator;
  return CpuEventKind::kOther;
}

bool IsDataMovementOp(std::string_view name) {
  return std::binary_search(std::begin(kDataMovementOps), std::end(kDataMovementOps), name,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

std::vector<CpuOpEvent> TopLevelOperators(const std::vector<CpuOpEvent>& events) {
  std::map<uint64_t, std::vector<const CpuOpEvent*>> by_thread;
  for (const auto& e : events) {
    if (e.kind == CpuEventKind::kOperator && e.end_ns >= e.start_ns) by_thread[e.thread_id].push_back(&e);
  }
  std::vector<CpuOpEvent> out;
  for (auto& [thread, list] : by_thread) {
    // Parents before their children: by start, the longer first on a tie.
    std::sort(list.begin(), list.end(), [](const CpuOpEvent* a, const CpuOpEvent* b) {
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
    });
    bool open = false;
    int64_t open_end = 0;
    for (const CpuOpEvent* e : list) {
      // Contained in the open top-level op: nested. An op that starts inside
      // but ends after it (clock jitter) is kept as its own top-level op, so
      // no operator time is lost; the union absorbs the overlap.
      if (open && e->start_ns < open_end && e->end_ns <= open_end) continue;
      out.push_back(*e);
      open = true;
      open_end = std::max(open_end, e->end_ns);
    }
  }
  return out;
}

HostBreakdown ComputeHostBreakdown(const std::vector<CpuOpEvent>& events, const std::vector<Interval>& windows,
                                   int iterations) {
  if (iterations < 1) throw std::invalid_argument("ComputeHostBreakdown: iterations must be >= 1");
  std::vector<Interval> sorted = windows;
  std::sort(sorted.begin(), sorted.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  int64_t wall = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].end < sorted[i].start)
      throw std::invalid_argument("ComputeHostBreakdown: a window ends before it starts");
    if (i > 0 && sorted[i].start < sorted[i - 1].end)
      throw std::invalid_argument("ComputeHostBreakdown: windows overlap");
    wall += sorted[i].end - sorted[i].start;
  }
  std::vector<Interval> window_set;
  for (const auto& w : sorted) {
    if (w.end > w.start) window_set.push_back(w);
  }

  std::vector<Interval> ops, movement;
  int64_t top_level = 0;
  for (const auto& e : TopLevelOperators(events)) {
    const Interval iv{e.start_ns, e.end_ns};
    if (!Overlaps(iv, sorted)) continue;
    ++top_level;
    ops.push_back(iv);
    if (IsDataMovementOp(e.name)) movement.push_back(iv);
  }
  const int64_t lo = sorted.empty() ? 0 : sorted.front().start;
  const int64_t hi = sorted.empty() ? 0 : sorted.back().end;
  const auto op_set = Intersect(UnionClipped(std::move(ops), lo, hi), window_set);
  const auto movement_set = Intersect(UnionClipped(std::move(movement), lo, hi), window_set);
  const int64_t operator_ns = TotalLength(op_set);
  const int64_t movement_ns = TotalLength(movement_set);  // a subset of op_set

  const double n = iterations;
  auto ms = [n](int64_t ns) { return static_cast<double>(ns) / 1e6 / n; };
  HostBreakdown b;
  b.iterations = iterations;
  b.wall_ms = ms(wall);
  b.operator_ms = ms(operator_ns);
  b.data_movement_ms = ms(movement_ns);
  b.compute_ms = ms(operator_ns - movement_ns);
  b.outside_operators_ms = ms(wall - operator_ns);
  if (wall > 0) {
    const double w = static_cast<double>(wall);
    b.data_movement_fraction = static_cast<double>(movement_ns) / w;
    b.compute_fraction = static_cast<double>(operator_ns - movement_ns) / w;
    b.outside_operators_fraction = static_cast<double>(wall - operator_ns) / w;
  }
  b.top_level_op_count = static_cast<double>(top_level) / n;
  b.data_movement_ops.assign(std::begin(kDataMovementOps), std::end(kDataMovementOps));
  return b;
}

std::optional<double> ProfilerOverheadPerOpUs(double step_ms_without, double step_ms_with, int64_t ops_per_step) {
  if (ops_per_step < 1 || !(step_ms_without > 0) || !(step_ms_with > 0)) return std::nullopt;
  return (step_ms_with - step_ms_without) * 1e3 / static_cast<double>(ops_per_step);
}

json ToJson(const HostBreakdown& b) {
  return {{"iterations", b.iterations},
          {"wall_ms", b.wall_ms},
          {"operator_ms", b.operator_ms},
          {"compute_ms", b.compute_ms},
          {"data_movement_ms", b.data_movement_ms},
          {"outside_operators_ms", b.outside_operators_ms},
          {"compute_fraction", b.compute_fraction},
          {"data_movement_fraction", b.data_movement_fraction},
          {"outside_operators_fraction", b.outside_operators_fraction},
          {"top_level_op_count", b.top_level_op_count},
          {"data_movement_ops", b.data_movement_ops},
          {"profiler_overhead_per_op_us", Opt(b.profiler_overhead_per_op_us)}};
}

HostBreakdown HostBreakdownFromJson(const json& j, const std::filesystem::path& file) {
  const JsonFields in(j, file, "host_breakdown");
  HostBreakdown b;
  b.iterations = in.AtLeast("iterations", 1);
  b.wall_ms = in.Get<double>("wall_ms");
  b.operator_ms = in.Get<double>("operator_ms");
  b.compute_ms = in.Get<double>("compute_ms");
  b.data_movement_ms = in.Get<double>("data_movement_ms");
  b.outside_operators_ms = in.Get<double>("outside_operators_ms");
  b.compute_fraction = in.Get<double>("compute_fraction");
  b.data_movement_fraction = in.Get<double>("data_movement_fraction");
  b.outside_operators_fraction = in.Get<double>("outside_operators_fraction");
  b.top_level_op_count = in.GetOr("top_level_op_count", b.top_level_op_count);
  b.data_movement_ops = in.GetOr("data_movement_ops", b.data_movement_ops);
  b.profiler_overhead_per_op_us = in.GetOpt<double>("profiler_overhead_per_op_us");
  return b;
}

}  // namespace torchgauge::core
