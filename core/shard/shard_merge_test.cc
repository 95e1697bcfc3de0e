#include "core/shard/shard_merge.h"

#include <doctest/doctest.h>

#include <random>

#include "core/io/json_io.h"
#include "core/contract/results_tree.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace torchgauge::core;

namespace {

struct MergeTmp {
  fs::path path;
  MergeTmp() {
    path = fs::temp_directory_path() / ("tg_shard_merge_test_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~MergeTmp() { fs::remove_all(path); }
};

constexpr const char* kBuild = "b1";
constexpr const char* kPlatform = "cpu-x86_64-2c";
const std::vector<std::string> kRuns = {"m_a.train.eager.default", "m_a.eval.eager.default", "m_b.train.eager.default",
                                        "m_b.eval.eager.default", "m_c.eval.torchscript.default"};
// Shard of each run above, of 2.
const std::vector<int> kOwner = {0, 1, 1, 0, 1};

Manifest ShardManifest(int index) {
  Manifest m;
  m.build_id = kBuild;
  m.platform_id = kPlatform;
  m.started_at = index == 0 ? "2026-11-22T10:00:00Z" : "2026-11-22T10:00:05Z";
  m.finished_at = index == 0 ? "2026-11-22T10:10:00Z" : "2026-11-22T10:12:05Z";
  m.collector_version = "0.1.0";
  m.git_sha = "abc";
  m.libtorch_version = "2.11.0";
  m.vendor = "CPU";
  m.device_name = "Xeon";
  m.cpu_model = "Xeon";
  m.logical_cores = 2;
  m.hostname = index == 0 ? "node-a" : "node-b";
  m.os = "Debian 12";
  m.suite = "smoke";
  m.suite_config = {{"name", "smoke"}, {"repeat", 2}};
  m.run_counts = std::map<std::string, int64_t>{{"ok", 2}};
  ShardBlock s;
  s.index = index;
  s.count = 2;
  s.host = m.hostname;
  s.started_at = m.started_at;
  s.finished_at = m.finished_at;
  s.device = "cpu";
  s.cost_source = "static";
  for (std::size_t i = 0; i < kRuns.size(); ++i) {
    s.plan.push_back({kRuns[i], 4, kOwner[i], 10.0 + static_cast<double>(i)});
    if (kOwner[i] == index) ++s.runs_assigned;
  }
  m.shard = s;
  return m;
}

RunResult Run(const std::string& stem) {
  const RunKey key = *RunKeyFromStem(stem);
  RunResult r;
  r.build_id = kBuild;
  r.platform_id = kPlatform;
  r.model = {key.model, key.model, "test", "harness test", "none"};
  r.mode = key.mode;
  r.backend = key.backend;
  r.precision = key.precision;
  r.batch_size = 4;
  r.status = key.model == "m_c" ? "unsupported" : "ok";
  r.started_at = "2026-11-22T10:01:00Z";
  r.duration_s = 1.5;
  return r;
}

// Writes shard `index` under root/shard-<index>, with its own runs except `skip`.
fs::path WriteShard(const fs::path& root, int index, const Manifest& m, const std::set<std::string>& skip = {}) {
  const fs::path dir = root / ("shard-" + std::to_string(index));
  const fs::path platform = PlatformDir(dir, m.build_id, m.platform_id);
  WriteJsonAtomic(ManifestPath(platform), ToJson(m));
  for (std::size_t i = 0; i < kRuns.size(); ++i) {
    if (kOwner[i] != index || skip.count(kRuns[i])) continue;
    RunResult r = Run(kRuns[i]);
    r.build_id = m.build_id;
    r.platform_id = m.platform_id;
    WriteJsonAtomic(RunPath(platform, *RunKeyFromStem(kRuns[i])), ToJson(r));
    fs::create_directories(LogsDir(platform));
    WriteFileAtomic(LogsDir(platform) / (kRuns[i] + ".log"), "log of " + kRuns[i] + "\n");
  }
  return dir;
}

MergeOptions Options(bool allow_missing = false) {
  MergeOptions o;
  o.allow_missing = allow_missing;
  o.identity = [](const std::string& id) { return ModelIdentity{id, id, "test", "harness test", "none"}; };
  return o;
}

std::string MergeError_(const fs::path& into, const std::vector<fs::path>& dirs, bool allow_missing = false) {
  try {
    MergeShards(into, dirs, Options(allow_missing));
  } catch (const MergeError& e) {
    return e.what();
  }
  return "<merged>";
}

}  // namespace

TEST_CASE("shard merge: RunKeyFromStem splits from the right, so model ids may hold dots") {
  CHECK(RunKeyFromStem("resnet50.train.eager.default") == RunKey{"resnet50", "train", "eager", "default"});
  CHECK(RunKeyFromStem("a.b.eval.torchscript.amp-bf16") == RunKey{"a.b", "eval", "torchscript", "amp-bf16"});
  CHECK(!RunKeyFromStem("train.eager.default"));
  CHECK(!RunKeyFromStem("x"));
}

TEST_CASE("shard merge: two complete shards merge into one tree the readers load like one collection") {
  MergeTmp tmp;
  const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0)), s1 = WriteShard(tmp.path, 1, ShardManifest(1));
  const fs::path into = tmp.path / "results";
  const MergeOutcome out = MergeShards(into, {s1, s0}, Options());
  CHECK(out.changed);
  CHECK(out.missing.empty());
  CHECK(out.runs_taken == kRuns.size());

