#include "reporter/alerts/alerts.h"

#include <doctest/doctest.h>

#include <cmath>
#include <tuple>

using namespace torchgauge::reporter;

namespace {
FlaggedChange Row(const std::string& platform, const std::string& model, bool regression, double ratio,
                  const std::string& base_build, const std::string& metric = "time") {
  FlaggedChange f;
  f.platform = platform;
  f.model = model;
  f.mode = "eval";
  f.backend = "eager";
  f.precision = "fp32";
  f.metric = metric;
  f.regression = regression;
  f.base_value = 10;
  f.new_value = 10 * ratio;
  f.ratio = ratio;
  f.threshold_percent = 7;
  f.p_value = 0.001;
  f.base_builds = {base_build};
  return f;
}
BuildChanges Build(const std::string& id, int day, std::vector<FlaggedChange> rows) {
  BuildChanges b;
  b.build = id;
  b.started_at = "2026-01-0" + std::to_string(day) + "T02:00:00Z";
  b.domains = {{"a", "vision"}, {"b", "nlp"}, {"c", "nlp"}};
  b.changes = std::move(rows);
  return b;
}
}  // namespace

TEST_CASE("alerts: one alert per platform, range and direction; runs largest first; geomean over them") {
  std::vector<BuildChanges> h = {
      Build("b0", 1, {}), Build("b1", 2,
                                {Row("gpu", "a", true, 1.2, "b0"), Row("gpu", "b", true, 1.5, "b0"),
                                 Row("gpu", "b", true, 0.67, "b0", "throughput"), Row("gpu", "c", false, 0.8, "b0"),
                                 Row("cpu", "a", true, 1.1, "b0")})};
  const auto alerts = GroupAlerts(h, TrackRegressions(h));
  REQUIRE(alerts.size() == 3);
  // Regressions first, by platform: cpu, gpu; then the gpu improvement.
  CHECK(alerts[0].platform == "cpu");
  CHECK(alerts[0].runs == 1);
  const Alert& gpu = alerts[1];
  CHECK(gpu.platform == "gpu");
  CHECK(gpu.regression);
  CHECK(gpu.base_build == "b0");
  CHECK(gpu.build == "b1");
  CHECK(gpu.runs == 2);  // model b's two rows are one run
  REQUIRE(gpu.rows.size() == 3);
  CHECK(gpu.rows[0].model == "b");  // time rows first, largest first
  CHECK(gpu.rows[1].model == "a");
  CHECK(gpu.rows[2].metric == "throughput");
  CHECK(gpu.geomean_metric == "time");
  CHECK(gpu.geomean_runs == 2);
  CHECK(gpu.geomean == doctest::Approx(std::sqrt(1.2 * 1.5)));
  CHECK(gpu.domains == std::vector<std::string>{"nlp", "vision"});
  CHECK_FALSE(alerts[2].regression);  // an improvement is an alert too
  CHECK(alerts[2].runs == 1);
  CHECK(alerts[2].id != gpu.id);
  CHECK(FindAlert(alerts, gpu.id) == &alerts[1]);
  CHECK(FindAlert(alerts, "A-000000000000") == nullptr);
}

TEST_CASE("alerts: the id depends on platform, range and direction only") {
  const std::string id = AlertId("gpu", "b0", "b1", true);
  CHECK(id.size() == 14);
  CHECK(id.rfind("A-", 0) == 0);
  CHECK(id == AlertId("gpu", "b0", "b1", true));
  CHECK(id != AlertId("gpu", "b0", "b1", false));
  CHECK(id != AlertId("cpu", "b0", "b1", true));
  CHECK(id != AlertId("gpu", "b00", "b1", true));
  // Adding a run to the alert, or a later build, does not move it.
  std::vector<BuildChanges> one = {Build("b1", 2, {Row("gpu", "a", true, 1.2, "b0")})};
  std::vector<BuildChanges> two = {Build("b1", 2, {Row("gpu", "a", true, 1.2, "b0"), Row("gpu", "b", true, 1.3, "b0")}),
                                   Build("b2", 3, {})};
  CHECK(GroupAlerts(one, TrackRegressions(one))[0].id == GroupAlerts(two, TrackRegressions(two))[0].id);
  CHECK(GroupAlerts(one, TrackRegressions(one))[0].id == id);
}

