#include "core/shard/shard_merge.h"

#include "core/io/remove_tree.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"
#include "core/contract/results_tree.h"

namespace torchgauge::core {

std::string QuotedDir(const std::filesystem::path& dir) { return "'" + dir.string() + "'"; }

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One given shard directory and what it holds.
struct ShardDir {
  fs::path dir;
  fs::path platform_dir;  // empty: the directory holds no collection
  Manifest manifest;
  const ShardBlock& shard() const { return *manifest.shard; }
};

ShardDir ReadShardDir(const fs::path& dir) {
  ShardDir out;
  out.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw MergeError("shard directory " + QuotedDir(dir) + ": not a directory");
  const TreeScan scan = ScanTree(dir);
  if (!scan.problems.empty())
    throw MergeError("shard directory " + QuotedDir(dir) + ": " + scan.problems[0].ToString());
  std::vector<const TreePlatform*> platforms;
  for (const auto& b : scan.builds) {
    if (!b.problems.empty()) throw MergeError("shard directory " + QuotedDir(dir) + ": " + b.problems[0].ToString());
    for (const auto& p : b.platforms) platforms.push_back(&p);
  }
  if (platforms.empty()) return out;  // cancelled before it started
  if (platforms.size() > 1) {
    throw MergeError("shard directory " + QuotedDir(dir) + ": holds " + std::to_string(platforms.size()) +
                     " collections (" + platforms[0]->dir.string() + ", " + platforms[1]->dir.string() +
                     "); a shard's --out holds exactly one <build-id>/<platform-id>");
  }
  const TreePlatform& p = *platforms[0];
  if (!p.manifest) {
    throw MergeError("shard directory " + QuotedDir(dir) + ": " +
                     (p.manifest_problem ? p.manifest_problem->ToString() : "no manifest.json"));
  }
  if (!p.manifest->shard) {
    throw MergeError("shard directory " + QuotedDir(dir) + ": " + ManifestPath(p.dir).string() +
                     " has no 'shard' block: it is not the output of `torchgauge-collect run --shard I/N`");
  }
  out.platform_dir = p.dir;
  out.manifest = *p.manifest;
  return out;
}

// Seconds since the epoch of an RFC 3339 UTC time as NowUtc writes it.
std::optional<double> ParseUtc(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return std::nullopt;
  double frac = 0;
  if (*end == '.') {
    char* after = nullptr;
    frac = std::strtod(end, &after);
    end = after;
  }
  if (std::string_view(end) != "Z") return std::nullopt;
  return static_cast<double>(timegm(&tm)) + frac;
}

void CheckAgreement(const std::vector<ShardDir>& shards) {
  const ShardDir& ref = shards.front();
  for (std::size_t i = 1; i < shards.size(); ++i) {
    for (const auto& f : ShardAgreementFields()) {
      const json a = f.value(ref.manifest), b = f.value(shards[i].manifest);
      if (a == b) continue;
      std::string av = a.dump(), bv = b.dump();
      if (av.size() > 200) av = av.substr(0, 200) + "...";
      if (bv.size() > 200) bv = bv.substr(0, 200) + "...";
      throw MergeError("shard directory " + QuotedDir(shards[i].dir) + ": field '" + f.name + "' is " + bv +
                       " but shard directory " + QuotedDir(ref.dir) + " has " + av +
                       "; the shards of one merge must be the same build, platform, suite and hardware");
    }
  }
  std::map<int, const ShardDir*> seen;
  for (const auto& s : shards) {
    auto [it, fresh] = seen.emplace(s.shard().index, &s);
    if (!fresh) {
      throw MergeError("shard directories " + QuotedDir(it->second->dir) + " and " + QuotedDir(s.dir) +
                       " are both shard " + std::to_string(s.shard().index) + "/" + std::to_string(s.shard().count));
    }
  }
}

struct PlanEntry {
  PlannedRun planned;
  const ShardDir* owner = nullptr;  // the present shard that owed it, if given
  fs::path file;                    // the result file found, if any
  std::string status;               // its status
};

void CopyDir(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return;
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const fs::path dest = to / e.path().filename();
    if (fs::exists(dest)) {
      throw MergeError("two shards wrote " + (to.filename() / e.path().filename()).string() + " (the second in " +
                       from.string() + ")");
    }
    fs::copy_file(e.path(), dest);
  }
}

