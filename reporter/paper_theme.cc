#include "reporter/paper_theme.h"

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
  const json text = {{"labelFont", kPaperFont}, {"titleFont", kPaperFont}, {"labelFontSize", kPaperTextPt},
                     {"titleFontSize", kPaperTitlePt}, {"titleFontWeight", "normal"}};
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
          // Long model names are cut ("...") so the plot keeps over half the width.
          {"axisY", {{"labelLimit", 0.42 * width_pt}}},
          {"legend", legend},
          {"title", {{"font", kPaperFont}, {"fontSize", kPaperTitlePt}, {"fontWeight", "normal"}, {"anchor", "start"}}},
          {"header", text},
          {"view", {{"stroke", nullptr}}}};
}

}  // namespace

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
