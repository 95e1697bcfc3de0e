#include "reporter/results/platform_ratio.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/stats/stats.h"
#include "reporter/results/aggregate.h"

using nlohmann::json;

namespace torchgauge::reporter {

const char* PrecisionCheckName(PrecisionCheck c) {
  switch (c) {
    case PrecisionCheck::kSame:
      return "same";
    case PrecisionCheck::kDiffers:
      return "differs";
    case PrecisionCheck::kUnknown:
      break;
  }
  return "not recorded";
}

std::optional<std::string> EffectivePrecision(const core::RunResult& r) {
  if (!r.precision_flags) return std::nullopt;
  const core::PrecisionFlags& f = *r.precision_flags;
  std::string s = f.param_dtype.empty() ? "float32" : f.param_dtype;
  if (f.autocast_enabled) return s + " + autocast " + f.autocast_dtype.value_or("(dtype not recorded)");
  const bool on_cpu = r.device.rfind("cpu", 0) == 0;
  if (s != "float32" || on_cpu) return s;
  std::vector<std::string> tf32;
  if (f.matmul_allow_tf32) tf32.push_back("matmul");
  if (f.cudnn_enabled && f.cudnn_allow_tf32) tf32.push_back("conv");
  if (tf32.empty()) return s;
  s += " + TF32 (" + tf32[0];
  for (size_t i = 1; i < tf32.size(); ++i) s += ", " + tf32[i];
  return s + ")";
}

std::string PrecisionDiffersText(const RatioSummary& s) {
  std::string t = std::to_string(s.precision_differs);
  if (s.precision_unknown > 0) t += " (" + std::to_string(s.precision_unknown) + " not recorded)";
  return t;
}

std::vector<std::string> RatioRowLabels(const std::vector<RatioRow>& rows) {
  std::map<std::string, std::set<std::pair<std::string, std::string>>> configs;
  for (const auto& r : rows) configs[r.model].insert({r.backend, r.precision});
  std::vector<std::string> labels;
  for (const auto& r : rows) {
    const bool plain = configs[r.model].size() == 1 && r.backend == "eager";
    labels.push_back(plain ? r.model : r.model + " (" + r.backend + ", " + r.precision + ")");
  }
  return labels;
}

std::string RatioNote(const RatioRow& r, const std::string& reference, const std::string& other) {
  std::vector<std::string> parts;
  if (!r.reference_ms) parts.push_back(r.reference_status + " on " + reference);
  if (!r.other_ms) parts.push_back(r.other_status + " on " + other);
  if (r.precision_check == PrecisionCheck::kDiffers) parts.push_back("precision differs");
  if (!r.noisy.empty()) parts.push_back(r.noisy);
  std::string note;
  for (const auto& p : parts) note += (note.empty() ? "" : "; ") + p;
  return note;
}

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Timed(const core::RunResult& r) { return r.status == "ok" && r.timing && r.timing->median_ms > 0; }

using Key = std::tuple<std::string, std::string, std::string, std::string, int64_t>;
Key KeyOf(const core::RunResult& r) { return {r.model.id, r.mode, r.backend, r.precision, r.batch_size}; }

RatioRow Pair(const core::RunResult& ref, const core::RunResult& other) {
  RatioRow row;
  row.model = ref.model.id;
  row.mode = ref.mode;
  row.backend = ref.backend;
  row.precision = ref.precision;
  row.batch_size = ref.batch_size;
  row.reference_status = ref.status;
  row.other_status = other.status;
  row.noisy = NoisySides(ref, ref.platform_id, other, other.platform_id);
  if (Timed(ref)) row.reference_ms = ref.timing->median_ms;
  if (Timed(other)) row.other_ms = other.timing->median_ms;
  if (row.reference_ms && row.other_ms) row.ratio = *row.other_ms / *row.reference_ms;
  row.reference_precision = EffectivePrecision(ref);
  row.other_precision = EffectivePrecision(other);
  if (row.reference_precision && row.other_precision) {
    row.precision_check =
        *row.reference_precision == *row.other_precision ? PrecisionCheck::kSame : PrecisionCheck::kDiffers;
  }
  return row;
}

std::vector<RatioSummary> Summaries(const std::vector<RatioRow>& rows) {
  struct Acc {
    std::vector<double> ratios;
    int differs = 0, unknown = 0, noisy = 0;
  };
  std::map<std::string, Acc> by_mode;
  for (const auto& r : rows) {
    if (!r.ratio) continue;
    Acc& a = by_mode[r.mode];
    a.ratios.push_back(*r.ratio);
    if (r.precision_check == PrecisionCheck::kDiffers) a.differs++;
    if (r.precision_check == PrecisionCheck::kUnknown) a.unknown++;
    if (!r.noisy.empty()) a.noisy++;
  }
  std::vector<RatioSummary> out;
  for (const auto& [mode, a] : by_mode) {
    out.push_back({mode, static_cast<int>(a.ratios.size()), core::GeoMean(a.ratios), a.differs, a.unknown, a.noisy});
  }
  // The paper's order: training, then inference.
  auto rank = [](const std::string& m) { return m == "train" ? 0 : m == "eval" ? 1 : 2; };
  std::stable_sort(out.begin(), out.end(),
                   [&](const RatioSummary& a, const RatioSummary& b) { return rank(a.mode) < rank(b.mode); });
  return out;
}

std::string Join(const std::set<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id;
  return s.empty() ? "none" : s;
}

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json Opt(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::string DeviceLabel(const Manifest& m) {
  if (!m.present || m.device_name.empty()) return m.platform_id;
  const std::string name = Lower(m.device_name), vendor = Lower(m.vendor);
  // A CPU's name is its model ("Intel(R) Xeon(R) ..."), which says enough.
  if (vendor.empty() || vendor == "cpu" || name.rfind(vendor, 0) == 0) return m.device_name;
  return m.vendor + " " + m.device_name;
}

std::string RatioTitle(const Manifest& reference, const Manifest& other) {
  const bool vendors_differ = reference.present && other.present && !reference.vendor.empty() &&
                              !other.vendor.empty() && reference.vendor != other.vendor;
  const std::string a = vendors_differ ? DeviceLabel(reference) : reference.platform_id;
  const std::string b = vendors_differ ? DeviceLabel(other) : other.platform_id;
  return a + " vs " + b + ": time ratio";
}

PlatformRatios ComparePlatforms(const Manifest& reference, const std::vector<const core::RunResult*>& reference_runs,
                                const Manifest& other, const std::vector<const core::RunResult*>& other_runs) {
  PlatformRatios out;
  out.reference = reference.platform_id;
  out.other = other.platform_id;
  out.reference_label = DeviceLabel(reference);
  out.other_label = DeviceLabel(other);
  out.title = RatioTitle(reference, other);
  std::map<Key, const core::RunResult*> ref_by_key;
  for (const auto* r : reference_runs) ref_by_key[KeyOf(*r)] = r;
  std::set<Key> matched;
  for (const auto* r : other_runs) {
    auto it = ref_by_key.find(KeyOf(*r));
    if (it == ref_by_key.end()) {
      out.only_other++;
      continue;
    }
    matched.insert(it->first);
    out.rows.push_back(Pair(*it->second, *r));
  }
  out.only_reference = static_cast<int>(ref_by_key.size() - matched.size());
  std::sort(out.rows.begin(), out.rows.end(), [](const RatioRow& a, const RatioRow& b) {
    return std::tie(a.model, a.mode, a.backend, a.precision, a.batch_size) <
           std::tie(b.model, b.mode, b.backend, b.precision, b.batch_size);
  });
  out.summaries = Summaries(out.rows);
  return out;
}

void RequirePlatform(const std::string& what, const std::string& id, const std::set<std::string>& available,
                     const std::string& where) {
  if (available.count(id)) return;
  throw std::invalid_argument(what + " '" + id + "': no such platform in " + where + " (available: " + Join(available) +
                              ")");
}

ReferenceChoice ChooseReference(const std::set<std::string>& ids, const std::optional<std::string>& wanted) {
  if (ids.empty()) return {};
  if (!wanted || ids.count(*wanted)) return {wanted.value_or(*ids.begin()), std::nullopt};
  return {*ids.begin(),
          *wanted + " has no results in this build; the reference is the first platform id, " + *ids.begin()};
}

json ToJson(const PlatformRatios& r) {
  json rows = json::array();
  for (const auto& x : r.rows) {
    rows.push_back({{"model", x.model},
                    {"mode", x.mode},
                    {"backend", x.backend},
                    {"precision", x.precision},
                    {"batch_size", x.batch_size},
                    {"reference_status", x.reference_status},
                    {"other_status", x.other_status},
                    {"reference_ms", Opt(x.reference_ms)},
                    {"other_ms", Opt(x.other_ms)},
                    {"ratio", Opt(x.ratio)},
                    {"reference_precision", Opt(x.reference_precision)},
                    {"other_precision", Opt(x.other_precision)},
                    {"precision_check", PrecisionCheckName(x.precision_check)},
                    {"noisy", x.noisy.empty() ? json(nullptr) : json(x.noisy)}});
  }
  json summaries = json::array();
  for (const auto& s : r.summaries) {
    summaries.push_back({{"mode", s.mode},
                         {"pairs", s.pairs},
                         {"geomean", s.geomean},
                         {"precision_differs", s.precision_differs},
                         {"precision_unknown", s.precision_unknown},
                         {"noisy", s.noisy}});
  }
  return {{"kind", "torchgauge.platform_ratios"},
          {"reference", r.reference},
          {"other", r.other},
          {"reference_device", r.reference_label},
          {"other_device", r.other_label},
          {"title", r.title},
          {"ratio", "other / reference median step time"},
          {"rows", rows},
          {"summaries", summaries},
          {"only_reference", r.only_reference},
          {"only_other", r.only_other}};
}

}  // namespace torchgauge::reporter
