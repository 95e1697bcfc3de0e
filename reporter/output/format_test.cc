#include "reporter/output/format.h"

#include <doctest/doctest.h>

using namespace torchgauge::reporter;
using torchgauge::core::Metric;

TEST_CASE("Ms keeps about four significant digits without an exponent") {
  CHECK(Ms(0.0123) == "0.012");
  CHECK(Ms(1.23456) == "1.235");
  CHECK(Ms(12.3456) == "12.35");
  CHECK(Ms(123.456) == "123.5");
  CHECK(Ms(12345.6) == "12346");
}

TEST_CASE("Sig3 keeps three significant digits of small rates") {
  CHECK(Sig3(0.000123456) == "0.000123");
  CHECK(Sig3(0.5) == "0.500");
  CHECK(Sig3(12.345) == "12.3");
  CHECK(Sig3(0) == "0");
  CHECK(Sig3(1234.5) == "1234");
}

TEST_CASE("not measured is a dash, never 0") {
  CHECK(MiB(std::nullopt) == Dash());
  CHECK(OptMs(std::nullopt) == Dash());
  CHECK(MiB(int64_t{3} * 1024 * 1024 / 2) == "1.5");
  CHECK(Pct(0.125) == "12.5");
}

TEST_CASE("metric values carry their unit") {
  CHECK(MetricValue(Metric::kTime, 12.3456) == "12.35 ms");
  CHECK(MetricValue(Metric::kThroughput, 40) == "40.0/s");
  CHECK(MetricValue(Metric::kCpuMemory, 1536.0 * 1024 * 1024) == "1536.0 MiB");
  CHECK(MetricValue(Metric::kTime, 0.5) == "0.500 ms");
  CHECK(DeltaPercent(12.34) == "+12.3%");
  CHECK(PValue(std::nullopt) == "n/a");
  CHECK(PValue(0.00001) == "1.0e-05");
  CHECK(PValue(0.25) == "0.2500");
}
