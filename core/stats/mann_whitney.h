// The Mann-Whitney U test (Wilcoxon rank-sum), two-sided, used by the
// regression detector to decide whether two sets of timing samples differ
// by more than noise. Written here so the core stays dependency-free.
//
// Method (the same choice as SciPy's method="auto" family, widened):
//  - no ties and n1 + n2 <= kExactMaxTotal: the exact null distribution of U,
//    counted by dynamic programming; p = min(1, 2 * P(U <= min(U, n1*n2 - U)));
//  - otherwise (ties, or large samples): the normal approximation with the
//    tie-corrected variance and a continuity correction of 0.5.
// Timing samples are doubles and rarely tie; quantised clocks can tie, which
// is why the tie-corrected path exists.
#pragma once

#include <cstddef>
#include <vector>

namespace torchgauge::core {

inline constexpr std::size_t kExactMaxTotal = 100;

struct MannWhitneyResult {
  double u1 = 0;       // U of the first sample: pairs (a, b) with a > b, ties count 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // exact distribution (true) or normal approximation (false)
  bool ties = false;
  std::size_t n1 = 0, n2 = 0;
};

// Two-sided test of H0: both samples come from the same distribution.
// Either sample empty gives p = 1.
MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p-value the test can produce for these sample
// sizes (complete separation, no ties): 2 / C(n1 + n2, n1), capped at 1.
// When it exceeds alpha the test cannot reach significance: "too few
// samples to tell".
double MinAchievablePValue(std::size_t n1, std::size_t n2);

// P(U <= u) under H0 without ties, exact. Exposed for tests.
double ExactUCdf(std::size_t n1, std::size_t n2, double u);

}  // namespace torchgauge::core
