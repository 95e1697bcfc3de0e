// Runs the real torchgauge-collect binary: failure isolation, resume,
// Ctrl-C, schema validation of real output, and the CPU smoke suite.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"

namespace fs = std::filesystem;
using namespace torchgauge;

namespace {

const std::string kCollect = TORCHGAUGE_COLLECT;

struct Output {
  int code = -1;
  std::string text;
};

Output Run(const std::string& cmd) {
  auto r = torchgauge::core::RunCapture(cmd, /*merge_stderr=*/true);
  return {r.exit_code, std::move(r.output)};
}

fs::path FreshDir(const std::string& name) {
  auto d = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

core::RunResult Load(const fs::path& platform_dir, const std::string& model, const std::string& mode,
                     const std::string& backend = "eager") {
  auto p = core::RunPath(platform_dir, {model, mode, backend, "default"});
  return core::RunResultFromJson(core::ReadJsonFile(p), p);
}

std::string Validate(const fs::path& dir) {
  auto out =
      Run(std::string(TORCHGAUGE_PYTHON) + " " + TORCHGAUGE_SOURCE_DIR + "/tests/validate_schema.py " + dir.string());
  INFO(out.text);
  CHECK(out.code == 0);
  return out.text;
}

}  // namespace

TEST_CASE("every failure gets its status and the suite completes") {
  auto root = FreshDir("statuses");
  // Every misbehaving test model (test_gpu_phases is for GPUs: gpu_breakdown_test).
  auto out =
      Run(kCollect +
          " run --include-test-models --model '^test_(tiny|crash|hang|throw|oom|nan)$' --backend eager --timeout 15 " +
          "--repeat 5 --out " + root.string() + " --build-id b1 --platform-id p1");
  INFO(out.text);
  REQUIRE(out.code == 0);
  auto dir = root / "b1" / "p1";
  for (const char* mode : {"train", "eval"}) {
    CHECK(Load(dir, "test_tiny", mode).status == "ok");
    auto crash = Load(dir, "test_crash", mode);
    CHECK(crash.status == "crashed");
    CHECK(crash.signal == SIGKILL);
    CHECK(Load(dir, "test_hang", mode).status == "timeout");
    auto thrown = Load(dir, "test_throw", mode);
    CHECK(thrown.status == "error");
    CHECK(thrown.reason->find("deliberate failure") != std::string::npos);
    CHECK(Load(dir, "test_oom", mode).status == "oom");
    // NaN from the steps: an error, never a measurement.
    auto nan = Load(dir, "test_nan", mode);
    CHECK(nan.status == "error");
    CHECK(nan.reason->find("not finite") != std::string::npos);
  }
  auto tiny = Load(dir, "test_tiny", "train");
  REQUIRE(tiny.timing);
  CHECK(tiny.timing->samples_ms.size() == 5);
  for (double s : tiny.timing->samples_ms) CHECK(s > 0);
  CHECK(!tiny.gpu_breakdown);  // CPU: not measured, not zero
  CHECK(!tiny.memory->gpu_peak_allocated_bytes);
  CHECK(*tiny.memory->cpu_peak_rss_bytes > 0);
  CHECK(tiny.operators->size() > 10);
  CHECK(*tiny.flops->profiler_flops_per_iter > 0);
  auto manifest = core::ReadJsonFile(core::ManifestPath(dir));
  CHECK(manifest["runs"]["timeout"] == 2);
  CHECK(manifest["finished_at"].is_string());
  Validate(root);

  SUBCASE("resume keeps finished results and measures only missing ones") {
    fs::remove(core::RunPath(dir, {"test_tiny", "eval", "eager", "default"}));
    auto again =
        Run(kCollect + " run --include-test-models --model '^test_(tiny|throw)$' --backend eager --resume --out " +
            root.string() + " --build-id b1 --platform-id p1");
    INFO(again.text);
    CHECK(again.code == 0);
    CHECK(again.text.find("kept 3 existing") != std::string::npos);
    CHECK(Load(dir, "test_tiny", "eval").status == "ok");
  }
}

TEST_CASE("several worker processes per run: interleaved rounds, pooled samples, resumable parts") {
  auto root = FreshDir("processes");
  const std::string base =
      kCollect +
      " run --include-test-models --model '^test_(tiny|throw)$' --mode eval --backend eager --repeat 4 "
      "--processes 3 --out " +
      root.string() + " --build-id b1 --platform-id p1";
  auto out = Run(base);
  INFO(out.text);
  REQUIRE(out.code == 0);
  auto dir = root / "b1" / "p1";
  auto tiny = Load(dir, "test_tiny", "eval");
  REQUIRE(tiny.status == "ok");
  CHECK(tiny.settings->processes == 3);
  CHECK(tiny.timing->samples_ms.size() == 12);
  CHECK(tiny.timing->repetitions == 12);
  REQUIRE(tiny.timing->process_medians_ms.size() == 3);
  for (int p = 0; p < 3; ++p)
    CHECK(fs::exists(dir / "logs" / ("test_tiny.eval.eager.default.p" + std::to_string(p) + ".log")));
  CHECK(tiny.operators);  // the first process profiled
  auto thrown = Load(dir, "test_throw", "eval");
  CHECK(thrown.status == "error");
  // Interleaved: test_throw fails in round 1 and is reported before test_tiny,
  // which comes first in the registry but finishes only in round 3.
  CHECK(out.text.find("test_throw eval eager default bs=8 (process 1 of 3): error") <
        out.text.find("test_tiny eval eager default bs=8 (3 processes): ok"));
  CHECK(out.text.find("test_tiny eval eager default bs=8 process 2/3") != std::string::npos);
  CHECK(!fs::exists(dir / ".work"));
  Validate(root);

  // A process finished before an interruption is reused under --resume.
  fs::remove(core::RunPath(dir, {"test_tiny", "eval", "eager", "default"}));
  core::RunResult part = tiny;
  part.timing->samples_ms = {123456.0};
  part.timing->process_medians_ms.clear();
  part.settings->processes = 1;
  core::SummarizeTiming(*part.timing);
  core::WriteJsonAtomic(dir / ".work" / "test_tiny.eval.eager.default.p0.result.json", core::ToJson(part));
  auto again = Run(base + " --resume");
  INFO(again.text);
  CHECK(again.code == 0);
  auto resumed = Load(dir, "test_tiny", "eval");
  REQUIRE(resumed.timing);
  CHECK(resumed.timing->samples_ms.size() == 9);  // 1 reused + 2 processes x 4
  CHECK(resumed.timing->process_medians_ms.front() == 123456.0);
}

TEST_CASE("pool: interleaved rounds of two builds become one collection each, a process per round") {
  auto root = FreshDir("pool");
  std::string rounds;
  for (int r = 1; r <= 3; ++r) {
    for (const char* build : {"b1", "b2"}) {
      const fs::path out = root / ("round-" + std::to_string(r));
      auto o = Run(kCollect +
                   " run --include-test-models --model '^test_tiny$' --mode eval --backend eager --repeat 3 "
                   "--processes 1 --no-summary --out " +
                   out.string() + " --build-id " + build + " --platform-id p1");
      INFO(o.text);
      REQUIRE(o.code == 0);
    }
    rounds += " " + (root / ("round-" + std::to_string(r))).string();
  }
  const std::string pool = kCollect + " pool --into " + (root / "results").string() + rounds;
  auto o = Run(pool);
  INFO(o.text);
  REQUIRE(o.code == 0);
  CHECK(o.text.find("b2/p1: 1 runs pooled over 3 rounds") != std::string::npos);
  for (const char* build : {"b1", "b2"}) {
    auto tiny = Load(root / "results" / build / "p1", "test_tiny", "eval");
    REQUIRE(tiny.status == "ok");
    CHECK(tiny.settings->processes == 3);
    CHECK(tiny.timing->samples_ms.size() == 9);
    CHECK(tiny.timing->process_medians_ms.size() == 3);
  }
  Validate(root / "results");
  auto again = Run(pool);
  CHECK(again.code == 2);
  CHECK(again.text.find("refusing to replace it") != std::string::npos);
  CHECK(Run(pool + " --replace").code == 0);
}

TEST_CASE("Ctrl-C stops the suite and keeps finished results") {
  auto root = FreshDir("interrupt");
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(kCollect.c_str(), kCollect.c_str(), "run", "--include-test-models", "--model", "^test_(tiny|hang)$", "--mode",
          "train", "--backend", "eager", "--timeout", "300", "--out", root.c_str(), "--build-id", "b1", "--platform-id",
          "p1", static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto tiny = core::RunPath(root / "b1" / "p1", {"test_tiny", "train", "eager", "default"});
  // test_tiny runs first (registry order), then test_hang never finishes.
  for (int i = 0; i < 600 && !fs::exists(tiny); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(fs::exists(tiny));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(Load(root / "b1" / "p1", "test_tiny", "train").status == "ok");
  CHECK(!fs::exists(core::RunPath(root / "b1" / "p1", {"test_hang", "train", "eager", "default"})));
  auto manifest = core::ReadJsonFile(core::ManifestPath(root / "b1" / "p1"));
  CHECK(manifest["interrupted"] == true);
}

TEST_CASE("an interrupted --retry-failed keeps the failed result it was measuring again") {
  auto root = FreshDir("retry_interrupt");
  const std::string args = " run --include-test-models --model '^test_hang$' --mode train --backend eager --out " +
                           root.string() + " --build-id b1 --platform-id p1";
  auto first = Run(kCollect + args + " --timeout 1");
  INFO(first.text);
  REQUIRE(first.code == 0);
  const auto hang = core::RunPath(root / "b1" / "p1", {"test_hang", "train", "eager", "default"});
  REQUIRE(Load(root / "b1" / "p1", "test_hang", "train").status == "timeout");
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + kCollect + args + " --timeout 300 --resume --retry-failed").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // The retry has started once its worker's spec is written.
  const auto work = root / "b1" / "p1" / ".work";
  for (int i = 0; i < 600 && !(fs::exists(work) && !fs::is_empty(work)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(fs::exists(hang));
  CHECK(Load(root / "b1" / "p1", "test_hang", "train").status == "timeout");
}

TEST_CASE("the torchscript backend: ok runs record their setup, a model's own error stays an error") {
  auto root = FreshDir("torchscript");
  auto out = Run(kCollect + " run --include-test-models --model '^test_(tiny|throw)$' --backend eager torchscript " +
                 "--repeat 3 --pairing interleaved --out " + root.string() + " --build-id b1 --platform-id p1");
  INFO(out.text);
  REQUIRE(out.code == 0);
  auto dir = root / "b1" / "p1";
  for (const char* mode : {"train", "eval"}) {
    CAPTURE(mode);
    auto eager = Load(dir, "test_tiny", mode);
    auto compiled = Load(dir, "test_tiny", mode, "torchscript");
    REQUIRE(compiled.status == "ok");
    REQUIRE(compiled.timing);
    REQUIRE(compiled.timing->backend_setup_ms.has_value());  // tracing and the executor's first calls
    CHECK(*compiled.timing->backend_setup_ms > 0);
    CHECK(!eager.timing->backend_setup_ms.has_value());  // eager has no setup: absent, not 0
    CHECK(compiled.operators->size() > 5);
    // The paired pass: eager and compiled steps interleaved in the same worker.
    REQUIRE(compiled.paired);
    CHECK(compiled.paired->order == "interleaved");
    CHECK(compiled.paired->eager_samples_ms.size() == 3);
    CHECK(compiled.paired->compiled_samples_ms.size() == 3);
    CHECK(compiled.paired->speedup > 0);
    CHECK(!eager.paired);
    // test_throw fails in eager too: its own error, not "cannot be traced".
    auto thrown = Load(dir, "test_throw", mode, "torchscript");
    CHECK(thrown.status == "error");
    CHECK(thrown.reason->find("deliberate failure") != std::string::npos);
  }
  Validate(root);
}

// A compiler that breaks on a model eager runs is a failure of that compiler
// (status error, its message kept), never "unsupported": unsupported is for a
// reason the model or the platform states (issue 36, item 6). test_compiler_
// breaks throws only while it is being traced, as a compiler bug would.
TEST_CASE("a compiler that fails on a model is an error naming the compiler, not unsupported") {
  auto root = FreshDir("compiler_failure");
  auto out =
      Run(kCollect + " run --include-test-models --model '^test_compiler_breaks$' --mode eval " +
          "--backend eager torchscript inductor --repeat 2 --out " + root.string() + " --build-id b1 --platform-id p1");
  INFO(out.text);
  REQUIRE(out.code == 0);
  auto dir = root / "b1" / "p1";
  CHECK(Load(dir, "test_compiler_breaks", "eval").status == "ok");
  for (const char* backend : {"torchscript", "inductor"}) {
    CAPTURE(backend);
    auto r = Load(dir, "test_compiler_breaks", "eval", backend);
    CHECK(r.status == "error");
    REQUIRE(r.reason);
    CHECK(r.reason->find(std::string(backend) + ": the compiler failed") != std::string::npos);
    CHECK(r.reason->find("deliberate failure while being traced") != std::string::npos);
  }
  Validate(root);
}

// test_drift's steps slow down by 8 % with every step in the process
// (models/test_models.cc). Interleaved in pairs of alternating order, eager and
// compiled samples span the same stretch of the drift, so the speedup of a
// compiled forward that does the same work stays near 1; back to back, the
// compiled steps all come ten steps later and look about twice as slow
// (1.08^10 = 2.16: speedup about 0.46). Measured on the 2-core dev machine,
// 2026-11-24: quiet, interleaved 0.98-1.00 and back to back 0.49; beside two
// busy loops 0.89-0.96 and 0.46-0.47; beside three, 0.77-0.83 and 0.47-0.51
// (there the compiled step, which does more host work, loses more to
// preemption). The bounds leave room for that, and the ratio of the two is
// the property itself: interleaving removes most of what drift does to the
// back-to-back order.
TEST_CASE("the paired pass: interleaving keeps a drifting model's speedup near 1, back to back does not") {
  auto root = FreshDir("pairing");
  std::map<std::string, double> speedup;
  for (const std::string pairing : {"interleaved", "back_to_back"}) {
    auto out = Run(kCollect + " run --include-test-models --model '^test_drift$' --mode eval --backend torchscript " +
                   "--warmup 1 --repeat 10 --profile-iterations 0 --pairing " + pairing + " --out " +
                   (root / pairing).string() + " --build-id b1 --platform-id p1");
    INFO(out.text);
    REQUIRE(out.code == 0);
    auto r = Load(root / pairing / "b1" / "p1", "test_drift", "eval", "torchscript");
    REQUIRE(r.status == "ok");
    REQUIRE(r.paired);
    CHECK(r.paired->order == pairing);
    CHECK(r.settings->pairing == pairing);
    speedup[pairing] = r.paired->speedup;
    MESSAGE("test_drift ", pairing, ": eager median ", r.paired->eager_median_ms, " ms, compiled median ",
            r.paired->compiled_median_ms, " ms, speedup ", r.paired->speedup);
  }
  CHECK(speedup["interleaved"] > 0.7);
  CHECK(speedup["interleaved"] < 1.3);
  CHECK(speedup["back_to_back"] < 0.62);
  CHECK(speedup["interleaved"] / speedup["back_to_back"] > 1.4);
  Validate(root);
}

TEST_CASE("bad input gets a clear error") {
  auto out = Run(kCollect + " run --model 'no_such_model_xyz' --out /tmp/unused");
  CHECK(out.code == 2);
  CHECK(out.text.find("no model matches") != std::string::npos);
  auto root = FreshDir("badconfig");
  auto cfg = root / "bad.json";
  core::WriteFileAtomic(cfg, R"({"repeat": 0})");
  out = Run(kCollect + " run --config " + cfg.string() + " --out " + root.string());
  CHECK(out.code == 2);
  CHECK(out.text.find("bad.json: field 'repeat'") != std::string::npos);
  out = Run(kCollect + " run --build-id '../escape' --model test_tiny --include-test-models --out " + root.string());
  CHECK(out.code == 2);
  CHECK(out.text.find("not a safe id") != std::string::npos);
}

TEST_CASE("a model whose run-time library cannot be loaded is recorded unsupported, naming the file") {
  // vision_maskrcnn needs torchvision's operator library (models/vision/detection/torchvision_ops.h).
  auto root = FreshDir("missing-library");
  auto out = Run("TORCHGAUGE_TORCHVISION_OPS=/nonexistent/torchvision/_C.so " + kCollect +
                 " run --suite ci --model '^vision_maskrcnn$' --device cpu --no-probe --out " + root.string() +
                 " --build-id b1 --platform-id p1");
  INFO(out.text);
  REQUIRE(out.code == 0);
  for (const char* mode : {"train", "eval"}) {
    auto r = Load(root / "b1" / "p1", "vision_maskrcnn", mode);
    CHECK(r.status == "unsupported");
    REQUIRE(r.reason);
    CHECK(r.reason->find("/nonexistent/torchvision/_C.so") != std::string::npos);
  }
}
