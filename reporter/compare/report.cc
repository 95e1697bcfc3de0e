#include "reporter/compare/report.h"

#include "core/contract/version.h"
#include "reporter/output/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace torchgauge::reporter {

using core::Comparison;
using core::Metric;
using core::MetricChange;
using core::PlatformComparison;
using core::Verdict;
using nlohmann::json;

namespace {

// ---------------------------------------------------------------- document model

struct Cell {
  Cell(std::string t, std::string h = "", bool c = false) : text(std::move(t)), href(std::move(h)), code(c) {}
  std::string text;
  std::string href;   // a link when not empty
  bool code = false;  // monospace
};
using Row = std::vector<Cell>;

struct Section {
  int level = 2;
  std::string title;
  std::vector<std::string> paragraphs;
  std::vector<std::string> header;
  std::vector<Row> rows;
  std::vector<std::string> code;  // a shell block, one command a line
};

struct Document {
  std::string title;
  std::vector<std::string> intro;
  std::vector<Section> sections;
  std::string full_url;
};

std::string OneLine(std::string s, std::size_t max = 160) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// Only http(s) and relative links survive: no javascript: URLs from a --site-url.
std::string SafeHref(const std::string& url) {
  if (url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0 || url.rfind("/", 0) == 0 ||
      url.rfind(".", 0) == 0) {
    return url;
  }
  return "";
}

std::string Str(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return "";
    cur = &cur->at(k);
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_number_integer()) return std::to_string(cur->get<int64_t>());
  if (cur->is_number()) return Num(cur->get<double>(), "%g");
  if (cur->is_boolean()) return cur->get<bool>() ? "yes" : "no";
  return "";
}

