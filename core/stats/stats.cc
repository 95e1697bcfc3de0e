#include "core/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace torchgauge::core {

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("Quantile of an empty sample");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = static_cast<size_t>(std::ceil(pos));
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

Summary Summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("Summarize of an empty sample");
  Summary s;
  auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  s.min = *mn;
  s.max = *mx;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double ss = 0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(samples.size() - 1));
  }
  s.median = Quantile(samples, 0.5);
  s.q1 = Quantile(samples, 0.25);
  s.q3 = Quantile(samples, 0.75);
  s.iqr = s.q3 - s.q1;
  s.cov = s.mean != 0 ? s.stdev / s.mean : 0;
  return s;
}

double GeoMean(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("GeoMean of an empty sample");
  double log_sum = 0;
  for (double v : values) {
    if (!(v > 0)) throw std::invalid_argument("GeoMean needs positive values");
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace torchgauge::core
