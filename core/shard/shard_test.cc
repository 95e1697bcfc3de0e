#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/shard/shard.h"

using namespace torchgauge::core;

namespace {

std::vector<RunKey> Keys(std::size_t n) {
  std::vector<RunKey> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back({"m" + std::to_string(1000 + i), "eval", "eager", "fp32"});
  return keys;
}

// Checks that `p` assigns every index in 0..n-1 exactly once, ascending within a shard.
void CheckCover(const std::vector<std::vector<std::size_t>>& p, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& shard : p) {
    CHECK(std::is_sorted(shard.begin(), shard.end()));
    for (std::size_t i : shard) {
      REQUIRE(i < n);
      ++seen[i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) CHECK_MESSAGE(seen[i] == 1, "run " << i << " assigned " << seen[i] << " times");
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseShard(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The full suite's plan on cpu with one collected build's duration per run,
// from the fixture (its header says how tools/shard_plan_fixture.py wrote it).
struct PlannedRun {
  CostInput input;
  double duration_s = 0;
};
std::vector<PlannedRun> FullBuild() {
  const std::string path = std::string(TORCHGAUGE_SOURCE_DIR) + "/tests/data/shard/full_plan.tsv";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::vector<PlannedRun> plan;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    PlannedRun run;
    int supported = 1;
    std::string status;
    fields >> run.input.key.model >> run.input.key.mode >> run.input.key.backend >> run.input.key.precision >>
        supported >> run.duration_s >> status;
    REQUIRE_MESSAGE(fields, path << ": bad line '" << line << "'");
    run.input.supported = supported != 0;
    plan.push_back(run);
  }
  REQUIRE_MESSAGE(!plan.empty(), path << " has no runs");
  return plan;
}

std::vector<CostInput> FullPlan() {
  std::vector<CostInput> plan;
  for (const auto& r : FullBuild()) plan.push_back(r.input);
  return plan;
}

std::vector<RunKey> KeysOf(const std::vector<CostInput>& plan) {
  std::vector<RunKey> keys;
  for (const auto& r : plan) keys.push_back(r.key);
  return keys;
}

// The full suite's settings (collector/suites/full.json), one process.
CostSettings FullSettings() {
  CostSettings full;
  full.warmup = 3, full.repeat = 10, full.profile_iterations = 3, full.processes = 1;
  return full;
}

// Partitions the runs into n shards, checks that each is placed exactly once,
// and returns largest/smallest with the smallest and largest shard's cost.
struct Balance {
  double ratio = 0, smallest = 0, largest = 0;
};
Balance PartitionBalance(const std::vector<RunKey>& keys, const std::vector<double>& costs, int n) {
  const auto p = Partition(keys, costs, n);
  CheckCover(p, keys.size());
  const auto b = MeasureBalance(p, costs);
  REQUIRE(b.max_over_min);
  const auto [mn, mx] = std::minmax_element(b.shard_costs.begin(), b.shard_costs.end());
  return {*b.max_over_min, *mn, *mx};
}

}  // namespace

TEST_CASE("ParseShard reads 0-based I/N and explains every bad value") {
  CHECK(ParseShard("0/4") == ShardSpec{0, 4});
  CHECK(ParseShard("3/4") == ShardSpec{3, 4});
  CHECK(ParseShard("0/1") == ShardSpec{0, 1});
  CHECK(FormatShard(ParseShard("11/12")) == "11/12");

  const std::string out_of_range = ErrorOf("4/4");
  CHECK(out_of_range.find("--shard '4/4'") != std::string::npos);
  CHECK(out_of_range.find("from 0 to 3") != std::string::npos);
  CHECK(out_of_range.find("SLURM_ARRAY_TASK_ID") != std::string::npos);
  CHECK(ErrorOf("0/0").find("between 1 and") != std::string::npos);
  CHECK(ErrorOf("0/4097").find("between 1 and 4096") != std::string::npos);
  for (const char* bad :
       {"", "4", "1-4", "a/4", "-1/4", "+1/4", "1/-4", " 0/4", "0/4 ", "/4", "0/", "0/4/8", "1.0/4", "99999999999/4"}) {
    CAPTURE(bad);
    CHECK(ErrorOf(bad).find("expected I/N") != std::string::npos);
  }
}

TEST_CASE("Partition covers the plan exactly once for any shard count") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.0, 100.0);
  for (std::size_t runs : {0, 1, 5, 37, 100}) {
    const auto keys = Keys(runs);
    std::vector<double> costs;
    for (std::size_t i = 0; i < runs; ++i) costs.push_back(cost(rng));
    for (int n : {1, 2, 3, 4, 8, 12, 150}) {
      CAPTURE(runs);
      CAPTURE(n);
      const auto p = Partition(keys, costs, n);
      REQUIRE(p.size() == static_cast<std::size_t>(n));
      CheckCover(p, runs);
      std::vector<std::size_t> joined;
      for (int i = 0; i < n; ++i) {
        const auto mine = ShardFor(keys, costs, {i, n});
        CHECK(mine == p[static_cast<std::size_t>(i)]);
        joined.insert(joined.end(), mine.begin(), mine.end());
      }
      CHECK(joined.size() == runs);
    }
  }
}

