#include "reporter/alerts/regressions.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace torchgauge::reporter;

namespace {
FlaggedChange Row(const std::string& model, bool regression, double base, double after, const std::string& base_build,
                  bool confirmed = true, int seen_in = 1) {
  FlaggedChange f;
  f.platform = "cpu";
  f.model = model;
  f.mode = "eval";
  f.backend = "eager";
  f.precision = "fp32";
  f.metric = "time";
  f.regression = regression;
  f.base_value = base;
  f.new_value = after;
  f.ratio = after / base;
  f.threshold_percent = 7;
  f.p_value = 0.001;
  f.confirmed = confirmed;
  f.seen_in = seen_in;
  f.base_builds = {base_build};
  return f;
}
BuildChanges Build(const std::string& id, int day, std::vector<FlaggedChange> rows, int persist = 1) {
  BuildChanges b;
  b.build = id;
  b.started_at = "2026-01-0" + std::to_string(day) + "T02:00:00Z";
  b.persist = persist;
  b.domains = {{"a", "vision"}, {"b", "nlp"}};
  b.changes = std::move(rows);
  return b;
}
}  // namespace

TEST_CASE("regressions: a step stays open, a reversed spike recovers (persist 1)") {
  std::vector<BuildChanges> h = {Build("b0", 1, {}),
                                 Build("b1", 2, {Row("a", true, 10, 13, "b0"), Row("b", true, 20, 26, "b0")}),
                                 Build("b2", 3, {Row("b", false, 26, 20.5, "b1")})};
  auto events = TrackRegressions(h);
  REQUIRE(events.size() == 2);
  CHECK(events[0].change.model == "a");
  CHECK(events[0].state == RegressionState::kOpen);
  CHECK(events[0].state_build == "b1");
  CHECK(events[0].domain == "vision");
  CHECK(events[1].state == RegressionState::kRecovered);
  CHECK(events[1].state_build == "b2");
  CHECK(events[1].state_at == "2026-01-03T02:00:00Z");
  CHECK(events[1].recovered_value == doctest::Approx(20.5));
  CHECK(events[1].Key() == "b1/cpu/b.eval.eager.fp32/time");
}

TEST_CASE("regressions: an improvement that stops short of the band leaves the event open") {
  std::vector<BuildChanges> h = {Build("b1", 1, {Row("a", true, 10, 15, "b0")}),
                                 Build("b2", 2, {Row("a", false, 15, 12, "b1")})};
  auto events = TrackRegressions(h);
  REQUIRE(events.size() == 1);
  CHECK(events[0].state == RegressionState::kOpen);  // 12 is 20% above 10, the band is 7%
  h.push_back(Build("b3", 3, {Row("a", false, 12, 10.6, "b2")}));
  events = TrackRegressions(h);
  CHECK(events[0].state == RegressionState::kRecovered);
  CHECK(events[0].state_build == "b3");
}

TEST_CASE("regressions: the noise band widens the recovery band") {
  FlaggedChange r = Row("a", true, 10, 15, "b0");
  r.noise_percent = 25;
  auto events = TrackRegressions({Build("b1", 1, {r}), Build("b2", 2, {Row("a", false, 15, 12, "b1")})});
  CHECK(events[0].state == RegressionState::kRecovered);
}

TEST_CASE("regressions: a persistence streak is one event, persisting once confirmed") {
  std::vector<BuildChanges> h = {Build("b1", 1, {Row("a", true, 10, 13, "b0", false, 1)}, 2)};
  auto events = TrackRegressions(h);
  REQUIRE(events.size() == 1);
  CHECK(events[0].state == RegressionState::kOpen);
  h.push_back(Build("b2", 2, {Row("a", true, 10, 13.1, "b0", true, 2)}, 2));
  events = TrackRegressions(h);
  REQUIRE(events.size() == 1);
  CHECK(events[0].build == "b1");
  CHECK(events[0].state == RegressionState::kPersisting);
  CHECK(events[0].state_build == "b2");
  // A further step against a later baseline is a new event.
  h.push_back(Build("b4", 4, {Row("a", true, 13, 17, "b2", false, 1)}, 2));
  events = TrackRegressions(h);
  REQUIRE(events.size() == 2);
  CHECK(events[1].build == "b4");
  CHECK(events[1].state == RegressionState::kOpen);
}

TEST_CASE("regressions: throughput recovers upwards; other runs and metrics do not recover it") {
  FlaggedChange r = Row("a", true, 100, 80, "b0");
  r.metric = "throughput";
  FlaggedChange other_metric = Row("a", false, 80, 100, "b1");  // time, not throughput
  FlaggedChange other_model = Row("b", false, 80, 100, "b1");
  other_model.metric = "throughput";
  auto events = TrackRegressions({Build("b1", 1, {r}), Build("b2", 2, {other_metric, other_model})});
  CHECK(events[0].state == RegressionState::kOpen);
  FlaggedChange back = Row("a", false, 80, 99, "b2");
  back.metric = "throughput";
  events = TrackRegressions({Build("b1", 1, {r}), Build("b2", 2, {other_metric, other_model}), Build("b3", 3, {back})});
  CHECK(events[0].state == RegressionState::kRecovered);
}

TEST_CASE("regressions: the per-build cache round-trips and refuses other documents") {
  BuildChanges b = Build("b1", 1, {Row("a", true, 10, 13, "b0"), Row("b", false, 20, 15, "b0")}, 3);
  b.changes[1].p_value.reset();
  b.changes[0].noise_percent = 4.5;
  nlohmann::json j = ToJson(b);
  BuildChanges back = BuildChangesFromJson(j);
  CHECK(ToJson(back) == j);
  CHECK(back.persist == 3);
  CHECK_FALSE(back.changes[1].p_value.has_value());
  CHECK(back.changes[0].noise_percent == doctest::Approx(4.5));
  j["kind"] = "torchgauge.site.summary";
  CHECK_THROWS(BuildChangesFromJson(j));
}