TEST_CASE("alerts: closes itself as recovered only when every run came back within its band") {
  std::vector<BuildChanges> h = {Build("b1", 1, {Row("gpu", "a", true, 1.3, "b0"), Row("gpu", "b", true, 1.3, "b0")}),
                                 Build("b2", 2, {Row("gpu", "a", false, 1.0 / 1.3, "b1")})};
  h[1].changes[0].base_value = 13;
  h[1].changes[0].new_value = 10.2;
  auto alerts = GroupAlerts(h, TrackRegressions(h));
  REQUIRE(alerts.size() == 2);
  CHECK_FALSE(alerts[0].recovered);  // b is still slow
  h.push_back(Build("b3", 3, {Row("gpu", "b", false, 1.0 / 1.3, "b2")}));
  h[2].changes[0].base_value = 13;
  h[2].changes[0].new_value = 10.1;
  alerts = GroupAlerts(h, TrackRegressions(h));
  CHECK(alerts[0].recovered);
  CHECK(alerts[0].recovered_in == "b3");
}

// Issue 60: "still present in the newest build: yes/no" per alert. Run a's
// regression came back (inside the band, so no comparison flagged the
// revert and the alert stays open); run b's did not.
TEST_CASE("alerts: still present in the newest build of the platform, judged on its medians") {
  std::vector<BuildChanges> h = {Build("b0", 1, {}), Build("b1", 2, {Row("gpu", "a", true, 1.3, "b0")}),
                                 Build("b2", 3, {Row("gpu", "b", true, 1.4, "b1"), Row("gpu", "c", false, 0.8, "b1")}),
                                 Build("b3", 4, {Row("cpu", "a", true, 1.3, "b2")}), Build("b4", 5, {})};
  auto alerts = GroupAlerts(h, TrackRegressions(h));
  REQUIRE(alerts.size() == 4);
  std::vector<BuildSummary> history;
  for (const auto& [id, a, b] : {std::tuple{"b3", 13.0, 14.0}, std::tuple{"b4", 10.2, 14.1}}) {
    BuildSummary s;
    s.id = id;
    PlatformSummary p;
    p.id = "gpu";
    p.medians = {{"a", "eval/eager/fp32/bs1", a, false}, {"b", "eval/eager/fp32/bs1", b, false}};
    s.platforms.push_back(p);
    history.push_back(s);
  }
  MarkStillPresent(alerts, history);
  CHECK(alerts[0].rows[0].model == "a");
  CHECK(!alerts[0].recovered);              // the revert was not flagged
  CHECK(alerts[0].still_present == false);  // 10.2 against 10: within 7 %
  CHECK(alerts[0].newest_build == "b4");    // the platform's newest build
  CHECK(alerts[1].still_present == true);   // 14.1 against 10
  CHECK(!alerts[2].regression);             // an improvement is not judged
  CHECK(!alerts[2].still_present.has_value());
  CHECK(alerts[3].platform == "cpu");  // no summary of cpu: not measured
  CHECK(!alerts[3].still_present.has_value());
}

namespace {
// A history of `n` builds b0.. on platform gpu, run "a" (and "b", "c")
// eval/eager/fp32/bs1 at level `level(model, build)` with a standard error
// of 1 % (five processes), a deterministic wobble of 0.5 %.
template <typename F>
std::vector<BuildSummary> Levels(int n, F level) {
  std::vector<BuildSummary> h;
  for (int b = 0; b < n; ++b) {
    BuildSummary s;
    s.id = "b" + std::to_string(b);
    s.started_at = "2026-02-" + std::string(b < 9 ? "0" : "") + std::to_string(b + 1) + "T02:00:00Z";
    PlatformSummary p;
    p.id = "gpu";
    for (const char* m : {"a", "b", "c"}) {
      const double v = level(std::string(m), b) * (1 + 0.005 * std::sin(3.0 * b + m[0]));
      p.medians.push_back({m, "eval/eager/fp32/bs1", v, false, v, 0.01});
    }
    s.platforms.push_back(p);
    h.push_back(s);
  }
  return h;
}
}  // namespace

