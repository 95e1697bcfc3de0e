#include "reporter/site.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include <kainjow/mustache.hpp>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "core/json_io.h"
#include "core/layout.h"
#include "core/shell.h"
#include "core/version.h"
#include "reporter/charts.h"
#include "reporter/compare_report.h"
#include "reporter/escape.h"
#include "reporter/markdown.h"
#include "reporter/parallel.h"
#include "reporter/paper_data.h"
#include "reporter/site_paths.h"

namespace fs = std::filesystem;
using nlohmann::json;
namespace mu = kainjow::mustache;

namespace torchgauge::reporter {

// ---------------------------------------------------------------- defaults

namespace {
fs::path ExeDir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}
fs::path Installed(const char* sub, const char* source_default) {
  fs::path inst = ExeDir() / ".." / "share" / "torchgauge" / sub;
  std::error_code ec;
  if (fs::exists(inst, ec)) return inst.lexically_normal();
  return source_default;
}
}  // namespace

std::string DefaultPython() {
  if (const char* e = std::getenv("TORCHGAUGE_PYTHON"); e && *e) return e;
  std::string baked = TORCHGAUGE_REPORTER_PYTHON;
  return baked.empty() ? "python3" : baked;
}
fs::path DefaultTemplatesDir() {
  if (const char* e = std::getenv("TORCHGAUGE_TEMPLATES"); e && *e) return e;
  return Installed("templates", TORCHGAUGE_REPORTER_TEMPLATES);
}
fs::path DefaultStaticDir() { return Installed("site", TORCHGAUGE_REPORTER_STATIC); }
fs::path DefaultHelper() { return Installed("vl_render.py", TORCHGAUGE_REPORTER_HELPER); }

namespace {

// ---------------------------------------------------------------- formatting

// kainjow's set() and push_back() copy their argument, so building a page's
// data tree that way copies every nested list once per level. These move it
// in instead (the containers they reach are the data's own, never const).
template <typename T>
void Set(mu::data& obj, const std::string& key, T&& value) {
  mu::data v(std::forward<T>(value));
  obj.set(key, mu::data(false));
  *const_cast<mu::data*>(obj.get(key)) = std::move(v);
}
void Append(mu::data& list, mu::data&& item) { const_cast<mu::list&>(list.list_value()).push_back(std::move(item)); }


std::string Num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
// Milliseconds with about four significant digits, never in exponent form.
std::string Ms(double v) {
  double a = std::fabs(v);
  return Num(v, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f");
}
// Three significant digits, never in exponent form: small rates (CPU
// TFLOP/s, a tiny model's GFLOP) must not print as 0.00.
std::string Sig3(double v) {
  double a = std::fabs(v);
  if (a == 0 || a >= 100) return Num(v, "%.0f");
  int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(a))), 0, 12);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string Pct(double fraction) { return Num(fraction * 100, "%.1f"); }
std::string MiB(const std::optional<int64_t>& b) {
  return b ? Num(static_cast<double>(*b) / (1024.0 * 1024.0), "%.1f") : "—";
}
std::string OptMs(const std::optional<double>& v) { return v ? Ms(*v) : "—"; }
std::string Dash() { return "—"; }

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string DumpJson(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// ---------------------------------------------------------------- writer

class Writer {
 public:
  Writer(fs::path root, SiteReport* report) : root_(std::move(root)), report_(report) {}

  // Writes only when the bytes differ, so untouched outputs keep their mtime;
  // returns whether it wrote. Thread-safe: model pages are written from
  // several threads; each path is written by one of them only.
  bool Write(const std::string& rel, const std::string& contents) {
    fs::path path = root_ / rel;
    {
      std::lock_guard<std::mutex> lock(mu_);
      report_->bytes += contents.size();
    }
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (!ec && size == contents.size()) {
      std::ifstream in(path, std::ios::binary);
      std::string old(contents.size(), '\0');
      if (in.read(old.data(), static_cast<std::streamsize>(old.size())) && old == contents) {
        std::lock_guard<std::mutex> lock(mu_);
        report_->files_unchanged++;
        return false;
      }
    }
    fs::path dir = path.parent_path();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!created_.count(dir.string())) {
        fs::create_directories(dir);
        created_.insert(dir.string());
      }
    }
    if (ec) {
      // A new file: nobody can be reading a half-written version of it, so
      // write it in place (a temp file and a rename would cost a second inode
      // per file, which dominated a fresh render's kernel time).
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
      if (!out) throw std::runtime_error(path.string() + ": write failed");
      std::lock_guard<std::mutex> lock(mu_);
      report_->files_written++;
      return true;
    }
    // Replacing a published file: temp file and rename, as
    // core::WriteFileAtomic, without its fsync (a site is re-renderable, and
    // thousands of fsyncs would dominate the time).
    fs::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
      if (!out) throw std::runtime_error(tmp.string() + ": write failed");
    }
    fs::rename(tmp, path);
    std::lock_guard<std::mutex> lock(mu_);
    report_->files_written++;
    return true;
  }
  fs::path Abs(const std::string& rel) const { return root_ / rel; }

 private:
  fs::path root_;
  SiteReport* report_;
  std::mutex mu_;
  std::set<std::string> created_;
};

// ---------------------------------------------------------------- templates

struct Templates {
  std::string layout, index, build, model, chart;
  static Templates Load(const fs::path& dir) {
    Templates t;
    t.layout = ReadText(dir / "layout.html.mustache");
    t.index = ReadText(dir / "index.md.mustache");
    t.build = ReadText(dir / "build.md.mustache");
    t.model = ReadText(dir / "model.md.mustache");
    t.chart = ReadText(dir / "chart.mustache");
    return t;
  }
};

class Renderer {
 public:
  explicit Renderer(const Templates& t)
      : chart_partial_(t.chart), layout_(t.layout), index_(t.index), build_(t.build), model_(t.model) {
    for (auto* m : {&index_, &build_, &model_}) {
      m->set_custom_escape([](const std::string& s) { return MarkdownEscape(s); });
    }
    layout_.set_custom_escape([](const std::string& s) { return HtmlEscape(s); });
    for (auto* m : {&layout_, &index_, &build_, &model_}) {
      if (!m->is_valid()) throw std::runtime_error("template error: " + m->error_message());
    }
  }

  // The templates link pages by their Markdown twins; in an HTML page, a
  // relative link to a .md page must lead to the .html page instead.
  static std::string HtmlLinks(const std::string& body) {
    std::string out;
    out.reserve(body.size());
    const std::string open = "href=\"";
    size_t pos = 0;
    for (;;) {
      size_t at = body.find(open, pos);
      if (at == std::string::npos) break;
      size_t start = at + open.size();
      size_t end = body.find('"', start);
      if (end == std::string::npos) break;
      std::string url = body.substr(start, end - start);
      size_t hash = url.find('#');
      std::string path = url.substr(0, hash);
      if (url.find(':') == std::string::npos && path.size() > 3 && path.compare(path.size() - 3, 3, ".md") == 0) {
        url = path.substr(0, path.size() - 3) + ".html" + (hash == std::string::npos ? "" : url.substr(hash));
      }
      out.append(body, pos, start - pos);
      out += url;
      pos = end;
    }
    out.append(body, pos, std::string::npos);
    return out;
  }

  // Renders one page as Markdown and, from the same template, as HTML.
  void Page(Writer& w, mu::mustache& tmpl, mu::data& data, const Target& md, const Target& html,
            const std::string& title, std::string* md_out = nullptr) {
    std::string partial = chart_partial_;
    Set(data, "chart", mu::data(mu::partial([partial] { return partial; })));
    Set(data, "html", false);
    std::string markdown = tmpl.render(data);
    if (!tmpl.is_valid()) throw std::runtime_error("template error: " + tmpl.error_message());
    w.Write(SitePath(md), markdown);
    if (md_out) *md_out = markdown;
    Set(data, "html", true);
    std::string body = HtmlLinks(MarkdownToHtml(tmpl.render(data)));
    mu::data page;
    Set(page, "title", title);
    Set(page, "body", body);
    Set(page, "css", Href(html, {Kind::kAsset, "", "torchgauge.css", ""}));
    Set(page, "bundle", Href(html, {Kind::kAsset, "", "vega-bundle.js", ""}));
    Set(page, "js", Href(html, {Kind::kAsset, "", "torchgauge.js", ""}));
    Set(page, "home", Href(html, {Kind::kIndexPage, "", "", "html"}));
    Set(page, "markdown", Href(html, md));
    w.Write(SitePath(html), layout_.render(page));
  }
  mu::mustache& index() { return index_; }
  mu::mustache& build() { return build_; }
  mu::mustache& model() { return model_; }
  // Renders the build template once more as Markdown with another link base.
  std::string Markdown(mu::mustache& tmpl, mu::data data) {
    std::string partial = chart_partial_;
    Set(data, "chart", mu::data(mu::partial([partial] { return partial; })));
    Set(data, "html", false);
    return tmpl.render(data);
  }