  const TreeScan scan = ScanTree(into);
  REQUIRE(scan.builds.size() == 1);
  REQUIRE(scan.builds[0].platforms.size() == 1);
  const LoadedPlatform p = LoadPlatform(scan.builds[0], scan.builds[0].platforms[0]);
  CHECK(p.problems.empty());
  CHECK(p.runs.size() == kRuns.size());
  const Manifest& m = p.manifest;
  CHECK(!m.shard);
  REQUIRE(m.shards);
  REQUIRE(m.shards->size() == 2);
  CHECK(m.hostname == "node-a, node-b");
  CHECK(m.started_at == "2026-11-22T10:00:00Z");
  CHECK(m.finished_at == "2026-11-22T10:12:05Z");
  CHECK(!m.interrupted);
  CHECK(m.run_counts->at("ok") == 4);
  CHECK(m.run_counts->at("unsupported") == 1);
  const ShardSummary& b = m.shards->at(1);
  CHECK(b.host == "node-b");
  CHECK(b.wall_s == doctest::Approx(720.0));
  CHECK(b.runs_assigned == 3);
  CHECK(b.runs_present == 3);
  CHECK(b.runs_missing == 0);
  CHECK(b.planned_cost == doctest::Approx(11 + 12 + 14));
  CHECK(m.shards->at(0).wall_s == doctest::Approx(600.0));
  // The run files are the shards' own bytes; logs come along; no work files.
  for (const auto& stem : kRuns) {
    const int owner = kOwner[static_cast<std::size_t>(&stem - kRuns.data())];
    const fs::path src = RunPath(PlatformDir(owner == 0 ? s0 : s1, kBuild, kPlatform), *RunKeyFromStem(stem));
    CHECK(ReadJsonFile(src) == ReadJsonFile(RunPath(out.platform_dir, *RunKeyFromStem(stem))));
    CHECK(fs::exists(LogsDir(out.platform_dir) / (stem + ".log")));
  }
  CHECK(!fs::exists(WorkDir(out.platform_dir)));
}

TEST_CASE("shard merge: idempotent; merging again changes nothing, byte for byte") {
  MergeTmp tmp;
  const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0)), s1 = WriteShard(tmp.path, 1, ShardManifest(1));
  const fs::path into = tmp.path / "results", copy = tmp.path / "first";
  const MergeOutcome first = MergeShards(into, {s0, s1}, Options());
  fs::copy(into, copy, fs::copy_options::recursive);
  const auto mtime = fs::last_write_time(ManifestPath(first.platform_dir));
  const MergeOutcome again = MergeShards(into, {s0, s1}, Options());
  CHECK(!again.changed);
  CHECK(SameTree(into, copy));
  CHECK(fs::last_write_time(ManifestPath(again.platform_dir)) == mtime);
  // Given in another order: the same tree.
  CHECK(!MergeShards(into, {s1, s0}, Options()).changed);
  CHECK(SameTree(into, copy));
  // No temporary directory left beside it.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(into / kBuild)) ++entries;
  CHECK(entries == 1);
  // A changed shard replaces the merged tree as a whole.
  fs::remove(RunPath(PlatformDir(s1, kBuild, kPlatform), *RunKeyFromStem(kRuns[1])));
  const MergeOutcome third = MergeShards(into, {s0, s1}, Options(true));
  CHECK(third.changed);
  CHECK(!SameTree(into, copy));
  CHECK(ReadJsonFile(RunPath(third.platform_dir, *RunKeyFromStem(kRuns[1]))).at("status") == "missing");
}

