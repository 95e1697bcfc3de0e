#include <doctest/doctest.h>

#include "core/stats/mann_whitney.h"

using namespace torchgauge::core;

// Reference values from a SciPy-free Python script: exact p by enumerating
// every C(n1+n2, n1) split of the pooled ranks; normal p from the textbook
// formula with tie correction and continuity correction (math.erfc).
TEST_CASE("Mann-Whitney exact distribution, no ties") {
  auto r = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  CHECK(r.exact);
  CHECK(r.u1 == 0);
  CHECK(r.p_value == doctest::Approx(0.007936507936507936).epsilon(1e-12));  // 2/252

  r = MannWhitneyU({1.1, 2.5, 3.7, 8.2, 9.0}, {4.4, 5.1, 6.3, 7.7, 10.2, 11.5});
  CHECK(r.u1 == 8);
  CHECK(r.p_value == doctest::Approx(0.24675324675324675).epsilon(1e-12));

  r = MannWhitneyU({10.2, 10.5, 10.1, 10.9, 10.4, 10.3, 10.8}, {10.6, 11.0, 11.3, 10.7, 11.2, 11.6});
  CHECK(r.u1 == 4);
  CHECK(r.p_value == doctest::Approx(0.013986013986013986).epsilon(1e-12));

  // Symmetry: swapping the samples keeps p.
  auto s = MannWhitneyU({10.6, 11.0, 11.3, 10.7, 11.2, 11.6}, {10.2, 10.5, 10.1, 10.9, 10.4, 10.3, 10.8});
  CHECK(s.u1 == 38);
  CHECK(s.p_value == doctest::Approx(r.p_value));

  // Identical distributions in ranks: U at its mean gives p = 1.
  CHECK(MannWhitneyU({1, 4}, {2, 3}).p_value == doctest::Approx(1.0));
}

TEST_CASE("Mann-Whitney normal approximation with ties") {
  auto r = MannWhitneyU({1, 2, 2, 3, 3, 3, 4}, {3, 4, 4, 5, 5, 6, 7, 7});
  CHECK_FALSE(r.exact);
  CHECK(r.ties);
  CHECK(r.u1 == 3.5);
  CHECK(r.p_value == doctest::Approx(0.004793348746185464).epsilon(1e-10));
  // All values tied: no evidence at all.
  CHECK(MannWhitneyU({5, 5, 5}, {5, 5, 5}).p_value == 1.0);
}

TEST_CASE("Exact CDF and the smallest reachable p") {
  CHECK(ExactUCdf(5, 5, 0) == doctest::Approx(1.0 / 252));
  CHECK(ExactUCdf(5, 5, 25) == doctest::Approx(1.0));
  CHECK(ExactUCdf(2, 2, 1) == doctest::Approx(2.0 / 6));     // U in {0,1,2,2,3,4}
  CHECK(MinAchievablePValue(3, 3) == doctest::Approx(0.1));  // 2/20: 3 vs 3 can never reach 0.05
  CHECK(MinAchievablePValue(4, 4) == doctest::Approx(2.0 / 70));
  CHECK(MinAchievablePValue(10, 10) == doctest::Approx(2.0 / 184756));
  CHECK(MinAchievablePValue(1, 30) > 0.05);  // 2/31
  CHECK(MinAchievablePValue(0, 10) == 1.0);
  // Large samples use the normal approximation.
  std::vector<double> a, b;
  for (int i = 0; i < 80; ++i) {
    a.push_back(i);
    b.push_back(i + 0.5);
  }
  auto r = MannWhitneyU(a, b);
  CHECK_FALSE(r.exact);
  CHECK(r.p_value > 0.5);
}