 private:
  std::string chart_partial_;
  mu::mustache layout_, index_, build_, model_;
};

// ---------------------------------------------------------------- charts

struct FigureJob {
  fs::path spec, svg;
};

class Charts {
 public:
  Charts(Writer& w, SiteReport* report) : w_(w), report_(report) {}
  // Writes the spec file, queues its SVG unless an SVG newer than an
  // unchanged spec exists, and returns the template data that places the
  // chart on `page` (embedded for HTML, an SVG image for Markdown).
  mu::data Place(const Target& page, const Target& figure, const json& spec, const std::string& title,
                 const std::string& link_base = "") {
    Target vl = figure, svg = figure;
    vl.ext = "vl.json";
    svg.ext = "svg";
    std::string text = DumpJson(spec);
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first = seen_.insert(SitePath(vl)).second;
      if (first) report_->figures++;
    }
    if (first) {
      FigureJob job{w_.Abs(SitePath(vl)), w_.Abs(SitePath(svg))};
      bool changed = w_.Write(SitePath(vl), text + "\n");
      std::error_code e1, e2;
      auto svg_time = fs::last_write_time(job.svg, e1);
      bool svg_current = !changed && !e1 && svg_time >= fs::last_write_time(job.spec, e2) && !e2;
      if (!svg_current) {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_.push_back(std::move(job));
      }
    }
    std::string id = "spec-" + figure.name;
    mu::data d;
    Set(d, "title", title);
    Set(d, "svg", link_base + Href(page, svg));
    Set(d, "spec", link_base + Href(page, vl));
    // Built here, not in the template: the JSON must be escaped for <script>.
    Set(d, "embed_html", "<figure class=\"chart\"><div class=\"vega-chart\" data-spec=\"" + HtmlEscape(id) +
                            "\" role=\"img\" aria-label=\"" + HtmlEscape(title) + "\"></div><script type=\"application/json\" id=\"" +
                            HtmlEscape(id) + "\">" + JsonForScript(text) + "</script><figcaption>" + HtmlEscape(title) +
                            " · <a href=\"" + HtmlEscape(Href(page, vl)) + "\">Vega-Lite spec</a> · <a href=\"" +
                            HtmlEscape(Href(page, svg)) + "\">SVG</a></figcaption></figure>");
    return d;
  }
  // Sorted, so the SVG helper's order does not depend on thread timing.
  std::vector<FigureJob> jobs() const {
    std::vector<FigureJob> out = jobs_;
    std::sort(out.begin(), out.end(), [](const FigureJob& a, const FigureJob& b) { return a.spec < b.spec; });
    return out;
  }

 private:
  Writer& w_;
  SiteReport* report_;
  std::mutex mu_;
  std::vector<FigureJob> jobs_;
  std::set<std::string> seen_;
};

// ---------------------------------------------------------------- page data

mu::data List() { return mu::data(mu::data::type::list); }

std::string DomainLabel(const std::string& domain, const PaperTable2& paper) {
  const PaperRow* p = paper.Find(domain);
  return p ? p->label : domain;
}

std::string StatusText(const std::map<std::string, int>& counts) {
  std::string out;
  for (const char* s : core::kStatuses) {
    auto it = counts.find(s);
    if (it == counts.end()) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(it->second) + " " + s;
  }
  return out.empty() ? "no runs" : out;
}

mu::data Table2Rows(const std::vector<DomainBreakdown>& rows, bool train, const PaperTable2& paper) {
  mu::data list = List();
  for (const auto& d : rows) {
    if (d.models == 0 && !d.paper) continue;
    mu::data r;
    Set(r, "domain", DomainLabel(d.domain, paper));
    Set(r, "models", d.models ? std::to_string(d.models) : Dash());
    Set(r, "active", d.models ? Pct(d.active) : Dash());
    Set(r, "movement", d.models ? Pct(d.movement) : Dash());
    Set(r, "idle", d.models ? Pct(d.idle) : Dash());
    if (d.paper) {
      Set(r, "paper_active", Num(train ? d.paper->train_active : d.paper->eval_active, "%.1f"));
      Set(r, "paper_movement", Num(train ? d.paper->train_movement : d.paper->eval_movement, "%.1f"));
      Set(r, "paper_idle", Num(train ? d.paper->train_idle : d.paper->eval_idle, "%.1f"));
    } else {
      Set(r, "paper_active", Dash());
      Set(r, "paper_movement", Dash());
      Set(r, "paper_idle", Dash());
    }
    Append(list, std::move(r));
  }
  return list;
}

std::optional<double> Tflops(const core::RunResult& r) {
  if (!r.flops) return std::nullopt;
  return r.flops->achieved_tflops_profiler ? r.flops->achieved_tflops_profiler : r.flops->achieved_tflops_analytic;
}

mu::data RunRow(const core::RunResult& r, const std::string& model_href) {
  mu::data d;
  Set(d, "model", r.model.id);
  Set(d, "model_href", model_href);
  Set(d, "domain", r.model.domain);
  Set(d, "mode", r.mode);
  Set(d, "backend", r.backend);
  Set(d, "precision", r.precision);
  Set(d, "config", ConfigLabel(r));
  Set(d, "batch", std::to_string(r.batch_size));
  const bool timed = r.timing.has_value();
  Set(d, "median", timed ? Ms(r.timing->median_ms) : Dash());
  Set(d, "min", timed ? Ms(r.timing->min_ms) : Dash());
  Set(d, "max", timed ? Ms(r.timing->max_ms) : Dash());
  Set(d, "throughput", timed && r.timing->throughput_per_s ? Num(*r.timing->throughput_per_s, "%.1f") : Dash());
  Set(d, "cov", timed ? Pct(r.timing->cov) : Dash());
  Set(d, "cpu_mib", r.memory ? MiB(r.memory->cpu_peak_rss_bytes) : Dash());
  Set(d, "gpu_mib", r.memory ? MiB(r.memory->gpu_peak_allocated_bytes) : Dash());
  auto tf = Tflops(r);
  Set(d, "tflops", tf ? Sig3(*tf) : Dash());
  double flops = 0;
  if (r.flops) flops = r.flops->profiler_flops_per_iter.value_or(r.flops->analytic_flops_per_iter.value_or(0));
  Set(d, "gflops", flops > 0 ? Sig3(flops / 1e9) : Dash());
  Set(d, "kernels", r.gpu_breakdown ? Num(r.gpu_breakdown->kernel_count, "%.0f") : Dash());
  Set(d, "status", r.status);
  Set(d, "reason", r.reason.value_or(r.signal ? "signal " + std::to_string(*r.signal) : ""));
  return d;
}

// How a timed run was measured: its processes and samples, each process's
// median, and the noise band those medians give the comparison.
mu::data MeasurementRow(const core::RunResult& r) {
  mu::data d;
  Set(d, "config", ConfigLabel(r));
  const int processes = r.settings ? r.settings->processes : 1;
  Set(d, "processes", std::to_string(processes));
  Set(d, "samples", std::to_string(r.timing->samples_ms.size()));
  Set(d, "warmup", std::to_string(r.timing->warmup_iterations));
  Set(d, "threads", r.settings && r.settings->threads > 0 ? std::to_string(r.settings->threads) : std::string("default"));
  std::string medians;
  for (double m : r.timing->process_medians_ms) medians += (medians.empty() ? "" : ", ") + Ms(m);
  Set(d, "process_medians", medians.empty() ? Dash() : medians);
  auto band = core::NoiseBandPercent(r.timing->process_medians_ms);
  Set(d, "noise", band ? Num(*band, "%.1f") : Dash());
  return d;
}