TEST_CASE("shard merge: missing runs are listed, and recorded as missing with the shard that owed them") {
  MergeTmp tmp;
  Manifest m1 = ShardManifest(1);
  m1.finished_at.clear();  // killed: the manifest was never completed
  m1.shard->finished_at.clear();
  m1.run_counts.reset();
  const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0));
  const fs::path s1 = WriteShard(tmp.path, 1, m1, {kRuns[2], kRuns[4]});
  const fs::path into = tmp.path / "results";
  const std::string err = MergeError_(into, {s0, s1});
  CHECK(err.find("2 of 5 planned runs are missing") != std::string::npos);
  CHECK(err.find(kRuns[2] + " (shard 1)") != std::string::npos);
  CHECK(err.find(kRuns[4] + " (shard 1)") != std::string::npos);
  CHECK(err.find("--allow-missing") != std::string::npos);
  CHECK(!fs::exists(into / kBuild / kPlatform));

  const MergeOutcome out = MergeShards(into, {s0, s1}, Options(true));
  REQUIRE(out.missing.size() == 2);
  CHECK(out.missing[0].run == kRuns[2]);
  CHECK(out.missing[0].shard == 1);
  const RunResult r = LoadRunFile(RunPath(out.platform_dir, *RunKeyFromStem(kRuns[2])), kBuild, kPlatform);
  CHECK(r.status == "missing");
  CHECK(r.batch_size == 4);
  CHECK(r.device == "cpu");
  CHECK(r.reason->find("shard 1/2 (host node-b") != std::string::npos);
  CHECK(out.manifest.run_counts->at("missing") == 2);
  CHECK(out.manifest.interrupted);
  CHECK(out.manifest.finished_at.empty());
  CHECK(out.manifest.shards->at(1).runs_missing == 2);
  CHECK(!out.manifest.shards->at(1).wall_s);
}

TEST_CASE("shard merge: a shard that left nothing owes all its runs; the plan comes from the others") {
  MergeTmp tmp;
  const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0));
  const fs::path empty = tmp.path / "shard-1";
  fs::create_directories(empty);
  const fs::path into = tmp.path / "results";
  CHECK(MergeError_(into, {s0, empty}).find("3 of 5 planned runs are missing") != std::string::npos);
  const MergeOutcome out = MergeShards(into, {s0, empty}, Options(true));
  CHECK(out.missing.size() == 3);
  for (const auto& m : out.missing) {
    CHECK(m.shard == 1);
    CHECK(m.why.find("left no collection") != std::string::npos);
  }
  const ShardSummary& s1 = out.manifest.shards->at(1);
  CHECK(s1.host.empty());
  CHECK(s1.runs_missing == 3);
  CHECK(out.manifest.hostname == "node-a");
  CHECK(MergeError_(into, {empty}).find("none of the 1 shard directories") != std::string::npos);
}

