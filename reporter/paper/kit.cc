#include "reporter/paper/kit.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/run_settings.h"
#include "core/contract/version.h"
#include "core/io/json_io.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/sha256.h"
#include "reporter/output/vega_lite.h"
#include "reporter/output/vl_convert.h"
#include "reporter/output/writer.h"
#include "reporter/paper/figures.h"
#include "reporter/paper/tables.h"
#include "reporter/results/build_refs.h"
#include "reporter/results/load.h"
#include "reporter/results/paper_data.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

namespace {

std::string Joined(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The build, its platforms narrowed to those asked for; throws
// std::invalid_argument naming what is missing and what there is.
BuildResults LoadKitBuild(const PaperKitOptions& o) {
  const core::TreeScan scan = core::ScanTree(o.results);
  const std::vector<BuildRef> refs = BuildRefs(scan);
  auto ref = std::find_if(refs.begin(), refs.end(), [&](const BuildRef& r) { return r.id == o.build; });
  if (!core::IsSafeId(o.build) || ref == refs.end()) {
    std::vector<std::string> have;
    for (const auto& r : refs) have.push_back(r.id);
    throw std::invalid_argument("--build '" + o.build + "': no such build in " + o.results.string() +
                                " (available: " + (have.empty() ? "none" : Joined(have)) + ")");
  }
  for (const auto& p : o.platforms) RequirePlatform("--platform", p, ref->platforms, "build " + o.build);
  LoadOptions lo;
  lo.only_builds = {o.build};
  LoadedResults loaded = LoadResults(scan, lo);
  BuildResults b = std::move(loaded.builds.at(0));
  if (!o.platforms.empty()) {
    const std::set<std::string> wanted(o.platforms.begin(), o.platforms.end());
    std::erase_if(b.platforms, [&](const PlatformResults& p) { return !wanted.count(p.manifest.platform_id); });
  }
  if (b.platforms.empty())
    throw std::invalid_argument("build " + o.build + " has no platform with a readable manifest");
  return b;
}

// The platform of Figures 1-4 and Table 2: the first asked for; else the
// first (in id order) with a GPU breakdown, as the paper's figures are GPU
// figures; else the first.
std::string PickPrimary(const BuildResults& b, const std::vector<std::string>& wanted) {
  if (!wanted.empty()) return wanted.front();
  for (const auto& p : b.platforms) {
    for (const auto& r : p.runs) {
      if (r.gpu_breakdown) return p.manifest.platform_id;
    }
  }
  return b.platforms.front().manifest.platform_id;
}

// "3 warm-up, 10 timed repetitions x 1 process, 3 profiling iterations"
// when every run of the platform was measured alike.
std::string SettingsText(const PlatformView& p) {
  std::vector<core::RunSettings> seen;
  for (const auto* r : p.runs) {
    if (r->settings && std::find(seen.begin(), seen.end(), *r->settings) == seen.end()) seen.push_back(*r->settings);
  }
  std::string suite = p.manifest && !p.manifest->suite.empty() ? "suite " + p.manifest->suite : "suite not recorded";
  if (seen.empty()) return suite + ", settings not recorded";
  if (seen.size() > 1) return suite + ", " + std::to_string(seen.size()) + " different run settings";
  const core::RunSettings& s = seen.front();
  return suite + ", " + std::to_string(s.warmup) + " warm-up, " + std::to_string(s.repeat) + " timed repetitions x " +
         std::to_string(s.processes) + " process(es), " + std::to_string(s.profile_iterations) +
         " profiling iterations" + (s.smoke ? ", smoke inputs" : "");
}

std::string PlatformText(const PlatformView& p) {
  return p.manifest ? p.id + " (" + DeviceLabel(*p.manifest) + ")" : p.id;
}

struct KitContext {
  const BuildView* view = nullptr;
  const PlatformView* primary = nullptr;
  std::vector<const PlatformView*> platforms;
  PaperWidth width = PaperWidth::kSingle;
  std::string collector;   // "0.1.0 (abc123)", per platform where they differ
  std::string provenance;  // one line: build, platforms, collector, settings, reporter
};

std::string CollectorText(const std::vector<const PlatformView*>& platforms) {
  std::vector<std::string> seen;
  for (const auto* p : platforms) {
    if (!p->manifest) continue;
    const std::string v = p->manifest->collector_version + " (" + p->manifest->git_sha + ")";
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  return seen.empty() ? "not recorded" : Joined(seen, "; ");
}

KitContext MakeContext(const BuildView& v, const std::string& primary, PaperWidth width) {
  KitContext c;
  c.view = &v;
  c.width = width;
  std::vector<std::string> ids;
  for (const auto& p : v.platforms) {
    c.platforms.push_back(&p);
    ids.push_back(p.id);
    if (p.id == primary) c.primary = &p;
  }
  c.collector = CollectorText(c.platforms);
  c.provenance = "build " + v.id + "; platforms " + Joined(ids) + "; collector " + c.collector + "; " +
                 SettingsText(*c.primary) + "; started " + (v.started_at.empty() ? "not recorded" : v.started_at) +
                 "; torchgauge-report " + core::Version() + " (" + core::GitSha() + ")";
  return c;
}

// The caption's closing sentence: where the numbers come from.
std::string Where(const KitContext& c, const PlatformView& p) {
  return " Build " + c.view->id + ", platform " + PlatformText(p) + "; " + SettingsText(p) + "; collected " +
         (c.view->started_at.empty() ? "at a time not recorded" : c.view->started_at.substr(0, 10)) + ".";
}

}  // namespace

namespace {

struct KitFigure {
  std::string stem, item, caption;  // caption: plain text, escaped when written
  json spec;
};
struct KitTable {
  std::string stem, item, caption;
  CsvTex table;
  bool longtable = false;  // its caption is inside the table
};
struct KitPlan {
  std::vector<KitFigure> figures;
  std::vector<KitTable> tables;
  std::vector<KitLeftOut> left_out;
};

void PlanBreakdownFigures(const KitContext& c, KitPlan& plan) {
  const PlatformView& p = *c.primary;
  const BreakdownPartNames n = PartNames(p.breakdown_source);
  const std::string which =
      p.breakdown_source == BreakdownSource::kHost
          ? std::string(n.title) + ", the host breakdown: no run on this platform measured a GPU breakdown"
          : std::string(n.title);
  const struct {
    const char* stem;
    const char* item;
    const char* mode;
    const char* task;
    const std::vector<BreakdownBar>* bars;
  } figs[] = {{"fig1_train_breakdown", "Figure 1", "train", "training", &p.figure1_train},
              {"fig2_eval_breakdown", "Figure 2", "eval", "inference", &p.figure2_eval}};
  for (const auto& f : figs) {
    const std::string item = std::string(f.item) + " (" + f.stem + ")";
    if (f.bars->empty()) {
      plan.left_out.push_back(
          {item, "no eager " + std::string(f.mode) + " run on " + p.id + " has a GPU or host time breakdown"});
      continue;
    }
    plan.figures.push_back({f.stem, item,
                            std::string("Execution time breakdown of the models in ") + f.task + " (eager): " + which +
                                ", as shares of the step time." + Where(c, p),
                            PaperBreakdownFigure(*f.bars, p.breakdown_source, c.width)});
  }
}

std::string GeomeanText(const PlatformView& p, const std::string& mode) {
  std::string s;
  for (const auto& b : p.backend_summaries) {
    if (b.mode != mode) continue;
    s += std::string(s.empty() ? " Geomean time ratio: " : "; ") + b.backend + " " + Num(b.time_geomean, "%.3f") +
         " over " + std::to_string(b.pairs) + " run(s)";
  }
  return s.empty() ? s : s + ".";
}

void PlanCompilerFigures(const KitContext& c, KitPlan& plan) {
  const PlatformView& p = *c.primary;
  const struct {
    const char* stem;
    const char* item;
    const char* mode;
    const char* task;
  } figs[] = {{"fig3_train_compilers", "Figure 3", "train", "training"},
              {"fig4_eval_compilers", "Figure 4", "eval", "inference"}};
  for (const auto& f : figs) {
    std::vector<BackendRatio> ratios;
    for (const auto& r : p.backend_ratios) {
      if (r.mode == f.mode) ratios.push_back(r);
    }
    const std::string item = std::string(f.item) + " (" + f.stem + ")";
    if (ratios.empty()) {
      plan.left_out.push_back(
          {item, "no ok non-eager " + std::string(f.mode) + " run on " + p.id + " pairs with an ok eager run"});
      continue;
    }
    plan.figures.push_back(
        {f.stem, item,
         std::string("Backends against eager in ") + f.task +
             ": execution time (T), CPU memory (CM) and GPU memory (GM), each the backend's over eager's; "
             "below 1 the backend does better; a ratio not measured has no point." +
             GeomeanText(p, f.mode) + Where(c, p),
         PaperCompilerFigure(ratios, c.width)});
  }
}

void PlanRatioFigures(const KitContext& c, KitPlan& plan) {
  const auto& pairs = c.view->platform_ratios;
  if (pairs.empty()) {
    plan.left_out.push_back({"Figure 5 (fig5_platform_ratios)", "needs two platforms in the kit; build " + c.view->id +
                                                                    " gives " + std::to_string(c.platforms.size())});
    return;
  }
  for (const auto& r : pairs) {
    const std::string stem = pairs.size() == 1 ? "fig5_platform_ratios" : "fig5_platform_ratios." + r.other;
    if (r.summaries.empty()) {
      plan.left_out.push_back(
          {"Figure 5 (" + stem + ")", "no run was measured ok on both " + r.reference + " and " + r.other});
      continue;
    }
    std::string sums;
    for (const auto& s : r.summaries) {
      sums += " Geomean " + s.mode + ": " + Num(s.geomean, "%.3f") + " over " + std::to_string(s.pairs) + " run(s).";
    }
    const PlatformView* other = nullptr;
    for (const auto* p : c.platforms) {
      if (p->id == r.other) other = p;
    }
    plan.figures.push_back(
        {stem, "Figure 5 (" + stem + ")",
         r.title + ": median step time on " + r.other + " over the median on " + r.reference +
             " for the same model, mode, backend, requested precision and batch size; below 1, " + r.other +
             " is faster. A ring marks runs whose effective precisions differ." + sums + Where(c, *c.primary) +
             (other ? " Compared with platform " + PlatformText(*other) + "; " + SettingsText(*other) + "." : ""),
         PaperRatioFigure(r, c.width)});
  }
}

}  // namespace

namespace {

void PlanTables(const KitContext& c, KitPlan& plan, const PaperTable2& paper) {
  const PaperModels& models = core::EmbeddedPaperTable1();
  int native = 0;
  for (const auto& m : models.models) native += m.ours ? 1 : 0;
  std::string all = " Build " + c.view->id + ", platforms ";
  for (const auto* p : c.platforms) all += (p == c.platforms.front() ? "" : ", ") + PlatformText(*p);
  all += "; " + SettingsText(*c.primary) + ".";
  const std::string t1 = "The paper's models (" + std::to_string(models.models.size()) +
                         " reconstructed from its Table 1 and section 2.1; it counts 84), with our native LibTorch "
                         "implementation (" +
                         std::to_string(native) +
                         " of them) and this build's runs of each (ok / all, over the kit's platforms)." + all;
  plan.tables.push_back(
      {"table1_models", "Table 1 (table1_models)", t1, PaperTable1(models, c.platforms, paper, TexEscape(t1)), true});
  const PlatformView& p = *c.primary;
  if (p.breakdown_source == BreakdownSource::kNone) {
    plan.left_out.push_back({"Table 2 (table2_breakdown)", "no run on " + p.id + " has a GPU or host time breakdown"});
  } else {
    const std::string host_note = p.breakdown_source == BreakdownSource::kHost
                                      ? " Ours is the host (CPU) breakdown; the paper's columns are its A100 GPU "
                                        "figures, shown for reference, not comparable parts."
                                      : "";
    plan.tables.push_back(
        {"table2_breakdown", "Table 2 (table2_breakdown)",
         "Breakdown of model execution time by domain (% of the step time, mean over models): ours, " +
             std::string(PartNames(p.breakdown_source).title) +
             ", beside the paper's published A100 GPU figures (its Table 2)." + host_note + Where(c, p),
         PaperTable2Tables(p, paper), false});
  }
  const bool any_peaks = std::any_of(c.platforms.begin(), c.platforms.end(),
                                     [](const PlatformView* v) { return v->manifest && v->manifest->peaks; });
  if (!any_peaks) {
    plan.left_out.push_back({"Table 3 (table3_peaks)",
                             "no platform of build " + c.view->id + " has measured peaks (torchgauge-collect probe)"});
    return;
  }
  plan.tables.push_back({"table3_peaks", "Table 3 (table3_peaks)",
                         std::string("Platforms and their measured peaks, ") + core::kPeaksLabel +
                             " (not the hardware's theoretical peaks as in the paper's Table 3): the best large matrix "
                             "multiply per precision, a triad over arrays beyond the last-level cache and, on a GPU, "
                             "our own FMA kernel; n/s: not supported, --: not probed." +
                             all,
                         PaperTable3(c.platforms), false});
}

}  // namespace

namespace {

class KitWriter {
 public:
  explicit KitWriter(fs::path out) : out_(std::move(out)) {}
  void Write(const std::string& name, const std::string& contents) {
    core::WriteFileAtomic(out_ / name, contents);
    files_[name] = Sha256Hex(contents);
    sizes_[name] = contents.size();
  }
  // A file another process wrote (the PDFs): read back for its checksum.
  void Adopt(const std::string& name) {
    const std::string bytes = ReadText(out_ / name);
    files_[name] = Sha256Hex(bytes);
    sizes_[name] = bytes.size();
  }
  bool Has(const std::string& name) const { return files_.count(name) > 0; }
  const fs::path& out() const { return out_; }
  const std::map<std::string, std::string>& files() const { return files_; }
  size_t size(const std::string& name) const { return sizes_.at(name); }

 private:
  fs::path out_;
  std::map<std::string, std::string> files_;  // name -> SHA-256
  std::map<std::string, size_t> sizes_;
};

// "2026-01-01T02:00:00Z" -> "D:20260101020000Z"; "" when it does not parse.
std::string PdfDate(const std::string& rfc3339) {
  if (rfc3339.size() < 19) return "";
  std::string d = "D:";
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (rfc3339[i] < '0' || rfc3339[i] > '9') return "";
    d += rfc3339[i];
  }
  return d + "Z";
}

json PdfInfo(const KitContext& c, const KitFigure& f) {
  json info = {{"Title", f.item + ", TorchGauge build " + c.view->id},
               {"Subject", f.caption},
               {"Keywords", c.provenance},
               {"Creator", std::string("torchgauge-report ") + core::Version()},
               {"Producer", "vl-convert (svg2pdf)"}};
  const std::string date = PdfDate(c.view->started_at);
  if (!date.empty()) info["CreationDate"] = date;
  return info;
}

// Renders every figure's PDF through the helper; returns the figures whose
// PDF was not made, with `note` saying why.
std::vector<std::string> RenderPdfs(const PaperKitOptions& o, const KitContext& c, const KitPlan& plan, KitWriter& w,
                                    std::string* note) {
  std::vector<std::string> skipped;
  for (const auto& f : plan.figures) fs::remove(w.out() / (f.stem + ".pdf"));  // never a stale PDF
  const VlConvert vc(o.python, o.helper);
  if (!o.pdf) {
    *note = "--no-pdf";
  } else if (!vc.Available()) {
    *note = "vl-convert-python is not importable by " + o.python + " (with " + o.helper.string() +
            "); the bootstrap's venv has it (--python)";
  } else {
    json jobs = json::array();
    for (const auto& f : plan.figures) {
      jobs.push_back({{"spec", (w.out() / (f.stem + ".vl.json")).string()},
                      {"out", (w.out() / (f.stem + ".pdf")).string()},
                      {"info", PdfInfo(c, f)}});
    }
    std::string err;
    if (!vc.Run(std::string("pdf ") + kVegaLiteVersion, jobs.dump(), &err)) *note = "vl-convert failed: " + err;
  }
  for (const auto& f : plan.figures) {
    const std::string pdf = f.stem + ".pdf";
    if (fs::exists(w.out() / pdf)) {
      w.Adopt(pdf);
    } else {
      skipped.push_back(pdf);
    }
  }
  return skipped;
}

// A TeX comment: every line of `text` behind "% ".
std::string TexComment(const std::string& text) {
  std::string line = SanitizeUtf8(text);
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  return "% " + line + "\n";
}

}  // namespace

namespace {

std::string PaperTexPreamble(const KitContext& c) {
  return TexComment("TorchGauge paper kit, " + c.provenance) +
         "% Generated by torchgauge-report paper from the results tree; regenerate rather than edit.\n"
         "\\documentclass[10pt]{article}\n\\usepackage{graphicx}\n\\usepackage{longtable}\n"
         "\\setlength{\\textwidth}{7in}\\setlength{\\oddsidemargin}{-0.25in}\\setlength{\\evensidemargin}{-0.25in}\n"
         "\\setlength{\\textheight}{9in}\\setlength{\\topmargin}{-0.5in}\n"
         "% A figure taller than the page is scaled down to fit; others keep their size.\n"
         "\\newsavebox{\\tgbox}\n\\newcommand{\\tgfigure}[1]{\\sbox{\\tgbox}{\\includegraphics{#1}}%\n"
         "  \\ifdim\\ht\\tgbox>0.85\\textheight\\resizebox{!}{0.85\\textheight}{\\usebox{\\tgbox}}"
         "\\else\\usebox{\\tgbox}\\fi}\n\\begin{document}\n";
}

std::string PaperTex(const KitContext& c, const KitPlan& plan, const KitWriter& w,
                     const std::vector<std::string>& skipped) {
  std::string tex = PaperTexPreamble(c);
  tex += "\\section*{TorchGauge paper kit: build " + TexEscape(c.view->id) + "}\n" +
         TexEscape("Platforms: " +
                   [&] {
                     std::string s;
                     for (const auto* p : c.platforms) s += (s.empty() ? "" : ", ") + PlatformText(*p);
                     return s;
                   }() +
                   ". Collector " + c.collector + ". Figures 1-4 and Table 2 show " + c.primary->id + ".") +
         "\n\n";
  for (const auto& f : plan.figures) {
    if (!w.Has(f.stem + ".pdf")) continue;
    tex += "\\begin{figure}[tbp]\n\\centering\n\\tgfigure{" + f.stem + ".pdf}\n\\caption{" + TexEscape(f.caption) +
           "}\n\\label{fig:" + f.stem + "}\n\\end{figure}\n\n";
  }
  for (const auto& name : skipped) tex += TexComment("Not included: " + name + " was not rendered.");
  for (const auto& t : plan.tables) {
    if (t.longtable) {
      tex += "\\clearpage\n{\\footnotesize\\setlength{\\tabcolsep}{4pt}\n\\input{" + t.stem + ".tex}\n}\n\n";
      continue;
    }
    tex += "\\begin{table}[tbp]\n\\centering\n\\caption{" + TexEscape(t.caption) + "}\n\\label{tab:" + t.stem +
           "}\n\\resizebox{\\linewidth}{!}{\\input{" + t.stem + ".tex}}\n\\end{table}\n\n";
  }
  for (const auto& l : plan.left_out) tex += TexComment("Left out: " + l.item + ": " + l.reason + ".");
  return tex + "\\end{document}\n";
}

std::string ManifestJson(const KitContext& c, const KitPlan& plan, const KitWriter& w,
                         const std::vector<std::string>& skipped) {
  json platforms = json::array(), files = json::array(), left = json::array();
  for (const auto* p : c.platforms) {
    platforms.push_back({{"platform_id", p->id},
                         {"device", p->manifest ? DeviceLabel(*p->manifest) : p->id},
                         {"collector_version", p->manifest ? json(p->manifest->collector_version) : json(nullptr)},
                         {"git_sha", p->manifest ? json(p->manifest->git_sha) : json(nullptr)},
                         {"settings", SettingsText(*p)}});
  }
  for (const auto& [name, sha] : w.files()) files.push_back({{"path", name}, {"bytes", w.size(name)}, {"sha256", sha}});
  for (const auto& l : plan.left_out) left.push_back({{"item", l.item}, {"reason", l.reason}});
  json m = {{"schema_version", 1},
            {"kind", "torchgauge.paper_kit"},
            {"build_id", c.view->id},
            {"started_at", c.view->started_at.empty() ? json(nullptr) : json(c.view->started_at)},
            {"figures_platform", c.primary->id},
            {"width", PaperWidthName(c.width)},
            {"platforms", platforms},
            {"reporter", std::string(core::Version()) + " (" + core::GitSha() + ")"},
            {"provenance", c.provenance},
            {"files", files},
            {"left_out", left},
            {"pdf_not_rendered", skipped}};
  return m.dump(2) + "\n";
}

// Removes what an earlier kit in `out` left that this one did not write
// (Figure 5 of a platform no longer asked for, a PDF no longer rendered).
void RemoveStale(const KitWriter& w) {
  if (!fs::is_directory(w.out())) return;
  for (const auto& e : fs::directory_iterator(w.out())) {
    const std::string name = e.path().filename().string();
    const bool ours =
        (name.starts_with("fig") || name.starts_with("table")) &&
        (name.ends_with(".pdf") || name.ends_with(".vl.json") || name.ends_with(".tex") || name.ends_with(".csv"));
    if (ours && e.is_regular_file() && !w.Has(name)) fs::remove(e.path());
  }
}

}  // namespace

PaperKitReport WritePaperKit(const PaperKitOptions& o) {
  const BuildResults b = LoadKitBuild(o);
  PaperKitReport report;
  report.primary = PickPrimary(b, o.platforms);
  const PaperTable2 paper = PaperTable2FromJson(json::parse(kPaperTable2Json));
  const BuildView v = AggregateBuild(b, paper, report.primary);
  const KitContext c = MakeContext(v, report.primary, o.width);
  KitPlan plan;
  PlanBreakdownFigures(c, plan);
  PlanCompilerFigures(c, plan);
  PlanRatioFigures(c, plan);
  PlanTables(c, plan, paper);
  fs::create_directories(o.out);
  KitWriter w(o.out);
  for (const auto& f : plan.figures) {
    json spec = f.spec;
    spec["description"] = f.caption;
    spec["usermeta"]["torchgauge"] = {{"item", f.item}, {"provenance", c.provenance}};
    w.Write(f.stem + ".vl.json", spec.dump(1) + "\n");
  }
  for (const auto& t : plan.tables) {
    w.Write(t.stem + ".csv", t.table.csv);
    w.Write(t.stem + ".tex", TexComment(t.item + ", TorchGauge paper kit, " + c.provenance) +
                                 (t.longtable ? "" : TexComment("Caption: " + t.caption)) + t.table.tex);
  }
  report.pdf_skipped = RenderPdfs(o, c, plan, w, &report.pdf_note);
  w.Write("paper.tex", PaperTex(c, plan, w, report.pdf_skipped));
  RemoveStale(w);
  core::WriteFileAtomic(o.out / "MANIFEST.json", ManifestJson(c, plan, w, report.pdf_skipped));
  for (const auto& [name, sha] : w.files()) report.files.push_back(name);
  report.files.push_back("MANIFEST.json");
  report.left_out = plan.left_out;
  return report;
}

}  // namespace torchgauge::reporter