// Paths are shown relative to the results root, so pages do not depend on
// where the results were when the site was rendered.
mu::data Problems(const std::vector<Problem>& problems, const fs::path& root) {
  mu::data list = List();
  const std::string prefix = root.string() + (root.string().ends_with("/") ? "" : "/");
  for (const auto& p : problems) {
    mu::data d;
    Set(d, "file", p.file.starts_with(prefix) ? p.file.substr(prefix.size()) : p.file);
    Set(d, "field", p.field.empty() ? Dash() : p.field);
    Set(d, "message", p.message);
    Append(list, std::move(d));
  }
  return list;
}

// ---------------------------------------------------------------- comparison

std::string MetricValue(core::Metric m, double v) {
  switch (m) {
    case core::Metric::kTime: return Ms(v) + " ms";
    case core::Metric::kThroughput: return Num(v, "%.1f") + "/s";
    default: return Num(v / (1024.0 * 1024.0), "%.1f") + " MiB";
  }
}

std::string KeyConfig(const core::RunKey& k) { return k.mode + "/" + k.backend + "/" + k.precision; }

// What the comparison flagged, per platform, for the build summary.
std::vector<FlaggedChanges> Flagged(const core::Comparison& c) {
  std::vector<FlaggedChanges> out;
  for (const auto& p : c.platforms) {
    FlaggedChanges f;
    f.platform = p.platform_id;
    f.baseline = p.base_builds.empty() ? "" : p.base_builds.back();
    for (const auto& ch : p.changes) {
      if (ch.verdict == core::Verdict::kRegression) {
        f.regressions++;
        if (ch.confirmed) f.confirmed++;
      } else if (ch.verdict == core::Verdict::kImprovement) {
        f.improvements++;
      }
    }
    f.status_changes = static_cast<int>(p.status_changes.size() + p.presence.size());
    out.push_back(f);
  }
  return out;
}

// The build page's "Regressions and improvements" section: regressions, then
// improvements, each sorted by magnitude; status changes; the full report.
mu::data RegressionData(const core::Comparison& c, const std::string& build, const Target& page,
                        const std::string& base) {
  struct Flag {
    const core::PlatformComparison* p;
    const core::MetricChange* c;
  };
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
  mu::data rows = List();
  for (const auto* list : {&regs, &imps}) {
    for (const auto& f : *list) {
      const auto& ch = *f.c;
      mu::data r;
      Set(r, "kind", list == &regs ? std::string("regression") : std::string("improvement"));
      Set(r, "platform", f.p->platform_id);
      Set(r, "model", ch.key.model);
      Set(r, "model_href", base + Href(page, {Kind::kModelPage, build, ch.key.model, page.ext}));
      Set(r, "config", KeyConfig(ch.key));
      Set(r, "metric", std::string(core::MetricName(ch.metric)));
      Set(r, "base", MetricValue(ch.metric, ch.base_value));
      Set(r, "new", MetricValue(ch.metric, ch.new_value));
      Set(r, "delta", Num(ch.delta_percent, "%+.1f"));
      Set(r, "p", ch.p_value ? Num(*ch.p_value, "%.2g") : Dash());
      Set(r, "noise", ch.noise_percent ? Num(*ch.noise_percent, "%.1f") : Dash());
      Set(r, "confirmed", list == &regs ? std::string(ch.confirmed ? "yes" : "not yet (" + std::to_string(ch.seen_in) +
                                                                                 " of " + std::to_string(c.options.persist) + ")")
                                       : Dash());
      Append(rows, std::move(r));
    }
  }
  mu::data status = List();
  for (const auto& p : c.platforms) {
    for (const auto& sc : p.status_changes) {
      mu::data r;
      Set(r, "platform", p.platform_id);
      Set(r, "model", sc.key.model);
      Set(r, "config", KeyConfig(sc.key));
      Set(r, "before", sc.base_status);
      Set(r, "now", sc.new_status);
      Set(r, "reason", sc.reason.value_or(""));
      Append(status, std::move(r));
    }
    for (const auto& pr : p.presence) {
      mu::data r;
      Set(r, "platform", p.platform_id);
      Set(r, "model", pr.key.model);
      Set(r, "config", KeyConfig(pr.key));
      Set(r, "before", pr.appeared ? std::string("(absent)") : pr.status);
      Set(r, "now", pr.appeared ? pr.status : std::string("(absent)"));
      Set(r, "reason", std::string(pr.appeared ? "new run" : "run missing from this build"));
      Append(status, std::move(r));
    }
  }
  mu::data compared = List();
  size_t confirmed = 0;
  for (const auto& f : Flagged(c)) {
    mu::data x;
    Set(x, "platform", f.platform);
    Set(x, "baseline", f.baseline);
    Set(x, "regressions", std::to_string(f.regressions));
    Set(x, "improvements", std::to_string(f.improvements));
    Set(x, "status_changes", std::to_string(f.status_changes));
    Append(compared, std::move(x));
    confirmed += static_cast<size_t>(f.confirmed);
  }
  mu::data d;
  Set(d, "compared", std::move(compared));
  Set(d, "threshold", Num(c.options.threshold_percent, "%g"));
  Set(d, "alpha", Num(c.options.alpha, "%g"));
  Set(d, "persist", std::to_string(c.options.persist));
  Set(d, "has_persist", c.options.persist > 1);
  Set(d, "confirmed_count", std::to_string(confirmed));
  Set(d, "changes", std::move(rows));
  Set(d, "has_changes", !regs.empty() || !imps.empty());
  Set(d, "has_status", !status.list_value().empty());
  Set(d, "status", std::move(status));
  Set(d, "compare_html", base + Href(page, {Kind::kComparePage, build, "", "html"}));
  Set(d, "compare_md", base + Href(page, {Kind::kComparePage, build, "", "md"}));
  return d;
}

// Summaries of every build, oldest first, as the index and the trends read them.
struct History {
  std::vector<BuildSummary> builds;
};

// ---------------------------------------------------------------- build pages

class SiteBuilder {
 public:
  SiteBuilder(const SiteOptions& o, Writer& w, const Templates& t, Renderer& r, Charts& c, const PaperTable2& paper)
      : o_(o), w_(w), t_(t), r_(r), c_(c), paper_(paper) {}

  void WriteBuild(const BuildView& v, const core::Comparison* cmp, const History& history);
  void WriteIndex(const History& history);

 private:
  mu::data BuildData(const BuildView& v, const core::Comparison* cmp, const Target& page, const std::string& base);
  mu::data BackendSection(const Target& page, const std::string& build, const PlatformView& p, const std::string& base);
  void WriteModel(const BuildView& v, const std::string& model, const History& history, Renderer& r);
  void WriteModels(const BuildView& v, const History& history);
  void WriteTables(const BuildView& v);

  const SiteOptions& o_;
  Writer& w_;
  const Templates& t_;
  Renderer& r_;
  std::vector<std::unique_ptr<Renderer>> extra_renderers_;  // one per model-page thread beyond the first
  Charts& c_;
  const PaperTable2& paper_;
};

// Figures 3 and 4 with the paper's headline geomeans and the per-run ratios.
mu::data SiteBuilder::BackendSection(const Target& page, const std::string& build, const PlatformView& p,
                                     const std::string& base) {
  auto ratio = [](const std::optional<double>& r) { return r ? Num(*r, "%.3f") : Dash(); };
  mu::data d;
  mu::data summaries = List();
  for (const auto& s : p.backend_summaries) {
    mu::data row;
    Set(row, "backend", s.backend);
    Set(row, "mode", s.mode);
    Set(row, "pairs", std::to_string(s.pairs));
    Set(row, "time", Num(s.time_geomean, "%.3f"));
    Set(row, "speedup", Num(1.0 / s.time_geomean, "%.2f") + "×");
    Set(row, "cpu_memory", ratio(s.cpu_memory_geomean));
    Set(row, "gpu_memory", ratio(s.gpu_memory_geomean));
    Append(summaries, std::move(row));
  }
  Set(d, "summaries", std::move(summaries));
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
        c_.Place(page, f, CompilerChart(of_mode, std::string(fig.name) + ": backends relative to eager, " + p.id),
                 std::string(fig.name) + ": time, CPU memory and GPU memory of each backend relative to eager on " + p.id,
                 base));
  }
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
    Set(rr, "cpu_ratio", ratio(br.cpu_memory_ratio));
    Set(rr, "gpu_ratio", ratio(br.gpu_memory_ratio));
    Set(rr, "setup", br.backend_setup_ms ? Sig3(*br.backend_setup_ms / 1000.0) : Dash());
    Append(rows, std::move(rr));
  }
  Set(d, "rows", std::move(rows));
  return d;
}