TEST_CASE("Partition does not depend on the order of the plan") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> cost(1, 6);  // many equal costs: ties must be broken by key
  const auto keys = Keys(60);
  std::vector<double> costs;
  for (std::size_t i = 0; i < keys.size(); ++i) costs.push_back(cost(rng) * 0.5);
  auto shard_keys = [](const std::vector<RunKey>& k, const std::vector<std::vector<std::size_t>>& p) {
    std::vector<std::set<std::string>> out;
    for (const auto& shard : p) {
      std::set<std::string> s;
      for (std::size_t i : shard) s.insert(k[i].FileStem());
      out.push_back(s);
    }
    return out;
  };
  const auto reference = shard_keys(keys, Partition(keys, costs, 7));
  std::vector<std::size_t> perm(keys.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<RunKey> k2;
    std::vector<double> c2;
    for (std::size_t i : perm) k2.push_back(keys[i]), c2.push_back(costs[i]);
    CHECK(shard_keys(k2, Partition(k2, c2, 7)) == reference);
  }
}

TEST_CASE("Partition balances by cost, not by count") {
  // One run as long as six others: contiguous or round-robin slicing would
  // put 1 + 3 runs on one shard (9 units) and 3 on the other (3).
  const auto keys = Keys(7);
  const std::vector<double> costs = {6, 1, 1, 1, 1, 1, 1};
  const auto p = Partition(keys, costs, 2);
  const auto b = MeasureBalance(p, costs);
  REQUIRE(b.max_over_min);
  CHECK(*b.max_over_min == doctest::Approx(1.0));
  CHECK((p[0] == std::vector<std::size_t>{0} || p[1] == std::vector<std::size_t>{0}));

  // LPT alone ends at 11/8/8 here; the refinement reaches the even 9/9/9.
  const std::vector<double> costs3 = {5, 5, 4, 4, 3, 3, 3};
  const auto b3 = MeasureBalance(Partition(Keys(7), costs3, 3), costs3);
  REQUIRE(b3.max_over_min);
  CHECK(*b3.max_over_min == doctest::Approx(1.0));
}

TEST_CASE("Partition rejects bad input, naming the run") {
  const auto keys = Keys(3);
  CHECK_THROWS_AS(Partition(keys, {1, 2, 3}, 0), std::invalid_argument);
  CHECK_THROWS_AS(Partition(keys, {1, 2, 3}, kMaxShards + 1), std::invalid_argument);
  CHECK_THROWS_AS(Partition(keys, {1, 2}, 2), std::invalid_argument);
  CHECK_THROWS_WITH(Partition(keys, {1, -2, 3}, 2), doctest::Contains("m1001.eval.eager.fp32"));
  CHECK_THROWS_WITH(Partition(keys, {1, std::nan(""), 3}, 2), doctest::Contains("m1001.eval.eager.fp32"));
  CHECK_THROWS_WITH(Partition(keys, {1, std::numeric_limits<double>::infinity(), 3}, 2), doctest::Contains("finite"));
  auto dup = keys;
  dup[2] = dup[0];
  CHECK_THROWS_WITH(Partition(dup, {1, 2, 3}, 2), doctest::Contains("m1000.eval.eager.fp32 is planned twice"));
  CHECK_THROWS_AS(ShardFor(keys, {1, 2, 3}, {3, 3}), std::invalid_argument);
}

TEST_CASE("MeasureBalance: largest over smallest shard, absent when a shard is empty") {
  const std::vector<double> costs = {4, 2, 1};
  auto b = MeasureBalance({{0}, {1, 2}}, costs);
  REQUIRE(b.shard_costs.size() == 2);
  CHECK(b.shard_costs[1] == doctest::Approx(3));
  REQUIRE(b.max_over_min);
  CHECK(*b.max_over_min == doctest::Approx(4.0 / 3.0));
  CHECK_FALSE(MeasureBalance({{0, 1, 2}, {}}, costs).max_over_min);
}

TEST_CASE("StaticCost follows its stated rule") {
  CostSettings s;
  s.warmup = 3, s.repeat = 10, s.profile_iterations = 1, s.processes = 1;  // 3 + 10 + 2*1 = 15 step units
  CostInput eval{{"m", "eval", "eager", "default"}};
  CostInput train{{"m", "train", "eager", "default"}};
  CostInput ts{{"m", "eval", "torchscript", "default"}};
  CHECK(StaticCost(eval, s) == doctest::Approx(kProcessSetupSteps + 15));
  CHECK(StaticCost(train, s) == doctest::Approx(kProcessSetupSteps + 45));
  CHECK(StaticCost(ts, s) == doctest::Approx(kProcessSetupSteps + 5 + 15));
  CostInput heavy = eval;
  heavy.model_weight = 4;
  CHECK(StaticCost(heavy, s) == doctest::Approx(kProcessSetupSteps + 60));
  CostInput unsupported = train;
  unsupported.supported = false;
  CHECK(StaticCost(unsupported, s) == doctest::Approx(kProcessSetupSteps));
  CostSettings five = s;
  five.processes = 5;
  CHECK(StaticCost(train, five) == doctest::Approx(5 * StaticCost(train, s)));
  CostInput own = train;  // a run with its own count (a suite's backend_processes)
  own.processes = 2;
  CHECK(StaticCost(own, s) == doctest::Approx(2 * StaticCost(train, s)));
  CHECK(StaticCost(own, five) == doctest::Approx(2 * StaticCost(train, s)));
}

