// How numbers read on every page and report of the reporter: the site's
// pages, its CSV/TeX tables and the comparison reports. One place, so a value
// shown in two places is shown the same way. Values not measured print as
// Dash(), never as 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/analysis/compare.h"

namespace torchgauge::reporter {

// printf of one double with `fmt` (which must take exactly one double).
std::string Num(double v, const char* fmt);
// Milliseconds with about four significant digits, never in exponent form.
std::string Ms(double v);
// Three significant digits, never in exponent form: small rates (CPU
// TFLOP/s, a tiny model's GFLOP) must not print as 0.00.
std::string Sig3(double v);
// A fraction as a percentage with one decimal ("12.5"), no sign.
std::string Pct(double fraction);
// Bytes as MiB with one decimal; Dash() when not measured.
std::string MiB(const std::optional<int64_t>& bytes);
std::string OptMs(const std::optional<double>& v);
// What a cell shows when nothing was measured.
std::string Dash();

// A comparison metric's value with its unit ("12.35 ms", "40.0/s",
// "1536.0 MiB"), as the build page and the comparison report show it.
std::string MetricValue(core::Metric m, double v);
// A change in percent with its sign: "+12.5%".
std::string DeltaPercent(double delta);
// A p-value: "n/a" when no test ran, exponent form below 1e-4.
std::string PValue(const std::optional<double>& p);

// An RFC 3339 time ("2026-01-02T03:04:05Z", fractions and offsets
// allowed) as seconds since the Unix epoch; nullopt when it is not one.
std::optional<int64_t> UtcSeconds(const std::string& rfc3339);

}  // namespace torchgauge::reporter
