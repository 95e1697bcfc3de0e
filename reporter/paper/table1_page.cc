#include "reporter/paper/table1_page.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/analysis/coverage.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/paths.h"
#include "reporter/paper/tables.h"

namespace torchgauge::reporter {

namespace {

// A domain's Table 1 counts (core::CountByDomain) and how many of its models
// have an ok run in this build.
struct DomainRow {
  core::PaperDomainCounts counts;
  int ran_ok = 0;
};

// "Reinforcement Learning" where the paper's Table 2 names the domain, else
// the domain id capitalised ("Other").
std::string Label(const std::string& domain, const PaperTable2& paper) {
  std::string l = DomainLabel(domain, paper);
  if (l == domain && !l.empty()) l[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(l[0])));
  return l;
}

std::string RanText(const std::optional<std::string>& ours, const std::map<std::string, ModelRuns>& ran) {
  if (!ours) return Dash();
  auto it = ran.find(*ours);
  if (it == ran.end()) return "not run";
  return std::to_string(it->second.ok) + "/" + std::to_string(it->second.runs) + " ok";
}

// One row per domain in the contract's order (vision first, as the paper's
// tables), then any other domain the table names (the test domain only when
// it ran), and the totals with the union's operator count. `all` gets the sums.
mu::data DomainRows(std::map<std::string, DomainRow>& domains, const core::Coverage& cov, const PaperTable2& paper,
                    DomainRow* all_out) {
  std::vector<std::string> order(core::kDomains.begin(), core::kDomains.end());
  for (const auto& [domain, d] : domains) {
    if (std::find(order.begin(), order.end(), domain) == order.end()) order.push_back(domain);
  }
  mu::data rows = List();
  DomainRow all;
  for (const auto& domain : order) {
    const DomainRow& row = domains[domain];
    const core::PaperDomainCounts& d = row.counts;
    auto ops = cov.by_domain.find(domain);
    if (d.paper == 0 && d.beyond == 0 && ops == cov.by_domain.end()) continue;
    mu::data r;
    Set(r, "line",
        "| " + MarkdownEscape(Label(domain, paper)) + " | " + std::to_string(d.paper) + " | " +
            std::to_string(d.native) + " | " + std::to_string(d.planned) + " | " + std::to_string(d.not_possible) +
            " | " + std::to_string(d.beyond) + " | " + std::to_string(row.ran_ok) + " | " +
            (ops == cov.by_domain.end() ? Dash() : std::to_string(ops->second.size())) + " |");
    Append(rows, std::move(r));
    all.counts += d;
    all.ran_ok += row.ran_ok;
  }
  mu::data total;
  const core::PaperDomainCounts& t = all.counts;
  Set(total, "line",
      "| **All** | " + std::to_string(t.paper) + " | " + std::to_string(t.native) + " | " + std::to_string(t.planned) +
          " | " + std::to_string(t.not_possible) + " | " + std::to_string(t.beyond) + " | " +
          std::to_string(all.ran_ok) + " | " + (cov.all.empty() ? Dash() : std::to_string(cov.all.size())) +
          " (union) |");
  Append(rows, std::move(total));
  *all_out = all;
  return rows;
}

// The section on the models TorchBench added after the paper, each with our
// state; `link` links our id to its model page where it ran.
template <typename Link>
void SetSince(mu::data& d, const core::PaperTable1& table, const std::map<std::string, ModelRuns>& ran,
              const PaperTable2& paper, const Link& link) {
  mu::data rows = List();
  for (const auto& n : table.since_paper) {
    const std::string why = n.reason.empty() ? n.note : n.reason;
    mu::data r;
    Set(r, "line",
        "| " + MarkdownEscape(n.name) + " | " + MarkdownEscape(n.source) + " | " +
            MarkdownEscape(Label(n.domain, paper)) + " | " + MarkdownEscape(n.task) + " | " + core::Name(n.state) +
            " | " + (n.ours ? link(*n.ours) : Dash()) + " | " + RanText(n.ours, ran) + " | " + MarkdownEscape(why) +
            " |");
    Append(rows, std::move(r));
  }
  Set(d, "has_since", !table.since_paper.empty());
  Set(d, "since_source", table.since_paper_source);
  Set(d, "since_total", std::to_string(table.since_paper.size()));
  Set(d, "since_native", std::to_string(table.SinceCountIn(core::PaperModelState::kNative)));
  Set(d, "since_rows", std::move(rows));
}

}  // namespace

