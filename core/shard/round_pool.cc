#include "core/shard/round_pool.h"

#include <map>
#include <utility>

#include "core/io/json_io.h"
#include "core/contract/results_tree.h"

namespace torchgauge::core {

namespace fs = std::filesystem;

namespace {

using CollectionId = std::pair<std::string, std::string>;  // build, platform

// One round: its collections, loaded and checked.
std::map<CollectionId, LoadedPlatform> ReadRound(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw MergeError("round directory " + QuotedDir(dir) + ": not a directory");
  const TreeScan scan = ScanTree(dir);
  if (!scan.problems.empty())
    throw MergeError("round directory " + QuotedDir(dir) + ": " + scan.problems[0].ToString());
  std::map<CollectionId, LoadedPlatform> out;
  for (const auto& b : scan.builds) {
    if (!b.problems.empty()) throw MergeError("round directory " + QuotedDir(dir) + ": " + b.problems[0].ToString());
    for (const auto& p : b.platforms) {
      LoadedPlatform loaded = LoadPlatform(b, p);
      if (!loaded.problems.empty()) {
        throw MergeError("round directory " + QuotedDir(dir) + ": " + loaded.problems[0].ToString());
      }
      out.emplace(CollectionId{b.id, p.id}, std::move(loaded));
    }
  }
  if (out.empty()) throw MergeError("round directory " + QuotedDir(dir) + ": holds no collection");
  return out;
}

// The fields the rounds of one collection must agree on.
void CheckAgreement(const Manifest& first, const Manifest& m, const fs::path& dir) {
  const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
      {"libtorch_version", {first.libtorch_version, m.libtorch_version}},
      {"libtorch_git_commit", {first.libtorch_git_commit, m.libtorch_git_commit}},
      {"suite", {first.suite, m.suite}},
      {"cpu_model", {first.cpu_model, m.cpu_model}},
      {"logical_cores", {std::to_string(first.logical_cores), std::to_string(m.logical_cores)}},
  };
  for (const auto& [name, values] : fields) {
    if (values.first != values.second) {
      throw MergeError("round directory " + QuotedDir(dir) + ": build " + m.build_id + " on " + m.platform_id +
                       ": manifest field '" + name + "' is '" + values.second + "', the first round's is '" +
                       values.first + "': the rounds of one build must measure the same thing");
    }
  }
}

Manifest PooledManifest(const std::vector<const Manifest*>& rounds) {
  Manifest m = *rounds.front();
  bool finished = true;
  for (const Manifest* r : rounds) {
    if (r->started_at < m.started_at) {
      m.started_at = r->started_at;
      m.clocks_start = r->clocks_start;
    }
    if (r->finished_at.empty()) finished = false;
    if (finished && r->finished_at > m.finished_at) {
      m.finished_at = r->finished_at;
      m.clocks_end = r->clocks_end;
    }
    m.interrupted = m.interrupted || r->interrupted;
  }
  if (!finished) {
    m.finished_at.clear();
    m.clocks_end.reset();
    m.interrupted = true;
  }
  return m;
}

// One run over the rounds, already checked (see the header's contract).
RunResult PoolRun(const std::vector<const RunResult*>& rounds) {
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const RunResult& r = *rounds[k];
    if (r.status != "ok") {
      RunResult kept = r;
      kept.reason = "round " + std::to_string(k + 1) + " of " + std::to_string(rounds.size()) + ": " +
                    r.reason.value_or("no reason recorded");
      return kept;
    }
  }
  std::vector<RunResult> parts;
  for (const RunResult* r : rounds) parts.push_back(*r);
  return PoolProcesses(parts);
}

std::map<RunKey, const RunResult*> ByKey(const LoadedPlatform& p) {
  std::map<RunKey, const RunResult*> out;
  for (const auto& r : p.runs) out[RunKey{r.model.id, r.mode, r.backend, r.precision}] = &r;
  return out;
}