mu::data SiteBuilder::BuildData(const BuildView& v, const core::Comparison* cmp, const Target& page,
                                const std::string& base) {
  mu::data d;
  Set(d, "build_id", v.id);
  Set(d, "started_at", v.started_at.empty() ? Dash() : v.started_at);
  Set(d, "home", base.empty() ? Href(page, {Kind::kIndexPage, "", "", page.ext}) : base + "../../index.html");
  Set(d, "summary_md", base + "summary.md");
  Set(d, "citation", paper_.citation);
  size_t problem_count = v.problems.size();
  Set(d, "has_problems", problem_count > 0);
  Set(d, "problem_count", std::to_string(problem_count));
  Set(d, "problems", Problems(v.problems, o_.results));
  mu::data platforms = List();
  for (const auto& p : v.platforms) {
    const Manifest& m = *p.manifest;
    mu::data pd;
    Set(pd, "id", p.id);
    Set(pd, "manifest_present", m.present);
    Set(pd, "device", m.device_name.empty() ? Dash()
                     : m.device_name.starts_with(m.vendor) ? m.device_name : m.vendor + " " + m.device_name);
    Set(pd, "libtorch", m.libtorch_version.empty() ? Dash() : m.libtorch_version);
    std::string runtime = !m.cuda_runtime.empty() ? "CUDA " + m.cuda_runtime : !m.hip_runtime.empty() ? "HIP " + m.hip_runtime : Dash();
    Set(pd, "runtime", runtime);
    Set(pd, "cpu", m.cpu_model.empty() ? Dash() : m.cpu_model + " (" + std::to_string(m.logical_cores) + " logical cores)");
    Set(pd, "host", m.hostname.empty() ? Dash() : m.hostname + ", " + m.os);
    Set(pd, "suite", m.suite.empty() ? Dash() : m.suite);
    Set(pd, "collector", m.collector_version.empty() ? Dash() : m.collector_version + " (" + m.git_sha + ")");
    Set(pd, "window", m.started_at.empty() ? Dash() : m.started_at + " – " + (m.finished_at.empty() ? "?" : m.finished_at));
    Set(pd, "interrupted", m.interrupted);
    Set(pd, "status_text", StatusText(p.status_counts));
    Set(pd, "geomean_train", OptMs(p.geomean_train_ms));
    Set(pd, "geomean_eval", OptMs(p.geomean_eval_ms));
    Set(pd, "geomean_train_n", std::to_string(p.geomean_train_n));
    Set(pd, "geomean_eval_n", std::to_string(p.geomean_eval_n));
    Set(pd, "has_breakdown", p.has_gpu_breakdown);
    if (p.has_gpu_breakdown) {
      Target f1{Kind::kFigure, v.id, "fig1-train." + p.id, ""};
      Target f2{Kind::kFigure, v.id, "fig2-eval." + p.id, ""};
      if (!p.figure1_train.empty()) {
        Set(pd, "fig1", c_.Place(page, f1, BreakdownChart(p.figure1_train, "Figure 1 (train): GPU time breakdown, " + p.id),
                                "Figure 1: training step time breakdown on " + p.id, base));
      }
      if (!p.figure2_eval.empty()) {
        Set(pd, "fig2", c_.Place(page, f2, BreakdownChart(p.figure2_eval, "Figure 2 (eval): GPU time breakdown, " + p.id),
                                "Figure 2: inference step time breakdown on " + p.id, base));
      }
    }
    // Table 2 on every platform: where nothing was measured, the paper's
    // column still shows what a GPU platform would be compared with.
    Set(pd, "table2_train", Table2Rows(p.table2_train, true, paper_));
    Set(pd, "table2_eval", Table2Rows(p.table2_eval, false, paper_));
    if (!p.backend_ratios.empty()) Set(pd, "backend_ratios", BackendSection(page, v.id, p, base));
    mu::data runs = List();
    for (const auto* r : p.runs) {
      std::string href = base + Href(page, {Kind::kModelPage, v.id, r->model.id, page.ext});
      Append(runs, RunRow(*r, href));
    }
    Set(pd, "runs", std::move(runs));
    mu::data failures = List();
    for (const auto* r : p.failures) Append(failures, RunRow(*r, ""));
    Set(pd, "has_failures", !p.failures.empty());
    Set(pd, "failures", std::move(failures));
    mu::data coverage = List();
    for (const auto& c : p.coverage) {
      mu::data cd;
      Set(cd, "domain", c.domain == "all" ? std::string("All domains (union)") : DomainLabel(c.domain, paper_));
      Set(cd, "models", std::to_string(c.models));
      Set(cd, "ops", std::to_string(c.distinct_ops));
      Append(coverage, std::move(cd));
    }
    Set(pd, "coverage", std::move(coverage));
    Set(pd, "has_coverage", !p.coverage.empty());
    mu::data tables = List();
    for (std::string name : {"runs", "table2", "coverage"}) {
      if (name == "table2" && !p.has_gpu_breakdown) continue;
      mu::data t;
      Set(t, "name", name);
      Set(t, "csv", base + Href(page, {Kind::kTable, v.id, name + "." + p.id, "csv"}));
      Set(t, "tex", base + Href(page, {Kind::kTable, v.id, name + "." + p.id, "tex"}));
      Append(tables, std::move(t));
    }
    Set(pd, "tables", std::move(tables));
    Append(platforms, std::move(pd));
  }
  Set(d, "platforms", std::move(platforms));
  if (!v.vendor_ratios.empty()) {
    mu::data vr = List();
    for (const auto& r : v.vendor_ratios) {
      mu::data x;
      Set(x, "model", r.model);
      Set(x, "mode", r.mode);
      Set(x, "nvidia", r.nvidia_platform);
      Set(x, "amd", r.amd_platform);
      Set(x, "ratio", Num(r.ratio, "%.3f"));
      Append(vr, std::move(x));
    }
    Set(d, "vendor_ratios", std::move(vr));
  }
  Set(d, "has_vendor_ratios", !v.vendor_ratios.empty());
  if (cmp) Set(d, "regressions", RegressionData(*cmp, v.id, page, base));
  mu::data models = List();
  for (const auto& m : v.models) {
    mu::data md;
    Set(md, "id", m);
    Set(md, "href", base + Href(page, {Kind::kModelPage, v.id, m, page.ext}));
    Append(models, std::move(md));
  }
  Set(d, "models", std::move(models));
  Set(d, "runs_json", base + Href(page, {Kind::kData, v.id, "runs", ""}));
  return d;
}

