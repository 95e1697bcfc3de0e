#include "reporter/pages/model_grid.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/paths.h"

namespace torchgauge::reporter {

std::optional<double> GridRow::WorstChange() const {
  std::optional<double> worst;
  for (const auto& [platform, c] : cells) {
    if (c.change && (!worst || *c.change > *worst)) worst = c.change;
  }
  return worst;
}

const ConfigMedian* HeadlineConfig(const std::vector<const ConfigMedian*>& medians) {
  for (const char* prefix : {"eval/eager/", "train/eager/"}) {
    for (const auto* m : medians) {
      if (m->config.starts_with(prefix)) return m;
    }
  }
  return medians.empty() ? nullptr : medians.front();
}

namespace {

const PlatformSummary* FindPlatform(const BuildSummary& b, const std::string& id) {
  for (const auto& p : b.platforms) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::optional<double> MedianOf(const PlatformSummary& p, const std::string& model, const std::string& config) {
  auto it = std::lower_bound(p.medians.begin(), p.medians.end(), std::pair(model, config),
                             [](const ConfigMedian& m, const std::pair<std::string, std::string>& k) {
                               return std::tie(m.model, m.config) < std::tie(k.first, k.second);
                             });
  if (it == p.medians.end() || it->model != model || it->config != config) return std::nullopt;
  return it->median_ms;
}

// The cell's history in the last `trend` builds, and its change against
// the newest earlier build that has the configuration.
GridCell Cell(const std::vector<BuildSummary>& history, const std::string& platform, const ConfigMedian& m, int trend) {
  GridCell c;
  c.config = m.config;
  c.median_ms = m.median_ms;
  const size_t n = history.size();
  const size_t begin = n > static_cast<size_t>(trend) ? n - trend : 0;
  for (size_t i = begin; i < n; ++i) {
    const PlatformSummary* p = FindPlatform(history[i], platform);
    if (auto v = p ? MedianOf(*p, m.model, m.config) : std::nullopt) c.history.push_back(*v);
  }
  for (size_t i = n - 1; i-- > 0;) {
    const PlatformSummary* p = FindPlatform(history[i], platform);
    if (auto v = p ? MedianOf(*p, m.model, m.config) : std::nullopt; v && *v > 0) {
      c.change = m.median_ms / *v - 1.0;
      break;
    }
  }
  return c;
}

}  // namespace

ModelGrid BuildModelGrid(const std::vector<BuildSummary>& history, const std::map<std::string, std::string>& domains,
                         int trend_builds) {
  ModelGrid g;
  if (history.empty()) return g;
  const BuildSummary& last = history.back();
  g.build = last.id;
  std::map<std::string, GridRow> rows;
  for (const auto& p : last.platforms) {
    g.platforms.push_back(p.id);
    std::map<std::string, std::vector<const ConfigMedian*>> by_model;
    for (const auto& m : p.medians) by_model[m.model].push_back(&m);
    for (const auto& [model, medians] : by_model) {
      GridRow& row = rows[model];
      row.model = model;
      auto d = domains.find(model);
      row.domain = d == domains.end() ? "" : d->second;
      if (const ConfigMedian* m = HeadlineConfig(medians)) row.cells[p.id] = Cell(history, p.id, *m, trend_builds);
    }
  }
  for (auto& [model, row] : rows) g.rows.push_back(std::move(row));
  std::stable_sort(g.rows.begin(), g.rows.end(), [](const GridRow& a, const GridRow& b) {
    return std::tie(a.domain, a.model) < std::tie(b.domain, b.model);
  });
  return g;
}

std::string Sparkline(const std::vector<double>& values) {
  if (values.size() < 2) return "";
  constexpr double kW = 80, kH = 18, kPad = 2;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double span = *hi - *lo;
  std::string points;
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = kPad + (kW - 2 * kPad) * static_cast<double>(i) / static_cast<double>(values.size() - 1);
    const double y = span > 0 ? kPad + (kH - 2 * kPad) * (1.0 - (values[i] - *lo) / span) : kH / 2;
    if (i) points += ' ';
    points += Num(x, "%.1f") + "," + Num(y, "%.1f");
  }
  return "<svg class=\"spark\" width=\"80\" height=\"18\" viewBox=\"0 0 80 18\" role=\"img\" aria-label=\"history of " +
         std::to_string(values.size()) +
         " builds\"><polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"1.2\" points=\"" + points + "\"/></svg>";
}

namespace {

const Target kGridMd{Kind::kModelGridPage, "", "", "md"};
const Target kGridHtml{Kind::kModelGridPage, "", "", "html"};

std::string Change(const std::optional<double>& c) { return c ? DeltaPercent(*c * 100) : Dash(); }

std::string HtmlCell(const ModelGrid& g, const GridRow& row, const std::string& platform) {
  auto it = row.cells.find(platform);
  if (it == row.cells.end()) return "<td class=\"empty\">" + Dash() + "</td>";
  const GridCell& c = it->second;
  const std::string href = Href(kGridHtml, {Kind::kModelPage, g.build, row.model, "html"});
  return "<td><a href=\"" + HtmlEscape(href) + "\">" + HtmlEscape(Ms(c.median_ms)) + " ms</a> " + Sparkline(c.history) +
         "<br><small>" + HtmlEscape(c.config) + " \xC2\xB7 " + HtmlEscape(Change(c.change)) + "</small></td>";
}

std::string HtmlGrid(const ModelGrid& g) {
  std::string h =
      "<p class=\"sort\" data-sort-for=\"model-grid\">Sort by "
      "<button type=\"button\" data-sort=\"domain\">domain</button> "
      "<button type=\"button\" data-sort=\"name\">name</button> "
      "<button type=\"button\" data-sort=\"change\">change since the last build</button></p>\n";
  h += "<table id=\"model-grid\" class=\"grid\">\n<thead><tr><th>Model</th><th>Domain</th>";
  for (const auto& p : g.platforms) h += "<th>" + HtmlEscape(p) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& row : g.rows) {
    const auto worst = row.WorstChange();
    h += "<tr data-name=\"" + HtmlEscape(row.model) + "\" data-domain=\"" + HtmlEscape(row.domain) +
         "\" data-change=\"" + (worst ? Num(*worst, "%.6f") : std::string("")) + "\"><td>" + HtmlEscape(row.model) +
         "</td><td>" + HtmlEscape(row.domain.empty() ? Dash() : row.domain) + "</td>";
    for (const auto& p : g.platforms) h += HtmlCell(g, row, p);
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n";
}

}  // namespace

mu::data ModelGridPageData(const ModelGrid& g) {
  mu::data d;
  Set(d, "home", Href(kGridMd, {Kind::kIndexPage, "", "", "md"}));
  Set(d, "regressions_href", Href(kGridMd, {Kind::kRegressionsPage, "", "", "md"}));
  Set(d, "readers_js", Href(kGridHtml, {Kind::kAsset, "", "readers.js", ""}));
  Set(d, "has_rows", !g.rows.empty());
  Set(d, "build", g.build);
  if (!g.build.empty()) Set(d, "build_href", Href(kGridMd, {Kind::kBuildPage, g.build, "", "html"}));
  std::string header = "| Model | Domain |", rule = "|---|---|";
  for (const auto& p : g.platforms) {
    header += ' ';
    header += MarkdownEscape(p) + " |";
    rule += "--:|";
  }
  Set(d, "header", header);
  Set(d, "rule", rule);
  mu::data rows = List();
  for (const auto& row : g.rows) {
    std::string line =
        "| " + MarkdownEscape(row.model) + " | " + MarkdownEscape(row.domain.empty() ? Dash() : row.domain) + " |";
    for (const auto& p : g.platforms) {
      auto it = row.cells.find(p);
      const std::string href = Href(kGridMd, {Kind::kModelPage, g.build, row.model, "html"});
      line += ' ';
      if (it == row.cells.end()) {
        line += Dash() + " |";
      } else {
        line += '[';
        line += Ms(it->second.median_ms) + " ms](" + href + ") " + MarkdownEscape(Change(it->second.change)) + " |";
      }
    }
    mu::data r;
    Set(r, "line", line);
    Append(rows, std::move(r));
  }
  Set(d, "rows", std::move(rows));
  Set(d, "grid_html", HtmlGrid(g));
  return d;
}

}  // namespace torchgauge::reporter
