#include "reporter/output/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

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

std::string MetricValue(core::Metric m, double v) { return core::FormatMetricValue(m, v); }

std::string DeltaPercent(double delta) { return Num(delta, "%+.1f%%"); }

std::string PValue(const std::optional<double>& p) {
  if (!p) return "n/a";
  if (*p < 1e-4) return Num(*p, "%.1e");
  return Num(*p, "%.4f");
}

std::optional<int64_t> UtcSeconds(const std::string& started_at) {
  int y, mo, d, h, mi, s, n = 0;
  if (std::sscanf(started_at.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19) {
    return std::nullopt;
  }
  size_t at = 19;
  if (at < started_at.size() && started_at[at] == '.') {
    for (++at; at < started_at.size() && started_at[at] >= '0' && started_at[at] <= '9';) ++at;
  }
  const std::string zone = started_at.substr(at);
  long offset = 0;  // seconds east of UTC
  int oh, om;
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' &&
             std::sscanf(zone.c_str() + 1, "%2d:%2d", &oh, &om) == 2) {
    offset = (zone[0] == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm) - offset);
}

}  // namespace torchgauge::reporter