void SiteBuilder::WriteTables(const BuildView& v) {
  for (const auto& p : v.platforms) {
    std::string csv = "model,domain,mode,backend,precision,batch_size,median_ms,throughput_per_s,cov,cpu_peak_mib,gpu_peak_mib,tflops,status,reason\n";
    std::string tex = "% " + TexEscape("Per-run results, build " + v.id + ", platform " + p.id) +
                      "\n\\begin{tabular}{llllrrrrl}\n\\hline\nModel & Mode & Backend & Precision & Batch & Median (ms) & CoV (\\%) & TFLOP/s & Status \\\\\n\\hline\n";
    for (const auto* r : p.runs) {
      mu::data unused;
      auto tf = Tflops(*r);
      const bool t = r->timing.has_value();
      csv += CsvField(r->model.id) + "," + CsvField(r->model.domain) + "," + r->mode + "," + r->backend + "," + r->precision +
             "," + std::to_string(r->batch_size) + "," + (t ? Num(r->timing->median_ms, "%.6g") : "") + "," +
             (t && r->timing->throughput_per_s ? Num(*r->timing->throughput_per_s, "%.6g") : "") + "," +
             (t ? Num(r->timing->cov, "%.6g") : "") + "," +
             (r->memory && r->memory->cpu_peak_rss_bytes ? MiB(r->memory->cpu_peak_rss_bytes) : "") + "," +
             (r->memory && r->memory->gpu_peak_allocated_bytes ? MiB(r->memory->gpu_peak_allocated_bytes) : "") + "," +
             (tf ? Num(*tf, "%.4g") : "") + "," + r->status + "," + CsvField(r->reason.value_or("")) + "\n";
      tex += TexEscape(r->model.id) + " & " + r->mode + " & " + r->backend + " & " + r->precision + " & " +
             std::to_string(r->batch_size) + " & " + (t ? Ms(r->timing->median_ms) : "--") + " & " +
             (t ? Pct(r->timing->cov) : "--") + " & " + (tf ? Sig3(*tf) : "--") + " & " + r->status + " \\\\\n";
    }
    tex += "\\hline\n\\end{tabular}\n";
    w_.Write(SitePath({Kind::kTable, v.id, "runs." + p.id, "csv"}), csv);
    w_.Write(SitePath({Kind::kTable, v.id, "runs." + p.id, "tex"}), tex);

    if (p.has_gpu_breakdown) {
      std::string c2 = "mode,domain,models,gpu_active_pct,data_movement_pct,gpu_idle_pct,paper_gpu_active_pct,paper_data_movement_pct,paper_gpu_idle_pct\n";
      std::string t2 = "% " + TexEscape("Table 2 reproduction, build " + v.id + ", platform " + p.id + "; paper: " + paper_.citation) +
                       "\n\\begin{tabular}{lrrrrrrrrrrrr}\n\\hline\n & \\multicolumn{6}{c}{Train} & \\multicolumn{6}{c}{Inference} \\\\\n"
                       "Domain & Active & (A100) & Movement & (A100) & Idle & (A100) & Active & (A100) & Movement & (A100) & Idle & (A100) \\\\\n\\hline\n";
      auto cell = [](bool has, double v) { return has ? Pct(v) : std::string("--"); };
      auto pcell = [](const PaperRow* r, double PaperRow::*f) { return r ? Num(r->*f, "%.1f") : std::string("--"); };
      for (size_t i = 0; i < p.table2_train.size(); ++i) {
        const auto& tr = p.table2_train[i];
        const auto& ev = p.table2_eval[i];
        if (tr.models == 0 && ev.models == 0 && !tr.paper) continue;
        for (const auto* d : {&tr, &ev}) {
          bool train = d == &tr;
          c2 += std::string(train ? "train" : "eval") + "," + d->domain + "," + std::to_string(d->models) + "," +
                (d->models ? Pct(d->active) + "," + Pct(d->movement) + "," + Pct(d->idle) : ",,") + "," +
                (d->paper ? Num(train ? d->paper->train_active : d->paper->eval_active, "%.1f") + "," +
                                Num(train ? d->paper->train_movement : d->paper->eval_movement, "%.1f") + "," +
                                Num(train ? d->paper->train_idle : d->paper->eval_idle, "%.1f")
                          : ",,") + "\n";
        }
        t2 += TexEscape(DomainLabel(tr.domain, paper_)) + " & " + cell(tr.models, tr.active) + " & " +
              pcell(tr.paper, &PaperRow::train_active) + " & " + cell(tr.models, tr.movement) + " & " +
              pcell(tr.paper, &PaperRow::train_movement) + " & " + cell(tr.models, tr.idle) + " & " +
              pcell(tr.paper, &PaperRow::train_idle) + " & " + cell(ev.models, ev.active) + " & " +
              pcell(ev.paper, &PaperRow::eval_active) + " & " + cell(ev.models, ev.movement) + " & " +
              pcell(ev.paper, &PaperRow::eval_movement) + " & " + cell(ev.models, ev.idle) + " & " +
              pcell(ev.paper, &PaperRow::eval_idle) + " \\\\\n";
      }
      t2 += "\\hline\n\\end{tabular}\n";
      w_.Write(SitePath({Kind::kTable, v.id, "table2." + p.id, "csv"}), c2);
      w_.Write(SitePath({Kind::kTable, v.id, "table2." + p.id, "tex"}), t2);
    }
    std::string c3 = "domain,models,distinct_aten_ops\n";
    std::string t3 = "\\begin{tabular}{lrr}\n\\hline\nDomain & Models & Distinct ATen ops \\\\\n\\hline\n";
    for (const auto& c : p.coverage) {
      c3 += c.domain + "," + std::to_string(c.models) + "," + std::to_string(c.distinct_ops) + "\n";
      t3 += TexEscape(c.domain == "all" ? "All (union)" : DomainLabel(c.domain, paper_)) + " & " + std::to_string(c.models) +
            " & " + std::to_string(c.distinct_ops) + " \\\\\n";
    }
    t3 += "\\hline\n\\end{tabular}\n";
    w_.Write(SitePath({Kind::kTable, v.id, "coverage." + p.id, "csv"}), c3);
    w_.Write(SitePath({Kind::kTable, v.id, "coverage." + p.id, "tex"}), t3);
  }
}

// Model pages are independent: they are rendered on up to o_.threads
// threads (0: every core), each with its own Renderer (a mustache template
// is not safe to render from two threads), kept for the next build. Output
// bytes do not depend on the thread count.
void SiteBuilder::WriteModels(const BuildView& v, const History& history) {
  const int threads = ThreadCount(o_.threads, v.models.size());
  while (static_cast<int>(extra_renderers_.size()) < threads - 1) {
    extra_renderers_.push_back(std::make_unique<Renderer>(t_));
  }
  ParallelFor(v.models.size(), threads, [&](size_t i, int worker) {
    WriteModel(v, v.models[i], history, worker == 0 ? r_ : *extra_renderers_[worker - 1]);
  });
}

void SiteBuilder::WriteModel(const BuildView& v, const std::string& model, const History& history, Renderer& r) {
  Target md{Kind::kModelPage, v.id, model, "md"}, html{Kind::kModelPage, v.id, model, "html"};
  mu::data d;
  Set(d, "build_id", v.id);
  Set(d, "model", model);
  Set(d, "build_href", Href(md, {Kind::kBuildPage, v.id, "", "md"}));
  Set(d, "home", Href(md, {Kind::kIndexPage, "", "", "md"}));
  bool identity_set = false;
  mu::data platforms = List();
  std::vector<SamplePoint> unused;
  for (const auto& p : v.platforms) {
    std::vector<const core::RunResult*> runs;
    for (const auto* r : p.runs) {
      if (r->model.id == model) runs.push_back(r);
    }
    if (runs.empty()) continue;
    if (!identity_set) {
      Set(d, "paper_name", runs[0]->model.paper_name);
      Set(d, "domain", runs[0]->model.domain);
      Set(d, "task", runs[0]->model.task);
      Set(d, "reference", runs[0]->model.reference);
      identity_set = true;
    }
    mu::data pd;
    Set(pd, "id", p.id);
    Set(pd, "device", p.manifest->device_name.empty() ? Dash() : p.manifest->device_name);
    mu::data rows = List(), kernels = List();
    std::vector<SamplePoint> samples;
    bool has_kernels = false;
    mu::data measurement = List();
    for (const auto* r : runs) {
      Append(rows, RunRow(*r, ""));
      if (r->timing) {
        Append(measurement, MeasurementRow(*r));
        for (double s : r->timing->samples_ms) samples.push_back({ConfigLabel(*r), s});
      }
      if (r->gpu_breakdown) {
        for (const auto& k : r->gpu_breakdown->top_kernels) {
          mu::data kd;
          Set(kd, "config", ConfigLabel(*r));
          Set(kd, "name", k.name);
          Set(kd, "total_ms", Ms(k.total_ms));
          Set(kd, "count", std::to_string(k.count));
          Append(kernels, std::move(kd));
          has_kernels = true;
        }
      }
    }
    Set(pd, "runs", std::move(rows));
    Set(pd, "has_measurement", !measurement.list_value().empty());
    Set(pd, "measurement", std::move(measurement));
    Set(pd, "kernels", std::move(kernels));
    Set(pd, "has_kernels", has_kernels);
    if (!samples.empty()) {
      Set(pd, "samples", c_.Place(md, {Kind::kFigure, v.id, model + ".samples." + p.id, ""},
                                 SamplesChart(samples, model + ": step time samples, " + p.id),
                                 "Step time samples of " + model + " on " + p.id));
    }
    Append(platforms, std::move(pd));
  }
  Set(d, "platforms", std::move(platforms));
  // Trend: the last trend_builds builds up to and including this one.
  std::vector<TrendPoint> points;
  size_t end = 0;
  for (size_t i = 0; i < history.builds.size(); ++i) {
    if (history.builds[i].id == v.id) end = i + 1;
  }
  size_t begin = end > static_cast<size_t>(o_.trend_builds) ? end - o_.trend_builds : 0;
  for (size_t i = begin; i < end; ++i) {
    const auto& b = history.builds[i];
    if (b.started_at.empty()) continue;
    for (const auto& p : b.platforms) {
      auto lo = std::lower_bound(p.medians.begin(), p.medians.end(), model,
                                 [](const ConfigMedian& m, const std::string& id) { return m.model < id; });
      for (auto it = lo; it != p.medians.end() && it->model == model; ++it) {
        points.push_back({b.id, b.started_at, p.id + " " + it->config, it->median_ms});
      }
    }
  }
  if (!points.empty()) {
    Set(d, "trend", c_.Place(md, {Kind::kFigure, v.id, model + ".trend", ""},
                            TrendChart(points, model + ": median step time across builds", "Median step time (ms, log scale)"),
                            "Median step time of " + model + " across builds"));
  }
  r.Page(w_, r.model(), d, md, html, model + " · " + v.id + " · TorchGauge");
}

