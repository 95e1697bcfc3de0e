#include "reporter/paper/tables.h"

#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/results/paper_data.h"

using nlohmann::json;

namespace torchgauge::reporter {

std::map<std::string, ModelRuns> RunsByModel(const std::vector<const PlatformView*>& platforms) {
  std::map<std::string, ModelRuns> states;
  for (const auto* p : platforms) {
    for (const auto* r : p->runs) {
      ModelRuns& s = states[r->model.id];
      ++s.runs;
      if (r->status == "ok") ++s.ok;
      s.domain = r->model.domain;
      s.task = r->model.task;
    }
  }
  return states;
}

namespace {

// "planned" or "not possible here" (no implementation), "not run", or "3/4 ok".
std::string StateText(const std::optional<std::string>& ours, const std::map<std::string, ModelRuns>& states,
                      core::PaperModelState paper_state = core::PaperModelState::kNative) {
  if (!ours) return core::Name(paper_state);
  auto it = states.find(*ours);
  if (it == states.end()) return "not run";
  return std::to_string(it->second.ok) + "/" + std::to_string(it->second.runs) + " ok";
}

std::string DomainText(const std::string& domain, const PaperTable2& paper) {
  std::string l = DomainLabel(domain, paper);
  if (l == domain && !l.empty() && l[0] >= 'a' && l[0] <= 'z') l[0] = static_cast<char>(l[0] - 'a' + 'A');
  return l;
}

struct Table1Row {
  std::string domain, task, paper_name, ours, state;
};

void AddTable1Row(CsvTex& t, const Table1Row& r, const std::map<std::string, ModelRuns>& states) {
  auto it = states.find(r.ours);
  const bool counted = !r.ours.empty() && it != states.end();
  t.csv += CsvField(r.domain) + "," + CsvField(r.task) + "," + CsvField(r.paper_name) + "," + CsvField(r.ours) + "," +
           (counted ? std::to_string(it->second.runs) : "0") + "," + (counted ? std::to_string(it->second.ok) : "0") +
           "," + CsvField(r.state) + "\n";
  t.tex += TexEscape(r.domain) + " & " + TexEscape(r.task) + " & " + TexEscape(r.paper_name) + " & " +
           (r.ours.empty() ? "--" : "\\texttt{" + TexEscape(r.ours) + "}") + " & " + TexEscape(r.state) + " \\\\\n";
}

}  // namespace

CsvTex PaperTable1(const PaperModels& models, const std::vector<const PlatformView*>& platforms,
                   const PaperTable2& paper, const std::string& caption) {
  const auto states = RunsByModel(platforms);
  CsvTex t;
  t.csv = "domain,task,paper_model,ours,runs,ok_runs,state\n";
  t.tex = "\\begin{longtable}{lllll}\n\\caption{" + caption +
          "}\\label{tab:models}\\\\\n\\hline\n"
          "Domain & Task & Model (paper) & Ours & This build \\\\\n\\hline\n\\endfirsthead\n\\hline\n"
          "Domain & Task & Model (paper) & Ours & This build \\\\\n\\hline\n\\endhead\n\\hline\n\\endfoot\n";
  std::set<std::string> listed;
  for (const auto& m : models.models) {
    AddTable1Row(
        t, {DomainText(m.domain, paper), m.task, m.paper_name, m.ours.value_or(""), StateText(m.ours, states, m.state)},
        states);
    if (m.ours) listed.insert(*m.ours);
  }
  for (const auto& m : models.ours_only) {
    AddTable1Row(t, {DomainText(m.domain, paper), m.task, "(not in the paper's list)", m.id, StateText(m.id, states)},
                 states);
    listed.insert(m.id);
  }
  // Models this build ran that neither list names (test models, fixtures).
  for (const auto& [id, s] : states) {
    if (listed.count(id)) continue;
    AddTable1Row(t, {DomainText(s.domain, paper), s.task, "(not in the paper's list)", id, StateText(id, states)},
                 states);
  }
  t.tex += "\\end{longtable}\n";
  return t;
}

namespace {

// "gpu_data_movement_pct": a CSV column named by the source and the part.
std::string PartColumn(const std::string& prefix, const char* part) {
  std::string c = prefix + "_" + part + "_pct";
  for (char& ch : c) {
    if (ch == ' ') ch = '_';
  }
  return c;
}

std::string Table2Csv(const PlatformView& p) {
  const BreakdownPartNames n = PartNames(p.breakdown_source);
  const BreakdownPartNames gpu_names = PartNames(BreakdownSource::kGpu);
  const std::string src = BreakdownSourceId(p.breakdown_source);
  std::string csv = "mode,domain,models";
  for (const char* part : {n.first, n.second, n.third}) csv += "," + PartColumn(src, part);
  for (const char* part : {gpu_names.first, gpu_names.second, gpu_names.third})
    csv += "," + PartColumn("paper_a100_gpu", part);
  csv += "\n";
  for (int mode = 0; mode < 2; ++mode) {
    const auto& rows = mode == 0 ? p.table2_train : p.table2_eval;
    for (const auto& d : rows) {
      if (d.models == 0 && !d.paper) continue;
      const bool tr = mode == 0;
      csv += std::string(tr ? "train" : "eval") + "," + d.domain + "," + std::to_string(d.models) + "," +
             (d.models
                  ? Num(d.active * 100, "%.6g") + "," + Num(d.movement * 100, "%.6g") + "," + Num(d.idle * 100, "%.6g")
                  : ",,") +
             "," +
             (d.paper ? Num(tr ? d.paper->train_active : d.paper->eval_active, "%.1f") + "," +
                            Num(tr ? d.paper->train_movement : d.paper->eval_movement, "%.1f") + "," +
                            Num(tr ? d.paper->train_idle : d.paper->eval_idle, "%.1f")
                      : ",,") +
             "\n";
    }
  }
  return csv;
}

}  // namespace

namespace {

std::string Table2TexRow(const DomainBreakdown& tr, const DomainBreakdown& ev, const PaperTable2& paper) {
  auto ours = [](const DomainBreakdown& d) {
    if (d.models == 0) return std::string("-- & -- & --");
    return Pct(d.active) + " & " + Pct(d.movement) + " & " + Pct(d.idle);
  };
  auto theirs = [](const PaperRow* r, bool train) {
    if (!r) return std::string("-- & -- & --");
    return Num(train ? r->train_active : r->eval_active, "%.1f") + " & " +
           Num(train ? r->train_movement : r->eval_movement, "%.1f") + " & " +
           Num(train ? r->train_idle : r->eval_idle, "%.1f");
  };
  return TexEscape(DomainText(tr.domain, paper)) + " & " + ours(tr) + " & " + theirs(tr.paper, true) + " & " +
         ours(ev) + " & " + theirs(ev.paper, false) + " \\\\\n";
}

std::string Table2Header(const PlatformView& p) {
  const BreakdownPartNames n = PartNames(p.breakdown_source);
  const BreakdownPartNames g = PartNames(BreakdownSource::kGpu);
  const std::string ours_group = p.breakdown_source == BreakdownSource::kGpu ? "Ours (GPU)" : "Ours (host CPU)";
  auto cap = [](const char* s) {
    std::string c = s;
    if (!c.empty() && c[0] >= 'a' && c[0] <= 'z') c[0] = static_cast<char>(c[0] - 'a' + 'A');
    return TexEscape(c);
  };
  const std::string ours = cap(n.first) + " & " + cap(n.second) + " & " + cap(n.third);
  const std::string paper = cap(g.first) + " & " + cap(g.second) + " & " + cap(g.third);
  return "\\begin{tabular}{lrrrrrrrrrrrr}\n\\hline\n & \\multicolumn{6}{c}{Train} & \\multicolumn{6}{c}{Inference} "
         "\\\\\n"
         " & \\multicolumn{3}{c}{" +
         ours_group + "} & \\multicolumn{3}{c}{Paper: A100 GPU} & \\multicolumn{3}{c}{" + ours_group +
         "} & \\multicolumn{3}{c}{Paper: A100 GPU} \\\\\nDomain & " + ours + " & " + paper + " & " + ours + " & " +
         paper + " \\\\\n\\hline\n";
}

}  // namespace

CsvTex PaperTable2Tables(const PlatformView& p, const PaperTable2& paper) {
  if (p.breakdown_source == BreakdownSource::kNone) {
    throw std::invalid_argument("platform " + p.id + " has no time breakdown for Table 2");
  }
  CsvTex t;
  t.csv = Table2Csv(p);
  t.tex = Table2Header(p);
  // The two modes' lists hold the same paper domains, but a domain outside
  // the paper's appears only in the modes it was measured in: pair by name.
  std::vector<std::string> order;
  std::map<std::string, std::pair<DomainBreakdown, DomainBreakdown>> rows;
  for (int mode = 0; mode < 2; ++mode) {
    for (const auto& d : mode == 0 ? p.table2_train : p.table2_eval) {
      if (!rows.count(d.domain)) {
        order.push_back(d.domain);
        rows[d.domain].first = rows[d.domain].second = DomainBreakdown{d.domain, 0, 0, 0, 0, 0, d.paper};
      }
      (mode == 0 ? rows[d.domain].first : rows[d.domain].second) = d;
    }
  }
  for (const auto& domain : order) {
    const auto& [tr, ev] = rows[domain];
    if (tr.models == 0 && ev.models == 0 && !tr.paper) continue;
    t.tex += Table2TexRow(tr, ev, paper);
  }
  t.tex += "\\hline\n\\end{tabular}\n";
  return t;
}

namespace {

inline constexpr const char* kPeakPrecisions[] = {"fp32", "tf32", "bf16", "fp16"};

// A matmul peak's cell: TFLOP/s, "unsupported", or "" when not probed.
std::string MatmulCell(const core::ProbeResult& peaks, const char* precision) {
  for (const auto& m : peaks.matmul) {
    if (m.precision != precision) continue;
    if (m.status != "ok") return "unsupported";
    return m.tflops ? Sig3(*m.tflops) : "";
  }
  return "";
}

std::string TexCell(const std::string& v) {
  if (v.empty()) return "--";
  return v == "unsupported" ? "n/s" : TexEscape(v);
}

std::string CpuPolicy(const Manifest& m) {
  if (!m.cpu_frequency) return "";
  std::string s = m.cpu_frequency->governor.value_or("");
  if (m.cpu_frequency->turbo)
    s += std::string(s.empty() ? "" : ", ") + (*m.cpu_frequency->turbo ? "turbo on" : "turbo off");
  return s;
}

std::vector<std::string> Table3Cells(const PlatformView& p) {
  const Manifest& m = *p.manifest;
  const core::ProbeResult& k = *m.peaks;
  std::vector<std::string> cells = {p.id, DeviceLabel(m)};
  for (const char* prec : kPeakPrecisions) cells.push_back(MatmulCell(k, prec));
  cells.push_back(k.triad ? Sig3(k.triad->gb_per_s) : "");
  cells.push_back(k.kernels && k.kernels->fma_fp32_tflops ? Sig3(*k.kernels->fma_fp32_tflops) : "");
  cells.push_back(k.threads ? std::to_string(*k.threads) : "");
  cells.push_back(CpuPolicy(m));
  return cells;
}

}  // namespace

CsvTex PaperTable3(const std::vector<const PlatformView*>& platforms) {
  CsvTex t;
  t.csv =
      "platform,device,matmul_fp32_tflops,matmul_tf32_tflops,matmul_bf16_tflops,matmul_fp16_tflops,"
      "triad_gb_per_s,kernel_fma_fp32_tflops,threads,cpu_frequency_policy\n";
  t.tex =
      "\\begin{tabular}{llrrrrrrl}\n\\hline\n & & \\multicolumn{4}{c}{Matrix multiply (TFLOP/s)} & Triad & FMA & \\\\\n"
      "Platform & Device & FP32 & TF32 & BF16 & FP16 & (GB/s) & (TFLOP/s) & CPU frequency \\\\\n\\hline\n";
  for (const auto* p : platforms) {
    if (!p->manifest || !p->manifest->peaks) continue;
    const std::vector<std::string> c = Table3Cells(*p);
    std::string csv, tex;
    for (size_t i = 0; i < c.size(); ++i) {
      if (!csv.empty()) csv += ',';
      csv += CsvField(c[i]);
      if (i == 8) continue;  // the probe's threads: CSV only
      tex += (tex.empty() ? "" : " & ") + (i < 2 ? TexEscape(c[i]) : TexCell(c[i]));
    }
    t.csv += csv + "\n";
    t.tex += tex + " \\\\\n";
  }
  t.tex += "\\hline\n\\end{tabular}\n";
  return t;
}

}  // namespace torchgauge::reporter
