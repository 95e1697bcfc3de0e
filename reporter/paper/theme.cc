#include "reporter/paper/theme.h"

#include <algorithm>
#include <stdexcept>

using nlohmann::json;

namespace torchgauge::reporter {

PaperWidth PaperWidthFromName(const std::string& name) {
  if (name == "single") return PaperWidth::kSingle;
  if (name == "double") return PaperWidth::kDouble;
  throw std::invalid_argument("--width '" + name + "': expected single (3.3 in) or double (7 in)");
}

const char* PaperWidthName(PaperWidth w) { return w == PaperWidth::kSingle ? "single" : "double"; }

double PaperWidthPt(PaperWidth w) { return w == PaperWidth::kSingle ? 3.3 * 72 : 7.0 * 72; }

namespace {

void StripTooltips(json& j) {
  if (j.is_object()) {
    j.erase("tooltip");
    for (auto& [k, v] : j.items()) StripTooltips(v);
  } else if (j.is_array()) {
    for (auto& v : j) StripTooltips(v);
  }
}

json ThemeConfig(double width_pt) {
  const json text = {{"labelFont", kPaperFont},
                     {"titleFont", kPaperFont},
                     {"labelFontSize", kPaperTextPt},
                     {"titleFontSize", kPaperTitlePt},
                     {"titleFontWeight", "normal"}};
  json axis = text;
  axis["gridColor"] = "#E6E6E6";
  axis["tickColor"] = "#000000";
  axis["domainColor"] = "#000000";
  json legend = text;
  legend["symbolSize"] = 30;
  legend["padding"] = 0;
  // One weight: the PDF then embeds one font subset.
  return {{"font", kPaperFont},
          {"axis", axis},
          // The label column; PaperModelAxis wraps what would not fit, so
          // nothing is cut ("...") unless a label has no break point.
          {"axisY", {{"labelLimit", kPaperLabelShare * width_pt}}},
          {"legend", legend},
          {"title", {{"font", kPaperFont}, {"fontSize", kPaperTitlePt}, {"fontWeight", "normal"}, {"anchor", "start"}}},
          {"header", text},
          {"view", {{"stroke", nullptr}}}};
}

}  // namespace

std::vector<std::string> WrapPaperLabel(const std::string& label, size_t max_chars) {
  if (label.size() <= max_chars) return {label};
  size_t best = std::string::npos, best_len = label.size();
  for (size_t i = 1; i + 1 < label.size(); ++i) {
    const char c = label[i];
    if (c != '_' && c != ' ') continue;
    // Break after an underscore (it ends the first line), or at a space.
    const size_t first = c == ' ' ? i : i + 1, rest = label.size() - (i + 1);
    const size_t longer = std::max(first, rest);
    if (longer < best_len) {
      best_len = longer;
      best = i;
    }
  }
  if (best == std::string::npos) return {label};
  const size_t cut = label[best] == ' ' ? best : best + 1;
  return {label.substr(0, cut), label.substr(best + 1)};
}

namespace {
std::string VegaString(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}
}  // namespace

PaperLabelAxis PaperModelAxis(const json& labels, PaperWidth width) {
  const auto max_chars = static_cast<size_t>(kPaperLabelShare * PaperWidthPt(width) / kPaperCharPt);
  PaperLabelAxis out;
  std::string expr, wrapped;
  for (const auto& l : labels) {
    const auto lines = WrapPaperLabel(l.get<std::string>(), max_chars);
    if (lines.size() < 2) continue;
    out.lines = 2;
    expr += "datum.label === " + VegaString(l.get<std::string>()) + " ? [" + VegaString(lines[0]) + ", " +
            VegaString(lines[1]) + "] : ";
    wrapped += (wrapped.empty() ? "" : " || ") + std::string("datum.value === ") + VegaString(l.get<std::string>());
  }
  out.axis = json::object();
  if (!expr.empty()) {
    const double line = kPaperTextPt + 1;
    out.axis["labelExpr"] = expr + "datum.label";
    out.axis["labelLineHeight"] = line;
    // Vega centres a label's first line on its row: lift two-line labels by
    // half a line so the pair is centred.
    out.axis["labelOffset"] = {{"expr", "(" + wrapped + ") ? " + std::to_string(-line / 2).substr(0, 4) + " : 0"}};
  }
  return out;
}

void ApplyPaperTheme(json& spec, PaperWidth width, double height_pt) {
  StripTooltips(spec);
  spec["width"] = PaperWidthPt(width);
  spec["height"] = height_pt;
  // The figure, axes and legend included, is exactly the given size: the
  // PDF page is then as wide as the column.
  spec["autosize"] = {{"type", "fit"}, {"contains", "padding"}};
  // Room on the right for the last tick label of the x axis.
  spec["padding"] = {{"left", 2}, {"top", 2}, {"right", 8}, {"bottom", 2}};
  spec["background"] = "white";
  spec["config"] = ThemeConfig(PaperWidthPt(width));
  spec["usermeta"] = {{"embedOptions", {{"actions", false}}}};
}

}  // namespace torchgauge::reporter
