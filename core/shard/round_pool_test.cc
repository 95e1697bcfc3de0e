#include "core/shard/round_pool.h"

#include <doctest/doctest.h>

#include <random>

#include "core/io/json_io.h"
#include "core/contract/results_tree.h"

namespace fs = std::filesystem;
using namespace torchgauge::core;

namespace {

struct PoolTmp {
  fs::path path;
  PoolTmp() {
    path = fs::temp_directory_path() / ("tg_round_pool_test_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~PoolTmp() { fs::remove_all(path); }
};

constexpr const char* kPlatform = "cpu-x86_64-2c";

Manifest RoundManifest(const std::string& build, int round) {
  Manifest m;
  m.build_id = build;
  m.platform_id = kPlatform;
  m.started_at = "2026-11-28T1" + std::to_string(round) + ":00:00Z";
  m.finished_at = "2026-11-28T1" + std::to_string(round) + ":05:00Z";
  m.collector_version = "0.1.0";
  m.git_sha = "abc";
  m.libtorch_version = build;
  m.libtorch_git_commit = "c0ffee" + build;
  m.vendor = "CPU";
  m.device_name = "Xeon";
  m.cpu_model = "Xeon";
  m.logical_cores = 2;
  m.hostname = "node-a";
  m.os = "Debian 12";
  m.suite = "smoke";
  m.suite_config = {{"name", "smoke"}, {"repeat", 3}};
  m.run_counts = std::map<std::string, int64_t>{{"ok", 2}};
  return m;
}

RunResult Run(const std::string& build, const std::string& model, double level, const std::string& status = "ok") {
  RunResult r;
  r.build_id = build;
  r.platform_id = kPlatform;
  r.model = {model, model, "test", "harness test", "none"};
  r.mode = "eval";
  r.backend = "eager";
  r.precision = "default";
  r.batch_size = 4;
  r.status = status;
  r.started_at = "2026-11-28T10:01:00Z";
  r.duration_s = 1.0;
  r.settings = RunSettings{};
  r.settings->processes = 1;
  if (status == "ok") {
    Timing t;
    t.samples_ms = {level, level * 1.01, level * 0.99};
    t.repetitions = 3;
    t.clock = "steady_clock";
    t.samples_per_step = 4;
    SummarizeTiming(t);
    r.timing = t;
  } else {
    r.reason = "it broke";
  }
  return r;
}

// Round `round` of builds b1 and b2: models m_a (ok) and m_b (ok, or `m_b_status`).
fs::path WriteRound(const fs::path& root, int round, const std::string& m_b_status = "ok") {
  const fs::path dir = root / ("round-" + std::to_string(round));
  for (const std::string build : {"b1", "b2"}) {
    const fs::path platform = PlatformDir(dir, build, kPlatform);
    WriteJsonAtomic(ManifestPath(platform), ToJson(RoundManifest(build, round)));
    for (const auto& [model, status] :
         std::vector<std::pair<std::string, std::string>>{{"m_a", "ok"}, {"m_b", m_b_status}}) {
      const RunResult r = Run(build, model, 10.0 + round, status);
      WriteJsonAtomic(RunPath(platform, RunKey{model, "eval", "eager", "default"}), ToJson(r));
    }
    fs::create_directories(LogsDir(platform));
    WriteFileAtomic(LogsDir(platform) / "m_a.eval.eager.default.log", "round " + std::to_string(round) + "\n");
  }
  return dir;
}

std::string PoolError(const fs::path& into, const std::vector<fs::path>& dirs, bool replace = false) {
  try {
    PoolRounds(into, dirs, replace);
  } catch (const MergeError& e) {
    return e.what();
  }
  return "<pooled>";
}

}  // namespace

TEST_CASE("round pool: each round becomes one worker process of the pooled run") {
  PoolTmp tmp;
  std::vector<fs::path> rounds;
  for (int k = 1; k <= 3; ++k) rounds.push_back(WriteRound(tmp.path, k));
  const fs::path into = tmp.path / "results";
  const PoolOutcome out = PoolRounds(into, rounds, false);
  CHECK(out.rounds == 3);
  REQUIRE(out.collections.size() == 2);
  CHECK(out.collections[0].build_id == "b1");
  CHECK(out.collections[0].runs_pooled == 2);

  const TreeScan scan = ScanTree(into);
  REQUIRE(scan.builds.size() == 2);
  const LoadedPlatform p = LoadPlatform(scan.builds[0], scan.builds[0].platforms[0]);
  CHECK(p.problems.empty());
  REQUIRE(p.runs.size() == 2);
  const RunResult& r = p.runs[0];
  REQUIRE(r.timing);
  CHECK(r.timing->samples_ms.size() == 9);
  CHECK(r.timing->process_medians_ms == std::vector<double>{11.0, 12.0, 13.0});
  REQUIRE(r.settings);
  CHECK(r.settings->processes == 3);
  // The manifest spans the rounds.
  CHECK(p.manifest.started_at == "2026-11-28T11:00:00Z");
  CHECK(p.manifest.finished_at == "2026-11-28T13:05:00Z");
  CHECK(p.manifest.run_counts->at("ok") == 2);
  CHECK(fs::exists(LogsDir(PlatformDir(into, "b1", kPlatform)) / "round-2" / "m_a.eval.eager.default.log"));

  // The target exists now: replaced only when asked.
  CHECK(PoolError(into, rounds).find("exists; refusing to replace it") != std::string::npos);
  CHECK(PoolError(into, rounds, true) == "<pooled>");
}

TEST_CASE("round pool: a run not ok in one round keeps that round's result, named") {
  PoolTmp tmp;
  const std::vector<fs::path> rounds = {WriteRound(tmp.path, 1), WriteRound(tmp.path, 2, "error")};
  const fs::path into = tmp.path / "results";
  const PoolOutcome out = PoolRounds(into, rounds, false);
  CHECK(out.collections[0].runs_pooled == 1);
  CHECK(out.collections[0].runs_not_ok == 1);
  const RunResult r = LoadRunFile(
      RunPath(PlatformDir(into, "b1", kPlatform), RunKey{"m_b", "eval", "eager", "default"}), "b1", kPlatform);
  CHECK(r.status == "error");
  CHECK(r.reason == "round 2 of 2: it broke");
}

TEST_CASE("round pool: rounds that do not match are refused, naming the round and what differs") {
  PoolTmp tmp;
  const fs::path r1 = WriteRound(tmp.path, 1), r2 = WriteRound(tmp.path, 2);
  const fs::path into = tmp.path / "results";
  CHECK(PoolError(into, {r1}).find("at least two round directories") != std::string::npos);
  CHECK(PoolError(into, {r1, tmp.path / "nope"}).find("nope': not a directory") != std::string::npos);

  // A run missing from a round.
  fs::remove(RunPath(PlatformDir(r2, "b2", kPlatform), RunKey{"m_a", "eval", "eager", "default"}));
  const std::string missing = PoolError(into, {r1, r2});
  CHECK(missing.find("round-2") != std::string::npos);
  CHECK(missing.find("has no result for run m_a.eval.eager.default") != std::string::npos);
  CHECK_FALSE(fs::exists(into / "b1"));  // nothing is written when a round is refused

  // Another LibTorch in one round.
  const fs::path r3 = WriteRound(tmp.path, 3);
  Manifest m = RoundManifest("b1", 3);
  m.libtorch_git_commit = "deadbeef";
  WriteJsonAtomic(ManifestPath(PlatformDir(r3, "b1", kPlatform)), ToJson(m));
  CHECK(PoolError(into, {r1, r3}).find("'libtorch_git_commit' is 'deadbeef'") != std::string::npos);

  // A round collected with several processes per run.
  const fs::path r4 = WriteRound(tmp.path, 4);
  RunResult several = PoolProcesses({Run("b1", "m_a", 10), Run("b1", "m_a", 11)});
  WriteJsonAtomic(RunPath(PlatformDir(r4, "b1", kPlatform), RunKey{"m_a", "eval", "eager", "default"}),
                  ToJson(several));
  CHECK(PoolError(into, {r1, r4}).find("collect each round with --processes 1") != std::string::npos);
}