void CopyLogs(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return;
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

// One collection's rounds: the same LibTorch and suite, the same runs, each
// measured in one process. Returns each round's runs by key.
std::vector<std::map<RunKey, const RunResult*>> CheckCollection(const CollectionId& id,
                                                                const std::vector<const LoadedPlatform*>& rounds,
                                                                const std::vector<fs::path>& dirs) {
  std::vector<std::map<RunKey, const RunResult*>> runs;
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    CheckAgreement(rounds.front()->manifest, rounds[k]->manifest, dirs[k]);
    runs.push_back(ByKey(*rounds[k]));
    for (const auto& [key, r] : runs.back()) {
      if ((r->settings && r->settings->processes > 1) || (r->timing && !r->timing->process_medians_ms.empty())) {
        throw MergeError("round directory " + QuotedDir(dirs[k]) + ": run " + key.FileStem() + " of build " + id.first +
                         " was measured in several worker processes; collect each round with --processes 1");
      }
    }
    for (const auto& [key, r] : runs.front()) {
      if (!runs.back().count(key)) {
        throw MergeError("round directory " + QuotedDir(dirs[k]) + ": build " + id.first + " on " + id.second +
                         " has no result for run " + key.FileStem() + ", which round 1 has");
      }
    }
    if (runs.back().size() != runs.front().size()) {
      throw MergeError("round directory " + QuotedDir(dirs[k]) + ": build " + id.first + " on " + id.second +
                       " holds " + std::to_string(runs.back().size()) + " runs, round 1 holds " +
                       std::to_string(runs.front().size()));
    }
  }
  return runs;
}

PoolOutcome::Collection WriteCollection(const fs::path& into, const CollectionId& id,
                                        const std::vector<const LoadedPlatform*>& rounds,
                                        const std::vector<fs::path>& dirs,
                                        const std::vector<std::map<RunKey, const RunResult*>>& runs) {
  PoolOutcome::Collection out{id.first, id.second, PlatformDir(into, id.first, id.second)};
  std::vector<const Manifest*> manifests;
  for (const auto* r : rounds) manifests.push_back(&r->manifest);
  Manifest pooled = PooledManifest(manifests);
  std::map<std::string, int64_t> counts;
  ReplacePlatformTree(out.platform_dir, "pooling", [&](const fs::path& tmp) {
    for (const auto& [key, first] : runs.front()) {
      std::vector<const RunResult*> each;
      for (const auto& r : runs) each.push_back(r.at(key));
      const RunResult result = PoolRun(each);
      ++(result.status == "ok" ? out.runs_pooled : out.runs_not_ok);
      counts[result.status] += 1;
      WriteJsonAtomic(RunPath(tmp, key), ToJson(result));
    }
    for (std::size_t k = 0; k < rounds.size(); ++k) {
      CopyLogs(LogsDir(PlatformDir(dirs[k], id.first, id.second)), LogsDir(tmp) / ("round-" + std::to_string(k + 1)));
    }
    pooled.run_counts = counts;
    return pooled;
  });
  return out;
}

}  // namespace

PoolOutcome PoolRounds(const fs::path& into, const std::vector<fs::path>& round_dirs, bool replace) {
  if (round_dirs.size() < 2) throw MergeError("pool: give at least two round directories");
  std::vector<std::map<CollectionId, LoadedPlatform>> rounds;
  for (const auto& d : round_dirs) rounds.push_back(ReadRound(d));
  for (std::size_t k = 1; k < rounds.size(); ++k) {
    for (const auto& [id, p] : rounds.front()) {
      if (!rounds[k].count(id)) {
        throw MergeError("round directory " + QuotedDir(round_dirs[k]) + ": has no collection " + id.first + "/" +
                         id.second + ", which " + QuotedDir(round_dirs[0]) + " has");
      }
    }
    for (const auto& [id, p] : rounds[k]) {
      if (!rounds.front().count(id)) {
        throw MergeError("round directory " + QuotedDir(round_dirs[k]) + ": holds " + id.first + "/" + id.second +
                         ", which " + QuotedDir(round_dirs[0]) + " does not");
      }
    }
  }
  if (!replace) {  // before anything is written
    for (const auto& [id, first] : rounds.front()) {
      std::error_code ec;
      if (fs::exists(PlatformDir(into, id.first, id.second), ec)) {
        throw MergeError(PlatformDir(into, id.first, id.second).string() +
                         " exists; refusing to replace it (pool --replace replaces it, or pool --into another "
                         "results tree)");
      }
    }
  }
  // Every collection is checked before any is written.
  std::vector<std::pair<std::vector<const LoadedPlatform*>, std::vector<std::map<RunKey, const RunResult*>>>> checked;
  for (const auto& [id, first] : rounds.front()) {
    std::vector<const LoadedPlatform*> each;
    for (const auto& r : rounds) each.push_back(&r.at(id));
    checked.emplace_back(each, CheckCollection(id, each, round_dirs));
  }
  PoolOutcome out;
  out.rounds = round_dirs.size();
  std::size_t i = 0;
  for (const auto& [id, first] : rounds.front()) {
    out.collections.push_back(WriteCollection(into, id, checked[i].first, round_dirs, checked[i].second));
    ++i;
  }
  return out;
}

}  // namespace torchgauge::core
