// How a platform's collection was sharded (`torchgauge-collect merge`,
// docs/cluster.md), for the build page: the shards, their hosts and wall
// times, and the critical path, the slowest shard, which set the night's
// wall time. Read from the merged manifest's `shards` list; a collection
// taken on one machine has none and the page shows nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/contract/manifest.h"
#include "reporter/output/mustache_fwd.h"

namespace torchgauge::reporter {

struct ShardingView {
  std::vector<core::ShardSummary> shards;  // by index
  std::size_t hosts = 0;                   // distinct hosts among the shards that ran
  std::optional<int> critical;             // the shard with the longest wall time
  std::optional<double> critical_wall_s;
  std::optional<double> total_wall_s;          // sum over the shards with a wall time
  std::optional<double> slowest_over_fastest;  // wall time ratio, when every shard has one
  int64_t missing = 0;
};

// nullopt for a manifest without `shards`.
std::optional<ShardingView> ComputeShardingView(const core::Manifest& m);

// Sets "sharding" in a platform's page data (absent when not sharded).
void SetShardView(mu::data& platform, const core::Manifest& m);

}  // namespace torchgauge::reporter
