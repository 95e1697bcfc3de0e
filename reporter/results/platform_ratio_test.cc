#include "reporter/results/platform_ratio.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "reporter/results/aggregate.h"

using namespace torchgauge;
using namespace torchgauge::reporter;

namespace {

core::RunResult Run(const std::string& platform, const std::string& model, const std::string& mode, double median,
                    const std::string& precision = "fp32") {
  core::RunResult r;
  r.platform_id = platform;
  r.model = {model, model, "vision", "t", "r"};
  r.mode = mode;
  r.precision = precision;
  r.batch_size = mode == "train" ? 32 : 64;
  r.device = "cuda:0";
  r.timing = core::Timing{};
  r.timing->samples_ms = {median};
  r.timing->median_ms = median;
  return r;
}

core::PrecisionFlags Fp32(bool matmul_tf32 = false, bool conv_tf32 = false) {
  core::PrecisionFlags f;
  f.param_dtype = "float32";
  f.matmul_allow_tf32 = matmul_tf32;
  f.cudnn_allow_tf32 = conv_tf32;
  return f;
}

Manifest Plat(const std::string& id, const std::string& vendor, const std::string& device) {
  Manifest m;
  m.platform_id = id;
  m.vendor = vendor;
  m.device_name = device;
  m.present = true;
  return m;
}

std::vector<const core::RunResult*> Ptrs(const std::vector<core::RunResult>& runs) {
  std::vector<const core::RunResult*> out;
  for (const auto& r : runs) out.push_back(&r);
  return out;
}

}  // namespace

TEST_CASE("EffectivePrecision reads the flags: dtype, autocast, TF32 on a GPU only") {
  core::RunResult r = Run("p", "m", "train", 1);
  CHECK_FALSE(EffectivePrecision(r).has_value());  // no flags recorded: unknown, not "float32"
  r.precision_flags = Fp32();
  CHECK(*EffectivePrecision(r) == "float32");
  r.precision_flags = Fp32(false, true);  // LibTorch's default: cuDNN convolutions in TF32
  CHECK(*EffectivePrecision(r) == "float32 + TF32 (conv)");
  r.precision_flags = Fp32(true, true);
  CHECK(*EffectivePrecision(r) == "float32 + TF32 (matmul, conv)");
  r.precision_flags->cudnn_enabled = false;  // no cuDNN: its TF32 flag changes nothing
  CHECK(*EffectivePrecision(r) == "float32 + TF32 (matmul)");
  r.device = "cpu";  // the CUDA flags do nothing on the CPU
  CHECK(*EffectivePrecision(r) == "float32");
  r.device = "cuda:0";
  r.precision_flags->autocast_enabled = true;  // matmuls and convolutions run in the autocast dtype
  r.precision_flags->autocast_dtype = "bfloat16";
  CHECK(*EffectivePrecision(r) == "float32 + autocast bfloat16");
  r.precision_flags = Fp32(true, true);
  r.precision_flags->param_dtype = "float16";
  CHECK(*EffectivePrecision(r) == "float16");
}

