// The paper kit's publication style, in one place: figure widths (a single
// column of 3.3 in, a double column of 7 in), serif text at 8-9 pt, a palette
// whose colours also differ in lightness (so a grayscale print keeps them
// apart) paired with point shapes, and no interactive chrome (tooltips,
// action links). Figures (paper/figures.h) take their marks' colours and
// shapes from here and pass their specs through ApplyPaperTheme last.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchgauge::reporter {

enum class PaperWidth { kSingle, kDouble };
// "single" | "double"; throws std::invalid_argument otherwise.
PaperWidth PaperWidthFromName(const std::string& name);
const char* PaperWidthName(PaperWidth w);
// The figure's width in PostScript points (1/72 in): 237.6 and 504. A
// Vega-Lite pixel is a point in vl-convert's PDF, so this is the page width.
double PaperWidthPt(PaperWidth w);

inline constexpr double kPaperTextPt = 8;   // axis labels, legends
inline constexpr double kPaperTitlePt = 9;  // axis and legend titles, the figure title
inline constexpr const char* kPaperFont = "serif";

// Three parts of a breakdown: dark, middle and light (relative luminance
// about 0.15, 0.42 and 0.72), as the paper's blue / red / grey.
inline constexpr const char* kPaperFirstColor = "#0072B2";
inline constexpr const char* kPaperSecondColor = "#E69F00";
inline constexpr const char* kPaperThirdColor = "#D9D9D9";
// Up to three series of points (T/CM/GM; train/eval): colour and shape.
inline constexpr const char* kPaperSeriesColors[] = {"#0072B2", "#E69F00", "#000000"};
inline constexpr const char* kPaperSeriesShapes[] = {"circle", "square", "triangle-up"};

// The model axis of a figure whose rows are models: a label too long for the
// label column (kPaperLabelShare of the width, at kPaperCharPt per character,
// DejaVu Serif's average at 8 pt with room to spare) is broken onto two
// lines at the underscore or space nearest its middle, so no model
// name is cut. `axis` goes into the y encoding's "axis" (a labelExpr that
// maps only the wrapped labels; the data keep the plain names); `lines` is
// 2 when any label wraps, and the figure's rows must then be taller.
inline constexpr double kPaperLabelShare = 0.42;
inline constexpr double kPaperCharPt = 5.0;
struct PaperLabelAxis {
  nlohmann::json axis;
  int lines = 1;
};
PaperLabelAxis PaperModelAxis(const nlohmann::json& labels, PaperWidth width);
// A label split for a column of `max_chars`: {label} when it fits or has no
// break point, else its two lines.
std::vector<std::string> WrapPaperLabel(const std::string& label, size_t max_chars);

// Sets the width (the whole figure, axes and legend included), `height_pt`,
// fonts and sizes, and removes every tooltip; the embed options turn off
// vega-embed's action links for anyone who embeds the spec.
void ApplyPaperTheme(nlohmann::json& spec, PaperWidth width, double height_pt);

}  // namespace torchgauge::reporter
