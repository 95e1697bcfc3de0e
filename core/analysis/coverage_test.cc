#include <doctest/doctest.h>

#include "core/analysis/coverage.h"

using namespace torchgauge::core;

TEST_CASE("coverage unions operators per domain and overall, ignoring runs without") {
  RunResult a, b, c;
  a.model.domain = "vision";
  a.operators = std::vector<std::string>{"aten::conv2d", "aten::add.Tensor"};
  b.model.domain = "nlp";
  b.operators = std::vector<std::string>{"aten::add.Tensor", "aten::bmm"};
  c.model.domain = "nlp";  // failed run: no operators
  auto cov = ComputeCoverage({a, b, c});
  CHECK(cov.all.size() == 3);
  CHECK(cov.by_domain["vision"].size() == 2);
  CHECK(cov.by_domain["nlp"].size() == 2);
  CHECK(cov.runs_with_operators == 2);
  CHECK(cov.runs_without == 1);
}
