#include "core/peaks.h"

#include <nlohmann/json.hpp>

#include "core/json_io.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Field access for one object of the peaks document, naming the dotted path.
class Fields {
 public:
  Fields(const json& j, const std::filesystem::path& file, std::string path)
      : j_(j), file_(file), path_(std::move(path)) {
    if (!j_.is_object()) throw FileError(file_, path_, "expected an object");
  }
  bool Has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  [[noreturn]] void Fail(const std::string& key, const std::string& message) const {
    throw FileError(file_, path_ + "." + key, message);
  }
  std::string String(const char* key) const {
    if (!Has(key) || !j_.at(key).is_string()) Fail(key, "missing or not a string");
    return j_.at(key).get<std::string>();
  }
  double Number(const char* key) const {
    if (!Has(key) || !j_.at(key).is_number()) Fail(key, "missing or not a number");
    return j_.at(key).get<double>();
  }
  int64_t Integer(const char* key) const {
    if (!Has(key) || !j_.at(key).is_number_integer()) Fail(key, "missing or not an integer");
    // An unsigned above INT64_MAX would wrap to a negative number.
    if (j_.at(key).is_number_unsigned() && j_.at(key).get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      Fail(key, "out of range");
    }
    return j_.at(key).get<int64_t>();
  }
  // An integer field held in an int (threads, repeats).
  std::optional<int> OptInt(const char* key) const {
    if (!Has(key)) return std::nullopt;
    const int64_t v = Integer(key);
    if (v < INT32_MIN || v > INT32_MAX) Fail(key, "out of range");
    return static_cast<int>(v);
  }
  std::optional<std::string> OptString(const char* key) const {
    return Has(key) ? std::optional<std::string>(String(key)) : std::nullopt;
  }
  std::optional<double> OptNumber(const char* key) const {
    return Has(key) ? std::optional<double>(Number(key)) : std::nullopt;
  }
  std::optional<int64_t> OptInteger(const char* key) const {
    return Has(key) ? std::optional<int64_t>(Integer(key)) : std::nullopt;
  }
  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  const std::filesystem::path& file_;
  std::string path_;
};

}  // namespace

const MatmulPeak* PeakForPrecision(const ProbeResult& peaks, std::string_view run_precision) {
  auto find = [&](std::string_view p) -> const MatmulPeak* {
    for (const auto& m : peaks.matmul) {
      if (m.precision == p && m.status == "ok" && m.tflops) return &m;
    }
    return nullptr;
  };
  if (run_precision == "fp32" || run_precision == "default") return find("fp32");
  if (run_precision == "tf32") {
    const MatmulPeak* tf32 = find("tf32");
    return tf32 ? tf32 : find("fp32");
  }
  if (run_precision == "bf16" || run_precision == "amp-bf16") return find("bf16");
  if (run_precision == "fp16" || run_precision == "amp-fp16") return find("fp16");
  return nullptr;
}

std::optional<double> PercentOfPeak(const ProbeResult& peaks, std::string_view run_precision,
                                    std::optional<double> achieved_tflops) {
  const MatmulPeak* peak = PeakForPrecision(peaks, run_precision);
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

ProbeResult ProbeResultFromJson(const json& j, const std::filesystem::path& file) {
  Fields in(j, file, "peaks");
  ProbeResult p;
  p.label = in.String("label");
  if (p.label != kPeaksLabel) in.Fail("label", std::string("must be \"") + kPeaksLabel + "\"");
  p.device = in.String("device");
  p.threads = in.OptInt("threads");
  p.measured_at = in.OptString("measured_at");
  if (!j.contains("matmul") || !j.at("matmul").is_array()) in.Fail("matmul", "missing or not an array");
  const json& list = j.at("matmul");
  for (size_t i = 0; i < list.size(); ++i) {
    Fields m(list[i], file, "peaks.matmul[" + std::to_string(i) + "]");
    MatmulPeak mp;
    mp.precision = m.String("precision");
    if (mp.precision != "fp32" && mp.precision != "tf32" && mp.precision != "bf16" && mp.precision != "fp16") {
      m.Fail("precision", "value '" + mp.precision + "' is not one of: fp32, tf32, bf16, fp16");
    }
    mp.status = m.String("status");
    if (mp.status != "ok" && mp.status != "unsupported") m.Fail("status", "must be ok or unsupported");
    mp.reason = m.OptString("reason");
    mp.n = m.OptInteger("n");
    mp.repeats = m.OptInt("repeats");
    mp.best_ms = m.OptNumber("best_ms");
    mp.tflops = m.OptNumber("tflops");
    if (mp.status == "ok" && !mp.tflops) m.Fail("tflops", "an ok peak needs a number");
    p.matmul.push_back(std::move(mp));
  }
  if (in.Has("triad")) {
    Fields t(j.at("triad"), file, "peaks.triad");
    TriadPeak tp;
    tp.elements = t.Integer("elements");
    if (t.Has("dtype")) tp.dtype = t.String("dtype");
    tp.bytes_moved = t.Number("bytes_moved");
    tp.llc_bytes = t.OptInteger("llc_bytes");
    tp.repeats = t.OptInt("repeats");
    tp.best_ms = t.Number("best_ms");
    tp.gb_per_s = t.Number("gb_per_s");
    p.triad = tp;
  } else if (!j.contains("triad")) {
    in.Fail("triad", "missing required field");
  }
  if (in.Has("kernels")) {
    Fields k(j.at("kernels"), file, "peaks.kernels");
    KernelPeaks kp;
    if (k.Has("label")) kp.label = k.String("label");
    kp.copy_gb_per_s = k.OptNumber("copy_gb_per_s");
    kp.triad_gb_per_s = k.OptNumber("triad_gb_per_s");
    kp.memcpy_d2d_gb_per_s = k.OptNumber("memcpy_d2d_gb_per_s");
    kp.fma_fp32_tflops = k.OptNumber("fma_fp32_tflops");
    p.kernels = kp;
  }
  return p;
}

}  // namespace torchgauge::core
