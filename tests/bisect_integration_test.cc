// torchgauge-collect bisect end to end: a fake build command plants a
// slowdown (6x the step time) at a known revision; bisect must name it in
// ceil(log2 N) steps. The threshold is raised to 150% so that drift in a
// loaded test machine between measurements cannot pass for the planted change.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "core/io/shell.h"

namespace fs = std::filesystem;

namespace {

// A fresh work folder for one case, under the build's test output.
fs::path FreshWork(const std::string& name) {
  const fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / name;
  fs::remove_all(work);
  fs::create_directories(work);
  return work;
}

// candidates.txt in `work`: r01 .. rNN, the revisions after the good r00.
std::string WriteCandidates(const fs::path& work, int n) {
  std::ofstream c(work / "candidates.txt");
  for (int i = 1; i <= n; ++i) c << "r" << (i < 10 ? "0" : "") << i << "\n";
  return (work / "candidates.txt").string();
}

// bisect's --command and --collector: tests/fake_build.sh installs each
// revision into work/install, with `plant` (PLANTED [SLOW [JITTER [BALLAST]]]).
std::string FakeBuild(const fs::path& work, const std::string& plant) {
  const std::string install = (work / "install").string();
  return " --command 'sh " + std::string(TORCHGAUGE_SOURCE_DIR) + "/tests/fake_build.sh {rev} " + install + " " +
         TORCHGAUGE_COLLECT + " " + plant + "' --collector " + install + "/collector ";
}

}  // namespace

TEST_CASE("bisect finds the planted revision") {
  const fs::path work = FreshWork("bisect");
  const int n = 16, planted = 11;
  const std::string cmd = std::string(TORCHGAUGE_COLLECT) + " bisect --good r00 --bad r16 --candidates " +
                          WriteCandidates(work, n) + FakeBuild(work, std::to_string(planted)) +
                          "--model '^test_tiny$' --mode train --device cpu --repeat 10 "
                          "--collect-arg --include-test-models --collect-arg --profile-iterations "
                          "--collect-arg 0 --threshold 150 --work-dir " +
                          (work / "w").string();
  const auto run = torchgauge::core::RunCapture(cmd, /*merge_stderr=*/true);
  const int code = run.exit_code;
  const std::string& text = run.output;
  INFO(text);
  CHECK(code == 0);
  CHECK(text.find("first bad revision: r11") != std::string::npos);
  // ceil(log2 16) = 4 bisection steps at most (the bad endpoint is not
  // judged). Counted from bisect's "step K:" lines, not from its
  // measurements: an unknown verdict on a loaded machine measures the
  // revision and the good endpoint again, which is not another step.
  int steps = 0;
  for (size_t pos = 0; (pos = text.find("\nstep ", pos)) != std::string::npos; ++pos) ++steps;
  CHECK(steps >= 1);
  CHECK(steps <= static_cast<int>(std::ceil(std::log2(n))));
  CHECK(fs::exists(work / "w" / "bisect.log"));
}