// The missing run's result: its identity from the plan and the registry.
RunResult MissingResult(const Manifest& merged, const RunKey& key, const PlannedRun& p, const std::string& device,
                        const std::string& why, const MergeOptions& options) {
  RunResult r;
  r.build_id = merged.build_id;
  r.platform_id = merged.platform_id;
  r.model = options.identity ? options.identity(key.model) : ModelIdentity{key.model, key.model, "other", "", ""};
  r.mode = key.mode;
  r.backend = key.backend;
  r.precision = key.precision;
  r.batch_size = p.batch_size;
  r.device = device;
  r.status = Name(Status::kMissing);
  r.reason = why;
  r.started_at = merged.started_at;
  return r;
}

}  // namespace

void RemoveTreeOrThrow(const fs::path& p) {
  std::string error;
  if (!core::RemoveTree(p, &error)) throw MergeError("cannot remove " + p.string() + ": " + error);
}

void SwapInTree(const fs::path& fresh, const fs::path& target) {
  std::error_code ec;
  if (!fs::exists(target, ec)) {
    fs::rename(fresh, target);
    return;
  }
#ifdef RENAME_EXCHANGE
  if (renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    RemoveTreeOrThrow(fresh);  // now the old tree
    return;
  }
#endif
  // No atomic swap on this filesystem: move the old tree aside first.
  const fs::path old = target.parent_path() / ("." + target.filename().string() + ".old-" + std::to_string(getpid()));
  fs::rename(target, old);
  fs::rename(fresh, target);
  RemoveTreeOrThrow(old);
}

bool ReplacePlatformTree(const fs::path& target, const std::string& what,
                         const std::function<Manifest(const fs::path& tmp)>& fill) {
  const fs::path build_dir = target.parent_path();
  fs::create_directories(build_dir);
  const fs::path tmp = build_dir / ("." + target.filename().string() + "." + what + "-" + std::to_string(getpid()));
  RemoveTreeOrThrow(tmp);
  try {
    fs::create_directories(RunsDir(tmp));
    const Manifest manifest = fill(tmp);
    WriteJsonAtomic(ManifestPath(tmp), ToJson(manifest));
    // What a reader will see: the readers' own checks on the written manifest.
    ManifestFromJson(ReadJsonFile(ManifestPath(tmp), JsonKind::kManifest), ManifestPath(tmp));
    if (SameTree(tmp, target)) {
      RemoveTreeOrThrow(tmp);
      return false;
    }
    SwapInTree(tmp, target);
    return true;
  } catch (...) {
    try {
      RemoveTreeOrThrow(tmp);
    } catch (const MergeError&) {
    }
    throw;
  }
}