void SiteBuilder::WriteBuild(const BuildView& v, const core::Comparison* cmp, const History& history) {
  Target md{Kind::kBuildPage, v.id, "", "md"}, html{Kind::kBuildPage, v.id, "", "html"};
  if (cmp) {
    // The full comparison report, as `torchgauge-report compare --html` writes
    // it; model links are relative unless the site has a public URL.
    ReportOptions ro;
    ro.site_url = o_.site_url.empty() ? "../.." : o_.site_url;
    while (ro.site_url.size() > 1 && ro.site_url.back() == '/') ro.site_url.pop_back();
    w_.Write(SitePath({Kind::kComparePage, v.id, "", "html"}), RenderCompareHtml(*cmp, ro));
    w_.Write(SitePath({Kind::kComparePage, v.id, "", "md"}), RenderCompareMarkdown(*cmp, ro));
  }
  mu::data d = BuildData(v, cmp, md, "");
  std::string markdown;
  r_.Page(w_, r_.build(), d, md, html, "Build " + v.id + " · TorchGauge", &markdown);
  // summary.md: the build page for pasting into a GitHub issue, under the
  // comment limit; with --site-url its links are absolute.
  std::string summary = markdown;
  std::string full = "index.md";
  if (!o_.site_url.empty()) {
    std::string base = o_.site_url + (o_.site_url.ends_with("/") ? "" : "/") + SitePath(md).substr(0, SitePath(md).rfind('/') + 1);
    summary = r_.Markdown(r_.build(), BuildData(v, cmp, md, base));
    full = base + "index.html";
  }
  w_.Write(SitePath({Kind::kBuildSummary, v.id, "", ""}), TruncateMarkdown(summary, kGitHubCommentLimit, full));
  WriteTables(v);
  WriteModels(v, history);
  // The data the tables show, for scripts.
  json runs = json::array();
  for (const auto& p : v.platforms) {
    for (const auto* r : p.runs) {
      json row = {{"platform", p.id}, {"model", r->model.id}, {"domain", r->model.domain}, {"mode", r->mode},
                  {"backend", r->backend}, {"precision", r->precision}, {"batch_size", r->batch_size},
                  {"status", r->status}};
      if (r->timing) row["median_ms"] = r->timing->median_ms;
      if (r->gpu_breakdown) {
        row["gpu_active_fraction"] = r->gpu_breakdown->active_fraction;
        row["data_movement_fraction"] = r->gpu_breakdown->data_movement_fraction;
        row["gpu_idle_fraction"] = r->gpu_breakdown->idle_fraction;
      }
      runs.push_back(row);
    }
  }
  w_.Write(SitePath({Kind::kData, v.id, "runs", ""}), DumpJson(runs, 1) + "\n");
}

void SiteBuilder::WriteIndex(const History& history) {
  Target md{Kind::kIndexPage, "", "", "md"}, html{Kind::kIndexPage, "", "", "html"};
  mu::data d;
  mu::data builds = List();
  for (auto it = history.builds.rbegin(); it != history.builds.rend(); ++it) {
    const auto& b = *it;
    mu::data bd;
    Set(bd, "id", b.id);
    Set(bd, "href", Href(md, {Kind::kBuildPage, b.id, "", "md"}));
    Set(bd, "started_at", b.started_at.empty() ? Dash() : b.started_at);
    std::string plats;
    for (const auto& p : b.platforms) plats += (plats.empty() ? "" : ", ") + p.id;
    Set(bd, "platforms", plats.empty() ? Dash() : plats);
    Set(bd, "runs", std::to_string(b.runs));
    Set(bd, "ok", std::to_string(b.ok));
    Set(bd, "problems", std::to_string(b.problems));
    Append(builds, std::move(bd));
  }
  Set(d, "builds", std::move(builds));
  Set(d, "has_builds", !history.builds.empty());
  mu::data flagged = List();
  bool any_compared = false;
  for (auto it = history.builds.rbegin(); it != history.builds.rend(); ++it) {
    for (const auto& f : it->flagged) {
      any_compared = true;
      if (!f.Any()) continue;
      mu::data x;
      Set(x, "build", it->id);
      Set(x, "href", Href(md, {Kind::kBuildPage, it->id, "", "md"}));
      Set(x, "platform", f.platform);
      Set(x, "baseline", f.baseline);
      Set(x, "regressions", f.confirmed == f.regressions ? std::to_string(f.regressions)
                                                        : std::to_string(f.regressions) + " (" +
                                                              std::to_string(f.confirmed) + " confirmed)");
      Set(x, "improvements", std::to_string(f.improvements));
      Set(x, "status_changes", std::to_string(f.status_changes));
      Set(x, "compare_href", Href(md, {Kind::kComparePage, it->id, "", "html"}));
      Append(flagged, std::move(x));
    }
  }
  Set(d, "has_flagged", !flagged.list_value().empty());
  Set(d, "flagged", std::move(flagged));
  Set(d, "any_compared", any_compared);
  if (!history.builds.empty()) {
    const auto& latest = history.builds.back();
    Set(d, "latest_id", latest.id);
    Set(d, "latest_href", Href(md, {Kind::kBuildPage, latest.id, "", "md"}));
    mu::data plats = List();
    for (const auto& p : latest.platforms) {
      mu::data pd;
      Set(pd, "id", p.id);
      Set(pd, "device", p.device.empty() ? Dash() : p.device.starts_with(p.vendor) ? p.device : p.vendor + " " + p.device);
      Set(pd, "geomean_train", OptMs(p.geomean_train_ms));
      Set(pd, "geomean_eval", OptMs(p.geomean_eval_ms));
      Set(pd, "train_n", std::to_string(p.geomean_train_n));
      Set(pd, "eval_n", std::to_string(p.geomean_eval_n));
      Set(pd, "status_text", StatusText(p.status_counts));
      Append(plats, std::move(pd));
    }
    Set(d, "latest_platforms", std::move(plats));
  }
  std::vector<TrendPoint> points;
  for (const auto& b : history.builds) {
    if (b.started_at.empty()) continue;
    for (const auto& p : b.platforms) {
      if (p.geomean_train_ms) points.push_back({b.id, b.started_at, p.id + " train", *p.geomean_train_ms});
      if (p.geomean_eval_ms) points.push_back({b.id, b.started_at, p.id + " eval", *p.geomean_eval_ms});
    }
  }
  if (!points.empty()) {
    Set(d, "trend", c_.Place(md, {Kind::kIndexFigure, "", "index-trend", ""},
                            TrendChart(points, "Suite geomean of median step time per platform and mode (eager runs)",
                                       "Geomean of median step time (ms, log scale)"),
                            "Suite geomean of eager median step time across builds"));
  }
  r_.Page(w_, r_.index(), d, md, html, "TorchGauge results");
}

// ---------------------------------------------------------------- vl-convert

bool VlConvertAvailable(const SiteOptions& o) {
  std::string cmd = core::ShellQuote(o.python) + " " + core::ShellQuote(o.helper.string()) + " check >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

bool RunHelper(const SiteOptions& o, const std::string& args, const std::string& input, std::string* err) {
  char tmpl[] = "/tmp/torchgauge-vl-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return false;
  ::close(fd);
  { std::ofstream(tmpl, std::ios::binary) << input; }
  std::string errfile = std::string(tmpl) + ".err";
  std::string cmd = core::ShellQuote(o.python) + " " + core::ShellQuote(o.helper.string()) + " " + args + " <" + core::ShellQuote(tmpl) +
                    " 2>" + core::ShellQuote(errfile);
  int rc = std::system(cmd.c_str());
  std::ifstream ef(errfile);
  std::stringstream ss;
  ss << ef.rdbuf();
  *err = ss.str();
  std::remove(tmpl);
  std::remove(errfile.c_str());
  return rc == 0;
}

}  // namespace

