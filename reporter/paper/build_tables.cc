#include "reporter/paper/build_tables.h"

#include <algorithm>

#include "core/stats/stats.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/paths.h"
#include "reporter/output/writer.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

namespace {

// The % of peak and noise columns of a run (results/aggregate.h's PeakShareOf and NoisyVerdict).
std::string TrustCsvFields(const core::RunResult& r, const Manifest& m) {
  const PeakShare s = PeakShareOf(r, m);
  const auto noise = NoisyVerdict(r);
  return (s.percent ? Num(*s.percent, "%.6g") : "") + "," + (s.percent ? s.basis : "") + "," +
         (noise ? "true" : "false") + "," + CsvField(noise ? noise->reason : "");
}

// A generative run's TTFT, TPOT median and p90 and tokens per second
// (core/stats/generation.h); empty fields for the other runs.
std::string GenerationCsvFields(const core::RunResult& r) {
  if (!r.generation) return ",,,";
  const core::Generation& g = *r.generation;
  return Num(g.ttft_ms, "%.6g") + "," + Num(g.tpot_median_ms, "%.6g") + "," + Num(g.tpot_p90_ms, "%.6g") + "," +
         Num(g.tokens_per_s, "%.6g");
}

// A counted run's median instructions and estimated cycles per step
// (core/stats/counted.h); empty fields for the other runs.
std::string CountedCsvFields(const core::RunResult& r) {
  if (!r.counted) return ",";
  return Num(core::Quantile(core::CountedInstructions(*r.counted), 0.5), "%.0f") + "," +
         Num(core::Quantile(core::CountedCycles(*r.counted), 0.5), "%.0f");
}

std::string RunCsvRow(const core::RunResult& r, const Manifest& m) {
  auto tf = Tflops(r);
  const bool t = r.timing.has_value();
  return CsvField(r.model.id) + "," + CsvField(r.model.domain) + "," + r.mode + "," + r.backend + "," + r.precision +
         "," + std::to_string(r.batch_size) + "," + (t ? Num(r.timing->median_ms, "%.6g") : "") + "," +
         (t && r.timing->throughput_per_s ? Num(*r.timing->throughput_per_s, "%.6g") : "") + "," +
         (t ? Num(r.timing->cov, "%.6g") : "") + "," +
         (r.memory && r.memory->cpu_peak_rss_bytes ? MiB(r.memory->cpu_peak_rss_bytes) : "") + "," +
         (r.memory && r.memory->gpu_peak_allocated_bytes ? MiB(r.memory->gpu_peak_allocated_bytes) : "") + "," +
         (tf ? Num(*tf, "%.4g") : "") + "," + TrustCsvFields(r, m) + "," + r.status + "," +
         CsvField(r.reason.value_or("")) + "," + GenerationCsvFields(r) + "," + CountedCsvFields(r) + "\n";
}

std::string RunTexRow(const core::RunResult& r, const Manifest& m) {
  auto tf = Tflops(r);
  const auto pct = PeakShareOf(r, m).percent;
  const bool t = r.timing.has_value();
  return TexEscape(r.model.id) + " & " + r.mode + " & " + r.backend + " & " + r.precision + " & " +
         std::to_string(r.batch_size) + " & " + (t ? Ms(r.timing->median_ms) : "--") + " & " +
         (t ? Pct(r.timing->cov) : "--") + " & " + (tf ? Sig3(*tf) : "--") + " & " + (pct ? Num(*pct, "%.1f") : "--") +
         " & " + r.status + (NoisyVerdict(r) ? " (noisy)" : "") + " \\\\\n";
}

// One mode's row of the Table 2 CSV.
std::string Table2CsvRow(const DomainBreakdown& d, bool train) {
  return std::string(train ? "train" : "eval") + "," + d.domain + "," + std::to_string(d.models) + "," +
         std::to_string(d.noisy_runs) + "," +
         (d.models ? Pct(d.active) + "," + Pct(d.movement) + "," + Pct(d.idle) : ",,") + "," +
         (d.paper ? Num(train ? d.paper->train_active : d.paper->eval_active, "%.1f") + "," +
                        Num(train ? d.paper->train_movement : d.paper->eval_movement, "%.1f") + "," +
                        Num(train ? d.paper->train_idle : d.paper->eval_idle, "%.1f")
                  : ",,") +
         "\n";
}

// One domain's row of the Table 2 tabular: train then eval, ours beside the paper's.
std::string Table2TexRow(const DomainBreakdown& tr, const DomainBreakdown& ev, const PaperTable2& paper) {
  auto cell = [](bool has, double v) { return has ? Pct(v) : std::string("--"); };
  auto pcell = [](const PaperRow* r, double PaperRow::*f) { return r ? Num(r->*f, "%.1f") : std::string("--"); };
  return TexEscape(DomainLabel(tr.domain, paper)) + " & " + cell(tr.models, tr.active) + " & " +
         pcell(tr.paper, &PaperRow::train_active) + " & " + cell(tr.models, tr.movement) + " & " +
         pcell(tr.paper, &PaperRow::train_movement) + " & " + cell(tr.models, tr.idle) + " & " +
         pcell(tr.paper, &PaperRow::train_idle) + " & " + cell(ev.models, ev.active) + " & " +
         pcell(ev.paper, &PaperRow::eval_active) + " & " + cell(ev.models, ev.movement) + " & " +
         pcell(ev.paper, &PaperRow::eval_movement) + " & " + cell(ev.models, ev.idle) + " & " +
         pcell(ev.paper, &PaperRow::eval_idle) + " \\\\\n";
}

void WriteTable(SiteWriter& w, const std::string& build, const std::string& name, const CsvTex& t) {
  w.Write(SitePath({Kind::kTable, build, name, "csv"}), t.csv);
  w.Write(SitePath({Kind::kTable, build, name, "tex"}), t.tex);
}

}  // namespace

