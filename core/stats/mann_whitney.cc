#include "core/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

namespace torchgauge::core {

namespace {

// Midranks (1-based) of the pooled sample; returns the sum of t^3 - t over
// tie groups for the variance correction.
double RankPooled(const std::vector<double>& pooled, std::vector<double>& ranks) {
  const std::size_t n = pooled.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return pooled[i] < pooled[j]; });
  ranks.assign(n, 0);
  double tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const double mid = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = mid;
    const double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  return tie_term;
}

// Counts of U = 0..n1*n2 over all C(n1+n2, n1) arrangements, as
// probabilities. c[k][u] after placing j items = ways to pick k of the first
// j pooled positions (in increasing order) for sample 1 with U = u. Placing
// position j into sample 1 adds (j - k) to U: the sample-2 items below it.
std::vector<double> ExactUDistribution(std::size_t n1, std::size_t n2) {
  const std::size_t umax = n1 * n2;
  std::vector<std::vector<double>> c(n1 + 1, std::vector<double>(umax + 1, 0.0));
  c[0][0] = 1.0;
  for (std::size_t j = 0; j < n1 + n2; ++j) {
    // Iterate k downwards so c[k-1] still holds the previous step.
    for (std::size_t k = std::min(j + 1, n1); k >= 1; --k) {
      const std::size_t below2 = j - (k - 1);  // sample-2 items among the first j
      if (below2 > n2) continue;
      const std::size_t add = below2;
      for (std::size_t u = umax + 1; u-- > add;) c[k][u] += c[k - 1][u - add];
    }
  }
  // Rows k < n1 also hold arrangements in which more than n2 items went to
  // sample 2; row n1 only counts arrangements with exactly n1 + n2 items, but
  // the guard above keeps sample-2 counts <= n2 for every placed item.
  std::vector<double> dist = c[n1];
  const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
  for (double& d : dist) d /= total;
  return dist;
}

// The distribution depends on the sample sizes alone, and a comparison of a
// suite asks for the same few sizes thousands of times: each is computed
// once per thread.
const std::vector<double>& CachedUDistribution(std::size_t n1, std::size_t n2) {
  thread_local std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cache;
  auto it = cache.find({n1, n2});
  if (it == cache.end()) it = cache.emplace(std::make_pair(n1, n2), ExactUDistribution(n1, n2)).first;
  return it->second;
}

}  // namespace

double ExactUCdf(std::size_t n1, std::size_t n2, double u) {
  if (u < 0) return 0;
  const auto& dist = CachedUDistribution(n1, n2);
  double cdf = 0;
  for (std::size_t k = 0; k < dist.size() && static_cast<double>(k) <= u + 1e-9; ++k) cdf += dist[k];
  return std::min(1.0, cdf);
}

double MinAchievablePValue(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  // C(n1+n2, n1) in floating point via logs.
  const double log_c = std::lgamma(static_cast<double>(n1 + n2 + 1)) - std::lgamma(static_cast<double>(n1 + 1)) -
                       std::lgamma(static_cast<double>(n2 + 1));
  return std::min(1.0, 2.0 * std::exp(-log_c));
}

MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult r;
  r.n1 = a.size();
  r.n2 = b.size();
  if (a.empty() || b.empty()) return r;
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::vector<double> ranks;
  const double tie_term = RankPooled(pooled, ranks);
  r.ties = tie_term > 0;
  const double n1 = static_cast<double>(r.n1), n2 = static_cast<double>(r.n2), n = n1 + n2;
  double r1 = 0;
  for (std::size_t i = 0; i < r.n1; ++i) r1 += ranks[i];
  r.u1 = r1 - n1 * (n1 + 1) / 2.0;
  const double mn = n1 * n2;

  if (!r.ties && r.n1 + r.n2 <= kExactMaxTotal) {
    r.exact = true;
    const auto& dist = CachedUDistribution(r.n1, r.n2);
    const double u_small = std::min(r.u1, mn - r.u1);
    double cdf = 0;
    for (std::size_t k = 0; k < dist.size() && static_cast<double>(k) <= u_small + 1e-9; ++k) cdf += dist[k];
    r.p_value = std::min(1.0, 2.0 * cdf);
    return r;
  }
  const double mu = mn / 2.0;
  const double var = mn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (!(var > 0)) {  // every value tied: no evidence of a difference
    r.p_value = 1;
    return r;
  }
  const double z = std::max(0.0, std::abs(r.u1 - mu) - 0.5) / std::sqrt(var);
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

}  // namespace torchgauge::core
