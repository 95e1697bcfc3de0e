#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/stats/counted.h"

using namespace torchgauge::core;

namespace {
std::filesystem::path Fixture() {
  return std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/callgrind/small.out";
}
}  // namespace

TEST_CASE("Callgrind totals: the cache events and the estimated cycles") {
  const auto events = ReadCallgrindTotals(Fixture());
  CHECK(events.at("Ir") == 1300);
  CHECK(events.at("DLmw") == 1);
  const CountedStep s = StepFromEvents(events);
  CHECK(s.instructions == 1300);
  CHECK(s.l1_misses == 10 + 20 + 5);
  CHECK(s.ll_misses == 2 + 4 + 1);
  // accesses 1900: (1900 - 35) L1 hits + 5 x (35 - 7) LL hits + 35 x 7 RAM accesses
  CHECK(s.est_cycles == 1865 + 140 + 245);
  CHECK_THROWS_WITH_AS(StepFromEvents({{"Ir", 5}}), doctest::Contains("--cache-sim=yes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(ReadCallgrindTotals("/nonexistent/callgrind.out"), doctest::Contains("/nonexistent"),
                       std::runtime_error);
}

TEST_CASE("Callgrind profile: self cost per object and function, calls' inclusive cost left out") {
  std::ifstream in(Fixture());
  const FunctionCosts f = ReadCallgrindFunctions(in);
  CHECK(f.at("libtorch_cpu.so\tat::native::add_kernel") == 1000 + 100 + 20);
  CHECK(f.at("libtorch_cpu.so\tat::native::relu") == 50);
  CHECK(f.at("???\t0x000000000402a3f0") == 80);
  CHECK(f.count("libc.so.6\tmemcpy") == 0);  // only seen as a callee here
  int64_t total = 0;
  for (const auto& [name, ir] : f) total += ir;
  CHECK(total == 1250);
  std::istringstream no_event("events: Ir\n");
  CHECK_THROWS_AS(ReadCallgrindFunctions(no_event, "D1mr"), std::invalid_argument);
}

TEST_CASE("counted steps pool over processes with each process's median") {
  Counted a, b;
  a.steps = {{100, 0, 0, 0, 0, 200}, {110, 0, 0, 0, 0, 220}, {104, 0, 0, 0, 0, 208}};
  b.steps = {{120, 0, 0, 0, 0, 240}};
  const Counted p = PoolCounted({a, b});
  CHECK(p.steps.size() == 4);
  CHECK(p.process_median_instructions == std::vector<double>{104, 120});
  CHECK(p.process_median_est_cycles == std::vector<double>{208, 240});
  const Counted back = CountedFromJson(ToJson(p), "run.json");
  CHECK(back.steps == p.steps);
  CHECK(back.process_median_instructions == p.process_median_instructions);
}
