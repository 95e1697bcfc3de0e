#include "core/contract/peaks.h"

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"

namespace torchgauge::core {

using nlohmann::json;

const MatmulPeak* PeakForPrecision(const ProbeResult& peaks, std::string_view run_precision, bool tf32_allowed) {
  auto find = [&](std::string_view p) -> const MatmulPeak* {
    for (const auto& m : peaks.matmul) {
      if (m.precision == p && m.status == "ok" && m.tflops) return &m;
    }
    return nullptr;
  };
  if ((run_precision == "fp32" || run_precision == "default") && !tf32_allowed) return find("fp32");
  if (run_precision == "tf32" || run_precision == "fp32" || run_precision == "default") {
    const MatmulPeak* tf32 = find("tf32");
    return tf32 ? tf32 : find("fp32");
  }
  if (run_precision == "bf16" || run_precision == "amp-bf16") return find("bf16");
  if (run_precision == "fp16" || run_precision == "amp-fp16") return find("fp16");
  return nullptr;
}

std::optional<double> PercentOfPeak(const ProbeResult& peaks, std::string_view run_precision,
                                    std::optional<double> achieved_tflops, bool tf32_allowed) {
  const MatmulPeak* peak = PeakForPrecision(peaks, run_precision, tf32_allowed);
  if (!peak || !achieved_tflops || !(*peak->tflops > 0)) return std::nullopt;
  return *achieved_tflops / *peak->tflops * 100.0;
}

json ToJson(const ProbeResult& p) {
  json matmul = json::array();
  for (const auto& m : p.matmul) {
    matmul.push_back({{"precision", m.precision},
                      {"status", m.status},
                      {"reason", Opt(m.reason)},
                      {"n", Opt(m.n)},
                      {"repeats", Opt(m.repeats)},
                      {"best_ms", Opt(m.best_ms)},
                      {"tflops", Opt(m.tflops)}});
  }
  json triad = nullptr;
  if (p.triad) {
    const auto& t = *p.triad;
    triad = {{"elements", t.elements},        {"dtype", t.dtype},          {"bytes_moved", t.bytes_moved},
             {"llc_bytes", Opt(t.llc_bytes)}, {"repeats", Opt(t.repeats)}, {"best_ms", t.best_ms},
             {"gb_per_s", t.gb_per_s}};
  }
  json kernels = nullptr;
  if (p.kernels) {
    const auto& k = *p.kernels;
    kernels = {{"label", k.label},
               {"copy_gb_per_s", Opt(k.copy_gb_per_s)},
               {"triad_gb_per_s", Opt(k.triad_gb_per_s)},
               {"memcpy_d2d_gb_per_s", Opt(k.memcpy_d2d_gb_per_s)},
               {"fma_fp32_tflops", Opt(k.fma_fp32_tflops)}};
  }
  return {{"label", p.label}, {"device", p.device}, {"threads", Opt(p.threads)}, {"measured_at", Opt(p.measured_at)},
          {"matmul", matmul}, {"triad", triad},     {"kernels", kernels}};
}

namespace {

MatmulPeak ReadMatmul(const JsonFields& m) {
  static constexpr const char* kPrecisions[] = {"fp32", "tf32", "bf16", "fp16"};
  static constexpr const char* kStatuses[] = {"ok", "unsupported"};
  MatmulPeak mp;
  mp.precision = m.OneOf("precision", kPrecisions);
  mp.status = m.OneOf("status", kStatuses);
  mp.reason = m.GetOpt<std::string>("reason");
  mp.n = m.GetOpt<int64_t>("n");
  mp.repeats = m.GetOpt<int>("repeats");
  mp.best_ms = m.GetOpt<double>("best_ms");
  mp.tflops = m.GetOpt<double>("tflops");
  if (mp.status == "ok" && !mp.tflops) m.Fail("tflops", "an ok peak needs a number");
  return mp;
}

TriadPeak ReadTriad(const JsonFields& t) {
  TriadPeak tp;
  tp.elements = t.Get<int64_t>("elements");
  tp.dtype = t.GetOr("dtype", tp.dtype);
  tp.bytes_moved = t.Get<double>("bytes_moved");
  tp.llc_bytes = t.GetOpt<int64_t>("llc_bytes");
  tp.repeats = t.GetOpt<int>("repeats");
  tp.best_ms = t.Get<double>("best_ms");
  tp.gb_per_s = t.Get<double>("gb_per_s");
  return tp;
}

KernelPeaks ReadKernels(const JsonFields& k) {
  KernelPeaks kp;
  kp.label = k.GetOr("label", kp.label);
  kp.copy_gb_per_s = k.GetOpt<double>("copy_gb_per_s");
  kp.triad_gb_per_s = k.GetOpt<double>("triad_gb_per_s");
  kp.memcpy_d2d_gb_per_s = k.GetOpt<double>("memcpy_d2d_gb_per_s");
  kp.fma_fp32_tflops = k.GetOpt<double>("fma_fp32_tflops");
  return kp;
}

}  // namespace

ProbeResult ProbeResultFromJson(const json& j, const std::filesystem::path& file) {
  const JsonFields in(j, file, "peaks");
  ProbeResult p;
  p.label = in.Get<std::string>("label");
  if (p.label != kPeaksLabel) in.Fail("label", std::string("must be \"") + kPeaksLabel + "\"");
  p.device = in.Get<std::string>("device");
  p.threads = in.GetOpt<int>("threads");
  p.measured_at = in.GetOpt<std::string>("measured_at");
  for (const JsonFields& m : in.Objects("matmul")) p.matmul.push_back(ReadMatmul(m));
  // "triad" is required, null where the probe could not run it.
  if (!in.Find("triad")) in.Fail("triad", "missing required field");
  if (auto t = in.OptObject("triad")) p.triad = ReadTriad(*t);
  if (auto k = in.OptObject("kernels")) p.kernels = ReadKernels(*k);
  return p;
}

}  // namespace torchgauge::core