TEST_CASE("PlanCosts: measured durations, and static costs scaled to seconds for runs without one") {
  CostSettings s;
  s.warmup = 0, s.repeat = 1, s.profile_iterations = 0, s.processes = 1;
  std::vector<CostInput> plan = {{{"a", "eval", "eager", "fp32"}},   // static 3
                                 {{"b", "train", "eager", "fp32"}},  // static 5
                                 {{"c", "eval", "eager", "fp32"}}};  // static 3, not measured
  const std::map<RunKey, double> measured = {
      {plan[0].key, 30.0}, {plan[1].key, 50.0}, {{"gone", "eval", "eager", "fp32"}, 1000.0}};
  const auto costs = PlanCosts(plan, s, measured);
  REQUIRE(costs.size() == 3);
  CHECK(costs[0] == doctest::Approx(30));
  CHECK(costs[1] == doctest::Approx(50));
  CHECK(costs[2] == doctest::Approx(3 * 80.0 / 8.0));  // 10 s per static unit
  const auto statics = PlanCosts(plan, s);
  CHECK(statics[2] == doctest::Approx(3));
}

TEST_CASE("Balance on the full suite's planned cost (static rule, every model weight 1), N = 4, 8, 12") {
  const auto plan = FullPlan();
  const auto costs = PlanCosts(plan, FullSettings());
  const auto keys = KeysOf(plan);
  for (int n : {4, 8, 12}) {
    const Balance b = PartitionBalance(keys, costs, n);
    std::printf(
        "shard balance, full suite, static rule with unit model weights, N=%d: largest/smallest = %.4f (%.0f / %.0f "
        "units)\n",
        n, b.ratio, b.largest, b.smallest);
    CHECK(b.ratio <= 1.25);
  }
}

TEST_CASE("Balance on the full suite's measured durations (a collected cpu build, as --cost-from), N = 4, 8, 12") {
  const auto build = FullBuild();
  std::vector<CostInput> plan;
  std::map<RunKey, double> measured;
  std::vector<double> durations;
  for (const auto& r : build) {
    plan.push_back(r.input);
    measured[r.input.key] = r.duration_s;
    durations.push_back(r.duration_s);
  }
  // Every run was measured, so the costs are the durations themselves.
  const auto costs = PlanCosts(plan, FullSettings(), measured);
  CHECK(costs == durations);
  const auto statics = PlanCosts(plan, FullSettings());
  const auto keys = KeysOf(plan);
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  const double largest = *std::max_element(costs.begin(), costs.end());
  std::printf("full build: %zu runs, %.0f s measured in all, largest run %.1f s\n", plan.size(), total, largest);
  for (int n : {4, 8, 12}) {
    const Balance b = PartitionBalance(keys, costs, n);
    // What the static rule's partition (unit model weights: core has no
    // collector/cost_weights) would have cost in the same seconds.
    const auto s = MeasureBalance(Partition(keys, statics, n), costs);
    std::printf(
        "shard balance, full build's measured durations, N=%d: largest/smallest = %.4f (%.1f / %.1f s; "
        "fair share %.1f s); the unit-weight static rule's shards in these seconds: %.4f\n",
        n, b.ratio, b.largest, b.smallest, total / n, s.max_over_min.value_or(0));
    CHECK(b.ratio <= 1.25);
  }
}

TEST_CASE("Balance on skewed costs (log-normal, seeded), N = 4, 8, 12") {
  // Synthetic durations spanning orders of magnitude, on the full plan's keys:
  // the property holds beyond the one measured build above.
  const auto plan = FullPlan();
  const auto keys = KeysOf(plan);
  std::mt19937 rng(2026);
  std::lognormal_distribution<double> dist(0.0, 1.0);
  std::vector<double> costs;
  for (std::size_t i = 0; i < plan.size(); ++i) costs.push_back(dist(rng));
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  const double largest = *std::max_element(costs.begin(), costs.end());
  for (int n : {4, 8, 12}) {
    const auto b = MeasureBalance(Partition(keys, costs, n), costs);
    REQUIRE(b.max_over_min);
    std::printf("shard balance, skewed synthetic costs, N=%d: largest/smallest = %.4f\n", n, *b.max_over_min);
    // Achievable whenever no single run outweighs a fair share.
    if (largest <= total / n) CHECK(*b.max_over_min <= 1.25);
  }
}
