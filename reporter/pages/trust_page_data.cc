// The build page's trust signals (page_data.h): a platform's measured peaks
// and each run's share of them, the host breakdown's note (what it counted as
// data movement, what the profiler itself costs), and the noisy-run warnings
// and badges. Kept apart from build_page_data.cc so the figures and tables
// stay readable there.
#include <nlohmann/json.hpp>

#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/pages/page_data.h"

namespace torchgauge::reporter {

namespace {

mu::data PeakRow(const std::string& what, const std::string& value, const std::string& detail) {
  mu::data r;
  Set(r, "what", what);
  Set(r, "value", value);
  Set(r, "detail", detail.empty() ? Dash() : detail);
  return r;
}

std::string MatmulDetail(const core::MatmulPeak& m) {
  std::string d;
  if (m.n) d = "mm " + std::to_string(*m.n) + "³";
  if (m.repeats) d += (d.empty() ? "" : ", ") + std::string("best of ") + std::to_string(*m.repeats);
  if (m.best_ms) d += (d.empty() ? "" : ", ") + Ms(*m.best_ms) + " ms";
  return d;
}

void AppendKernelRows(mu::data& rows, const core::KernelPeaks& k) {
  const std::pair<const char*, const std::optional<double>*> gbs[] = {
      {"copy", &k.copy_gb_per_s},
      {"triad", &k.triad_gb_per_s},
      {"cudaMemcpy device to device", &k.memcpy_d2d_gb_per_s}};
  for (const auto& [name, v] : gbs) {
    if (*v) Append(rows, PeakRow(k.label + ": " + name, Sig3(**v) + " GB/s", ""));
  }
  if (k.fma_fp32_tflops) Append(rows, PeakRow(k.label + ": FMA fp32", Sig3(*k.fma_fp32_tflops) + " TFLOP/s", ""));
}

mu::data PeakRows(const core::ProbeResult& p) {
  mu::data rows = List();
  for (const auto& m : p.matmul) {
    const std::string what = "Matmul " + m.precision;
    if (m.status != "ok" || !m.tflops) {
      Append(rows, PeakRow(what, m.status == "ok" ? Dash() : m.status, m.reason.value_or("")));
    } else {
      Append(rows, PeakRow(what, Sig3(*m.tflops) + " TFLOP/s", MatmulDetail(m)));
    }
  }
  if (p.triad) {
    const auto& t = *p.triad;
    std::string detail = std::to_string(t.elements) + " " + t.dtype + " elements";
    if (t.llc_bytes && *t.llc_bytes > 0) {
      detail += ", " + Num(t.bytes_moved / 3.0 / static_cast<double>(*t.llc_bytes), "%.1f") +
                "× the last-level cache per array";
    }
    if (t.repeats) detail += ", best of " + std::to_string(*t.repeats);
    Append(rows, PeakRow("Triad (a = b + s·c)", Sig3(t.gb_per_s) + " GB/s", detail));
  }
  if (p.kernels) AppendKernelRows(rows, *p.kernels);
  return rows;
}

}  // namespace

mu::data PeaksData(const Manifest& m) {
  mu::data d;
  Set(d, "probed", m.peaks.has_value());
  if (!m.peaks) return d;
  const auto& p = *m.peaks;
  Set(d, "label", p.label);
  Set(d, "device", p.device);
  Set(d, "threads", p.threads ? std::to_string(*p.threads) : std::string("not recorded"));
  Set(d, "measured_at", p.measured_at.value_or("not recorded"));
  Set(d, "rows", PeakRows(p));
  return d;
}

mu::data PeakSummaryRows(const PlatformView& p, const PaperTable2& paper) {
  mu::data rows = List();
  for (const auto& s : p.peak_summaries) {
    mu::data r;
    Set(r, "domain", s.domain == "all" ? std::string("Suite (all runs)") : DomainLabel(s.domain, paper));
    Set(r, "mode", s.mode);
    Set(r, "backend", s.backend);
    Set(r, "basis", s.basis);
    Set(r, "runs", std::to_string(s.runs));
    Set(r, "median", Num(s.median_percent, "%.1f"));
    Set(r, "max", Num(s.max_percent, "%.1f"));
    Append(rows, std::move(r));
  }
  return rows;
}

void SetPeakShare(mu::data& row, const core::RunResult& r, const Manifest& m) {
  const PeakShare s = PeakShareOf(r, m);
  if (s.percent) {
    Set(row, "peak_pct", Num(*s.percent, "%.1f") + " (" + s.basis + ")");
  } else {
    Set(row, "peak_pct", r.status == "ok" ? s.why_not : Dash());
  }
}

void SetNoise(mu::data& row, const core::RunResult& r) {
  const auto v = NoisyVerdict(r);
  Set(row, "noisy", v.has_value());
  if (!v) return;
  Set(row, "noise_reason", v->reason);
  // Built here, not in the template: the reason goes into an attribute.
  Set(row, "noisy_html", "<span class=\"noisy\" title=\"" + HtmlEscape(v->reason) + "\">noisy</span>");
}

mu::data HostNoteData(const PlatformView& p) {
  mu::data d;
  const HostBreakdownNote& n = p.host_note;
  std::string ops;
  for (const auto& op : n.data_movement_ops) ops += (ops.empty() ? "" : ", ") + op;
  Set(d, "ops", ops.empty() ? std::string("not recorded") : ops);
  Set(d, "overhead",
      n.profiler_overhead_per_op_us
          ? Num(*n.profiler_overhead_per_op_us, "%.2f") + " µs per recorded op (median over " +
                std::to_string(n.overhead_runs) + " runs)"
          : std::string("not measured"));
  return d;
}

mu::data NoiseWarnings(const BuildView& v) {
  mu::data list = List();
  for (const auto& p : v.platforms) {
    if (p.noise_warning.empty()) continue;
    mu::data w;
    Set(w, "platform", p.id);
    Set(w, "warning", p.noise_warning);
    Append(list, std::move(w));
  }
  return list;
}

}  // namespace torchgauge::reporter