namespace {

void RefuseNonMergeTarget(const fs::path& target) {
  std::error_code ec;
  if (!fs::exists(target, ec)) return;
  const fs::path manifest = ManifestPath(target);
  try {
    const Manifest m = ManifestFromJson(ReadJsonFile(manifest, JsonKind::kManifest), manifest);
    if (m.shards) return;
  } catch (const FileError& e) {
    throw MergeError(target.string() + " exists and its manifest is not readable (" + e.what() +
                     "); refusing to replace it: remove it or merge --into another results tree");
  }
  throw MergeError(target.string() +
                   " holds a collection that is not a merge (its manifest has no 'shards'); "
                   "refusing to replace it: remove it or merge --into another results tree");
}

Manifest MergedManifest(const std::vector<ShardDir>& shards) {
  Manifest m = shards.front().manifest;
  m.shard.reset();
  std::vector<std::string> hosts;
  bool all_finished = true;
  const ShardDir* first = &shards.front();
  const ShardDir* last = nullptr;
  m.interrupted = false;
  for (const auto& s : shards) {
    if (std::find(hosts.begin(), hosts.end(), s.shard().host) == hosts.end()) hosts.push_back(s.shard().host);
    if (s.manifest.started_at < first->manifest.started_at) first = &s;
    if (s.manifest.finished_at.empty()) {
      all_finished = false;
    } else if (!last || s.manifest.finished_at > last->manifest.finished_at) {
      last = &s;
    }
    m.interrupted = m.interrupted || s.manifest.interrupted;
  }
  std::string host;
  for (const auto& h : hosts) host += (host.empty() ? "" : ", ") + h;
  m.hostname = host;
  m.started_at = first->manifest.started_at;
  m.clocks_start = first->manifest.clocks_start;
  m.finished_at = all_finished && last ? last->manifest.finished_at : "";
  m.clocks_end = all_finished && last ? last->manifest.clocks_end : std::nullopt;
  if (!all_finished) m.interrupted = true;
  return m;
}

std::vector<PlanEntry> MatchRuns(const std::vector<ShardDir>& present, const ShardBlock& ref) {
  std::vector<PlanEntry> plan;
  std::map<std::string, std::size_t> by_run;
  std::map<int, const ShardDir*> by_index;
  for (const auto& s : present) by_index[s.shard().index] = &s;
  for (const auto& p : ref.plan) {
    by_run[p.run] = plan.size();
    auto it = by_index.find(p.shard);
    plan.push_back({p, it == by_index.end() ? nullptr : it->second, {}, {}});
  }
  for (const auto& s : present) {
    for (const auto& file : ListRunFiles(s.platform_dir)) {
      const std::string stem = file.stem().string();
      auto it = by_run.find(stem);
      if (it == by_run.end()) {
        throw MergeError("shard directory " + QuotedDir(s.dir) + ": run " + stem + " (" + file.string() +
                         ") is not in the plan the shards share");
      }
      PlanEntry& e = plan[it->second];
      if (!e.file.empty()) {
        throw MergeError("run " + stem + " is present twice: " + e.file.string() + " and " + file.string());
      }
      if (e.planned.shard != s.shard().index) {
        throw MergeError("shard directory " + QuotedDir(s.dir) + ": run " + stem + " belongs to shard " +
                         std::to_string(e.planned.shard) + ", not to this shard " + std::to_string(s.shard().index));
      }
      try {
        e.status = LoadRunFile(file, s.manifest.build_id, s.manifest.platform_id).status;
      } catch (const FileError& err) {
        throw MergeError("shard directory " + QuotedDir(s.dir) + ": " + err.what());
      }
      e.file = file;
    }
  }
  return plan;
}

std::string WhyMissing(const PlanEntry& e, int count) {
  const std::string shard = "shard " + std::to_string(e.planned.shard) + "/" + std::to_string(count);
  if (e.owner) {
    return shard + " (host " + e.owner->shard().host + ", " + e.owner->dir.string() +
           ") did not produce this run: it was stopped before the run ended";
  }
  return shard +
         " left no collection (its directory is empty or was not given: it never started or was "
         "cancelled before its first run)";
}

std::vector<ShardSummary> Summaries(const std::vector<PlanEntry>& plan, const ShardBlock& ref,
                                    const std::vector<ShardDir>& present) {
  std::vector<ShardSummary> out(static_cast<std::size_t>(ref.count));
  for (int i = 0; i < ref.count; ++i) out[static_cast<std::size_t>(i)].index = i;
  for (const auto& e : plan) {
    ShardSummary& s = out.at(static_cast<std::size_t>(e.planned.shard));
    ++s.runs_assigned;
    s.planned_cost += e.planned.cost;
    if (e.file.empty()) {
      ++s.runs_missing;
    } else {
      ++s.runs_present;
    }
  }
  for (const auto& d : present) {
    ShardSummary& s = out.at(static_cast<std::size_t>(d.shard().index));
    s.host = d.shard().host;
    s.started_at = d.shard().started_at;
    s.finished_at = d.shard().finished_at;
    auto a = ParseUtc(s.started_at), b = ParseUtc(s.finished_at);
    if (a && b && *b >= *a) s.wall_s = *b - *a;
  }
  return out;
}

}  // namespace