// bisect --alert: the range and runs come from the site's alerts.json, and
// the culprit goes to the results tree's culprits.json. A jitter of up to
// +30 % of the step's own time is planted in every revision, and a step of
// +500 % at r05. Measured with one process of 3 steps, no comparison can
// reach alpha, so the first verdict on every revision must be unknown and
// the revision measured again with more processes before bisect decides.
// (Step and threshold are large so that a loaded test machine cannot hide
// the step nor fake one: a jitter of +100 % on a sub-millisecond step made
// good revisions undecidable and, once in seven runs, "different".)
TEST_CASE("bisect --alert: unknown runs more processes, then names the planted revision") {
  const fs::path work = FreshWork("bisect-alert");
  fs::create_directories(work / "results");
  const int n = 8, planted = 5;
  const std::string candidates = WriteCandidates(work, n);
  {
    std::ofstream a(work / "alerts.json");
    a << R"({"schema_version": 1, "kind": "torchgauge.alerts", "health": [], "alerts": [
      {"id": "A-0123456789ab", "kind": "regression", "platform": "cpu-x86_64-2c", "base_build": "r00",
       "build": "r08", "started_at": "2026-11-20T02:00:00Z", "state": "untriaged", "runs": 1,
       "geomean_metric": "time", "geomean": 1.5, "page": "alerts/A-0123456789ab.html", "culprit": null,
       "rows": [{"model": "test_tiny", "mode": "train", "backend": "eager", "precision": "default",
                 "batch_size": 4, "metric": "time", "before": 1.0, "after": 1.5, "factor": 1.5}]}]})";
  }
  const std::string cmd =
      std::string(TORCHGAUGE_COLLECT) + " bisect --alert A-0123456789ab --alerts " + (work / "alerts.json").string() +
      " --results " + (work / "results").string() + " --candidates " + candidates +
      FakeBuild(work, std::to_string(planted) + " 5.0 0.3") +
      "--device cpu --repeat 3 --processes 1 --max-processes 32 "
      "--collect-arg --include-test-models --collect-arg --profile-iterations "
      "--collect-arg 0 --collect-arg --warmup --collect-arg 1 --threshold 50 --alpha 0.01 --work-dir " +
      (work / "w").string();
  const auto run = torchgauge::core::RunCapture(cmd, /*merge_stderr=*/true);
  const int code = run.exit_code;
  const std::string& text = run.output;
  INFO(text);
  CHECK(code == 0);
  CHECK(text.find("first bad revision: r05") != std::string::npos);
  // The first look at any revision (3 against 3 samples) cannot decide.
  CHECK(text.find("(1 process(es) x 3): unknown") != std::string::npos);
  CHECK(text.find("unknown, measuring it and the good endpoint again with 2 process(es) x 3") != std::string::npos);
  CHECK(text.find("culprit of alert A-0123456789ab recorded in") != std::string::npos);
  std::ifstream in(work / "results" / "culprits.json");
  const std::string culprits((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(culprits.find("\"first_bad\": \"r05\"") != std::string::npos);
  CHECK(culprits.find("\"last_good\": \"r04\"") != std::string::npos);
}

// bisect --improvement --metric cpu_memory: every revision before r05 holds
// 256 MiB more through its timed steps (run --ballast-mib), r05 sheds it.
// Bisect must look for the first revision that got better on the good
// endpoint, judge memory alone (the time of one process of 3 steps decides
// nothing), and name r05. Peak RSS does not depend on the machine's load,
// so one process per revision suffices.
TEST_CASE("bisect --improvement --metric cpu_memory names the revision that shed memory") {
  const fs::path work = FreshWork("bisect-improvement");
  const int n = 8, planted = 5;
  const std::string base = std::string(TORCHGAUGE_COLLECT) + " bisect --good r00 --bad r08 --verify-bad --candidates " +
                           WriteCandidates(work, n) + FakeBuild(work, std::to_string(planted) + " 0 0 256") +
                           "--model '^test_tiny$' --mode eval --device cpu --repeat 3 --processes 1 "
                           "--max-processes 1 --collect-arg --include-test-models --collect-arg --profile-iterations "
                           "--collect-arg 0 --collect-arg --warmup --collect-arg 1 --metric cpu_memory --work-dir ";
  const auto run = torchgauge::core::RunCapture(base + (work / "w").string() + " --improvement", true);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  std::ifstream log(work / "w" / "bisect.log");
  const std::string head((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(head.find("metric cpu_memory, looking for an improvement") != std::string::npos);
  CHECK(run.output.find("r08 (1 process(es) x 3): different: test_tiny cpu_memory -") != std::string::npos);
  CHECK(run.output.find("first bad revision: r05 (the first that improved)") != std::string::npos);
  CHECK(run.output.find(" time ") == std::string::npos);  // time was not judged

  // Looking for a regression instead, the same history has none: the bad
  // endpoint is no worse than the good one, so bisect refuses to walk it.
  const auto regress = torchgauge::core::RunCapture(base + (work / "w2").string(), true);
  INFO(regress.output);
  CHECK(regress.exit_code != 0);
  CHECK(regress.output.find("the bad endpoint r08 was judged good: nothing to bisect") != std::string::npos);
  CHECK(regress.output.find("first bad revision") == std::string::npos);
}