CsvTex RunsTable(const std::string& build, const PlatformView& p) {
  CsvTex t;
  t.csv =
      "model,domain,mode,backend,precision,batch_size,median_ms,throughput_per_s,cov,cpu_peak_mib,gpu_peak_mib,tflops,"
      "percent_of_peak,peak_basis,noisy,noise_reason,status,reason,ttft_ms,tpot_median_ms,tpot_p90_ms,tokens_per_s,"
      "instructions,est_cycles\n";
  t.tex = "% " + TexEscape("Per-run results, build " + build + ", platform " + p.id) +
          "\n\\begin{tabular}{llllrrrrrl}\n\\hline\nModel & Mode & Backend & Precision & Batch & Median (ms) & CoV "
          "(\\%) & TFLOP/s & \\% of peak & Status \\\\\n\\hline\n";
  for (const auto* r : p.runs) {
    t.csv += RunCsvRow(*r, *p.manifest);
    t.tex += RunTexRow(*r, *p.manifest);
  }
  t.tex += "\\hline\n\\end{tabular}\n";
  return t;
}

// Our columns are named by the breakdown's source; the paper's always as its A100 GPU figures.
static std::string Table2Header(const PlatformView& p, const PaperTable2& paper, const std::string& build,
                                std::string* csv) {
  const bool host = p.breakdown_source == BreakdownSource::kHost;
  const BreakdownPartNames n = PartNames(p.breakdown_source);
  *csv = host ? "mode,domain,models,noisy_runs,host_compute_pct,host_data_movement_pct,host_outside_operators_pct,"
              : "mode,domain,models,noisy_runs,gpu_active_pct,data_movement_pct,gpu_idle_pct,";
  *csv += "paper_a100_gpu_active_pct,paper_a100_data_movement_pct,paper_a100_gpu_idle_pct\n";
  const std::string a = TexEscape(host ? "Compute" : "Active"), m = "Movement",
                    i = TexEscape(host ? "Outside ops" : "Idle");
  std::string cols = a + " & (A100 active) & " + m + " & (A100 movement) & " + i + " & (A100 idle)";
  return "% " +
         TexEscape("Table 2 reproduction, build " + build + ", platform " + p.id + ": ours " + n.title +
                   "; in parentheses the paper's GPU figures on an NVIDIA A100 (" + paper.citation + ")") +
         "\n\\begin{tabular}{lrrrrrrrrrrrr}\n\\hline\n & \\multicolumn{6}{c}{Train} & \\multicolumn{6}{c}{Inference} "
         "\\\\\n"
         "Domain & " +
         cols + " & " + cols + " \\\\\n\\hline\n";
}

CsvTex Table2Table(const std::string& build, const PlatformView& p, const PaperTable2& paper) {
  CsvTex t;
  t.tex = Table2Header(p, paper, build, &t.csv);
  // Rows pair by domain: a domain outside the paper's measured in one mode
  // only is in one of the two lists.
  std::vector<std::pair<DomainBreakdown, DomainBreakdown>> rows;
  for (const auto& tr : p.table2_train) rows.push_back({tr, DomainBreakdown{tr.domain, 0, 0, 0, 0, 0, tr.paper}});
  for (const auto& ev : p.table2_eval) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first.domain == ev.domain; });
    if (it != rows.end())
      it->second = ev;
    else
      rows.push_back({DomainBreakdown{ev.domain, 0, 0, 0, 0, 0, ev.paper}, ev});
  }
  for (const auto& [tr, ev] : rows) {
    if (tr.models == 0 && ev.models == 0 && !tr.paper) continue;
    t.csv += Table2CsvRow(tr, true) + Table2CsvRow(ev, false);
    t.tex += Table2TexRow(tr, ev, paper);
  }
  t.tex += "\\hline\n\\end{tabular}\n";
  return t;
}

CsvTex CoverageTable(const PlatformView& p, const PaperTable2& paper) {
  CsvTex t;
  t.csv = "domain,models,distinct_aten_ops\n";
  t.tex = "\\begin{tabular}{lrr}\n\\hline\nDomain & Models & Distinct ATen ops \\\\\n\\hline\n";
  for (const auto& c : p.coverage) {
    t.csv += c.domain + "," + std::to_string(c.models) + "," + std::to_string(c.distinct_ops) + "\n";
    t.tex += TexEscape(c.domain == "all" ? "All (union)" : DomainLabel(c.domain, paper)) + " & " +
             std::to_string(c.models) + " & " + std::to_string(c.distinct_ops) + " \\\\\n";
  }
  t.tex += "\\hline\n\\end{tabular}\n";
  return t;
}

void WriteTables(SiteWriter& w, const BuildView& v, const PaperTable2& paper) {
  for (const auto& p : v.platforms) {
    WriteTable(w, v.id, "runs." + p.id, RunsTable(v.id, p));
    if (p.breakdown_source != BreakdownSource::kNone)
      WriteTable(w, v.id, "table2." + p.id, Table2Table(v.id, p, paper));
    WriteTable(w, v.id, "coverage." + p.id, CoverageTable(p, paper));
  }
}

}  // namespace torchgauge::reporter
