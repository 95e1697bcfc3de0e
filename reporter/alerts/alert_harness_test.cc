// The alerts' precision, recall, delay and recovery on the harness's seeded
// histories (alerts/alert_harness.h), at the noise model docs/nightly.md
// states and at a quiet one: the acceptance of issue 60, as a test that
// fails when a change to the rules drops a figure below its target.
#include "reporter/alerts/alert_harness.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "core/io/json_io.h"

using namespace torchgauge::reporter;
namespace fs = std::filesystem;

namespace {
// A real results build: the smoke suite's 71 timed runs (and 2 not ok) on
// the 2-core CI VM, one process each (tests/data/real_history/README.md).
BuildSummary SmokeBuild() {
  return BuildSummaryFromJson(
      torchgauge::core::ReadJsonFile(fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/real_history/smoke-build.json"));
}
}  // namespace

// The acceptance asks for 20 histories or more; 200 (about 4 s) make the
// figures steady enough that a test on them fails for a rule change rather
// than for a seed (at 20, one history is 5 points of a rate).
TEST_CASE("measured: alert precision and recall on the nightly's noise model (issue 60)") {
  HarnessOptions o;
  o.histories = 200;
  const HarnessFigures f = RunAlertHarness(SmokeBuild(), o);
  MESSAGE("\n" << HarnessTable(f, "nightly noise model (10 % between processes, 5 % within, 5 x 3)"));
  CHECK(f.RegressionPrecision() >= 0.90);
  CHECK(f.step_raised >= 0.9 * f.histories);
  CHECK(f.bump_raised >= 0.9 * f.histories);
  CHECK(f.bump_recovered >= 0.9 * f.bump_raised);
  CHECK(f.FalseRegressionsPer100Builds() <= 1.0);
  CHECK(f.slow_night_alerts == 0);
  // The first 20 histories alone, printed: at 20, one history is 5 points
  // of a rate, so the targets are held on the 200.
  o.histories = 20;
  MESSAGE("\n" << HarnessTable(RunAlertHarness(SmokeBuild(), o), "the same, seeds 1 to 20"));
}

TEST_CASE("measured: alerts on a quiet history find every plant at its build (issue 60)") {
  HarnessOptions o;
  o.noise.between = 0.02;
  o.noise.within = 0.01;
  o.histories = 100;
  const HarnessFigures f = RunAlertHarness(SmokeBuild(), o);
  MESSAGE("\n" << HarnessTable(f, "quiet (2 % between processes, 1 % within, 5 x 3)"));
  CHECK(f.alerts == f.true_alerts);
  CHECK(f.step_at_build == f.histories);
  CHECK(f.step1_raised == f.histories);
  CHECK(f.bump_at_build == f.histories);
  CHECK(f.bump_reverted == f.histories);
  CHECK(f.machine_raised == f.histories);
  CHECK(f.slow_night_alerts == 0);
}


// A known limit, measured: a night on which every run ran 20 % slow (the
// machine, every process alike) is what the rules' model of noise leaves
// out. Each build at a new level must move past the threshold, so that
// night alone raises nothing; but it also inflates the series' own noise
// estimate (and with it every later test), and around it the runs that
// happened to be slow on a neighbouring build corroborate each other.
TEST_CASE("measured: alerts around one slow night on the nightly's noise model (issue 60)") {
  HarnessOptions o;
  o.histories = 200;
  o.slow_night = true;
  const HarnessFigures f = RunAlertHarness(SmokeBuild(), o);
  MESSAGE("\n" << HarnessTable(f, "nightly noise model with one slow night (every run +20 % in one build)"));
  // Bounds from the measurement (docs/nightly.md): fail when it gets worse.
  CHECK(f.slow_night_alerts <= 1.25 * f.histories);
  CHECK(f.bump_raised >= 0.85 * f.histories);
}