const std::vector<AgreementField>& ShardAgreementFields() {
  // The build, the platform class, the suite and its settings, the hardware
  // fingerprint and the partition. Left out on purpose: the host, the times,
  // the clocks and CPU frequency (measured per machine), the total memory
  // (identical nodes differ by kernel reservations) and `requested` (each
  // shard's own --shard and --out).
  static const std::vector<AgreementField> fields = {
      {"build_id", [](const Manifest& m) { return json(m.build_id); }},
      {"platform_id", [](const Manifest& m) { return json(m.platform_id); }},
      {"collector.version", [](const Manifest& m) { return json(m.collector_version); }},
      {"collector.git_sha", [](const Manifest& m) { return json(m.git_sha); }},
      {"libtorch.version", [](const Manifest& m) { return json(m.libtorch_version); }},
      {"libtorch.git_commit", [](const Manifest& m) { return json(m.libtorch_git_commit); }},
      {"libtorch.cuda_available", [](const Manifest& m) { return json(m.cuda_available); }},
      {"libtorch.cuda_runtime", [](const Manifest& m) { return NullIfEmpty(m.cuda_runtime); }},
      {"libtorch.cudnn", [](const Manifest& m) { return NullIfEmpty(m.cudnn); }},
      {"libtorch.hip_runtime", [](const Manifest& m) { return NullIfEmpty(m.hip_runtime); }},
      {"libtorch.miopen", [](const Manifest& m) { return NullIfEmpty(m.miopen); }},
      {"device.vendor", [](const Manifest& m) { return json(m.vendor); }},
      {"device.name", [](const Manifest& m) { return json(m.device_name); }},
      {"device.compute_capability", [](const Manifest& m) { return NullIfEmpty(m.compute_capability); }},
      {"device.gcn_arch", [](const Manifest& m) { return NullIfEmpty(m.gcn_arch); }},
      {"device.multiprocessor_count", [](const Manifest& m) { return Opt(m.multiprocessor_count); }},
      {"device.memory_bytes", [](const Manifest& m) { return Opt(m.device_memory_bytes); }},
      {"device.driver", [](const Manifest& m) { return NullIfEmpty(m.driver); }},
      {"cpu.model", [](const Manifest& m) { return json(m.cpu_model); }},
      {"cpu.logical_cores", [](const Manifest& m) { return json(m.logical_cores); }},
      {"cpu.torch_threads", [](const Manifest& m) { return Opt(m.torch_threads); }},
      {"host.os", [](const Manifest& m) { return json(m.os); }},
      {"host.arch", [](const Manifest& m) { return NullIfEmpty(m.arch); }},
      {"suite.name", [](const Manifest& m) { return json(m.suite); }},
      {"suite", [](const Manifest& m) { return m.suite_config; }},
      {"shard.count", [](const Manifest& m) { return json(m.shard->count); }},
      {"shard.device", [](const Manifest& m) { return json(m.shard->device); }},
      {"shard.cost_source", [](const Manifest& m) { return json(m.shard->cost_source); }},
      {"shard.plan",
       [](const Manifest& m) {
         json out = json::array();
         for (const auto& p : m.shard->plan) out.push_back({p.run, p.batch_size, p.shard, p.cost});
         return out;
       }},
  };
  return fields;
}

std::optional<RunKey> RunKeyFromStem(const std::string& stem) {
  std::vector<std::string> tail;
  std::string rest = stem;
  for (int i = 0; i < 3; ++i) {
    const auto dot = rest.rfind('.');
    if (dot == std::string::npos || dot == 0) return std::nullopt;
    tail.push_back(rest.substr(dot + 1));
    rest.resize(dot);
  }
  if (rest.empty()) return std::nullopt;
  return RunKey{rest, tail[2], tail[1], tail[0]};
}

