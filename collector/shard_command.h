// Scale-out in the collector (docs/cluster.md): `run --shard I/N
// [--cost-from RESULTS]` collects one shard of the run plan into its own
// --out, and `merge --into RESULTS SHARD_DIR...` joins the shards into one
// platform tree. The partition is core/shard/shard.h, the merge core/shard/shard_merge.h;
// this file binds them to the command line, the plan, the model registry
// and the manifest.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "collector/cli.h"
#include "collector/manifest_writer.h"
#include "collector/run_spec.h"
#include "core/contract/manifest.h"

namespace torchgauge::collector {

struct ShardOptions {
  std::string shard;      // "I/N"; empty: not sharded
  std::string cost_from;  // a results root or platform directory; empty: static weights
};
void AddShardOptions(CLI::App& run, ShardOptions& o);

// With --shard: the cost of every planned run, the partition, and the plan
// cut down to this shard's runs (in plan order). Returns the manifest's
// shard block (host and times are filled by WriteRunManifest); nullopt and
// the plan untouched without --shard. With `print_balance` (--dry-run) it
// prints every shard's run count and cost and the largest/smallest ratio.
std::optional<core::ShardBlock> SelectShard(std::vector<RunSpec>& plan, const ShardOptions& o,
                                            const std::string& device, const std::string& build_id,
                                            const std::string& platform_id, bool print_balance);

// BuildManifest plus the shard block (host and times from the manifest), written atomically.
void WriteRunManifest(const ManifestFacts& facts, const std::filesystem::path& path,
                      const std::optional<core::ShardBlock>& shard);

void AddMergeCommand(CLI::App& app, CliState& state);
// `pool`: interleaved rounds of collections pooled into one (core/shard/round_pool.h).
void AddPoolCommand(CLI::App& app, CliState& state);

}  // namespace torchgauge::collector