mu::data Table1PageData(const BuildView& v, const core::PaperTable1& table, const PaperTable2& paper) {
  const Target page{Kind::kTable1Page, v.id, "", "md"};
  std::vector<const PlatformView*> platforms;
  std::vector<const core::RunResult*> runs;
  for (const auto& p : v.platforms) {
    platforms.push_back(&p);
    runs.insert(runs.end(), p.runs.begin(), p.runs.end());
  }
  const std::map<std::string, ModelRuns> ran = RunsByModel(platforms);
  const core::Coverage cov = core::ComputeCoverage(runs);

  std::map<std::string, DomainRow> domains;
  for (const auto& d : core::kDomains) domains[d];
  for (const auto& [domain, counts] : core::CountByDomain(table)) domains[domain].counts = counts;
  // Model ids are safe ids (core::IsSafeId): nothing in them needs escaping
  // in a code span, where a backslash would print.
  auto link = [&](const std::string& id) {
    return ran.count(id) ? "[`" + id + "`](" + Href(page, {Kind::kModelPage, v.id, id, "html"}) + ")" : "`" + id + "`";
  };
  auto ran_ok = [&](const std::string& id) {
    auto it = ran.find(id);
    return it != ran.end() && it->second.ok > 0;
  };

  mu::data models = List(), not_possible = List();
  for (const auto& m : table.models) {
    if (m.ours && ran_ok(*m.ours)) ++domains[m.domain].ran_ok;
    const std::string why = m.reason.empty() ? m.note : m.reason;
    mu::data r;
    Set(r, "line",
        "| " + MarkdownEscape(Label(m.domain, paper)) + " | " + MarkdownEscape(m.task) + " | " +
            MarkdownEscape(m.paper_name) + " | " + core::Name(m.state) + " | " + (m.ours ? link(*m.ours) : Dash()) +
            " | " + RanText(m.ours, ran) + " | " + MarkdownEscape(why) + " |");
    Append(models, std::move(r));
    if (m.state == core::PaperModelState::kNotPossible) {
      mu::data n;
      Set(n, "name", m.paper_name);
      Set(n, "reason", m.reason);
      Append(not_possible, std::move(n));
    }
  }
  mu::data beyond = List();
  for (const auto& o : table.ours_only) {
    if (ran_ok(o.id)) ++domains[o.domain].ran_ok;
    mu::data r;
    Set(r, "line",
        "| " + MarkdownEscape(Label(o.domain, paper)) + " | " + MarkdownEscape(o.task) + " | " + link(o.id) + " | " +
            RanText(std::optional<std::string>(o.id), ran) + " | " + MarkdownEscape(o.note) + " |");
    Append(beyond, std::move(r));
  }

  DomainRow all;
  mu::data rows = DomainRows(domains, cov, paper, &all);

  mu::data d;
  Set(d, "home", Href(page, {Kind::kIndexPage, "", "", "md"}));
  Set(d, "build", v.id);
  Set(d, "build_href", Href(page, {Kind::kBuildPage, v.id, "", "html"}));  // HTML only (summary.md is its twin)
  Set(d, "citation", table.citation);
  Set(d, "note", table.note);
  Set(d, "recovered", std::to_string(table.models.size()));
  Set(d, "native", std::to_string(all.counts.native));
  Set(d, "planned", std::to_string(all.counts.planned));
  Set(d, "not_possible_count", std::to_string(all.counts.not_possible));
  Set(d, "beyond", std::to_string(all.counts.beyond));
  Set(d, "ours_total", std::to_string(all.counts.native + all.counts.beyond));
  Set(d, "runs_with_operators", std::to_string(cov.runs_with_operators));
  Set(d, "runs_without", std::to_string(cov.runs_without));
  Set(d, "domains", std::move(rows));
  Set(d, "models", std::move(models));
  Set(d, "has_not_possible", !not_possible.list_value().empty());
  Set(d, "not_possible", std::move(not_possible));
  Set(d, "has_beyond", !beyond.list_value().empty());
  Set(d, "beyond_rows", std::move(beyond));
  SetSince(d, table, ran, paper, link);
  return d;
}

}  // namespace torchgauge::reporter