bool SameTree(const fs::path& a, const fs::path& b) {
  auto list = [](const fs::path& root) {
    std::map<std::string, fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      files[fs::relative(e.path(), root).string() + (e.is_directory() ? "/" : "")] = e.path();
    }
    return files;
  };
  std::error_code ec;
  if (!fs::is_directory(a, ec) || !fs::is_directory(b, ec)) return false;
  const auto fa = list(a), fb = list(b);
  if (fa.size() != fb.size()) return false;
  for (auto ia = fa.begin(), ib = fb.begin(); ia != fa.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (ia->first.back() == '/') continue;
    std::ifstream sa(ia->second, std::ios::binary), sb(ib->second, std::ios::binary);
    const std::string ca((std::istreambuf_iterator<char>(sa)), {}), cb((std::istreambuf_iterator<char>(sb)), {});
    if (!sa.good() && !sa.eof()) return false;
    if (ca != cb) return false;
  }
  return true;
}

namespace {

// The given directories that hold a collection, in shard order.
std::vector<ShardDir> PresentShards(const std::vector<fs::path>& shard_dirs) {
  if (shard_dirs.empty()) throw MergeError("merge: no shard directories given");
  std::vector<ShardDir> present;
  for (const auto& d : shard_dirs) {
    ShardDir s = ReadShardDir(d);
    if (!s.platform_dir.empty()) present.push_back(std::move(s));
  }
  if (present.empty()) {
    throw MergeError("merge: none of the " + std::to_string(shard_dirs.size()) +
                     " shard directories holds a collection (first: " + QuotedDir(shard_dirs.front()) + ")");
  }
  std::stable_sort(present.begin(), present.end(),
                   [](const ShardDir& a, const ShardDir& b) { return a.shard().index < b.shard().index; });
  return present;
}

}  // namespace

MergeOutcome MergeShards(const fs::path& into, const std::vector<fs::path>& shard_dirs, const MergeOptions& options) {
  const std::vector<ShardDir> present = PresentShards(shard_dirs);
  CheckAgreement(present);
  const ShardBlock& ref = present.front().shard();
  const std::vector<PlanEntry> plan = MatchRuns(present, ref);

  MergeOutcome out;
  for (const auto& e : plan) {
    if (e.file.empty()) {
      out.missing.push_back({e.planned.run, e.planned.shard, WhyMissing(e, ref.count)});
    } else {
      ++out.runs_taken;
    }
  }
  if (!out.missing.empty() && !options.allow_missing) {
    std::string list;
    for (const auto& m : out.missing) list += "\n  " + m.run + " (shard " + std::to_string(m.shard) + ")";
    throw MergeError("merge: " + std::to_string(out.missing.size()) + " of " + std::to_string(plan.size()) +
                     " planned runs are missing; --allow-missing records them with status missing:" + list);
  }

  Manifest merged = MergedManifest(present);
  merged.shards = Summaries(plan, ref, present);
  // The build page's note for a collection that did not cover its plan.
  if (!out.missing.empty()) merged.interrupted = true;
  std::map<std::string, int64_t> counts;

  out.platform_dir = PlatformDir(into, merged.build_id, merged.platform_id);
  RefuseNonMergeTarget(out.platform_dir);
  out.changed = ReplacePlatformTree(out.platform_dir, "merging", [&](const fs::path& tmp) {
    for (const auto& e : plan) {
      if (!e.file.empty()) {
        fs::copy_file(e.file, RunsDir(tmp) / e.file.filename());
        counts[e.status] += 1;
        continue;
      }
      const auto key = RunKeyFromStem(e.planned.run);
      if (!key) throw MergeError("merge: planned run '" + e.planned.run + "' is not model.mode.backend.precision");
      const auto& miss = *std::find_if(out.missing.begin(), out.missing.end(),
                                       [&](const MissingRun& m) { return m.run == e.planned.run; });
      WriteJsonAtomic(RunPath(tmp, *key),
                      ToJson(MissingResult(merged, *key, e.planned, ref.device, miss.why, options)));
      counts[Name(Status::kMissing)] += 1;
    }
    for (const auto& s : present) {
      CopyDir(LogsDir(s.platform_dir), LogsDir(tmp));
      CopyDir(TracesDir(s.platform_dir), TracesDir(tmp));
    }
    merged.run_counts = counts;
    return merged;
  });
  out.manifest = merged;
  return out;
}

}  // namespace torchgauge::core