// Issue 60, item 1: alerts from the whole history.
TEST_CASE("history alerts: the search's change is the alert; a time change only the comparison saw is not") {
  // Run a: +30 % from b10 for good. Run b: one slow build b12 (+20 %, all
  // its processes alike: a slow night) that the comparison flagged and the
  // history does not confirm. Run c's
  // memory grew at b12: the comparison's row is the alert.
  auto history = Levels(16, [](const std::string& m, int b) { return m == "a" && b >= 10 ? 13.0 : 10.0; });
  history[12].platforms[0].medians[1].level_ms *= 1.2;
  std::vector<BuildChanges> changes;
  for (const auto& s : history) changes.push_back(Build(s.id, 1, {}));
  for (auto& c : changes) c.started_at = history[static_cast<size_t>(&c - &changes[0])].started_at;
  changes[10].changes = {Row("gpu", "a", true, 1.3, "b9")};  // the comparison saw a's step too, with a p-value
  changes[10].changes[0].p_value = 0.008;
  changes[10].changes[0].noise_percent = 4.0;
  for (auto& f : changes[10].changes) f.batch_size = 1;
  changes[12].changes = {Row("gpu", "b", true, 1.2, "b11"), Row("gpu", "c", true, 1.5, "b11", "cpu_memory")};
  for (auto& f : changes[12].changes) f.batch_size = 1;
  const auto found = FindHistoryChanges(history);
  REQUIRE(found.size() == 1);
  auto alerts = BuildAlerts(changes, TrackRegressions(changes), history, found);
  MarkStillPresent(alerts, history);
  REQUIRE(alerts.size() == 2);
  const Alert& step = alerts[0];
  CHECK(step.build == "b10");
  CHECK(step.base_build == "b9");
  CHECK(step.id == AlertId("gpu", "b9", "b10", true));  // the comparison's id rules: both join one
  CHECK(step.history_runs == 1);
  CHECK(step.raised_in == "b11");  // 30 % at 1 %: the early rule raises it with its second build
  REQUIRE(step.rows.size() == 1);
  CHECK(step.rows[0].model == "a");
  CHECK(step.rows[0].ratio == doctest::Approx(1.3).epsilon(0.01));
  CHECK(step.rows[0].p_value == 0.008);  // the comparison's test, where it flagged the same run
  CHECK(step.still_present == true);
  CHECK_FALSE(step.recovered);
  const Alert& memory = alerts[1];
  CHECK(memory.build == "b12");
  CHECK(memory.rows.size() == 1);
  CHECK(memory.rows[0].metric == "cpu_memory");
  CHECK(memory.history_runs == 0);
  CHECK(memory.raised_in.empty());
}

TEST_CASE("history alerts: a reverted regression recovers at the revert, whose alert names it") {
  auto history = Levels(20, [](const std::string& m, int b) { return m != "c" && b >= 10 && b < 13 ? 12.5 : 10.0; });
  std::vector<BuildChanges> changes;
  for (const auto& s : history) changes.push_back(Build(s.id, 1, {}));
  const auto alerts = BuildAlerts(changes, TrackRegressions(changes), history, FindHistoryChanges(history));
  REQUIRE(alerts.size() == 2);
  CHECK(alerts[0].regression);
  CHECK(alerts[0].runs == 2);
  CHECK(alerts[0].recovered);
  CHECK(alerts[0].recovered_in == "b13");
  CHECK(alerts[0].still_present == false);
  CHECK_FALSE(alerts[1].regression);
  CHECK(alerts[1].build == "b13");
  CHECK(alerts[1].reverts == alerts[0].id);
}

TEST_CASE("history alerts: where the history is too young to know a run's noise, the comparison's time row is the alert") {
  // One-process runs (no level): the search needs 11 builds of a series.
  auto history = Levels(6, [](const std::string& m, int b) { return m == "a" && b >= 4 ? 13.0 : 10.0; });
  for (auto& s : history) {
    for (auto& m : s.platforms[0].medians) m.level_ms = m.level_se = 0;
  }
  std::vector<BuildChanges> changes;
  for (const auto& s : history) changes.push_back(Build(s.id, 1, {}));
  changes[4].changes = {Row("gpu", "a", true, 1.3, "b3")};
  changes[4].changes[0].batch_size = 1;
  CHECK_FALSE(HistoryCanJudge(history, "gpu", "a", "eval/eager/fp32/bs1", 4));
  const auto alerts = BuildAlerts(changes, TrackRegressions(changes), history, FindHistoryChanges(history));
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].build == "b4");
  CHECK(alerts[0].history_runs == 0);
  // With process levels the search judges from the start, and it saw a change.
  auto judged = Levels(6, [](const std::string& m, int b) { return m == "a" && b >= 4 ? 13.0 : 10.0; });
  CHECK(HistoryCanJudge(judged, "gpu", "a", "eval/eager/fp32/bs1", 4));
  const auto found = FindHistoryChanges(judged);
  REQUIRE(found.size() == 1);
  CHECK(found[0].change.at == 4);
}

TEST_CASE("history alerts: one cause on two platforms, same range: each alert names the other") {
  auto history = Levels(16, [](const std::string& m, int b) { return m == "a" && b >= 10 ? 13.0 : 10.0; });
  for (auto& s : history) {
    PlatformSummary cpu = s.platforms[0];
    cpu.id = "cpu";
    s.platforms.insert(s.platforms.begin(), cpu);
  }
  std::vector<BuildChanges> changes;
  for (const auto& s : history) changes.push_back(Build(s.id, 1, {}));
  const auto alerts = BuildAlerts(changes, TrackRegressions(changes), history, FindHistoryChanges(history));
  REQUIRE(alerts.size() == 2);
  CHECK(alerts[0].platform != alerts[1].platform);
  CHECK(alerts[0].related == std::vector<std::string>{alerts[1].id});
  CHECK(alerts[1].related == std::vector<std::string>{alerts[0].id});
}
