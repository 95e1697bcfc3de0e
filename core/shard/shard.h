// Splitting one run plan over N machines (`torchgauge-collect run --shard I/N`,
// docs/cluster.md): a deterministic, cost-balanced partition that every shard
// computes on its own, with no coordinator, and gets the same answer.
//
// Contract:
// - Partition() depends only on the multiset of (run key, cost) pairs: not on
//   the order of the plan, the host, or floating-point summation order (costs
//   are rounded to integer milli-units before they are added). Every shard
//   of a build therefore owns a disjoint set of runs, and together they own
//   the whole plan.
// - Costs are expected wall times. With `--cost-from RESULTS` they are the
//   previous build's duration_s per run (already the sum over worker
//   processes); runs it lacks get the static cost scaled to seconds
//   (PlanCosts). Without it, StaticCost() below.
// - Shard indices are 0-based: "I/N" with I in 0..N-1, as Slurm's
//   SLURM_ARRAY_TASK_ID for `--array=0-(N-1)` and Kubernetes'
//   JOB_COMPLETION_INDEX count. (PyTorch's --partition-id counts from 1.)
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/layout.h"
#include "core/contract/run_settings.h"

namespace torchgauge::core {

struct ShardSpec {
  int index = 0;  // 0..count-1
  int count = 1;
  bool operator==(const ShardSpec&) const = default;
};

// Largest shard count accepted: far beyond any cluster we target, small
// enough that a typo (e.g. "0/10000") is caught.
inline constexpr int kMaxShards = 4096;

// Parses "I/N". Throws std::invalid_argument saying what is wrong and what a
// valid value looks like (not I/N, not integers, N < 1, I outside 0..N-1).
ShardSpec ParseShard(const std::string& text);
std::string FormatShard(const ShardSpec& shard);  // "I/N"

// The suite settings a run's cost scales with: warmup, repeat,
// profile_iterations and processes of the one RunSettings (its defaults).
using CostSettings = RunSettings;

// One planned run as the static cost rule sees it.
struct CostInput {
  RunKey key;
  // Whether the model supports the run's mode; an unsupported run is
  // recorded without executing a step.
  bool supported = true;
  // Relative cost of one eval step of the model at the run's batch size
  // (1 = resnet50 at batch 32); the collector takes it from
  // collector/cost_weights.h.
  double model_weight = 1.0;
  // The run's worker processes (a suite's backend_processes can give a
  // backend's runs their own count); 0: the settings' processes.
  int processes = 0;
};

// The static cost, in units of "one eval step of a weight-1 model". Rule:
//   per process: kProcessSetupSteps                      (spawn, LibTorch, model build)
//              + model_weight * backend_setup             (torchscript: trace, check against
//                                                          eager, executor optimisation ≈ 5
//                                                          forwards; cudagraph: 1 capture step;
//                                                          inductor: 1 for loading; eager: 0)
//              + model_weight * mode_factor * (warmup + repeat + 2 * profile_iterations)
//   mode_factor: 3 for train (forward + backward ≈ 3 forwards, plus the optimiser), 1 for eval;
//   a profiled step counts twice (profiler overhead); precision counts 1 (faster on tensor
//   cores, slower where emulated: no device-free rule is better than none).
//   Unsupported runs: kProcessSetupSteps per process only.
// The total is multiplied by processes (the run's own count where it has one).
inline constexpr double kProcessSetupSteps = 2.0;
double StaticCost(const CostInput& run, const CostSettings& settings);

// The expected cost of every planned run, in plan order. `measured` maps a
// run to its previous duration_s (--cost-from); runs it lacks (new models,
// or a null duration) get their static cost times the ratio of measured
// seconds to static cost over the runs that have both, so the two kinds of
// cost share a unit. With no overlap, the static costs are used as they are.
std::vector<double> PlanCosts(const std::vector<CostInput>& plan, const CostSettings& settings,
                              const std::map<RunKey, double>& measured = {});

// The assignment of runs (indices into `runs`) to `n` shards; each shard's
// indices ascend. Longest-processing-time-first: runs by cost descending
// (ties by key), each to the least loaded shard (ties: lowest index); then a
// deterministic refinement moves or swaps runs between the most and least
// loaded shards while that narrows their gap. Throws std::invalid_argument
// for n outside 1..kMaxShards, a size mismatch, a duplicate key, or a
// negative or non-finite cost.
std::vector<std::vector<std::size_t>> Partition(const std::vector<RunKey>& runs, const std::vector<double>& costs,
                                                int n);

// The runs shard `shard.index` of `shard.count` owns: Partition()[index].
std::vector<std::size_t> ShardFor(const std::vector<RunKey>& runs, const std::vector<double>& costs,
                                  const ShardSpec& shard);

// How even a partition is: each shard's total cost, and largest over
// smallest (nullopt when a shard has zero cost, e.g. more shards than runs).
struct ShardBalance {
  std::vector<double> shard_costs;
  std::optional<double> max_over_min;
};
ShardBalance MeasureBalance(const std::vector<std::vector<std::size_t>>& partition, const std::vector<double>& costs);

}  // namespace torchgauge::core
