// The inductor backend (collector/inductor_backend.h) against eager on a
// representative set at smoke sizes: the AOTInductor package, compiled from
// the native module's traced graph and fed the module's own tensors, must
// compute eager's forward output; train runs must say why they are not
// compiled; a cached package is reused only by a run with the same key, and
// never by one at another thread count. Compiles take tens of seconds each on
// two cores, so the set is small; each case uses its own package cache.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "collector/backend.h"
#include "collector/inductor_backend.h"
#include "core/remove_tree.h"
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
  if (mode == Mode::kTrain) w->net().train();
  else w->net().eval();
  return w;
}

// A fresh package cache for one test case, removed afterwards.
struct TempCache {
  fs::path dir;
  explicit TempCache(const std::string& name) {
    dir = fs::temp_directory_path() / ("torchgauge-aoti-test-" + name + "-" + std::to_string(::getpid()));
    core::RemoveTree(dir);
    setenv("TORCHGAUGE_CACHE", dir.string().c_str(), 1);
    if (std::string(TORCHGAUGE_PYTHON).size()) setenv("TORCHGAUGE_PYTHON", TORCHGAUGE_PYTHON, 0);
  }
  ~TempCache() {
    core::RemoveTree(dir);
    unsetenv("TORCHGAUGE_CACHE");
  }
};

core::CompileInfo CheckEval(const std::string& id) {
  auto eager = Make(id, Mode::kEval);
  auto compiled = Make(id, Mode::kEval);
  std::optional<core::CompileInfo> info;
  const auto why = collector::InstallBackend("inductor", *compiled, Mode::kEval, &info);
  REQUIRE_MESSAGE(!why, id << ": " << why.value_or(""));
  REQUIRE(info);
  torch::Tensor want, got;
  {
    torch::NoGradGuard g;
    want = eager->Forward();
  }
  {
    c10::InferenceMode g;
    got = compiled->RunForward();
  }
  const double err = parity::RelError(got, want);
  MESSAGE(id << " eval: relative error " << err << "; trace " << info->trace_ms.value_or(-1) << " ms, convert "
             << info->convert_ms.value_or(-1) << " ms, compile " << info->compile_ms.value_or(-1) << " ms, load "
             << info->load_ms.value_or(-1) << " ms, cache " << (info->cache_hit ? "hit" : "miss"));
  CHECK_MESSAGE(err <= 1e-4, id << " eval output differs from eager: " << err);
  return *info;
}

}  // namespace

TEST_CASE("inductor eval matches eager: resnet18") {
  TempCache cache("resnet18");
  CheckEval("resnet18");
}

TEST_CASE("inductor eval matches eager: hf_bert") {
  TempCache cache("hf_bert");
  CheckEval("hf_bert");
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

TEST_CASE("inductor: a train run is unsupported with the reason, never eager in disguise") {
  auto w = Make("test_tiny", Mode::kTrain);
  std::optional<core::CompileInfo> info;
  const auto why = collector::InstallBackend("inductor", *w, Mode::kTrain, &info);
  REQUIRE(why);
  CHECK(why->find("inductor") != std::string::npos);
  CHECK(why->find("train") != std::string::npos);
}

TEST_CASE("inductor: the cache key changes with each of its fields") {
  const collector::PackageKey base{"graph", "2.11.0", "cpu", "AVX2", "float[2, 8]cpu;", 2};
  for (auto change : {+[](collector::PackageKey& k) { k.graph += " "; },
                      +[](collector::PackageKey& k) { k.torch_version = "2.12.0"; },
                      +[](collector::PackageKey& k) { k.device = "cuda:0"; },
                      +[](collector::PackageKey& k) { k.isa = "AVX512"; },
                      +[](collector::PackageKey& k) { k.inputs = "float[4, 8]cpu;"; },
                      +[](collector::PackageKey& k) { k.threads = 1; }}) {
    collector::PackageKey k = base;
    change(k);
    CHECK(k.Hex() != base.Hex());
  }
}
