#include "collector/shard_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "collector/backends/backend.h"
#include "collector/cost_weights.h"
#include "core/contract/vocabulary.h"
#include "core/io/json_io.h"
#include "core/contract/results_tree.h"
#include "core/shard/round_pool.h"
#include "core/shard/shard.h"
#include "core/shard/shard_merge.h"
#include "models/workload.h"

namespace torchgauge::collector {

namespace fs = std::filesystem;

namespace {

// The previous collection's duration_s per run, from --cost-from: a platform
// directory (it holds manifest.json), a build directory (it holds this
// platform), or a results root, where the newest build (the one build order)
// other than this one that has this platform is used. Every shard reads the
// same files, so every shard gets the same costs.
std::map<core::RunKey, double> MeasuredDurations(const fs::path& given, const std::string& build_id,
                                                 const std::string& platform_id) {
  fs::path from = fs::absolute(given).lexically_normal();
  if (from.filename().empty()) from = from.parent_path();
  if (!fs::exists(core::ManifestPath(from)) && fs::exists(core::ManifestPath(from / platform_id))) {
    from /= platform_id;  // a build directory
  }
  const bool one_platform = fs::exists(core::ManifestPath(from));
  const fs::path root = one_platform ? from.parent_path().parent_path() : from;
  const std::string want_build = one_platform ? from.parent_path().filename().string() : "";
  const std::string want_platform = one_platform ? from.filename().string() : platform_id;
  const core::TreeScan scan =
      core::ScanTree(root, one_platform ? std::set<std::string>{want_build} : std::set<std::string>{});
  const core::TreeBuild* build = nullptr;
  const core::TreePlatform* platform = nullptr;
  for (const auto& b : scan.builds) {  // oldest first: the last match is the newest
    if (!one_platform && b.id == build_id) continue;
    if (const auto* p = b.Find(want_platform); p && p->manifest) build = &b, platform = p;
  }
  std::map<core::RunKey, double> out;
  if (!platform) {
    std::cerr << "warning: --cost-from " << from.string() << ": no earlier build of platform " << platform_id
              << " there; the shards are balanced by the static weights\n";
    return out;
  }
  const core::LoadedPlatform loaded = core::LoadPlatform(*build, *platform);
  for (const auto& p : loaded.problems) std::cerr << "warning: --cost-from: skipped " << p.ToString() << "\n";
  for (const auto& r : loaded.runs) {
    if (r.duration_s && r.status != core::Name(core::Status::kMissing)) {
      out[{r.model.id, r.mode, r.backend, r.precision}] = *r.duration_s;
    }
  }
  std::cerr << "torchgauge-collect: shard costs from " << out.size() << " runs of " << platform->dir.string() << "\n";
  return out;
}

std::vector<core::CostInput> CostInputs(const std::vector<RunSpec>& plan) {
  std::vector<core::CostInput> out;
  for (const auto& s : plan) {
    core::CostInput c;
    c.key = s.key();
    // Only what every shard decides alike: the model's modes and the backend;
    // never whether this host has a GPU.
    const models::ModelInfo* info = models::FindModel(s.model);
    const bool mode_ok = info && (s.mode == "train" ? info->supports_train : info->supports_eval);
    c.supported = mode_ok && !BackendUnsupported(s.backend, s.precision);
    c.model_weight = StaticModelWeight(s.model, s.batch_size);
    c.processes = s.settings.processes;
    out.push_back(c);
  }
  return out;
}

void PrintBalance(const std::vector<std::vector<std::size_t>>& parts, const std::vector<double>& costs,
                  const core::ShardSpec& spec, const std::string& source) {
  const core::ShardBalance balance = core::MeasureBalance(parts, costs);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::printf("shard %zu/%d: %zu runs, planned cost %.1f%s\n", i, spec.count, parts[i].size(), balance.shard_costs[i],
                static_cast<int>(i) == spec.index ? "  <- this shard" : "");
  }
  if (balance.max_over_min) {
    std::printf("balance (%s costs): largest/smallest shard = %.3f\n", source.c_str(), *balance.max_over_min);
  } else {
    std::printf("balance (%s costs): a shard has no cost (more shards than runs)\n", source.c_str());
  }
}

core::ModelIdentity Identity(const std::string& id) {
  const models::ModelInfo* info = models::FindModel(id);
  if (!info) {
    throw std::invalid_argument("merge: model '" + id +
                                "' of the plan is not in this collector's registry: merge with the collector "
                                "that collected the shards");
  }
  return {info->id, info->paper_name, core::Name(info->domain), info->task, info->reference};
}

int Merge(const std::string& into, const std::vector<std::string>& dirs, bool allow_missing) {
  core::MergeOptions options;
  options.allow_missing = allow_missing;
  options.identity = Identity;
  const std::vector<fs::path> paths(dirs.begin(), dirs.end());
  const core::MergeOutcome out = core::MergeShards(into, paths, options);
  for (const auto& m : out.missing) std::cerr << "missing: " << m.run << " (" << m.why << ")\n";
  const auto& shards = *out.manifest.shards;
  std::cerr << "torchgauge-collect merge: " << shards.size() << " shards, " << out.runs_taken << " runs, "
            << out.missing.size() << " missing -> " << out.platform_dir.string()
            << (out.changed ? "" : " (unchanged: it already held exactly this merge)") << "\n";
  return 0;
}

int Pool(const std::string& into, const std::vector<std::string>& dirs, bool replace) {
  const std::vector<fs::path> paths(dirs.begin(), dirs.end());
  const core::PoolOutcome out = core::PoolRounds(into, paths, replace);
  for (const auto& c : out.collections) {
    std::cerr << "torchgauge-collect pool: " << c.build_id << "/" << c.platform_id << ": " << c.runs_pooled
              << " runs pooled over " << out.rounds << " rounds";
    if (c.runs_not_ok) std::cerr << ", " << c.runs_not_ok << " not ok in a round (that round's result kept)";
    std::cerr << " -> " << c.platform_dir.string() << "\n";
  }
  return 0;
}

}  // namespace

