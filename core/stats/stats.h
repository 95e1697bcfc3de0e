// Summary statistics of timing samples. One place computes every statistic
// the collector records and the reporter and regression detector read.
#pragma once

#include <vector>

namespace torchgauge::core {

struct Summary {
  double median = 0, min = 0, max = 0, mean = 0, stdev = 0;
  double q1 = 0, q3 = 0, iqr = 0;
  double cov = 0;  // coefficient of variation: stdev / mean (0 when mean is 0)
};

// Quantile with linear interpolation between closest ranks (NumPy's default).
double Quantile(std::vector<double> values, double q);

// Summarises a non-empty sample. stdev is the sample standard deviation (n-1).
Summary Summarize(const std::vector<double>& samples);

// Geometric mean of positive values; 0 values are not allowed.
double GeoMean(const std::vector<double>& values);

}  // namespace torchgauge::core