TEST_CASE("ComparePlatforms: ratio = other / reference per run key, like with like") {
  Manifest ref = Plat("nvidia-a100", "NVIDIA", "NVIDIA A100-SXM4-40GB");
  Manifest amd = Plat("amd-mi250", "AMD", "Instinct MI250X");
  std::vector<core::RunResult> a = {Run("nvidia-a100", "resnet50", "train", 10),
                                    Run("nvidia-a100", "resnet50", "eval", 4), Run("nvidia-a100", "bert", "train", 20),
                                    Run("nvidia-a100", "bert", "train", 5, "tf32"),
                                    Run("nvidia-a100", "only_here", "eval", 1)};
  std::vector<core::RunResult> b = {Run("amd-mi250", "resnet50", "train", 15), Run("amd-mi250", "resnet50", "eval", 2),
                                    Run("amd-mi250", "bert", "train", 40), Run("amd-mi250", "gpt2", "eval", 3)};
  b[1].batch_size = 128;  // another batch size is another run: not compared with bs64
  b.push_back(Run("amd-mi250", "bert", "eval", 1));
  b.back().status = "oom";
  b.back().timing.reset();
  a.push_back(Run("nvidia-a100", "bert", "eval", 8));
  PlatformRatios r = ComparePlatforms(ref, Ptrs(a), amd, Ptrs(b));
  CHECK(r.title == "NVIDIA A100-SXM4-40GB vs AMD Instinct MI250X: time ratio");
  CHECK(r.reference == "nvidia-a100");
  CHECK(r.other == "amd-mi250");
  REQUIRE(r.rows.size() == 3);  // bert eval, bert train fp32, resnet50 train; sorted by key
  CHECK(r.rows[0].model == "bert");
  CHECK(r.rows[0].mode == "eval");
  CHECK_FALSE(r.rows[0].ratio.has_value());  // oom on the other side: no ratio, never a 0
  CHECK(r.rows[0].other_status == "oom");
  CHECK(RatioNote(r.rows[0], r.reference, r.other) == "oom on amd-mi250");
  CHECK(r.rows[1].precision == "fp32");
  CHECK(*r.rows[1].ratio == doctest::Approx(2.0));  // the tf32 run is not paired with the fp32 one
  CHECK(r.rows[2].model == "resnet50");
  CHECK(*r.rows[2].ratio == doctest::Approx(1.5));
  CHECK(r.only_reference == 3);      // bert train tf32, only_here, resnet50 eval bs64
  CHECK(r.only_other == 2);          // gpt2, resnet50 eval bs128
  REQUIRE(r.summaries.size() == 1);  // eval has no pair with a ratio
  CHECK(r.summaries[0].mode == "train");
  CHECK(r.summaries[0].pairs == 2);
  CHECK(r.summaries[0].geomean == doctest::Approx(std::sqrt(3.0)));
  CHECK(PrecisionDiffersText(r.summaries[0]) == "0 (2 not recorded)");
}

