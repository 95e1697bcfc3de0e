#include <doctest/doctest.h>

#include <stdexcept>

#include "core/stats/stats.h"

using torchgauge::core::GeoMean;
using torchgauge::core::Quantile;
using torchgauge::core::Summarize;

TEST_CASE("median of odd and even samples") {
  CHECK(Summarize({3, 1, 2}).median == doctest::Approx(2));
  CHECK(Summarize({4, 1, 3, 2}).median == doctest::Approx(2.5));
}

TEST_CASE("summary of a known sample matches NumPy") {
  // numpy: mean 5, std(ddof=1) 2.138089935, percentile 25/75 -> 4, 5.5 (linear)
  auto s = Summarize({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(s.mean == doctest::Approx(5));
  CHECK(s.stdev == doctest::Approx(2.138089935));
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.q1 == doctest::Approx(4));
  CHECK(s.q3 == doctest::Approx(5.5));
  CHECK(s.iqr == doctest::Approx(1.5));
  CHECK(s.median == doctest::Approx(4.5));
  CHECK(s.cov == doctest::Approx(2.138089935 / 5));
}

TEST_CASE("single sample has zero spread") {
  auto s = Summarize({7.5});
  CHECK(s.median == 7.5);
  CHECK(s.stdev == 0);
  CHECK(s.iqr == 0);
}

TEST_CASE("empty samples and non-positive geomean are rejected") {
  CHECK_THROWS_AS(Summarize({}), std::invalid_argument);
  CHECK_THROWS_AS(Quantile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(GeoMean({1.0, 0.0}), std::invalid_argument);
}

TEST_CASE("geomean") {
  CHECK(GeoMean({1, 4}) == doctest::Approx(2));
  CHECK(GeoMean({2, 8, 4}) == doctest::Approx(4));
}
