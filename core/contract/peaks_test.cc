#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/contract/peaks.h"
#include "core/io/json_io.h"

using namespace torchgauge::core;

namespace {
ProbeResult Sample() {
  ProbeResult p;
  p.threads = 2;
  p.measured_at = "2026-11-23T05:00:00Z";
  p.matmul.push_back({"fp32", "ok", std::nullopt, 2048, 5, 100.0, 0.17});
  p.matmul.push_back({"bf16", "ok", std::nullopt, 2048, 5, 50.0, 0.34});
  p.matmul.push_back({"fp16", "unsupported", "no fp16 matmul kernel on this CPU", std::nullopt, std::nullopt,
                      std::nullopt, std::nullopt});
  p.triad = TriadPeak{33554432, "float32", 3.0 * 33554432 * 4, 33554432, 5, 40.0, 10.0};
  return p;
}
}  // namespace

TEST_CASE("a run's precision is set against the matching measured peak") {
  auto p = Sample();
  CHECK(PeakForPrecision(p, "fp32")->precision == "fp32");
  CHECK(PeakForPrecision(p, "default")->precision == "fp32");
  CHECK(PeakForPrecision(p, "tf32")->precision == "fp32");  // no tf32 probe: the fp32 one
  CHECK(PeakForPrecision(p, "amp-bf16")->precision == "bf16");
  CHECK(PeakForPrecision(p, "fp16") == nullptr);  // unsupported is not a peak
  CHECK(PeakForPrecision(p, "int8") == nullptr);
  p.matmul.push_back({"tf32", "ok", std::nullopt, 8192, 5, 1.0, 400.0});
  CHECK(PeakForPrecision(p, "tf32")->precision == "tf32");
  // CUDA's default precision lets cuDNN convolutions use TF32: measured
  // against the TF32 peak, not the strict fp32 one (issue 36, item 11).
  CHECK(PeakForPrecision(p, "default")->precision == "fp32");
  CHECK(PeakForPrecision(p, "default", /*tf32_allowed=*/true)->precision == "tf32");
  CHECK(PeakForPrecision(p, "fp32", /*tf32_allowed=*/true)->precision == "tf32");
  CHECK(PeakForPrecision(p, "bf16", /*tf32_allowed=*/true)->precision == "bf16");

  CHECK(*PercentOfPeak(p, "fp32", 0.085) == doctest::Approx(50.0));
  CHECK(!PercentOfPeak(p, "fp32", std::nullopt));
  CHECK(!PercentOfPeak(p, "fp16", 0.1));
}

TEST_CASE("peaks JSON round trip; the label is part of the contract") {
  auto p = Sample();
  p.kernels = KernelPeaks{"raw CUDA kernels (nvcc)", 3000.0, 2900.0, 3100.0, std::nullopt};
  auto j = ToJson(p);
  CHECK(j.at("label") == "attainable through LibTorch");
  CHECK(j.at("matmul")[2].at("tflops").is_null());
  CHECK(j.at("kernels").at("fma_fp32_tflops").is_null());
  auto back = ProbeResultFromJson(j, "manifest.json");
  CHECK(ToJson(back) == j);
  CHECK(back.matmul[2].reason == "no fp16 matmul kernel on this CPU");

  auto no_triad = ToJson(ProbeResult{});
  CHECK(no_triad.at("triad").is_null());
  CHECK(!ProbeResultFromJson(no_triad, "m.json").triad);
}

TEST_CASE("bad peaks name the file and field") {
  auto j = ToJson(Sample());
  auto expect_field = [](const nlohmann::json& doc, const std::string& field) {
    try {
      ProbeResultFromJson(doc, "manifest.json");
      FAIL("expected a FileError for " << field);
    } catch (const FileError& e) {
      CHECK(e.field() == field);
      CHECK(std::string(e.what()).find("manifest.json") != std::string::npos);
    }
  };
  auto bad = j;
  bad["label"] = "hardware peak";
  expect_field(bad, "peaks.label");
  bad = j;
  bad["matmul"][1]["precision"] = "int8";
  expect_field(bad, "peaks.matmul[1].precision");
  bad = j;
  bad["matmul"][0]["tflops"] = nullptr;
  expect_field(bad, "peaks.matmul[0].tflops");
  bad = j;
  bad["triad"]["gb_per_s"] = "fast";
  expect_field(bad, "peaks.triad.gb_per_s");
  bad = j;
  bad.erase("triad");
  expect_field(bad, "peaks.triad");
}

TEST_CASE("peaks integers out of range are refused, not wrapped or truncated") {
  nlohmann::json j = ToJson(Sample());
  j["matmul"][0]["n"] = static_cast<uint64_t>(INT64_MAX) + 1;  // would wrap to a negative int64
  CHECK_THROWS_WITH_AS(ProbeResultFromJson(j, "m.json"), doctest::Contains("peaks.matmul[0].n"), FileError);
  j = ToJson(Sample());
  j["threads"] = int64_t{1} << 33;  // would truncate to 0 in an int
  CHECK_THROWS_WITH_AS(ProbeResultFromJson(j, "m.json"), doctest::Contains("threads"), FileError);
  j = ToJson(Sample());
  j["matmul"][0]["repeats"] = -(int64_t{1} << 40);
  CHECK_THROWS_WITH_AS(ProbeResultFromJson(j, "m.json"), doctest::Contains("repeats"), FileError);
}
