// The build page's data (page_data.h): per platform its environment, figures,
// tables and runs; the backends section (Figures 3/4); the platforms compared
// with a reference (Figure 5, results/platform_ratio.h); and the comparison with
// earlier builds.
#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>

#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/pages/charts.h"
#include "reporter/pages/figures.h"
#include "reporter/pages/model_page_data.h"
#include "reporter/pages/page_data.h"
#include "reporter/pages/regressions_page.h"
#include "reporter/pages/shard_view.h"

namespace torchgauge::reporter {

namespace {

// Where and with what a platform's results were measured, from its manifest.
void SetEnvironment(mu::data& pd, const Manifest& m) {
  Set(pd, "manifest_present", m.present);
  Set(pd, "device",
      m.device_name.empty()                 ? Dash()
      : m.device_name.starts_with(m.vendor) ? m.device_name
                                            : m.vendor + " " + m.device_name);
  Set(pd, "libtorch", m.libtorch_version.empty() ? Dash() : m.libtorch_version);
  // The torch commit the build was made from, and where it came from; older
  // manifests did not record them.
  Set(pd, "torch_commit", m.libtorch_git_commit.empty() ? std::string("not recorded") : m.libtorch_git_commit);
  Set(pd, "torch_build",
      m.libtorch_build_version.empty()
          ? Dash()
          : m.libtorch_build_version + (m.libtorch_origin_kind.empty() ? "" : ", " + m.libtorch_origin_kind));
  std::string runtime = !m.cuda_runtime.empty()  ? "CUDA " + m.cuda_runtime
                        : !m.hip_runtime.empty() ? "HIP " + m.hip_runtime
                                                 : Dash();
  Set(pd, "runtime", runtime);
  Set(pd, "cpu",
      m.cpu_model.empty() ? Dash() : m.cpu_model + " (" + std::to_string(m.logical_cores) + " logical cores)");
  Set(pd, "host", m.hostname.empty() ? Dash() : m.hostname + ", " + m.os);
  Set(pd, "suite", m.suite.empty() ? Dash() : m.suite);
  Set(pd, "collector",
      m.collector_version.empty() ? Dash()
                                  : m.collector_version + " (" + m.git_sha + ")" +
                                        (m.collector_compiler.empty() ? "" : ", built with " + m.collector_compiler));
  Set(pd, "window",
      m.started_at.empty() ? Dash() : m.started_at + " – " + (m.finished_at.empty() ? "?" : m.finished_at));
  Set(pd, "interrupted", m.interrupted);
}

// Figures 1 and 2: where the step time goes, from the platform's breakdown
// source (the GPU breakdown, else the host breakdown), titled by PartNames.
void SetBreakdownFigures(mu::data& pd, const PageContext& ctx, const std::string& build, const PlatformView& p,
                         const Target& page, const std::string& base) {
  const BreakdownPartNames names = PartNames(p.breakdown_source);
  Target f1{Kind::kFigure, build, "fig1-train." + p.id, ""};
  Target f2{Kind::kFigure, build, "fig2-eval." + p.id, ""};
  if (!p.figure1_train.empty()) {
    Set(pd, "fig1",
        ctx.figures.Place(
            page, f1,
            BreakdownChart(p.figure1_train, "Figure 1 (train): " + std::string(names.title) + ", " + p.id, names),
            "Figure 1: training step, " + std::string(names.title) + ", on " + p.id, base));
  }
  if (!p.figure2_eval.empty()) {
    Set(pd, "fig2",
        ctx.figures.Place(
            page, f2,
            BreakdownChart(p.figure2_eval, "Figure 2 (eval): " + std::string(names.title) + ", " + p.id, names),
            "Figure 2: inference step, " + std::string(names.title) + ", on " + p.id, base));
  }
}

// What Figures 1/2 and Table 2 show on this platform, and their part names.
void SetBreakdownNames(mu::data& pd, const PlatformView& p) {
  const BreakdownPartNames names = PartNames(p.breakdown_source);
  Set(pd, "has_breakdown", p.breakdown_source != BreakdownSource::kNone);
  Set(pd, "host_breakdown", p.breakdown_source == BreakdownSource::kHost);
  Set(pd, "breakdown_title", std::string(names.title));
  // Ours are named by source: the host's parts must never read as the paper's GPU parts.
  const std::string prefix = p.breakdown_source == BreakdownSource::kHost ? "Host " : "GPU ";
  Set(pd, "part_first", prefix + names.first);
  Set(pd, "part_second", p.breakdown_source == BreakdownSource::kHost ? "Host data movement" : "Data movement");
  Set(pd, "part_third", prefix + names.third);
  if (p.breakdown_source == BreakdownSource::kHost) Set(pd, "host_note", HostNoteData(p));
}

std::string Ratio(const std::optional<double>& r) { return r ? Num(*r, "%.3f") : Dash(); }

mu::data BackendSummaryRows(const PlatformView& p) {
  mu::data summaries = List();
  for (const auto& s : p.backend_summaries) {
    mu::data row;
    Set(row, "backend", s.backend);
    Set(row, "mode", s.mode);
    Set(row, "pairs", std::to_string(s.pairs));
    Set(row, "noisy", std::to_string(s.noisy));
    Set(row, "time", Num(s.time_geomean, "%.3f"));
    Set(row, "speedup", Num(1.0 / s.time_geomean, "%.2f") + "×");
    Set(row, "cpu_memory", Ratio(s.cpu_memory_geomean));
    Set(row, "gpu_memory", Ratio(s.gpu_memory_geomean));
    Append(summaries, std::move(row));
  }
  return summaries;
}

mu::data BackendRatioRows(const PlatformView& p) {
  mu::data rows = List();
  for (const auto& br : p.backend_ratios) {
    mu::data rr;
    Set(rr, "model", br.model);
    Set(rr, "mode", br.mode);
    Set(rr, "precision", br.precision);
    Set(rr, "backend", br.backend);
    Set(rr, "eager", Ms(br.eager_ms));
    Set(rr, "other", Ms(br.backend_ms));
    Set(rr, "ratio", Num(br.ratio, "%.3f"));
    Set(rr, "cpu_ratio", Ratio(br.cpu_memory_ratio));
    Set(rr, "gpu_ratio", Ratio(br.gpu_memory_ratio));
    Set(rr, "setup", br.backend_setup_ms ? Sig3(*br.backend_setup_ms / 1000.0) : Dash());
    Set(rr, "note", br.noisy.empty() ? Dash() : br.noisy);
    Append(rows, std::move(rr));
  }
  return rows;
}

// The HUD's four compiler metrics per backend and mode, with its flags and
// the failures grouped by cause.
mu::data CompilerMetricRows(const PlatformView& p) {
  mu::data rows = List();
  for (const auto& m : p.compiler_metrics) {
    mu::data row;
    Set(row, "backend", m.backend);
    Set(row, "mode", m.mode);
    Set(row, "pass_rate",
        std::to_string(m.passed) + " / " + std::to_string(m.attempted) + " (" +
            Num(100.0 * m.passed / std::max(1, m.attempted), "%.0f") + " %)");
    Set(row, "speedup", m.geomean_speedup ? Num(*m.geomean_speedup, "%.2f") + "×" : Dash());
    Set(row, "compile", m.mean_compile_s ? Sig3(*m.mean_compile_s) + " (" + std::to_string(m.compiles) + ")" : Dash());
    Set(row, "load", m.mean_load_s ? Sig3(*m.mean_load_s) + " (" + std::to_string(m.cache_hits) + ")" : Dash());
    Set(row, "compression", m.compression_geomean ? Num(*m.compression_geomean, "%.2f") : Dash());
    Set(row, "slow", std::to_string(m.slow));
    Set(row, "poor_compression", std::to_string(m.poor_compression));
    mu::data causes = List();
    for (const auto& [cause, n] : m.failure_causes) {
      mu::data c;
      Set(c, "cause", cause);
      Set(c, "runs", std::to_string(n));
      Append(causes, std::move(c));
    }
    Set(row, "has_causes", !m.failure_causes.empty());
    Set(row, "causes", std::move(causes));
    Append(rows, std::move(row));
  }
  return rows;
}

// The compiled runs' paired passes: eager against compiled in one worker.
// With several processes the speedup carries the range of the processes'
// ratios, and a range that includes 1 reads "within noise".
mu::data PairedRows(const PlatformView& p) {
  mu::data rows = List();
  for (const auto& br : p.backend_ratios) {
    if (!br.paired) continue;
    const core::PairedTiming& pt = *br.paired;
    mu::data row;
    Set(row, "model", br.model);
    Set(row, "mode", br.mode);
    Set(row, "precision", br.precision);
    Set(row, "backend", br.backend);
    Set(row, "order", pt.order == "interleaved" ? std::string("interleaved") : std::string("back to back"));
    Set(row, "eager", Ms(pt.eager_median_ms));
    Set(row, "compiled", Ms(pt.compiled_median_ms));
    Set(row, "speedup", Num(pt.speedup, "%.2f") + "×");
    std::string range = Dash();
    if (pt.speedup_low && pt.speedup_high) {
      range = Num(*pt.speedup_low, "%.2f") + "–" + Num(*pt.speedup_high, "%.2f") + "× (" +
              std::to_string(pt.process_speedups.size()) + " processes)";
    }
    Set(row, "range", range);
    Set(row, "verdict", PairedVerdict(pt));
    Append(rows, std::move(row));
  }
  return rows;
}

// The generative runs: TTFT, TPOT (median and p90), tokens per second,
// lengths and the KV cache, or why the generation was not measured.
mu::data GenerationTableRows(const PlatformView& p) {
  mu::data rows = List();
  for (const auto& g : p.generation) {
    mu::data row;
    Set(row, "model", g.model);
    Set(row, "config", g.mode + " · " + g.backend + " · " + g.precision + " · batch " + std::to_string(g.batch_size));
    const core::Generation* m = g.generation;
    Set(row, "lengths", m ? std::to_string(m->prompt_tokens) + " → " + std::to_string(m->output_tokens) : Dash());
    Set(row, "ttft", m ? Ms(m->ttft_ms) : Dash());
    Set(row, "tpot", m ? Ms(m->tpot_median_ms) : Dash());
    Set(row, "tpot_p90", m ? Ms(m->tpot_p90_ms) : Dash());
    Set(row, "tokens_per_s", m ? Num(m->tokens_per_s, "%.1f") : Dash());
    // Three significant digits: a small model's cache is a fraction of a MiB.
    const auto& kv = m ? m->kv_cache_bytes : std::nullopt;
    Set(row, "kv_cache", kv ? Sig3(static_cast<double>(*kv) / (1024.0 * 1024.0)) : Dash());
    Set(row, "samples",
        m ? std::to_string(m->generations) + " × (1 + " + std::to_string(m->decode_steps) + ")" : Dash());
    std::string note = m ? std::string() : "not measured: " + g.reason;
    if (g.noisy) note += std::string(note.empty() ? "" : "; ") + "noisy run";
    Set(row, "note", note.empty() ? Dash() : note);
    Append(rows, std::move(row));
  }
  return rows;
}

// The generation section: the table and, where a run has samples, the
// distribution of its decode steps' times.
mu::data GenerationSection(const PageContext& ctx, const Target& page, const std::string& build, const PlatformView& p,
                           const std::string& base) {
  mu::data d;
  Set(d, "rows", GenerationTableRows(p));
  std::vector<SamplePoint> samples;
  for (const auto& g : p.generation) {
    if (!g.generation) continue;
    const std::string config = g.model + " · " + g.mode + " · " + g.backend + " · " + g.precision;
    for (double ms : g.generation->tpot_samples_ms) samples.push_back({config, ms});
  }
  if (!samples.empty()) {
    Target f{Kind::kFigure, build, "tpot." + p.id, ""};
    Set(d, "tpot_chart",
        ctx.figures.Place(page, f, SamplesChart(samples, "Time per output token, " + p.id, "Decode step (ms)"),
                          "Every decode step's time (TPOT) of each generative run on " + p.id, base));
  }
  return d;
}

// Figures 3 and 4 with the paper's headline geomeans and the per-run ratios.
mu::data BackendSection(const PageContext& ctx, const Target& page, const std::string& build, const PlatformView& p,
                        const std::string& base) {
  mu::data d;
  Set(d, "summaries", BackendSummaryRows(p));
  struct Figure {
    const char* mode;
    const char* name;  // as titled
    const char* key;   // template key and figure file prefix
  };
  for (const Figure& fig : {Figure{"train", "Figure 3 (train)", "fig3"}, Figure{"eval", "Figure 4 (eval)", "fig4"}}) {
    std::vector<BackendRatio> of_mode;
    for (const auto& r : p.backend_ratios) {
      if (r.mode == fig.mode) of_mode.push_back(r);
    }
    if (of_mode.empty()) continue;
    Target f{Kind::kFigure, build, std::string(fig.key) + "-" + fig.mode + "." + p.id, ""};
    Set(d, fig.key,
        ctx.figures.Place(
            page, f, CompilerChart(of_mode, std::string(fig.name) + ": backends relative to eager, " + p.id),
            std::string(fig.name) + ": time, CPU memory and GPU memory of each backend relative to eager on " + p.id,
            base));
  }
  Set(d, "rows", BackendRatioRows(p));
  const bool any_paired = std::any_of(p.backend_ratios.begin(), p.backend_ratios.end(),
                                      [](const BackendRatio& r) { return r.paired != nullptr; });
  if (any_paired) {
    Set(d, "paired_rows", PairedRows(p));
    Target f{Kind::kFigure, build, "paired." + p.id, ""};
    Set(d, "paired_chart",
        ctx.figures.Place(
            page, f, PairedChart(p.backend_ratios, "Eager / compiled in the same worker, " + p.id + ", by speedup"),
            "Speedup of each compiled run's paired pass (eager / compiled in the same worker process) "
            "with the range of its processes' ratios, on " +
                p.id,
            base));
  }
  Set(d, "has_paired", any_paired);
  Set(d, "row_count", std::to_string(p.backend_ratios.size()));
  return d;
}

mu::data CoverageRows(const PageContext& ctx, const PlatformView& p) {
  mu::data coverage = List();
  for (const auto& c : p.coverage) {
    mu::data cd;
    Set(cd, "domain", c.domain == "all" ? std::string("All domains (union)") : DomainLabel(c.domain, ctx.paper));
    Set(cd, "models", std::to_string(c.models));
    Set(cd, "ops", std::to_string(c.distinct_ops));
    Append(coverage, std::move(cd));
  }
  return coverage;
}

// Links to the platform's CSV and TeX tables (paper/build_tables.h writes them).
mu::data TableLinks(const std::string& build, const PlatformView& p, const Target& page, const std::string& base) {
  mu::data tables = List();
  for (std::string name : {"runs", "table2", "coverage"}) {
    if (name == "table2" && p.breakdown_source == BreakdownSource::kNone) continue;
    mu::data t;
    Set(t, "name", name);
    Set(t, "csv", base + Href(page, {Kind::kTable, build, name + "." + p.id, "csv"}));
    Set(t, "tex", base + Href(page, {Kind::kTable, build, name + "." + p.id, "tex"}));
    Append(tables, std::move(t));
  }
  return tables;
}

// The runs section: the HTML page draws the table from builds/<id>/data/models.js
// (model_page_data.h), so a build's runs are written once; the Markdown (summary.md)
// points to the page and the CSV table. The failures stay a table in both.
void SetRuns(mu::data& pd, const std::string& build, const PlatformView& p, const Target& page,
             const std::string& base) {
  Set(pd, "run_count", std::to_string(p.runs.size()));
  Set(pd, "models_key", BuildModelsKey(build));
  Set(pd, "model_page", base + HrefPattern(page, {Kind::kModelPage, build, "", "html"}, "model"));
  mu::data failures = List();
  for (const auto* r : p.failures) Append(failures, RunRow(*r, ""));
  Set(pd, "has_failures", !p.failures.empty());
  Set(pd, "failures", std::move(failures));
}

mu::data PlatformData(const PageContext& ctx, const BuildView& v, const PlatformView& p, const Target& page,
                      const std::string& base) {
  mu::data pd;
  Set(pd, "id", p.id);
  SetEnvironment(pd, *p.manifest);
  SetShardView(pd, *p.manifest);
  Set(pd, "status_text", StatusText(p.status_counts));
  Set(pd, "geomean_train", OptMs(p.geomean_train_ms));
  Set(pd, "geomean_eval", OptMs(p.geomean_eval_ms));
  Set(pd, "geomean_train_n", std::to_string(p.geomean_train_n));
  Set(pd, "geomean_eval_n", std::to_string(p.geomean_eval_n));
  SetBreakdownNames(pd, p);
  if (p.breakdown_source != BreakdownSource::kNone) SetBreakdownFigures(pd, ctx, v.id, p, page, base);
  // Table 2 on every platform: where nothing was measured, the paper's
  // column still shows what a GPU platform would be compared with.
  Set(pd, "table2_train", Table2Rows(p.table2_train, true, ctx.paper));
  Set(pd, "table2_eval", Table2Rows(p.table2_eval, false, ctx.paper));
  if (!p.backend_ratios.empty()) Set(pd, "backend_ratios", BackendSection(ctx, page, v.id, p, base));
  if (!p.compiler_metrics.empty()) {
    mu::data hud;
    Set(hud, "rows", CompilerMetricRows(p));
    Set(pd, "compiler_metrics", std::move(hud));
  }
  if (!p.generation.empty()) Set(pd, "generation", GenerationSection(ctx, page, v.id, p, base));
  SetRuns(pd, v.id, p, page, base);
  Set(pd, "peaks", PeaksData(*p.manifest));
  Set(pd, "has_peak_summaries", !p.peak_summaries.empty());
  Set(pd, "peak_summaries", PeakSummaryRows(p, ctx.paper));
  Set(pd, "coverage", CoverageRows(ctx, p));
  Set(pd, "has_coverage", !p.coverage.empty());
  Set(pd, "tables", TableLinks(v.id, p, page, base));
  return pd;
}

std::string OptText(const std::optional<std::string>& s) { return s ? *s : std::string("not recorded"); }

mu::data PlatformRatioRows(const PlatformRatios& p) {
  mu::data rows = List();
  for (const auto& r : p.rows) {
    mu::data x;
    Set(x, "model", r.model);
    Set(x, "mode", r.mode);
    Set(x, "backend", r.backend);
    Set(x, "precision", r.precision);
    Set(x, "batch", std::to_string(r.batch_size));
    Set(x, "reference_ms", OptMs(r.reference_ms));
    Set(x, "other_ms", OptMs(r.other_ms));
    Set(x, "ratio", r.ratio ? Num(*r.ratio, "%.3f") : Dash());
    Set(x, "reference_precision", OptText(r.reference_precision));
    Set(x, "other_precision", OptText(r.other_precision));
    Set(x, "check", std::string(PrecisionCheckName(r.precision_check)));
    Set(x, "differs", r.precision_check == PrecisionCheck::kDiffers);
    const std::string note = RatioNote(r, p.reference, p.other);
    Set(x, "note", note.empty() ? Dash() : note);
    Append(rows, std::move(x));
  }
  return rows;
}

mu::data PlatformRatioSummaries(const PlatformRatios& p) {
  mu::data rows = List();
  for (const auto& s : p.summaries) {
    mu::data x;
    Set(x, "mode", s.mode);
    Set(x, "pairs", std::to_string(s.pairs));
    Set(x, "geomean", Num(s.geomean, "%.3f"));
    Set(x, "differs", PrecisionDiffersText(s));
    Set(x, "noisy", std::to_string(s.noisy));
    Append(rows, std::move(x));
  }
  return rows;
}

// Figure 5, generalized: each other platform against the reference.
void SetPlatformRatios(mu::data& d, const PageContext& ctx, const BuildView& v, const Target& page,
                       const std::string& base) {
  Set(d, "has_platform_ratios", !v.platform_ratios.empty());
  if (v.platform_ratios.empty()) return;
  mu::data section;
  Set(section, "reference", v.reference_platform);
  if (v.reference_note) Set(section, "reference_note", *v.reference_note);
  mu::data comparisons = List();
  for (const auto& p : v.platform_ratios) {
    mu::data c;
    Set(c, "title", p.title);
    Set(c, "reference", p.reference);
    Set(c, "other", p.other);
    Set(c, "reference_device", p.reference_label);
    Set(c, "other_device", p.other_label);
    Set(c, "summaries", PlatformRatioSummaries(p));
    Set(c, "has_summaries", !p.summaries.empty());
    if (!p.summaries.empty()) {
      Target f{Kind::kFigure, v.id, "fig5-ratio." + p.other, ""};
      Set(c, "fig",
          ctx.figures.Place(page, f, PlatformRatioChart(p),
                            "Figure 5: median step time on " + p.other + " over " + p.reference, base));
    }
    Set(c, "rows", PlatformRatioRows(p));
    Set(c, "row_count", std::to_string(p.rows.size()));
    Set(c, "only_reference", std::to_string(p.only_reference));
    Set(c, "only_other", std::to_string(p.only_other));
    Set(c, "has_unmatched", p.only_reference + p.only_other > 0);
    Append(comparisons, std::move(c));
  }
  Set(section, "comparisons", std::move(comparisons));
  Set(d, "platform_ratios", std::move(section));
}

}  // namespace

mu::data BuildPageData(const PageContext& ctx, const BuildView& v, const core::Comparison* cmp, const Target& page,
                       const std::string& base, bool paper_kit) {
  mu::data d;
  Set(d, "build_id", v.id);
  Set(d, "started_at", v.started_at.empty() ? Dash() : v.started_at);
  Set(d, "home",
      base.empty() ? Href(page, {Kind::kIndexPage, "", "", page.ext})
                   : base + Href(page, {Kind::kIndexPage, "", "", "html"}));
  Set(d, "summary_md", base + Href(page, {Kind::kBuildSummary, v.id, "", ""}));
  Set(d, "build_html", base + Href(page, {Kind::kBuildPage, v.id, "", "html"}));
  Set(d, "table1_href", base + Href(page, {Kind::kTable1Page, v.id, "", base.empty() ? page.ext : "html"}));
  SetReaderLinks(d, page, base);
  Set(d, "citation", ctx.paper.citation);
  Set(d, "has_problems", !v.problems.empty());
  Set(d, "problem_count", std::to_string(v.problems.size()));
  Set(d, "problems", ProblemRows(v.problems, ctx.results));
  mu::data warnings = NoiseWarnings(v);
  Set(d, "has_noise_warnings", !warnings.list_value().empty());
  Set(d, "noise_warnings", std::move(warnings));
  mu::data platforms = List();
  for (const auto& p : v.platforms) Append(platforms, PlatformData(ctx, v, p, page, base));
  Set(d, "platforms", std::move(platforms));
  SetPlatformRatios(d, ctx, v, page, base);
  if (cmp) Set(d, "regressions", RegressionData(*cmp, v.id, page, base));
  mu::data models = List();
  for (const auto& m : v.models) {
    mu::data md;
    Set(md, "id", m);
    Set(md, "href", base + Href(page, {Kind::kModelPage, v.id, m, "html"}));
    Append(models, std::move(md));
  }
  Set(d, "models", std::move(models));
  Set(d, "models_js", base + Href(page, {Kind::kBuildData, v.id, "models", ""}));
  Set(d, "has_paper_kit", paper_kit);
  if (paper_kit) Set(d, "paper_kit_zip", base + Href(page, {Kind::kPaperKit, v.id, "", ""}));
  return d;
}

// ---------------------------------------------------------------- comparison

namespace {

std::string KeyConfig(const core::RunKey& k) { return k.mode + "/" + k.backend + "/" + k.precision; }

struct Flag {
  const core::PlatformComparison* p;
  const core::MetricChange* c;
};

// Regressions, then improvements, each sorted by magnitude.
mu::data ChangeRows(const core::Comparison& c, const std::vector<Flag>& regs, const std::vector<Flag>& imps,
                    const std::string& build, const Target& page, const std::string& base) {
  mu::data rows = List();
  for (const auto* list : {&regs, &imps}) {
    for (const auto& f : *list) {
      const auto& ch = *f.c;
      mu::data r;
      Set(r, "kind", list == &regs ? std::string("regression") : std::string("improvement"));
      Set(r, "platform", f.p->platform_id);
      Set(r, "model", ch.key.model);
      Set(r, "model_href", base + Href(page, {Kind::kModelPage, build, ch.key.model, "html"}));
      Set(r, "config", KeyConfig(ch.key));
      Set(r, "metric", std::string(core::MetricName(ch.metric)));
      Set(r, "base", MetricValue(ch.metric, ch.base_value));
      Set(r, "new", MetricValue(ch.metric, ch.new_value));
      Set(r, "delta", Num(ch.delta_percent, "%+.1f"));
      Set(r, "p", ch.p_value ? Num(*ch.p_value, "%.2g") : Dash());
      Set(r, "noise", ch.noise_percent ? Num(*ch.noise_percent, "%.1f") : Dash());
      Set(r, "confirmed",
          list == &regs ? std::string(ch.confirmed ? "yes"
                                                   : "not yet (" + std::to_string(ch.seen_in) + " of " +
                                                         std::to_string(c.options.persist) + ")")
                        : Dash());
      Append(rows, std::move(r));
    }
  }
  return rows;
}

mu::data StatusRow(const std::string& platform, const core::RunKey& key, const std::string& before,
                   const std::string& now, const std::string& reason) {
  mu::data r;
  Set(r, "platform", platform);
  Set(r, "model", key.model);
  Set(r, "config", KeyConfig(key));
  Set(r, "before", before);
  Set(r, "now", now);
  Set(r, "reason", reason);
  return r;
}

// Status changes, then runs that appeared or disappeared, per platform.
mu::data StatusRows(const core::Comparison& c) {
  mu::data status = List();
  for (const auto& p : c.platforms) {
    for (const auto& sc : p.status_changes) {
      Append(status, StatusRow(p.platform_id, sc.key, sc.base_status, sc.new_status, sc.reason.value_or("")));
    }
    for (const auto& pr : p.presence) {
      Append(status, StatusRow(p.platform_id, pr.key, pr.appeared ? std::string("(absent)") : pr.status,
                               pr.appeared ? pr.status : std::string("(absent)"),
                               pr.appeared ? "new run" : "run missing from this build"));
    }
  }
  return status;
}

mu::data ComparedRows(const core::Comparison& c, size_t* confirmed) {
  mu::data compared = List();
  for (const auto& f : Flagged(c)) {
    mu::data x;
    Set(x, "platform", f.platform);
    Set(x, "baseline", f.baseline);
    Set(x, "regressions", std::to_string(f.regressions));
    Set(x, "improvements", std::to_string(f.improvements));
    Set(x, "status_changes", std::to_string(f.status_changes));
    Set(x, "outcome", OutcomeText(f));
    Append(compared, std::move(x));
    *confirmed += static_cast<size_t>(f.confirmed);
  }
  return compared;
}

}  // namespace

// The build page's "Regressions and improvements" section: regressions, then
// improvements, each sorted by magnitude; status changes; the full report.
mu::data RegressionData(const core::Comparison& c, const std::string& build, const Target& page,
                        const std::string& base) {
  std::vector<Flag> regs, imps;
  for (const auto& p : c.platforms) {
    for (const auto& ch : p.changes) {
      if (ch.verdict == core::Verdict::kRegression) regs.push_back({&p, &ch});
      if (ch.verdict == core::Verdict::kImprovement) imps.push_back({&p, &ch});
    }
  }
  auto by_magnitude = [](const Flag& a, const Flag& b) {
    double ma = a.c->Magnitude(), mb = b.c->Magnitude();
    if (ma != mb) return ma > mb;
    return std::tie(a.p->platform_id, a.c->key, a.c->metric) < std::tie(b.p->platform_id, b.c->key, b.c->metric);
  };
  std::sort(regs.begin(), regs.end(), by_magnitude);
  std::sort(imps.begin(), imps.end(), by_magnitude);
  mu::data status = StatusRows(c);
  size_t confirmed = 0;
  mu::data d;
  Set(d, "compared", ComparedRows(c, &confirmed));
  Set(d, "threshold", Num(c.options.threshold_percent, "%g"));
  Set(d, "alpha", Num(c.options.alpha, "%g"));
  Set(d, "persist", std::to_string(c.options.persist));
  Set(d, "has_persist", c.options.persist > 1);
  Set(d, "confirmed_count", std::to_string(confirmed));
  Set(d, "changes", ChangeRows(c, regs, imps, build, page, base));
  Set(d, "has_changes", !regs.empty() || !imps.empty());
  Set(d, "has_status", !status.list_value().empty());
  Set(d, "status", std::move(status));
  Set(d, "compare_html", base + Href(page, {Kind::kComparePage, build, "", "html"}));
  Set(d, "compare_md", base + Href(page, {Kind::kComparePage, build, "", "md"}));
  return d;
}

}  // namespace torchgauge::reporter