// ---------------------------------------------------------------- driver

namespace {
struct BuildRef {
  std::string id, started_at;
  std::set<std::string> platforms;  // with a readable manifest of this build
};
// Reads only the manifests, to order the builds before loading any results.
std::vector<BuildRef> ScanBuilds(const fs::path& root) {
  std::vector<BuildRef> refs;
  for (const auto& id : ListBuildIds(root, nullptr)) {
    BuildRef ref{id, "", {}};
    std::error_code ec;
    for (fs::directory_iterator it(root / id, ec), end; !ec && it != end; it.increment(ec)) {
      std::string pid = it->path().filename().string();
      if (!core::IsSafeId(pid) || !it->is_directory(ec)) continue;
      try {
        fs::path mp = core::ManifestPath(it->path());
        Manifest m = ManifestFromJson(core::ReadJsonFile(mp), mp);
        if (m.build_id != id || m.platform_id != pid) continue;
        ref.platforms.insert(pid);
        if (ref.started_at.empty() || m.started_at < ref.started_at) ref.started_at = m.started_at;
      } catch (const std::exception&) {
        // Reported when the build is loaded.
      }
    }
    refs.push_back(ref);
  }
  std::sort(refs.begin(), refs.end(),
            [](const BuildRef& a, const BuildRef& b) { return BuildBefore(a.started_at, a.id, b.started_at, b.id); });
  return refs;
}

// One platform's loaded results as the comparison reads them. Unreadable
// files were skipped by the loader, so a comparison sees what the page shows.
core::RunSet ToRunSet(const BuildResults& b, const PlatformResults& p, const fs::path& results) {
  core::RunSet set;
  set.build_id = b.id;
  set.platform_id = p.manifest.platform_id;
  try {
    set.manifest = core::ReadJsonFile(core::ManifestPath(core::PlatformDir(results, b.id, set.platform_id)));
  } catch (const std::exception&) {
    set.manifest = json::object();
  }
  for (const auto& r : p.runs) set.runs.insert_or_assign(core::RunKey{r.model.id, r.mode, r.backend, r.precision}, r);
  return set;
}

// The run sets of recent builds, kept while builds stream oldest first, so
// each build is compared with its predecessors without reading them again.
class RecentRuns {
 public:
  RecentRuns(const SiteOptions& o, const std::vector<BuildRef>& refs) : o_(o), refs_(refs) {
    keep_ = static_cast<size_t>(o.compare_options.window + o.compare_options.persist);
  }
  void Add(size_t index, const BuildResults& b) {
    auto& sets = sets_[index];
    for (const auto& p : b.platforms) {
      if (p.manifest.present) sets.insert_or_assign(p.manifest.platform_id, ToRunSet(b, p, o_.results));
    }
    for (auto* m : {&sets_, &loaded_}) {
      while (!m->empty() && m->begin()->first + keep_ < index + 1) m->erase(m->begin());
    }
  }
  // Compares build `index` (already added) with the builds before it, per
  // platform; nullopt when no platform has an earlier build.
  std::optional<core::Comparison> Compare(size_t index) {
    auto cur = sets_.find(index);
    if (cur == sets_.end()) return std::nullopt;
    core::Comparison c;
    c.new_build = refs_[index].id;
    c.options = o_.compare_options;
    const size_t need = static_cast<size_t>(o_.compare_options.window + o_.compare_options.persist - 1);
    for (const auto& [platform, set] : cur->second) {
      std::vector<const core::RunSet*> history;
      for (size_t j = index; j-- > 0 && history.size() < need;) {
        if (!refs_[j].platforms.count(platform)) continue;
        if (const core::RunSet* s = Get(j, platform)) history.push_back(s);
      }
      if (history.empty()) continue;
      std::reverse(history.begin(), history.end());
      history.push_back(&set);
      c.platforms.push_back(core::CompareWithHistory(history, o_.compare_options));
    }
    if (c.platforms.empty()) return std::nullopt;
    const auto& bb = c.platforms.front().base_builds;
    c.base_label = bb.size() == 1 ? bb.front() : "median of " + bb.front() + ".." + bb.back();
    return c;
  }

 private:
  const core::RunSet* Get(size_t index, const std::string& platform) {
    auto it = sets_.find(index);
    if (it == sets_.end()) {
      // Not streamed in this run (an incremental render): load it quietly.
      LoadOptions lo;
      lo.only_builds = {refs_[index].id};
      lo.threads = o_.threads;
      it = loaded_.emplace(index, std::map<std::string, core::RunSet>()).first;
      for (const auto& b : LoadResults(o_.results, lo).builds) {
        for (const auto& p : b.platforms) {
          if (p.manifest.present) it->second.insert_or_assign(p.manifest.platform_id, ToRunSet(b, p, o_.results));
        }
      }
      return Find(it->second, platform);
    }
    return Find(it->second, platform);
  }
  static const core::RunSet* Find(const std::map<std::string, core::RunSet>& m, const std::string& platform) {
    auto it = m.find(platform);
    return it == m.end() ? nullptr : &it->second;
  }
  const SiteOptions& o_;
  const std::vector<BuildRef>& refs_;
  size_t keep_;
  std::map<size_t, std::map<std::string, core::RunSet>> sets_, loaded_;
};
}  // namespace

namespace {
// Everything besides the results that decides a rendered build's bytes: the
// reporter itself (its executable), the templates and static files, and the
// options that change output. With `svg_ok` false no SVG was made, so a later
// render that can make them does not count the build as unchanged.
std::string RenderFingerprint(const SiteOptions& o, bool svg_ok) {
  core::Fingerprint f;
  try {
    f.AddFile("/proc/self/exe");
  } catch (const std::exception&) {
    f.Add(std::string(core::Version())).Add(std::string(core::GitSha()));
  }
  for (const fs::path& dir : {o.templates, o.static_dir}) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) f.Add(file.filename().string()).AddFile(file);
  }
  // strict too: a build rendered leniently may hold problems a strict
  // render must fail on.
  f.Add(o.site_url).Add(int64_t{svg_ok}).Add(int64_t{o.trend_builds}).Add(int64_t{o.compare}).Add(int64_t{o.strict});
  const core::CompareOptions& c = o.compare_options;
  f.Add(c.threshold_percent).Add(c.alpha).Add(int64_t{c.window}).Add(int64_t{c.persist}).Add(c.memory_min_abs_bytes);
  for (const auto& r : c.rules) f.Add(r.metric).Add(r.model_regex).Add(r.percent);
  f.Add(std::string(kVegaLiteVersion));
  return f.Hex();
}

// The fingerprint a build was last rendered with ("" if none).
std::string StoredFingerprint(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The builds whose results build `i`'s pages read besides its own: the
// trend window (the trend_builds - 1 builds before it) and, per platform,
// the builds its comparison uses (window + persist - 1 earlier builds with
// that platform), as WriteModel and RecentRuns::Compare pick them.
std::vector<size_t> Dependencies(const SiteOptions& o, const std::vector<BuildRef>& refs, size_t i) {
  std::set<size_t> deps;
  const size_t trend = static_cast<size_t>(std::max(o.trend_builds, 1));
  for (size_t j = i + 1 > trend ? i + 1 - trend : 0; j < i; ++j) deps.insert(j);
  if (o.compare) {
    const size_t need = static_cast<size_t>(o.compare_options.window + o.compare_options.persist - 1);
    for (const auto& platform : refs[i].platforms) {
      size_t found = 0;
      for (size_t j = i; j-- > 0 && found < need;) {
        if (refs[j].platforms.count(platform)) {
          deps.insert(j);
          ++found;
        }
      }
    }
  }
  return {deps.begin(), deps.end()};
}
}  // namespace

