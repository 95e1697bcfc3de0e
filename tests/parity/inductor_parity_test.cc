// The inductor backend (collector/backends/inductor_backend.h) against eager on a
// representative set at smoke sizes: the AOTInductor package, compiled from
// the native module's traced graph and fed the module's own tensors, must
// compute eager's forward output; a train package (the joint forward-backward
// of the model's loss, stepped by the model's own optimizer) must follow eager
// training step by step; a model whose train step does not split into one
// loss and one optimizer must say why; a cached package is reused only by a run with the same key, and
// never by one at another thread count. Compiles take tens of seconds each on
// two cores, so the set is small; each case uses its own package cache.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "collector/backends/backend.h"
#include "collector/backends/inductor_backend.h"
#include "core/io/remove_tree.h"
#include "models/workload.h"
#include "tests/parity/parity.h"

namespace {

using namespace torchgauge;
using models::Mode;
namespace fs = std::filesystem;

std::unique_ptr<models::Workload> Make(const std::string& id, Mode mode) {
  const models::ModelInfo* info = models::FindModel(id);
  REQUIRE_MESSAGE(info, id);
  models::WorkloadOptions o;
  o.mode = mode;
  o.batch_size = info->smoke_batch.For(mode);
  o.smoke = true;
  o.seed = 0;
  models::SeedAll(0);
  auto w = info->create(o);
  if (mode == Mode::kTrain)
    w->net().train();
  else
    w->net().eval();
  return w;
}

// The compile step runs in the LibTorch under test's own Python, unless the
// environment names one.
void UseTorchPython() {
  if (std::string(TORCHGAUGE_TORCH_PYTHON).size()) setenv("TORCHGAUGE_TORCH_PYTHON", TORCHGAUGE_TORCH_PYTHON, 0);
}

// The collector's own package cache, as a collection uses it (TORCHGAUGE_CACHE
// as the environment gives it, else ~/.cache/torchgauge): a package is keyed
// on the traced graph, the torch version, device, ISA, input signature and
// thread count, so one found there is what this build would compile. A
// machine that ran the tests before (a developer's, CI's) then skips the
// compiles: in a clean-clone CI run of 2026-11-30 these six cases spent
// 334 s, most of it compiling. The compile path itself runs in every run: the
// cache case below compiles into a fresh cache, and a fresh machine compiles
// everything.
struct CollectorCache {
  CollectorCache() { UseTorchPython(); }
};

// A fresh package cache for one test case, removed afterwards.
struct TempCache {
  fs::path dir;
  explicit TempCache(const std::string& name) {
    dir = fs::temp_directory_path() / ("torchgauge-aoti-test-" + name + "-" + std::to_string(::getpid()));
    core::RemoveTree(dir);
    setenv("TORCHGAUGE_CACHE", dir.string().c_str(), 1);
    UseTorchPython();
  }
  ~TempCache() {
    core::RemoveTree(dir);
    unsetenv("TORCHGAUGE_CACHE");
  }
};

// An eager workload and a second one, from the same seed, with the inductor
// backend installed (which must succeed).
struct Installed {
  std::unique_ptr<models::Workload> eager, compiled;
  std::optional<core::CompileInfo> info;
};

Installed Install(const std::string& id, Mode mode, const std::string& backend = "inductor") {
  Installed w{Make(id, mode), Make(id, mode), std::nullopt};
  const auto why = collector::InstallBackend(backend, *w.compiled, mode, &w.info);
  REQUIRE_MESSAGE(!why, id << ": " << why.value_or(""));
  REQUIRE(w.info);
  return w;
}

// `adjust`, when given, changes both workloads' weights the same way before
// the compile.
core::CompileInfo CheckEval(const std::string& id, const std::string& backend = "inductor",
                            const std::function<void(models::Workload&)>& adjust = {}) {
  Installed installed{Make(id, Mode::kEval), Make(id, Mode::kEval), std::nullopt};
  if (adjust) adjust(*installed.eager), adjust(*installed.compiled);
  const auto why = collector::InstallBackend(backend, *installed.compiled, Mode::kEval, &installed.info);
  REQUIRE_MESSAGE(!why, id << ": " << why.value_or(""));
  REQUIRE(installed.info);
  auto& [eager, compiled, info] = installed;
  torch::Tensor want, got;
  {
    torch::NoGradGuard g;
    // The install ran the compiled side's forward; a forward that updates its
    // inputs in place (pyhpc_turbulent_kinetic_energy) has moved them on.
    for (auto& [name, t] : eager->inputs()) {
      if (t.defined() && compiled->inputs().count(name)) t.copy_(compiled->inputs().at(name));
    }
    want = eager->Forward().clone();
  }
  {
    c10::InferenceMode g;
    got = compiled->RunForward();
  }
  const double err = parity::RelError(got, want);
  MESSAGE(id << " eval: relative error " << err << "; trace " << info->trace_ms.value_or(-1) << " ms, convert "
             << info->convert_ms.value_or(-1) << " ms, compile " << info->compile_ms.value_or(-1) << " ms, load "
             << info->load_ms.value_or(-1) << " ms, cache " << std::string(info->cache_hit ? "hit" : "miss"));
  CHECK_MESSAGE(err <= 1e-4, id << " eval output differs from eager: " << err);
  return *info;
}

// Copies every parameter and buffer of `from` into `to`, in place (the
// package reads `to`'s tensors where they are).
void CopyState(models::Workload& from, models::Workload& to) {
  torch::NoGradGuard g;
  auto src = from.net().named_parameters(true);
  for (auto& p : to.net().named_parameters(true)) p.value().copy_(src[p.key()]);
  auto bufs = from.net().named_buffers(true);
  for (auto& b : to.net().named_buffers(true)) {
    if (b.value().defined()) b.value().copy_(bufs[b.key()]);
  }
}

// `steps` compiled train steps against as many eager TrainStep()s, each pair
// from the same weights, buffers and inputs: the loss, every parameter's
// gradient (the compiled step leaves the package's gradients in .grad, as
// eager's backward does) and every floating-point buffer after the step
// (BatchNorm's running statistics, updated in place by the package) must
// agree to `tolerance` (relative to the tensor's largest magnitude). After
// each pair the compiled side takes eager's weights and buffers, in place, so
// the next step checks that the package reads the updated tensors. (Compared
// without that, Adam's trajectories part: it moves an element by about the
// learning rate whatever its gradient's size, so elements whose gradient is
// rounding noise around 0 step either way.) Returns the largest error.
double CheckTrain(const std::string& id, int steps, double tolerance) {
  auto [eager, compiled, info] = Install(id, Mode::kTrain);
  REQUIRE(compiled->compiled_train_step());
  CHECK_FALSE(compiled->compiled_forward());
  CHECK(info->check == "loss_and_gradients");
  REQUIRE(info->check_error);
  double worst = 0;
  std::string where;
  auto compare = [&](const std::string& what, const torch::Tensor& got, const torch::Tensor& want) {
    REQUIRE_MESSAGE(got.defined() == want.defined(), id << ": " << what);
    if (!want.defined()) return;
    const double e = parity::RelError(got, want);
    if (e >= worst) {
      worst = e;
      where = what;
    }
  };
  for (int i = 0; i < steps; ++i) {
    // Tracing and the install check ran the compiled side's forward (and its
    // BatchNorm updates) before the first step.
    CopyState(*eager, *compiled);
    const std::string step = "step " + std::to_string(i) + " ";
    const torch::Tensor want = eager->TrainStep();
    if (i + 1 < steps) {
      compare(step + "loss", compiled->compiled_train_step()(), want);
    } else {
      compiled->Step(Mode::kTrain);  // as the collector times it
    }
    auto eager_params = eager->net().named_parameters(true);
    for (auto& p : compiled->net().named_parameters(true)) {
      compare(step + "gradient of " + p.key(), p.value().grad(), eager_params[p.key()].grad());
    }
    auto eager_buffers = eager->net().named_buffers(true);
    for (auto& b : compiled->net().named_buffers(true)) {
      if (b.value().defined() && b.value().is_floating_point()) {
        compare(step + b.key(), b.value(), eager_buffers[b.key()]);
      }
    }
  }
  MESSAGE(id << " train: largest relative error over " << steps << " steps " << worst << " (" << where
             << "); install check " << *info->check_error << "; trace " << info->trace_ms.value_or(-1)
             << " ms, convert " << info->convert_ms.value_or(-1) << " ms, compile " << info->compile_ms.value_or(-1)
             << " ms, load " << info->load_ms.value_or(-1) << " ms");
  CHECK_MESSAGE(worst <= tolerance, id << " train differs from eager: " << worst << " in " << where);
  return worst;
}

}  // namespace