TEST_CASE("a precision difference is flagged (the paper's TF32 finding)") {
  Manifest a100 = Plat("a100", "NVIDIA", "NVIDIA A100");
  Manifest h100 = Plat("h100", "NVIDIA", "NVIDIA H100");
  std::vector<core::RunResult> a = {Run("a100", "resnet50", "train", 10), Run("a100", "bert", "train", 10)};
  std::vector<core::RunResult> b = {Run("h100", "resnet50", "train", 5), Run("h100", "bert", "train", 5)};
  a[0].precision_flags = Fp32(false, true);  // "fp32" requested, convolutions ran as TF32
  b[0].precision_flags = Fp32(false, false);
  a[1].precision_flags = Fp32(true, true);
  b[1].precision_flags = Fp32(true, true);
  PlatformRatios r = ComparePlatforms(a100, Ptrs(a), h100, Ptrs(b));
  CHECK(r.title == "a100 vs h100: time ratio");  // same vendor: the platforms are named
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].model == "bert");
  CHECK(r.rows[0].precision_check == PrecisionCheck::kSame);
  CHECK(RatioNote(r.rows[0], r.reference, r.other).empty());
  CHECK(r.rows[1].precision_check == PrecisionCheck::kDiffers);
  CHECK(*r.rows[1].reference_precision == "float32 + TF32 (conv)");
  CHECK(*r.rows[1].other_precision == "float32");
  CHECK(RatioNote(r.rows[1], r.reference, r.other) == "precision differs");
  REQUIRE(r.summaries.size() == 1);
  CHECK(r.summaries[0].precision_differs == 1);
  CHECK(PrecisionDiffersText(r.summaries[0]) == "1");
  nlohmann::json j = ToJson(r);
  CHECK(j["rows"][1]["precision_check"] == "differs");
  CHECK(j["rows"][1]["ratio"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("DeviceLabel and RatioTitle name the vendors only where they differ") {
  CHECK(DeviceLabel(Plat("x", "AMD", "Instinct MI250X")) == "AMD Instinct MI250X");
  CHECK(DeviceLabel(Plat("x", "NVIDIA", "NVIDIA A100")) == "NVIDIA A100");
  CHECK(DeviceLabel(Plat("x", "CPU", "Intel(R) Xeon(R) Gold 6248")) == "Intel(R) Xeon(R) Gold 6248");
  Manifest missing;
  missing.platform_id = "lost";
  CHECK(DeviceLabel(missing) == "lost");
  CHECK(RatioTitle(Plat("nv", "NVIDIA", "NVIDIA A100"), Plat("amd", "AMD", "AMD MI250")) ==
        "NVIDIA A100 vs AMD MI250: time ratio");
  CHECK(RatioTitle(Plat("cpu-a-2c", "CPU", "Xeon"), Plat("cpu-a-2c-t1", "CPU", "Xeon")) ==
        "cpu-a-2c vs cpu-a-2c-t1: time ratio");
}

TEST_CASE("reference selection: the option, else the first platform id; an unknown id is an error") {
  const std::set<std::string> ids = {"nvidia-a100", "cpu-x86_64-2c", "amd-mi250"};
  CHECK(ChooseReference(ids, std::nullopt).id == "amd-mi250");
  CHECK_FALSE(ChooseReference(ids, std::nullopt).note.has_value());
  CHECK(ChooseReference(ids, std::string("nvidia-a100")).id == "nvidia-a100");
  ReferenceChoice absent = ChooseReference(ids, std::string("h100"));
  CHECK(absent.id == "amd-mi250");
  REQUIRE(absent.note.has_value());
  CHECK(absent.note->find("h100") != std::string::npos);
  CHECK_NOTHROW(RequirePlatform("--reference-platform", "nvidia-a100", ids, "results"));
  try {
    RequirePlatform("--reference-platform", "h100", ids, "results");
    FAIL("no error for an unknown platform");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("--reference-platform 'h100'") != std::string::npos);
    CHECK(what.find("amd-mi250, cpu-x86_64-2c, nvidia-a100") != std::string::npos);
  }
}

TEST_CASE("AggregateBuild compares every other platform with the reference") {
  BuildResults b;
  b.id = "b1";
  for (const char* id : {"p-b", "p-a", "p-c"}) {
    PlatformResults p;
    p.manifest = Plat(id, "CPU", "Xeon");
    p.runs.push_back(Run(id, "m", "eval", id == std::string("p-a") ? 2.0 : 4.0));
    b.platforms.push_back(std::move(p));
  }
  const PaperTable2 no_paper;
  BuildView v = AggregateBuild(b, no_paper);
  CHECK(v.reference_platform == "p-a");  // the first in sorted order, not in load order
  REQUIRE(v.platform_ratios.size() == 2);
  CHECK(v.platform_ratios[0].other == "p-b");
  CHECK(v.platform_ratios[1].other == "p-c");
  CHECK(*v.platform_ratios[0].rows.at(0).ratio == doctest::Approx(2.0));
  BuildView w = AggregateBuild(b, no_paper, std::string("p-c"));
  CHECK(w.reference_platform == "p-c");
  CHECK(w.platform_ratios[0].other == "p-a");
  CHECK(*w.platform_ratios[0].rows.at(0).ratio == doctest::Approx(0.5));
  b.platforms.resize(1);
  CHECK(AggregateBuild(b, no_paper).platform_ratios.empty());  // one platform: nothing to compare
}

TEST_CASE("a platform ratio involving a noisy run says so, in the row, the summary and the JSON") {
  Manifest ref = Plat("cpu-a", "CPU", "Synthetic CPU"), other = Plat("cpu-b", "CPU", "Synthetic CPU");
  std::vector<core::RunResult> a = {Run("cpu-a", "resnet50", "train", 10), Run("cpu-a", "bert", "train", 10)};
  std::vector<core::RunResult> b = {Run("cpu-b", "resnet50", "train", 20), Run("cpu-b", "bert", "train", 5)};
  core::SystemLoad busy;
  busy.window_s = 1;
  busy.cpus = 2;
  busy.outside_cpu_cores = 1.7;
  busy.resolution_cores = 0.02;
  b[0].system_load = busy;
  PlatformRatios r = ComparePlatforms(ref, Ptrs(a), other, Ptrs(b));
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].model == "bert");
  CHECK(r.rows[0].noisy.empty());
  CHECK(r.rows[1].noisy == "cpu-b run noisy: other processes used 1.7 cores");
  CHECK(RatioNote(r.rows[1], r.reference, r.other) == "cpu-b run noisy: other processes used 1.7 cores");
  REQUIRE(r.summaries.size() == 1);
  CHECK(r.summaries[0].noisy == 1);
  const auto j = ToJson(r);
  CHECK(j["rows"][0]["noisy"].is_null());
  CHECK(j["rows"][1]["noisy"] == "cpu-b run noisy: other processes used 1.7 cores");
  CHECK(j["summaries"][0]["noisy"] == 1);
}