SiteReport BuildSite(const SiteOptions& o) {
  SiteReport report;
  std::error_code ec;
  if (!fs::is_directory(o.results, ec)) throw std::runtime_error(o.results.string() + ": not a results directory");
  const PaperTable2 paper = PaperTable2FromJson(json::parse(kPaperTable2Json));
  Templates templates = Templates::Load(o.templates);
  Renderer renderer(templates);
  fs::create_directories(o.out);
  Writer writer(o.out, &report);
  Charts charts(writer, &report);
  SiteBuilder builder(o, writer, templates, renderer, charts, paper);

  std::vector<BuildRef> refs = ScanBuilds(o.results);
  for (const auto& b : o.builds) {
    if (!core::IsSafeId(b)) throw std::runtime_error("--build '" + b + "' is not a safe build id");
    if (std::none_of(refs.begin(), refs.end(), [&](const BuildRef& r) { return r.id == b; })) {
      throw std::runtime_error("--build '" + b + "': no such build under " + o.results.string());
    }
  }
  History history;
  LoadOptions lo;
  lo.strict = o.strict;
  lo.threads = o.threads;
  if (o.compare) o.compare_options.Validate();
  RecentRuns recent(o, refs);

  // Change detection: a build's fingerprint covers its inputs, those of the
  // builds its pages read (Dependencies) and the renderer. A full render
  // skips a build whose stored fingerprint matches; the fingerprint is
  // removed before a build is rendered and written only once all its files,
  // SVG included, are done, so an interrupted render is redone next time.
  const bool vl_ok = o.svg && VlConvertAvailable(o);
  const std::string render_fp = RenderFingerprint(o, vl_ok);
  std::vector<std::string> inputs(refs.size());
  auto input = [&](size_t j) -> const std::string& {
    if (inputs[j].empty()) inputs[j] = InputFingerprint(o.results, refs[j].id);
    return inputs[j];
  };
  if (o.builds.empty() && !o.force) {
    ParallelFor(refs.size(), ThreadCount(o.threads, refs.size()), [&](size_t j, int) { input(j); });
  }
  auto fingerprint = [&](size_t i) {
    core::Fingerprint f;
    f.Add(render_fp).Add(refs[i].id).Add(refs[i].started_at).Add(input(i));
    for (size_t j : Dependencies(o, refs, i)) f.Add(refs[j].id).Add(input(j));
    return f.Hex();
  };
  auto fingerprint_path = [&](const std::string& id) { return o.out / SitePath({Kind::kFingerprint, id, "", ""}); };
  auto cached_summary = [&](const BuildRef& ref) -> std::optional<BuildSummary> {
    try {
      BuildSummary s = BuildSummaryFromJson(core::ReadJsonFile(o.out / SitePath({Kind::kData, ref.id, "summary", ""})));
      if (s.id == ref.id && s.started_at == ref.started_at) return s;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  std::vector<std::pair<std::string, std::string>> rendered_fps;  // build id, fingerprint

  for (size_t i = 0; i < refs.size(); ++i) {
    const BuildRef& ref = refs[i];
    bool selected = o.builds.empty() || o.builds.count(ref.id);
    std::string fp;
    if (selected) {
      fp = fingerprint(i);
      if (o.builds.empty() && !o.force && StoredFingerprint(fingerprint_path(ref.id)) == fp) {
        if (auto s = cached_summary(ref)) {
          history.builds.push_back(std::move(*s));
          report.builds_unchanged++;
          continue;
        }
      }
      fs::remove(fingerprint_path(ref.id), ec);
    }
    if (!selected) {
      // A published build: read its cached summary; fall back to the results.
      if (auto s = cached_summary(ref)) {
        history.builds.push_back(std::move(*s));
        continue;
      }
      LoadOptions quiet = lo;
      quiet.strict = false;
      quiet.only_builds = {ref.id};
      LoadedResults loaded = LoadResults(o.results, quiet);
      for (const auto& b : loaded.builds) {
        BuildSummary s = Summarize(AggregateBuild(b, paper));
        if (o.compare) {
          recent.Add(i, b);
          if (auto c = recent.Compare(i)) s.flagged = Flagged(*c);
        }
        history.builds.push_back(std::move(s));
      }
      continue;
    }
    lo.only_builds = {ref.id};
    LoadedResults loaded = LoadResults(o.results, lo);
    for (const auto& b : loaded.builds) {
      BuildView view = AggregateBuild(b, paper);
      BuildSummary summary = Summarize(view);
      std::optional<core::Comparison> cmp;
      if (o.compare) {
        recent.Add(i, b);
        cmp = recent.Compare(i);
        if (cmp) summary.flagged = Flagged(*cmp);
      }
      history.builds.push_back(summary);
      builder.WriteBuild(view, cmp ? &*cmp : nullptr, history);
      writer.Write(SitePath({Kind::kData, b.id, "summary", ""}), DumpJson(ToJson(summary), 1) + "\n");
      report.problems.insert(report.problems.end(), b.problems.begin(), b.problems.end());
      report.builds_rendered++;
      rendered_fps.emplace_back(b.id, fp);
    }
    report.problems.insert(report.problems.end(), loaded.problems.begin(), loaded.problems.end());
  }
  builder.WriteIndex(history);
  report.index = o.out / SitePath({Kind::kIndexPage, "", "", "html"});

  // Static files: CSS and JS from site/, and the Vega bundle once.
  for (const char* name : {"torchgauge.css", "torchgauge.js"}) {
    writer.Write(SitePath({Kind::kAsset, "", name, ""}), ReadText(o.static_dir / name));
  }
  fs::path bundle = o.out / SitePath({Kind::kAsset, "", "vega-bundle.js", ""});
  fs::path bundle_version = o.out / SitePath({Kind::kAsset, "", "vega-bundle.version", ""});
  const std::string want_version = std::string("vega-lite ") + kVegaLiteVersion + "\n";
  bool have_bundle = fs::exists(bundle, ec) && fs::exists(bundle_version, ec) && ReadText(bundle_version) == want_version;
  if (!have_bundle) {
    // The bundle takes vl-convert seconds to make; keep one per version in the
    // user's cache and copy it from there.
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    fs::path cache_dir = xdg && *xdg ? fs::path(xdg) / "torchgauge" : home && *home ? fs::path(home) / ".cache" / "torchgauge" : fs::path();
    fs::path cached = cache_dir.empty() ? fs::path() : cache_dir / (std::string("vega-bundle-") + kVegaLiteVersion + ".js");
    std::string err;
    if (!cached.empty() && !fs::exists(cached, ec) && VlConvertAvailable(o)) {
      fs::create_directories(cache_dir, ec);
      RunHelper(o, "bundle " + core::ShellQuote(cached.string()) + " " + kVegaLiteVersion, "", &err);
    }
    if (!cached.empty() && fs::exists(cached, ec)) {
      writer.Write(SitePath({Kind::kAsset, "", "vega-bundle.js", ""}), ReadText(cached));
      writer.Write(SitePath({Kind::kAsset, "", "vega-bundle.version", ""}), want_version);
    } else if (vl_ok && RunHelper(o, "bundle " + core::ShellQuote(bundle.string()) + " " + kVegaLiteVersion, "", &err)) {
      writer.Write(SitePath({Kind::kAsset, "", "vega-bundle.version", ""}), want_version);
      report.files_written++;
    } else {
      report.skipped.push_back("assets/vega-bundle.js: vl-convert-python is not available to " + o.python +
                               " (charts in HTML pages will not render; install vl-convert-python or pass --python)");
    }
  }
  bool svg_failed = false;
  const std::vector<FigureJob> svg_jobs = charts.jobs();
  if (o.svg && !svg_jobs.empty()) {
    if (!vl_ok) {
      report.skipped.push_back(std::to_string(svg_jobs.size()) + " SVG figures: vl-convert-python is not available to " +
                               o.python + " (Markdown pages link to missing images)");
    } else {
      std::string jobs, err;
      for (const auto& j : svg_jobs) jobs += j.spec.string() + "\t" + j.svg.string() + "\n";
      if (!RunHelper(o, std::string("svg ") + kVegaLiteVersion, jobs, &err)) {
        report.skipped.push_back("some SVG figures failed to render:\n" + err);
        svg_failed = true;
      }
      report.svg_rendered = svg_jobs.size();
    }
  } else if (!o.svg) {
    report.skipped.push_back(std::to_string(svg_jobs.size()) + " SVG figures: --no-svg");
  }
  if (!svg_failed) {
    // Not through the Writer: the fingerprints are a cache beside the site,
    // not published files, and are not counted as written.
    for (const auto& [id, fp] : rendered_fps) core::WriteFileAtomic(fingerprint_path(id), fp + "\n");
  }
  return report;
}

}  // namespace torchgauge::reporter