TEST_CASE("inductor eval matches eager: resnet18") {
  CollectorCache cache;
  CheckEval("resnet18");
}

// The transformer of the smoke suite's inductor runs, so that a fresh
// machine compiles its package once for both (hf_bert until 2026-11-30).
TEST_CASE("inductor eval matches eager: hf_distil_bert") {
  CollectorCache cache;
  CheckEval("hf_distil_bert");
}

TEST_CASE("inductor eval matches eager: pyhpc_turbulent_kinetic_energy (a forward that adds to its inputs)") {
  // Its forward updates tke and dtke in place and stores a new entry,
  // tke_surf_corr, in inputs(): the package must still get the 21 tensors it
  // was traced with, and both sides of each check start from the same state.
  CollectorCache cache;
  CheckEval("pyhpc_turbulent_kinetic_energy");
}

TEST_CASE("inductor: the package cache is hit by the same run and missed at another thread count") {
  TempCache cache("threads");
  const int threads = at::get_num_threads();
  const core::CompileInfo first = CheckEval("test_tiny");
  CHECK_FALSE(first.cache_hit);
  CHECK(first.compile_ms);
  const core::CompileInfo again = CheckEval("test_tiny");
  CHECK(again.cache_hit);
  CHECK_FALSE(again.compile_ms);  // nothing compiled
  CHECK(again.cache_key == first.cache_key);
  at::set_num_threads(threads == 1 ? 2 : 1);
  const core::CompileInfo other = CheckEval("test_tiny");
  at::set_num_threads(threads);
  CHECK_FALSE(other.cache_hit);
  CHECK(other.cache_key != first.cache_key);
}

