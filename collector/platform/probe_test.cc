// The probe on the CPU at a small size: every figure positive and finite,
// the fp32 matmul rate between a naive triple loop's rate and what the
// hardware could possibly do, and the JSON/sysfs plumbing.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <ATen/Parallel.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "collector/platform/probe.h"
#include "core/io/json_io.h"

using namespace torchgauge;

namespace {

collector::ProbeOptions Small() {
  collector::ProbeOptions o;
  o.matmul_n = 256;
  o.warmup = 1;
  o.repeats = 10;
  o.triad_elements = 1 << 20;
  return o;
}

// GFLOP/s of the textbook i-k-j loop at n, best of 3: what any matmul library
// should beat.
double NaiveGflops(int n) {
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n);
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    std::fill(c.begin(), c.end(), 0.0f);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) {
        const float aik = a[i * n + k];
        for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(c[0] == doctest::Approx(0.5 * n));
    best = std::max(best, 2.0 * n * n * n / s / 1e9);
  }
  return best;
}

// std::filesystem::remove_all jumps to address 0 in a process that links
// libtorch.so (which exports its own copies of libstdc++'s filesystem
// symbols), so temporary trees are removed by rm.
void RemoveTree(const std::filesystem::path& p) {
  const std::string cmd = "rm -rf '" + p.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

}  // namespace

TEST_CASE("the CPU probe gives positive, finite, plausible figures") {
  // One thread, like the naive loop it is set against; on a loaded machine a
  // thread pool whose workers are descheduled can stall a 0.2 ms matmul for
  // tens of milliseconds, which says nothing about the probe.
  const int threads_before = at::get_num_threads();
  at::set_num_threads(1);
  const auto p = collector::RunProbe(Small());
  at::set_num_threads(threads_before);
  CHECK(p.label == "attainable through LibTorch");
  CHECK(p.device == "cpu");
  REQUIRE(p.threads);
  CHECK(*p.threads == 1);
  REQUIRE(!p.matmul.empty());
  const core::MatmulPeak* fp32 = nullptr;
  for (const auto& m : p.matmul) {
    CHECK(m.precision != "tf32");  // not a CPU mode
    if (m.status == "ok") {
      REQUIRE(m.tflops);
      CHECK(std::isfinite(*m.tflops));
      CHECK(*m.tflops > 0);
      CHECK(*m.n == 256);
    } else {
      CHECK(m.status == "unsupported");
      REQUIRE(m.reason);
      CHECK(!m.reason->empty());
      CHECK(!m.tflops);
    }
    if (m.precision == "fp32") fp32 = &m;
  }
  REQUIRE(fp32);
  REQUIRE(fp32->status == "ok");
  const double gflops = *fp32->tflops * 1e3;
  const double naive = NaiveGflops(256);
  // No x86 or Arm core does more than 2 x 16-wide fp32 FMA per cycle at 6 GHz.
  const double hardware_bound = 2.0 * 2 * 16 * 6.0;  // one thread
  MESSAGE("fp32 matmul n=256: LibTorch " << gflops << " GFLOP/s, naive loop " << naive << " GFLOP/s, bound "
                                         << hardware_bound);
  // Half the naive rate leaves room for a loaded machine; a BLAS slower than
  // that is not measuring a matmul.
  CHECK(gflops > 0.5 * naive);
  CHECK(gflops < hardware_bound);

  REQUIRE(p.triad);
  CHECK(p.triad->elements == 1 << 20);
  CHECK(p.triad->bytes_moved == doctest::Approx(3.0 * (1 << 20) * 4));
  CHECK(std::isfinite(p.triad->gb_per_s));
  CHECK(p.triad->gb_per_s > 0);
  CHECK(p.triad->gb_per_s < 10000);  // no CPU memory system moves 10 TB/s
  CHECK(!p.kernels);                 // own kernels are GPU only
}

TEST_CASE("probe output: the table, the JSON file, errors") {
  const auto dir = std::filesystem::temp_directory_path() / ("tg_probe_" + std::to_string(getpid()));
  RemoveTree(dir);
  std::filesystem::create_directories(dir);
  const auto out = dir / "peaks.json";
  CHECK(collector::ProbeCommand(Small(), out) == 0);
  const auto j = core::ReadJsonFile(out);
  const auto back = core::ProbeResultFromJson(j, out);
  CHECK(back.label == "attainable through LibTorch");
  CHECK(collector::FormatProbe(back).find("attainable through LibTorch") != std::string::npos);
  collector::ProbeOptions bad = Small();
  bad.device = "mps";
  CHECK(collector::ProbeCommand(bad, dir / "none.json") == 1);
  CHECK(!std::filesystem::exists(dir / "none.json"));
  RemoveTree(dir);
}

TEST_CASE("last-level cache from sysfs: the highest data or unified level") {
  const auto root = std::filesystem::temp_directory_path() / ("tg_cache_" + std::to_string(getpid()));
  RemoveTree(root);
  CHECK(!collector::LastLevelCacheBytes(root));
  WriteFile(root / "index0/level", "1");
  WriteFile(root / "index0/type", "Data");
  WriteFile(root / "index0/size", "32K");
  WriteFile(root / "index1/level", "1");
  WriteFile(root / "index1/type", "Instruction");
  WriteFile(root / "index1/size", "64K");
  CHECK(*collector::LastLevelCacheBytes(root) == 32 * 1024);
  WriteFile(root / "index3/level", "3");
  WriteFile(root / "index3/type", "Unified");
  WriteFile(root / "index3/size", "32768K");
  WriteFile(root / "index2/level", "2");
  WriteFile(root / "index2/type", "Unified");
  WriteFile(root / "index2/size", "1M");
  CHECK(*collector::LastLevelCacheBytes(root) == int64_t{32} << 20);
  RemoveTree(root);
  if (auto real = collector::LastLevelCacheBytes()) CHECK(*real > 0);
}