TEST_CASE("shard merge: every field the shards must agree on is checked, naming the shard directory and field") {
  std::map<std::string, std::function<void(Manifest&)>> edits = {
      {"build_id", [](Manifest& m) { m.build_id = "b2"; }},
      {"platform_id", [](Manifest& m) { m.platform_id = "cpu-other"; }},
      {"collector.version", [](Manifest& m) { m.collector_version = "0.2.0"; }},
      {"collector.git_sha", [](Manifest& m) { m.git_sha = "def"; }},
      {"libtorch.version", [](Manifest& m) { m.libtorch_version = "2.12.0"; }},
      {"libtorch.git_commit", [](Manifest& m) { m.libtorch_git_commit = "0123abcd"; }},
      {"libtorch.cuda_available", [](Manifest& m) { m.cuda_available = true; }},
      {"libtorch.cuda_runtime", [](Manifest& m) { m.cuda_runtime = "13.0"; }},
      {"libtorch.cudnn", [](Manifest& m) { m.cudnn = "9"; }},
      {"libtorch.hip_runtime", [](Manifest& m) { m.hip_runtime = "6.2"; }},
      {"libtorch.miopen", [](Manifest& m) { m.miopen = "3"; }},
      {"device.vendor", [](Manifest& m) { m.vendor = "NVIDIA"; }},
      {"device.name", [](Manifest& m) { m.device_name = "Epyc"; }},
      {"device.compute_capability", [](Manifest& m) { m.compute_capability = "9.0"; }},
      {"device.gcn_arch", [](Manifest& m) { m.gcn_arch = "gfx942"; }},
      {"device.multiprocessor_count", [](Manifest& m) { m.multiprocessor_count = 132; }},
      {"device.memory_bytes", [](Manifest& m) { m.device_memory_bytes = 1 << 30; }},
      {"device.driver", [](Manifest& m) { m.driver = "580"; }},
      {"cpu.model", [](Manifest& m) { m.cpu_model = "Epyc"; }},
      {"cpu.logical_cores", [](Manifest& m) { m.logical_cores = 4; }},
      {"cpu.torch_threads", [](Manifest& m) { m.torch_threads = 1; }},
      {"host.os", [](Manifest& m) { m.os = "Ubuntu"; }},
      {"host.arch", [](Manifest& m) { m.arch = "aarch64"; }},
      {"suite.name", [](Manifest& m) { m.suite = "full"; }},
      {"suite", [](Manifest& m) { m.suite_config["repeat"] = 3; }},
      {"shard.count", [](Manifest& m) { m.shard->count = 3; }},
      {"shard.device", [](Manifest& m) { m.shard->device = "cuda"; }},
      {"shard.cost_source", [](Manifest& m) { m.shard->cost_source = "measured"; }},
      {"shard.plan", [](Manifest& m) { m.shard->plan[0].cost = 99; }},
  };
  // Every field of the list has a case here, and every case is in the list.
  std::set<std::string> listed;
  for (const auto& f : ShardAgreementFields()) listed.insert(f.name);
  std::set<std::string> tested;
  for (const auto& [name, edit] : edits) tested.insert(name);
  CHECK(listed == tested);

  for (const auto& entry : edits) {
    // Named copies: clang rejects structured bindings captured by INFO's lambda.
    const std::string field = entry.first;
    const auto& edit = entry.second;
    INFO(field);
    MergeTmp tmp;
    Manifest m1 = ShardManifest(1);
    edit(m1);
    // The run files follow their manifest's ids, so only the field differs.
    const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0)), s1 = WriteShard(tmp.path, 1, m1);
    const std::string err = MergeError_(tmp.path / "results", {s0, s1});
    CHECK(err.find("shard directory '" + s1.string() + "': field '" + field + "'") != std::string::npos);
    CHECK(!fs::exists(tmp.path / "results"));
  }
}

TEST_CASE("shard merge: duplicate shards, foreign runs and a non-merge target are refused") {
  MergeTmp tmp;
  const fs::path s0 = WriteShard(tmp.path, 0, ShardManifest(0)), s1 = WriteShard(tmp.path, 1, ShardManifest(1));
  const fs::path into = tmp.path / "results";
  // The same shard twice.
  fs::copy(s1, tmp.path / "again", fs::copy_options::recursive);
  CHECK(MergeError_(into, {s0, s1, tmp.path / "again"}).find("are both shard 1/2") != std::string::npos);
  // A run in the shard that did not owe it: present twice.
  const fs::path p0 = PlatformDir(s0, kBuild, kPlatform);
  WriteJsonAtomic(RunPath(p0, *RunKeyFromStem(kRuns[1])), ToJson(Run(kRuns[1])));
  std::string err = MergeError_(into, {s0, s1});
  CHECK(err.find("run " + kRuns[1]) != std::string::npos);
  CHECK((err.find("present twice") != std::string::npos || err.find("belongs to shard 1") != std::string::npos));
  fs::remove(RunPath(p0, *RunKeyFromStem(kRuns[1])));
  // A run outside the plan.
  WriteJsonAtomic(RunPath(p0, *RunKeyFromStem("m_z.eval.eager.default")), ToJson(Run("m_z.eval.eager.default")));
  CHECK(MergeError_(into, {s0, s1}).find("m_z.eval.eager.default") != std::string::npos);
  fs::remove(RunPath(p0, *RunKeyFromStem("m_z.eval.eager.default")));
  // A directory that is not a shard's output.
  Manifest plain = ShardManifest(0);
  plain.shard.reset();
  WriteJsonAtomic(ManifestPath(PlatformDir(tmp.path / "plain", kBuild, kPlatform)), ToJson(plain));
  CHECK(MergeError_(into, {tmp.path / "plain", s1}).find("no 'shard' block") != std::string::npos);
  // The target holds an unsharded collection: never replaced.
  WriteJsonAtomic(ManifestPath(PlatformDir(into, kBuild, kPlatform)), ToJson(plain));
  CHECK(MergeError_(into, {s0, s1}).find("not a merge") != std::string::npos);
  CHECK(!ManifestFromJson(ReadJsonFile(ManifestPath(PlatformDir(into, kBuild, kPlatform))), "m").shards);
}