// The frozen variant folds the weights into its package: it must still
// compute eager's output, never be keyed like an unfrozen package, and be
// compiled again (not found in the cache) once a weight changes, so that a
// package never runs another run's weights.
TEST_CASE("inductor_frozen eval matches eager, and its package is keyed by the weights") {
  TempCache cache("frozen");
  const core::CompileInfo plain = CheckEval("test_tiny");
  const core::CompileInfo first = CheckEval("test_tiny", "inductor_frozen");
  CHECK_FALSE(first.cache_hit);
  CHECK(first.cache_key != plain.cache_key);
  const core::CompileInfo again = CheckEval("test_tiny", "inductor_frozen");
  CHECK(again.cache_hit);
  CHECK(again.cache_key == first.cache_key);
  const core::CompileInfo changed = CheckEval("test_tiny", "inductor_frozen", [](models::Workload& w) {
    torch::NoGradGuard g;
    w.net().parameters().front().add_(0.5);
  });
  CHECK_FALSE(changed.cache_hit);
  CHECK(changed.cache_key != first.cache_key);
}

TEST_CASE("inductor_frozen: a train run is unsupported, with why") {
  auto w = Make("test_tiny", Mode::kTrain);
  std::optional<core::CompileInfo> info;
  const auto why = collector::InstallBackend("inductor_frozen", *w, Mode::kTrain, &info);
  REQUIRE(why);
  CHECK(why->find("eval only") != std::string::npos);
}

TEST_CASE("inductor train follows eager training: test_tiny") {
  CollectorCache cache;
  CheckTrain("test_tiny", 5, 1e-4);
}

TEST_CASE("inductor train follows eager training: resnet18 (BatchNorm statistics updated by the package)") {
  CollectorCache cache;
  CheckTrain("resnet18", 3, 1e-3);
}

TEST_CASE("inductor train: where float32 eager is itself far from float64, a float64 eager step judges") {
  // shufflenet_v2 at the smoke size (batch 1, BatchNorm over the last stages'
  // few-pixel maps): eager's own float32 gradients are far from float64's, so
  // the plain check against eager fails and the float64 judgement decides.
  CollectorCache cache;
  auto [eager, compiled, info] = Install("shufflenet_v2_x1_0", Mode::kTrain);
  CHECK(info->check == "loss_and_gradients_fp64");
  REQUIRE(info->check_error);
  REQUIRE(info->check_reference_error);
  MESSAGE("shufflenet_v2_x1_0 train: compiled RMSE from float64 " << *info->check_error << ", float32 eager's "
                                                                  << *info->check_reference_error);
  const torch::Tensor loss = compiled->compiled_train_step()();
  CHECK(torch::isfinite(loss).item<bool>());
}

// The reason a model's train step gets no joint package; nothing installed.
std::string UnsupportedTrainReason(const std::string& id) {
  auto w = Make(id, Mode::kTrain);
  std::optional<core::CompileInfo> info;
  const auto why = collector::InstallBackend("inductor", *w, Mode::kTrain, &info);
  REQUIRE_MESSAGE(why, id);
  CHECK_FALSE(w->compiled_train_step());
  CHECK(why->starts_with("inductor: "));
  return *why;
}

TEST_CASE("inductor: a train step that does not split into one loss and one optimizer is unsupported, with why") {
  CHECK(UnsupportedTrainReason("yolov3").find("one loss and one optimizer") != std::string::npos);
}

TEST_CASE("inductor: a model's own reason why its train step has no joint package (dlrm: sparse gradients)") {
  CHECK(UnsupportedTrainReason("dlrm").find("sparse") != std::string::npos);
}

TEST_CASE("inductor: the cache key changes with each of its fields") {
  const collector::PackageKey base{"graph", "2.11.0", "cpu", "AVX2", "float[2, 8]cpu;", 2};
  for (auto change :
       {+[](collector::PackageKey& k) { k.graph += " "; },
        +[](collector::PackageKey& k) { k.torch_version = "2.12.0"; },
        +[](collector::PackageKey& k) { k.device = "cuda:0"; }, +[](collector::PackageKey& k) { k.isa = "AVX512"; },
        +[](collector::PackageKey& k) { k.inputs = "float[4, 8]cpu;"; },
        +[](collector::PackageKey& k) { k.threads = 1; }}) {
    collector::PackageKey k = base;
    change(k);
    CHECK(k.Hex() != base.Hex());
  }
}
