#include "core/shard/shard.h"

#include "core/contract/vocabulary.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace torchgauge::core {
namespace {

// Costs are summed as integers of this many units per cost unit, so every
// machine adds them exactly and in any order to the same load.
constexpr double kCostScale = 1000.0;
constexpr double kMaxCost = 1e12;

std::optional<int> ParseCount(std::string_view s) {
  // Digits only: from_chars would take a sign.
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

double BackendSetupSteps(const std::string& backend, double mode_factor) {
  if (backend == "torchscript") return 5.0;
  if (backend == "cudagraph") return mode_factor;  // one captured step
  if (IsInductorBackend(backend)) return 1.0;  // loading the compiled package
  return 0.0;
}

}  // namespace

ShardSpec ParseShard(const std::string& text) {
  const std::string prefix = "--shard '" + text + "': ";
  const auto slash = text.find('/');
  std::optional<int> index, count;
  if (slash != std::string::npos) {
    index = ParseCount(std::string_view(text).substr(0, slash));
    count = ParseCount(std::string_view(text).substr(slash + 1));
  }
  if (!index || !count) {
    throw std::invalid_argument(prefix + "expected I/N with whole numbers, e.g. 0/4 for the first of 4 shards");
  }
  if (*count < 1 || *count > kMaxShards) {
    throw std::invalid_argument(prefix + "the shard count must be between 1 and " + std::to_string(kMaxShards));
  }
  if (*index >= *count) {
    throw std::invalid_argument(prefix + "index " + std::to_string(*index) + " is out of range: with " +
                                std::to_string(*count) + " shards it runs from 0 to " + std::to_string(*count - 1) +
                                " (0-based, as SLURM_ARRAY_TASK_ID with --array=0-" + std::to_string(*count - 1) +
                                " and JOB_COMPLETION_INDEX count; PyTorch's --partition-id counts from 1)");
  }
  return {*index, *count};
}

std::string FormatShard(const ShardSpec& shard) {
  return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

double StaticCost(const CostInput& run, const CostSettings& settings) {
  const double processes = std::max(1, run.processes > 0 ? run.processes : settings.processes);
  if (!run.supported) return processes * kProcessSetupSteps;
  const double mode_factor = run.key.mode == "train" ? 3.0 : 1.0;
  const double steps =
      std::max(0, settings.warmup) + std::max(0, settings.repeat) + 2.0 * std::max(0, settings.profile_iterations);
  const double weight = run.model_weight > 0 ? run.model_weight : 1.0;
  return processes *
         (kProcessSetupSteps + weight * (BackendSetupSteps(run.key.backend, mode_factor) + mode_factor * steps));
}

std::vector<double> PlanCosts(const std::vector<CostInput>& plan, const CostSettings& settings,
                              const std::map<RunKey, double>& measured) {
  std::vector<double> statics;
  statics.reserve(plan.size());
  for (const auto& run : plan) statics.push_back(StaticCost(run, settings));
  double measured_sum = 0, static_sum = 0;
  std::vector<std::optional<double>> seconds(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto it = measured.find(plan[i].key);
    if (it == measured.end() || !std::isfinite(it->second) || it->second < 0) continue;
    seconds[i] = it->second;
    measured_sum += it->second;
    static_sum += statics[i];
  }
  // Static units to seconds, from the runs that have both; 1 with no overlap
  // (then nothing was measured and the static costs stand alone).
  const double scale = static_sum > 0 && measured_sum > 0 ? measured_sum / static_sum : 1.0;
  std::vector<double> out(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) out[i] = seconds[i] ? *seconds[i] : statics[i] * scale;
  return out;
}

namespace {

// The costs as integer milli-units (so that the loads add up exactly).
std::vector<int64_t> CostUnits(const std::vector<RunKey>& runs, const std::vector<double>& costs) {
  if (runs.size() != costs.size()) {
    throw std::invalid_argument("partition: " + std::to_string(runs.size()) + " runs but " +
                                std::to_string(costs.size()) + " costs");
  }
  std::vector<int64_t> units(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!std::isfinite(costs[i]) || costs[i] < 0 || costs[i] > kMaxCost) {
      throw std::invalid_argument("partition: run " + runs[i].FileStem() + " has cost " + std::to_string(costs[i]) +
                                  "; costs must be finite, at least 0 and at most 1e12");
    }
    units[i] = std::llround(costs[i] * kCostScale);
  }
  return units;
}

// The refinement's best candidate between the fullest shard (`from`) and the
// emptiest (`to`): the transferred amount d (0 < d < gap) closest to gap/2.
// Moves are tried before swaps and in key order, and only a strictly better
// candidate replaces the current one. `to_index` unset: a move.
struct Transfer {
  std::size_t from_index;
  std::optional<std::size_t> to_index;
};
std::optional<Transfer> BestTransfer(const std::vector<std::size_t>& from, const std::vector<std::size_t>& to,
                                     const std::vector<int64_t>& units, int64_t gap) {
  int64_t best_score = gap;  // |2d - gap| < gap for every admissible d
  std::optional<Transfer> best;
  for (std::size_t a = 0; a < from.size(); ++a) {
    const int64_t d = units[from[a]];
    if (d <= 0 || d >= gap) continue;
    const int64_t score = std::llabs(2 * d - gap);
    if (score < best_score) best_score = score, best = Transfer{a, std::nullopt};
  }
  for (std::size_t a = 0; a < from.size(); ++a) {
    for (std::size_t b = 0; b < to.size(); ++b) {
      const int64_t d = units[from[a]] - units[to[b]];
      if (d <= 0 || d >= gap) continue;
      const int64_t score = std::llabs(2 * d - gap);
      if (score < best_score) best_score = score, best = Transfer{a, b};
    }
  }
  return best;
}

}  // namespace

std::vector<std::vector<std::size_t>> Partition(const std::vector<RunKey>& runs, const std::vector<double>& costs,
                                                int n) {
  if (n < 1 || n > kMaxShards) {
    throw std::invalid_argument("shard count " + std::to_string(n) + " is not between 1 and " +
                                std::to_string(kMaxShards));
  }
  const std::vector<int64_t> units = CostUnits(runs, costs);
  const std::size_t count = runs.size();
  // Every decision below orders runs by key, never by position, so a plan
  // listed in another order gets the same shards.
  auto key_less = [&](std::size_t a, std::size_t b) { return runs[a] < runs[b]; };
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), key_less);
  for (std::size_t i = 1; i < count; ++i) {
    if (runs[order[i]] == runs[order[i - 1]]) {
      throw std::invalid_argument("partition: run " + runs[order[i]].FileStem() + " is planned twice");
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return units[a] > units[b]; });

  const auto shards = static_cast<std::size_t>(n);
  std::vector<std::vector<std::size_t>> members(shards);
  std::vector<int64_t> load(shards, 0);
  for (std::size_t i : order) {
    const auto s = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    members[s].push_back(i);
    load[s] += units[i];
  }

  // Refinement: narrow the gap between the most and the least loaded shard
  // by the move or swap that brings it closest to even. Each step strictly
  // lowers the sum of squared loads, so it ends; the cap only bounds time.
  const std::size_t max_steps = 100 * count + 100;
  for (std::size_t step = 0; step < max_steps && shards > 1; ++step) {
    const auto hi = static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
    const auto lo = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    const int64_t gap = load[hi] - load[lo];
    if (gap <= 0) break;
    auto& from = members[hi];
    auto& to = members[lo];
    std::sort(from.begin(), from.end(), key_less);
    std::sort(to.begin(), to.end(), key_less);
    const auto best = BestTransfer(from, to, units, gap);
    if (!best) break;
    const std::size_t x = from[best->from_index];
    from.erase(from.begin() + static_cast<std::ptrdiff_t>(best->from_index));
    load[hi] -= units[x];
    load[lo] += units[x];
    if (best->to_index) {
      const std::size_t y = to[*best->to_index];
      to.erase(to.begin() + static_cast<std::ptrdiff_t>(*best->to_index));
      load[lo] -= units[y];
      load[hi] += units[y];
      from.push_back(y);
    }
    to.push_back(x);
  }
  for (auto& m : members) std::sort(m.begin(), m.end());
  return members;
}

std::vector<std::size_t> ShardFor(const std::vector<RunKey>& runs, const std::vector<double>& costs,
                                  const ShardSpec& shard) {
  if (shard.index < 0 || shard.index >= shard.count) {
    throw std::invalid_argument("shard " + FormatShard(shard) + ": the index must be between 0 and count - 1");
  }
  return Partition(runs, costs, shard.count)[static_cast<std::size_t>(shard.index)];
}

ShardBalance MeasureBalance(const std::vector<std::vector<std::size_t>>& partition, const std::vector<double>& costs) {
  ShardBalance out;
  for (const auto& shard : partition) {
    double sum = 0;
    for (std::size_t i : shard) sum += costs.at(i);
    out.shard_costs.push_back(sum);
  }
  if (out.shard_costs.empty()) return out;
  const auto [mn, mx] = std::minmax_element(out.shard_costs.begin(), out.shard_costs.end());
  if (*mn > 0) out.max_over_min = *mx / *mn;
  return out;
}

}  // namespace torchgauge::core