std::string Joined(std::initializer_list<std::string> parts, const char* sep = " ") {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += sep;
    out += p;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string SafeSiteUrl(const std::string& url) { return SafeHref(url); }

std::vector<std::string> EnvironmentValues(const json& m) {
  auto collector = [&] {
    const std::string sha = Str(m, {"collector", "git_sha"});
    const std::string compiler = Str(m, {"collector", "compiler"});
    return Joined({Str(m, {"collector", "version"}), sha.empty() ? "" : "(" + sha + ")",
                   compiler.empty() ? "" : "built with " + compiler});
  };
  auto runtime = [&] {
    std::string cuda = Str(m, {"libtorch", "cuda_runtime"}), cudnn = Str(m, {"libtorch", "cudnn"});
    std::string hip = Str(m, {"libtorch", "hip_runtime"}), miopen = Str(m, {"libtorch", "miopen"});
    return Joined({cuda.empty() ? "" : "CUDA " + cuda, cudnn.empty() ? "" : "cuDNN " + cudnn,
                   hip.empty() ? "" : "HIP " + hip, miopen.empty() ? "" : "MIOpen " + miopen},
                  ", ");
  };
  auto device = [&] {
    std::string cc = Str(m, {"device", "compute_capability"});
    return Joined({Str(m, {"device", "vendor"}), Str(m, {"device", "name"}), cc.empty() ? "" : "(sm " + cc + ")"});
  };
  auto cpu = [&] {
    std::string cores = Str(m, {"cpu", "logical_cores"});
    return Joined({Str(m, {"cpu", "model"}), cores.empty() ? "" : "(" + cores + " cores)"});
  };
  return {Str(m, {"started_at"}),
          collector(),
          Str(m, {"libtorch", "version"}),
          Str(m, {"libtorch", "git_commit"}),
          runtime(),
          device(),
          Str(m, {"device", "driver"}),
          cpu(),
          Joined({Str(m, {"host", "hostname"}), Str(m, {"host", "os"})}, ", ")};
}

const std::vector<std::string>& EnvironmentNames() {
  static const std::vector<std::string> names = {"started", "collector", "LibTorch", "torch commit", "runtime",
                                                 "device",  "driver",    "CPU",      "host"};
  return names;
}

namespace {

Section EnvironmentSection(const PlatformComparison& p) {
  Section s;
  s.level = 3;
  s.title = "Builds and environments";
  s.header = {"", "baseline", "new"};
  std::string base_builds = p.base_builds.size() == 1
                                ? p.base_builds[0]
                                : "median of " + std::to_string(p.base_builds.size()) +
                                      " builds: " + p.base_builds.front() + ".." + p.base_builds.back();
  auto row = [&](const std::string& name, const std::string& bv, const std::string& nv, bool code = false) {
    s.rows.push_back({{name}, {bv.empty() ? "-" : bv, "", code}, {nv.empty() ? "-" : nv, "", code}});
  };
  row("build", base_builds, p.new_build, true);
  const std::vector<std::string> b = EnvironmentValues(p.base_manifest), n = EnvironmentValues(p.new_manifest);
  for (std::size_t i = 0; i < EnvironmentNames().size(); ++i) row(EnvironmentNames()[i], b[i], n[i]);
  return s;
}

// Where links lead: the site's public URL (when it is a safe one), else the
// site root as seen from the page the report is written as, else nowhere.
std::string LinkBase(const ReportOptions& o) {
  if (!SafeHref(o.site_url).empty()) return o.site_url;
  return o.page ? RootHref(*o.page) : "";
}

std::string ModelPageUrl(const std::string& base, const std::string& build, const std::string& model) {
  return SiteUrl(base, {Kind::kModelPage, build, model, "html"});
}

Row ChangeRow(const MetricChange& c, const std::string& new_build, const std::string& base) {
  char n[48];
  std::snprintf(n, sizeof n, "%zu/%zu %s", c.n_base, c.n_new,
                c.test_unit == core::TestUnit::kProcessMedians ? "processes" : "samples");
  // A counted metric has no test: its values are the counted steps.
  const bool counted = core::Info(c.metric).rule == core::JudgeRule::kCounted;
  if (counted) std::snprintf(n, sizeof n, "%zu/%zu steps", c.n_base, c.n_new);
  return {{c.key.model, ModelPageUrl(base, new_build, c.key.model)},
          {c.key.mode},
          {c.key.backend},
          {c.key.precision},
          {core::MetricName(c.metric)},
          {MetricValue(c.metric, c.base_value) + " → " + MetricValue(c.metric, c.new_value)},
          {DeltaPercent(c.delta_percent)},
          {PValue(c.p_value)},
          {c.p_value || counted ? n : "1/1"}};
}

const std::vector<std::string> kChangeHeader = {"model",      "mode",  "backend", "precision", "metric",
                                                "base → new", "delta", "p-value", "n base/new"};

std::vector<const MetricChange*> Select(const PlatformComparison& p, Verdict v, std::optional<bool> confirmed) {
  std::vector<const MetricChange*> out;
  for (const auto& c : p.changes) {
    if (c.verdict == v && (!confirmed || c.confirmed == *confirmed)) out.push_back(&c);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const MetricChange* a, const MetricChange* b) { return a->Magnitude() > b->Magnitude(); });
  return out;
}

// `counted`: the comparison has counted runs, whose rule is said too.
std::string RulesText(const core::CompareOptions& opt, bool counted) {
  std::string rules = "Rules: a change counts when the median moved by at least the threshold (" +
                      Num(opt.threshold_percent, "%g") + "% by default";
  for (const auto& r : opt.rules)
    rules += "; " + r.metric + " of /" + r.model_regex + "/: " + Num(r.percent, "%g") + "%";
  rules += ") and a two-sided Mann-Whitney U test gives p < " + Num(opt.alpha, "%g") +
           ", on the worker processes' medians where both runs were measured in several processes (the steps of "
           "one process are not independent), else on the step samples. Memory has one value per run: threshold and at "
           "least " +
           Num(static_cast<double>(opt.memory_min_abs_bytes) / 1048576.0, "%g") + " MiB, no test." +
           " Where runs were measured in several worker processes (or the baseline is a window of builds), a time "
           "change must also exceed the spread between those processes' (or builds') medians.";
  if (counted) {
    const auto& instructions = core::Info(core::Metric::kInstructions);
    const auto& cycles = core::Info(core::Metric::kEstimatedCycles);
    rules += std::string(" Counted metrics (") + instructions.name + ", " + cycles.name +
             ", per step under Callgrind): a change counts at their own threshold (" +
             Num(instructions.default_threshold_percent.value_or(opt.threshold_percent), "%g") + "% and " +
             Num(cycles.default_threshold_percent.value_or(opt.threshold_percent), "%g") +
             "% unless a rule above says otherwise), with no rank test, since repeated counts agree within a small "
             "fraction of it; where runs were counted in several worker processes it must also exceed the spread "
             "between their medians.";
  }
  if (opt.persist > 1) {
    rules += " A regression is confirmed when it persists in " + std::to_string(opt.persist) +
             " consecutive builds against the same baseline.";
  }
  if (opt.window > 1) {
    rules += " The baseline is the median of the per-build medians of " + std::to_string(opt.window) +
             " builds; the test pools their process medians (or samples).";
  }
  return rules;
}

// "1 run (3 metrics)": a run is what a regression counts, its metrics are
// the rows listed under it.
std::string RunsAndMetrics(std::size_t runs, std::size_t metrics) {
  return std::to_string(runs) + (runs == 1 ? " run" : " runs") + " (" + std::to_string(metrics) +
         (metrics == 1 ? " metric)" : " metrics)");
}

std::size_t DistinctRuns(const std::vector<const MetricChange*>& list) {
  std::set<core::RunKey> runs;
  for (const auto* m : list) runs.insert(m->key);
  return runs.size();
}

// One platform's report, section by section. `base` is the link base (LinkBase).
class PlatformReport {
 public:
  PlatformReport(const Comparison& c, const PlatformComparison& p, const std::string& base, Document& d)
      : c_(c), p_(p), base_(base), d_(d) {}

  void Add() {
    Section head;
    head.level = 2;
    head.title = "Platform " + p_.platform_id;
    std::string streak;
    for (const auto& b : p_.streak) streak += (streak.empty() ? "" : ", ") + b;
    head.paragraphs.push_back("Builds compared for persistence: " + streak);
    d_.sections.push_back(head);
    d_.sections.push_back(EnvironmentSection(p_));
    AddChanges("Regressions", Select(p_, Verdict::kRegression, true), "None.");
    auto unconfirmed = Select(p_, Verdict::kRegression, false);
    if (!unconfirmed.empty()) {
      AddChanges(
          "Unconfirmed regressions (not yet seen in " + std::to_string(c_.options.persist) + " consecutive builds)",
          unconfirmed, "");
    }
    AddChanges("Improvements", Select(p_, Verdict::kImprovement, std::nullopt), "None.");
    AddStatusChanges();
    AddConfigChanges();
    AddPresence();
    AddNotCounted();
    AddSummary();
    AddReproduce();
  }

 private:
  void AddChanges(const std::string& title, const std::vector<const MetricChange*>& list, const std::string& empty) {
    Section s;
    s.level = 3;
    const std::size_t runs = DistinctRuns(list);
    s.title = title + " (" + std::to_string(runs) + (runs == 1 ? " run, " : " runs, ") + std::to_string(list.size()) +
              (list.size() == 1 ? " metric)" : " metrics)");
    if (list.empty()) {
      s.paragraphs.push_back(empty);
    } else {
      s.header = kChangeHeader;
      for (const auto* m : list) s.rows.push_back(ChangeRow(*m, c_.new_build, base_));
    }
    d_.sections.push_back(s);
    for (const auto* m : list) AddFunctions(*m);
  }

  // A counted change: the functions that account for most of it.
  void AddFunctions(const MetricChange& m) {
    if (!m.functions && !m.functions_reason) return;
    Section s;
    s.level = 4;
    s.title = "Functions that moved: " + m.key.model + " " + m.key.mode + " " + m.key.backend + " " +
              core::MetricName(m.metric) + " " + DeltaPercent(m.delta_percent);
    if (!m.functions) {
      s.paragraphs.push_back("Not shown: " + OneLine(*m.functions_reason) + ".");
      d_.sections.push_back(s);
      return;
    }
    const core::FunctionDiff& f = *m.functions;
    s.paragraphs.push_back(
        "Instructions per function (self cost) in the median counted step, baseline against new: these account for " +
        Num(100 * f.covered, "%.0f") + "% of the change of " +
        Num(static_cast<double>(f.new_total - f.base_total), "%+.0f") + " instructions.");
    s.header = {"function", "library", "base → new", "delta", "share"};
    for (const auto& x : f.top) {
      s.rows.push_back({{x.function},
                        {x.object.empty() ? "-" : x.object},
                        {Num(static_cast<double>(x.base), "%.0f") + " → " + Num(static_cast<double>(x.now), "%.0f")},
                        {Num(static_cast<double>(x.delta), "%+.0f")},
                        {Num(100 * x.share, "%.1f") + "%"}});
    }
    d_.sections.push_back(s);
  }

  void AddStatusChanges() {
    Section st;
    st.level = 3;
    st.title = "Status changes (" + std::to_string(p_.status_changes.size()) + ")";
    if (p_.status_changes.empty()) {
      st.paragraphs.push_back("None.");
    } else {
      st.header = {"model", "mode", "backend", "precision", "base", "new", "reason"};
      for (const auto& s : p_.status_changes) {
        st.rows.push_back({{s.key.model, ModelPageUrl(base_, c_.new_build, s.key.model)},
                           {s.key.mode},
                           {s.key.backend},
                           {s.key.precision},
                           {s.base_status},
                           {s.new_status + (s.worse ? " (worse)" : "")},
                           {s.reason ? OneLine(*s.reason) : "-"}});
      }
    }
    d_.sections.push_back(st);
  }

  void AddConfigChanges() {
    if (p_.config_changes.empty()) return;
    Section s;
    s.level = 3;
    s.title = "Configuration changes, not compared (" + std::to_string(p_.config_changes.size()) + ")";
    s.paragraphs.push_back(
        "These runs measured another workload in the two builds (another batch size, or smoke sizes against full "
        "ones), so their figures are not compared: a change here is the suite's, not the build's.");
    s.header = {"model", "mode", "backend", "precision", "batch base → new", "status base → new"};
    auto sized = [](int64_t batch, bool smoke) { return std::to_string(batch) + (smoke ? " (smoke)" : ""); };
    for (const auto& c : p_.config_changes) {
      s.rows.push_back({{c.key.model, ModelPageUrl(base_, c_.new_build, c.key.model)},
                        {c.key.mode},
                        {c.key.backend},
                        {c.key.precision},
                        {sized(c.base_batch_size, c.base_smoke) + " → " + sized(c.new_batch_size, c.new_smoke)},
                        {c.base_status + " → " + c.new_status}});
    }
    d_.sections.push_back(s);
  }

  void AddPresence() {
    if (p_.presence.empty()) return;
    Section pr;
    pr.level = 3;
    pr.title = "Runs that appeared or disappeared (" + std::to_string(p_.presence.size()) + ")";
    pr.header = {"model", "mode", "backend", "precision", "change", "status"};
    for (const auto& s : p_.presence) {
      pr.rows.push_back({{s.key.model},
                         {s.key.mode},
                         {s.key.backend},
                         {s.key.precision},
                         {s.appeared ? "appeared" : "disappeared"},
                         {s.status}});
    }
    d_.sections.push_back(pr);
  }

  std::string WhyNotCounted(const MetricChange& m) const {
    if (m.verdict == Verdict::kTooFewSamples) return "too few samples to tell";
    if (m.verdict == Verdict::kNoisyRun) return "noisy run (" + OneLine(m.noisy.value_or("")) + ")";
    if (m.noise_percent && m.p_value && *m.p_value < c_.options.alpha) {
      return "within noise (spread " + Num(*m.noise_percent, "%.0f") + "%)";
    }
    return "not significant";
  }

  void AddNotCounted() {
    auto noise = Select(p_, Verdict::kNoise, std::nullopt);
    auto few = Select(p_, Verdict::kTooFewSamples, std::nullopt);
    auto noisy = Select(p_, Verdict::kNoisyRun, std::nullopt);
    if (noise.empty() && few.empty() && noisy.empty()) return;
    Section s;
    s.level = 3;
    s.title = "Over the threshold but not counted (" + std::to_string(noise.size() + few.size() + noisy.size()) + ")";
    s.paragraphs.push_back(
        "Too few samples to tell: the test cannot reach p < alpha with these counts (3 processes against 3 never can). "
        "Not significant: the processes' medians (or the samples) overlap too much to call it a change. "
        "Within noise: the change is no larger than the spread between the worker processes' (or the "
        "window's builds') medians of the same run.");
    if (!noisy.empty()) {
      s.paragraphs.push_back(
          "Noisy run: a compared run's timing spread or the machine's other load passed its "
          "threshold while it was measured, so the change is not trusted.");
    }
    s.header = kChangeHeader;
    s.header.push_back("why");
    for (const auto* list : {&few, &noisy, &noise}) {
      for (const auto* m : *list) {
        Row r = ChangeRow(*m, c_.new_build, base_);
        r.push_back({WhyNotCounted(*m)});
        s.rows.push_back(r);
      }
    }
    d_.sections.push_back(s);
  }

  // A summary row's first cells: platform, mode, backend, precision, runs
  // (core::SummaryRow and core::CountedSummaryRow alike).
  template <typename SummaryRow>
  Row SummaryCells(const SummaryRow& s) const {
    return {{p_.platform_id}, {s.mode}, {s.backend}, {s.precision}, {std::to_string(s.runs)}};
  }

  void AddSummary() {
    Section sum;
    sum.level = 3;
    sum.title = "Suite summary";
    sum.paragraphs.push_back(
        "Geometric mean of new/base median time over the runs measured in both builds "
        "(below 1 is faster).");
    sum.header = {"platform", "mode", "backend", "precision", "runs", "geomean time ratio"};
    for (const auto& s : p_.summary) {
      sum.rows.push_back(SummaryCells(s));
      sum.rows.back().push_back({Num(s.geomean_time_ratio, "%.3f")});
    }
    if (p_.summary.empty()) {
      sum.paragraphs.push_back(p_.counted_summary.empty() ? "No run was measured in both builds."
                                                          : "No run was timed in both builds.");
    }
    d_.sections.push_back(sum);
    if (p_.counted_summary.empty()) return;
    Section counted;
    counted.level = 3;
    counted.title = "Counted summary";
    counted.paragraphs.push_back(
        "Geometric mean of new/base instructions and estimated cycles per step over the runs counted in both builds "
        "(below 1 is less work); counts do not move with the machine's load.");
    counted.header = {
        "platform", "mode", "backend", "precision", "runs", "geomean instructions ratio", "geomean est. cycles ratio"};
    for (const auto& s : p_.counted_summary) {
      counted.rows.push_back(SummaryCells(s));
      counted.rows.back().push_back({Num(s.geomean_instructions_ratio, "%.4f")});
      counted.rows.back().push_back({Num(s.geomean_cycles_ratio, "%.4f")});
    }
    d_.sections.push_back(counted);
  }

  // One command per regressed run (a run regressing in several metrics is listed once).
  void AddReproduce() {
    Section rep;
    rep.level = 3;
    rep.title = "Reproduce";
    std::set<std::string> seen;
    for (const auto& m : p_.changes) {
      if (m.verdict != Verdict::kRegression || !m.confirmed) continue;
      std::string cmd = ReproduceCommand(m.key, m.batch_size, m.device, m.settings);
      if (seen.insert(cmd).second) rep.code.push_back(cmd);
    }
    for (const auto& s : p_.status_changes) {
      if (!s.worse) continue;
      std::string cmd = ReproduceCommand(s.key, s.batch_size, s.device, s.settings);
      if (seen.insert(cmd).second) rep.code.push_back(cmd);
    }
    if (rep.code.empty()) return;
    rep.paragraphs.push_back("Measure each regressed run again on this platform with the new build installed:");
    d_.sections.push_back(rep);
  }

  const Comparison& c_;
  const PlatformComparison& p_;
  const std::string& base_;
  Document& d_;
};

// Why a comparison without a regression cannot say that nothing regressed
// when its counts cannot reach alpha (Comparison::CannotTell).
std::string CannotTellText(const Comparison& c) {
  return "Cannot tell: " + std::to_string(c.UntestableRuns()) + " of the " + std::to_string(c.ComparedRuns()) +
         " runs compared have too few processes or samples for the rank test to reach p < " +
         Num(c.options.alpha, "%g") + " however large the change (3 against 3 gives at best p 0.1), and " +
         std::to_string(c.TooFewSamplesRuns()) +
         " of them moved past their threshold. A change the test cannot judge is never counted as a regression, so "
         "this comparison cannot say that nothing regressed: measure in more worker processes (--processes 5: 5 "
         "against 5 reach p 0.008) or compare with a window of builds (--window).";
}

Document Build(const Comparison& c, const ReportOptions& o) {
  const std::string base = LinkBase(o);
  Document d;
  d.title = ComparisonTitle(c);
  d.full_url = SiteUrl(base, {Kind::kComparePage, c.new_build, "", "html"});
  d.intro = {"New build " + c.new_build + " against baseline " + c.base_label + ": " +
                 RunsAndMetrics(c.CountRuns(Verdict::kRegression, true), c.CountVerdict(Verdict::kRegression, true)) +
                 " regressed, " +
                 RunsAndMetrics(c.CountRuns(Verdict::kImprovement), c.CountVerdict(Verdict::kImprovement)) +
                 " improved, " + std::to_string(c.WorseStatusCount()) + " run(s) that stopped working.",
             RulesText(c.options, std::any_of(c.platforms.begin(), c.platforms.end(),
                                              [](const auto& p) { return !p.counted_summary.empty(); }))};
  if (c.Inconclusive()) {
    d.intro.insert(d.intro.begin() + 1,
                   "Inconclusive: " + std::to_string(c.NoisyRuns()) + " of the " + std::to_string(c.ComparedRuns()) +
                       " runs compared were noisy on either side (over " + Num(c.options.max_noisy_percent, "%g") +
                       "%). A noisy run is never judged a regression, so this comparison cannot say that nothing "
                       "regressed: measure again on a quieter machine.");
  } else if (c.CannotTell()) {
    d.intro.insert(d.intro.begin() + 1, CannotTellText(c));
  }
  for (const auto& p : c.platforms) PlatformReport(c, p, base, d).Add();
  return d;
}

// ---------------------------------------------------------------- Markdown

std::string MdEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MdCell(const Cell& c) {
  std::string text = MdEscape(c.text);
  if (c.code) text = "`" + OneLine(c.text) + "`";  // ids are safe slugs
  if (!c.href.empty()) return "[" + text + "](" + c.href + ")";
  return text;
}

std::string RenderMd(const Document& d, std::size_t max_rows) {
  std::ostringstream out;
  out << "# " << MdEscape(d.title) << "\n\n";
  for (const auto& p : d.intro) out << MdEscape(p) << "\n\n";
  for (const auto& s : d.sections) {
    out << std::string(static_cast<std::size_t>(s.level), '#') << ' ' << MdEscape(s.title) << "\n\n";
    for (const auto& p : s.paragraphs) out << MdEscape(p) << "\n\n";
    if (!s.header.empty()) {
      out << '|';
      for (const auto& h : s.header) out << ' ' << MdEscape(h) << " |";
      out << "\n|";
      for (std::size_t i = 0; i < s.header.size(); ++i) out << "---|";
      out << '\n';
      std::size_t shown = 0;
      for (const auto& r : s.rows) {
        if (shown == max_rows) break;
        out << '|';
        for (const auto& c : r) out << ' ' << MdCell(c) << " |";
        out << '\n';
        ++shown;
      }
      out << '\n';
      if (s.rows.size() > shown) {
        out << "... and " << s.rows.size() - shown << " more rows";
        if (!d.full_url.empty()) out << " in the [full report](" << d.full_url << ")";
        out << ".\n\n";
      }
    }
    if (!s.code.empty()) {
      out << "```sh\n";
      std::size_t shown = 0;
      for (const auto& c : s.code) {
        if (shown++ == max_rows) {
          out << "# ... and " << s.code.size() - max_rows << " more\n";
          break;
        }
        out << c << '\n';
      }
      out << "```\n\n";
    }
  }
  out << "_Generated by TorchGauge " << core::Version() << "._\n";
  return out.str();
}

// ---------------------------------------------------------------- HTML

std::string H(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string ComparisonTitle(const Comparison& c) {
  std::string platforms;
  for (const auto& p : c.platforms) platforms += (platforms.empty() ? "" : ", ") + p.platform_id;
  // One regression per slowed run (CountRuns), however many metrics moved.
  const std::size_t reg = c.CountRuns(Verdict::kRegression, true), worse = c.WorseStatusCount();
  std::string what;
  if (c.Inconclusive()) {
    what = "Inconclusive: " + std::to_string(c.NoisyRuns()) + " of " + std::to_string(c.ComparedRuns()) + " runs noisy";
  } else if (c.CannotTell()) {
    what = "Cannot tell: " + std::to_string(c.UntestableRuns()) + " of " + std::to_string(c.ComparedRuns()) +
           " runs have too few samples to test";
  } else if (reg == 0 && worse == 0) {
    what = "No regressions";
  } else {
    what = std::to_string(reg) + " regression" + (reg == 1 ? "" : "s");
    if (worse) what += ", " + std::to_string(worse) + " broken run" + (worse == 1 ? "" : "s");
  }
  return OneLine("[TorchGauge] " + what + " in " + c.new_build + " vs " + c.base_label + " (" + platforms + ")", 250);
}

std::string ReproduceCommand(const core::RunKey& key, int64_t batch_size, const std::string& device,
                             const std::optional<core::RunSettings>& settings) {
  // The collector takes a device kind: "cuda:0" is measured with --device cuda.
  const std::string kind = device.rfind("cuda", 0) == 0 ? "cuda" : device;
  std::string cmd = "torchgauge-collect run";
  if (settings && settings->smoke) cmd += " --suite smoke";
  cmd += " --model '^" + key.model + "$' --mode " + key.mode + " --precision " + key.precision + " --batch-size " +
         std::to_string(batch_size) + " --device " + kind;
  if (key.backend != "eager") cmd += " --backend " + key.backend;
  if (settings) {
    cmd += " --warmup " + std::to_string(settings->warmup) + " --repeat " + std::to_string(settings->repeat);
    if (settings->processes > 1) cmd += " --processes " + std::to_string(settings->processes);
    if (settings->threads > 0) cmd += " --threads " + std::to_string(settings->threads);
    if (settings->measure != "time") cmd += " --measure " + settings->measure;
    if (settings->measure == "time" && !settings->cpu_isa.empty()) cmd += " --cpu-isa " + settings->cpu_isa;
  }
  return cmd;
}

std::string RenderCompareMarkdown(const Comparison& c, const ReportOptions& o) {
  ReportOptions opts = o;
  // Sites are optional; links to them are not.
  if (!SafeHref(opts.site_url).size()) opts.site_url.clear();
  const Document d = Build(c, opts);
  for (std::size_t rows : {std::size_t(-1), std::size_t(500), std::size_t(200), std::size_t(100), std::size_t(50),
                           std::size_t(20), std::size_t(10), std::size_t(3)}) {
    std::string md = RenderMd(d, rows);
    if (md.size() <= o.max_markdown_chars) return md;
  }
  // Still too long (huge manifests or many platforms): hard cut at a line.
  std::string md = RenderMd(d, 3);
  std::string tail = "\n\n**Report truncated.**";
  if (!d.full_url.empty()) tail += " Full report: " + d.full_url;
  tail += "\n";
  std::size_t cut = o.max_markdown_chars > tail.size() + 8 ? o.max_markdown_chars - tail.size() - 8 : 0;
  cut = md.rfind('\n', cut);
  md = md.substr(0, cut == std::string::npos ? 0 : cut);
  // Never leave a code fence open.
  std::size_t fences = 0;
  for (std::size_t at = md.find("```"); at != std::string::npos; at = md.find("```", at + 3)) ++fences;
  if (fences % 2) md += "\n```";
  return md + tail;
}

std::string RenderCompareHtml(const Comparison& c, const ReportOptions& o) {
  ReportOptions opts = o;
  opts.site_url = SafeHref(opts.site_url);
  const Document d = Build(c, opts);
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << H(d.title) << "</title>\n<style>\n"
      << "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:80rem;padding:0 1rem;color:#222}\n"
      << "table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;"
         "text-align:left}th{background:#f3f3f3}td:nth-child(n+6){font-variant-numeric:tabular-nums}\n"
      << "pre{background:#f6f8fa;padding:.75rem;overflow-x:auto}code{font-family:ui-monospace,monospace}\n"
      << "</style>\n</head>\n<body>\n<h1>" << H(d.title) << "</h1>\n";
  for (const auto& p : d.intro) out << "<p>" << H(p) << "</p>\n";
  for (const auto& s : d.sections) {
    out << "<h" << s.level << ">" << H(s.title) << "</h" << s.level << ">\n";
    for (const auto& p : s.paragraphs) out << "<p>" << H(p) << "</p>\n";
    if (!s.header.empty()) {
      out << "<table>\n<thead><tr>";
      for (const auto& h : s.header) out << "<th>" << H(h) << "</th>";
      out << "</tr></thead>\n<tbody>\n";
      for (const auto& r : s.rows) {
        out << "<tr>";
        for (const auto& cell : r) {
          std::string text = cell.code ? "<code>" + H(cell.text) + "</code>" : H(cell.text);
          const std::string href = SafeHref(cell.href);
          if (!href.empty()) text = "<a href=\"" + H(href) + "\">" + text + "</a>";
          out << "<td>" << text << "</td>";
        }
        out << "</tr>\n";
      }
      out << "</tbody>\n</table>\n";
    }
    if (!s.code.empty()) {
      out << "<pre><code>";
      for (const auto& line : s.code) out << H(line) << '\n';
      out << "</code></pre>\n";
    }
  }
  out << "<footer><p>Generated by TorchGauge " << H(core::Version()) << ".</p></footer>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace torchgauge::reporter
