#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "core/analysis/bisect.h"
#include "core/analysis/compare.h"
#include "core/stats/stats.h"

#include <random>

using namespace torchgauge::core;

namespace {
std::vector<std::string> Revs(std::size_t n) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back("r" + std::to_string(i));
  return v;
}
int CeilLog2(std::size_t n) { return n <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(static_cast<double>(n)))); }
}  // namespace

TEST_CASE("bisect finds every planted revision in at most ceil(log2 N) steps") {
  int worst_seen = 0;
  for (std::size_t n = 1; n <= 130; ++n) {
    const auto revs = Revs(n);
    for (std::size_t planted = 0; planted < n; ++planted) {
      int calls = 0;
      auto r = Bisect(revs, [&](const std::string&, std::size_t i) {
        ++calls;
        return i >= planted ? BisectVerdict::kBad : BisectVerdict::kGood;
      });
      REQUIRE(r.first_bad_index);
      CHECK(*r.first_bad_index == planted);
      CHECK(r.first_bad == revs[planted]);
      CHECK(r.steps == calls);
      CHECK(r.steps <= CeilLog2(n));
      CHECK(r.log.size() == static_cast<std::size_t>(calls));
      if (n == 100) worst_seen = std::max(worst_seen, r.steps);
    }
  }
  CHECK(worst_seen == 7);  // ceil(log2 100): the bound is reached, not just respected
}

TEST_CASE("bisect with verify_bad, a good bad endpoint, and untestable revisions") {
  const auto revs = Revs(16);
  auto r = Bisect(revs,
                  [](const std::string&, std::size_t i) { return i >= 9 ? BisectVerdict::kBad : BisectVerdict::kGood; },
                  {.verify_bad = true});
  CHECK(r.first_bad == "r9");
  CHECK(r.steps <= 1 + 4);

  r = Bisect(revs, [](const std::string&, std::size_t) { return BisectVerdict::kGood; }, {.verify_bad = true});
  CHECK_FALSE(r.first_bad_index);
  CHECK(r.message.find("nothing to bisect") != std::string::npos);

  // r7 and r8 cannot be built; the culprit is r8: bisection reports r9 and
  // names the untestable revisions just before it.
  r = Bisect(revs, [](const std::string&, std::size_t i) {
    if (i == 7 || i == 8) return BisectVerdict::kSkip;
    return i >= 8 ? BisectVerdict::kBad : BisectVerdict::kGood;
  });
  CHECK(r.first_bad == "r9");
  CHECK(r.skipped_before == std::vector<std::string>{"r7", "r8"});
  CHECK(FormatBisectLog(r).find("skip") != std::string::npos);
  // The last good is the last one judged good (r6), not the one before the culprit (r8, skipped).
  CHECK(LastJudgedGood(r, "base") == "r6");

  // Every candidate before the culprit untestable: the last judged good is
  // the known-good endpoint, not the skipped r3.
  r = Bisect(Revs(6),
             [](const std::string&, std::size_t i) { return i < 4 ? BisectVerdict::kSkip : BisectVerdict::kBad; });
  CHECK(r.first_bad == "r4");
  CHECK(LastJudgedGood(r, "base") == "base");

  CHECK_THROWS_AS(Bisect({}, [](const std::string&, std::size_t) { return BisectVerdict::kBad; }),
                  std::invalid_argument);
}

TEST_CASE("command template substitution quotes the revision") {
  CHECK(FormatRevCommand("pip install torch=={rev} && echo {rev}", "2.11.0.dev20261122") ==
        "pip install torch=='2.11.0.dev20261122' && echo '2.11.0.dev20261122'");
  CHECK(FormatRevCommand("git checkout {rev}", "a'; rm -rf /") == "git checkout 'a'\\''; rm -rf /'");
  CHECK(FormatRevCommand("no token", "x") == "no token");
}

// The shape of `torchgauge-collect bisect`: each revision is "measured"
// (here: seeded lognormal samples, 4% CoV, +12% from the planted revision on)
// and judged with the comparison rules against the good endpoint.
TEST_CASE("bisect with a comparison judge finds a planted slowdown") {
  auto measure = [](const std::string& build, std::size_t rev, std::size_t planted, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(0.0, 0.04);
    RunResult r;
    r.build_id = build;
    r.model.id = "resnet50";
    r.mode = "train";
    Timing t;
    for (int i = 0; i < 10; ++i) t.samples_ms.push_back(50.0 * (rev >= planted ? 1.12 : 1.0) * std::exp(z(rng)));
    r.timing = t;
    RunSet s;
    s.build_id = build;
    s.runs[{r.model.id, r.mode, r.backend, r.precision}] = r;
    return s;
  };
  for (std::size_t n : {7u, 40u, 100u}) {
    const auto revs = Revs(n);
    for (std::size_t planted : {std::size_t{0}, n / 3, n - 1}) {
      const RunSet good = measure("good", 0, 1000, 1);
      int calls = 0;
      auto r = Bisect(revs, [&](const std::string& rev, std::size_t i) {
        ++calls;
        const RunSet here = measure(rev, i, planted, 100 + i);
        for (const auto& c : CompareRunSets({&good}, here, {}).changes) {
          if (c.metric == Metric::kTime && c.verdict == Verdict::kRegression) return BisectVerdict::kBad;
        }
        return BisectVerdict::kGood;
      });
      CHECK(r.first_bad == revs[planted]);
      CHECK(r.steps <= CeilLog2(n));
    }
  }
}