void AddShardOptions(CLI::App& run, ShardOptions& o) {
  run.add_option("--shard", o.shard,
                 "I/N: collect only shard I (0-based) of N of the run plan, balanced by expected cost "
                 "(docs/cluster.md); each shard needs its own --out");
  run.add_option("--cost-from", o.cost_from,
                 "With --shard: balance by the run durations of an earlier build in this results tree (or "
                 "platform directory) instead of the static per-model weights");
}

std::optional<core::ShardBlock> SelectShard(std::vector<RunSpec>& plan, const ShardOptions& o,
                                            const std::string& device, const std::string& build_id,
                                            const std::string& platform_id, bool print_balance) {
  if (o.shard.empty()) {
    if (!o.cost_from.empty()) throw std::invalid_argument("--cost-from needs --shard I/N");
    return std::nullopt;
  }
  const core::ShardSpec spec = core::ParseShard(o.shard);
  std::map<core::RunKey, double> measured;
  if (!o.cost_from.empty()) measured = MeasuredDurations(o.cost_from, build_id, platform_id);
  // Every shard sees the same settings: the suite's and the command line's.
  const core::RunSettings settings = plan.empty() ? core::RunSettings{} : plan.front().settings;
  const std::vector<double> costs = core::PlanCosts(CostInputs(plan), settings, measured);
  std::vector<core::RunKey> keys;
  for (const auto& s : plan) keys.push_back(s.key());
  const auto parts = core::Partition(keys, costs, spec.count);

  core::ShardBlock block;
  block.index = spec.index;
  block.count = spec.count;
  block.device = device;
  block.cost_source = measured.empty() ? "static" : "measured";
  std::vector<int> owner(plan.size());
  for (std::size_t s = 0; s < parts.size(); ++s) {
    for (std::size_t i : parts[s]) owner[i] = static_cast<int>(s);
  }
  std::vector<RunSpec> mine;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    block.plan.push_back({keys[i].FileStem(), plan[i].batch_size, owner[i], costs[i]});
    if (owner[i] == spec.index) mine.push_back(plan[i]);
  }
  block.runs_assigned = static_cast<int64_t>(mine.size());
  if (print_balance) PrintBalance(parts, costs, spec, block.cost_source);
  plan = std::move(mine);
  return block;
}

void WriteRunManifest(const ManifestFacts& facts, const fs::path& path, const std::optional<core::ShardBlock>& shard) {
  core::Manifest m = BuildManifest(facts, path);
  if (shard) {
    m.shard = *shard;
    m.shard->host = m.hostname;
    m.shard->started_at = m.started_at;
    m.shard->finished_at = m.finished_at;
  }
  core::WriteJsonAtomic(path, core::ToJson(m));
}

void AddMergeCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand(
      "merge", "Merge the shards of one sharded collection (run --shard I/N) into one platform tree.");
  auto into = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto allow_missing = std::make_shared<bool>(false);
  sub->add_option("--into", *into, "Results root the merged <build-id>/<platform-id>/ is written to")->required();
  sub->add_option("shard_dirs", *dirs, "The shards' --out directories")->required();
  sub->add_flag("--allow-missing", *allow_missing,
                "Record runs no shard produced with status missing (and the shard that owed them) instead of "
                "failing");
  sub->callback(
      [&state, into, dirs, allow_missing] { Guard(state, [&] { return Merge(*into, *dirs, *allow_missing); }); });
}

void AddPoolCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand(
      "pool",
      "Pool interleaved rounds (each `run --processes 1` into its own --out) into one collection per build, "
      "each round one worker process of its runs (docs/nightly.md).");
  auto into = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto replace = std::make_shared<bool>(false);
  sub->add_option("--into", *into, "Results root the pooled <build-id>/<platform-id>/ are written to")->required();
  sub->add_option("round_dirs", *dirs, "The rounds' --out directories, at least two")->required();
  sub->add_flag("--replace", *replace, "Replace collections that already exist under --into (the rounds are kept)");
  sub->callback([&state, into, dirs, replace] { Guard(state, [&] { return Pool(*into, *dirs, *replace); }); });
}

}  // namespace torchgauge::collector
