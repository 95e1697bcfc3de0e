#include "reporter/output/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace torchgauge::reporter {

std::string Num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Ms(double v) {
  double a = std::fabs(v);
  return Num(v, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f");
}

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
  return b ? Num(static_cast<double>(*b) / (1024.0 * 1024.0), "%.1f") : Dash();
}

std::string OptMs(const std::optional<double>& v) { return v ? Ms(*v) : Dash(); }

std::string Dash() { return "—"; }

std::string MetricValue(core::Metric m, double v) {
  switch (m) {
    case core::Metric::kTime:
      return Ms(v) + " ms";
    case core::Metric::kThroughput:
      return Num(v, "%.1f") + "/s";
    default:
      return Num(v / (1024.0 * 1024.0), "%.1f") + " MiB";
  }
}

std::string DeltaPercent(double delta) { return Num(delta, "%+.1f%%"); }

std::string PValue(const std::optional<double>& p) {
  if (!p) return "n/a";
  if (*p < 1e-4) return Num(*p, "%.1e");
  return Num(*p, "%.4f");
}

}  // namespace torchgauge::reporter
