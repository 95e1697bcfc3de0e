#include "reporter/alerts/health.h"

#include <doctest/doctest.h>

using namespace torchgauge::reporter;

namespace {
BuildChanges Build(const std::string& id, const std::string& at, const std::string& cpu, const std::string& driver) {
  BuildChanges b;
  b.build = id;
  b.started_at = at;
  b.identities["gpu"] = {{"CPU model", cpu}, {"driver", driver}, {"torch commit", id}, {"host", "runner-" + id}};
  return b;
}
BuildSummary Summary(const std::string& id, const std::string& at, int runs, int noisy) {
  BuildSummary s;
  s.id = id;
  s.started_at = at;
  PlatformSummary p;
  p.id = "gpu";
  for (int i = 0; i < runs; ++i) p.medians.push_back({"m" + std::to_string(i), "eval", 10, i < noisy});
  s.platforms.push_back(p);
  return s;
}
}  // namespace

TEST_CASE("health: a missing night, a machine change and a noisy build; a new commit or host is not one") {
  const std::vector<BuildChanges> changes = {Build("b1", "2026-01-01T02:00:00Z", "Xeon", "580"),
                                             Build("b2", "2026-01-02T02:00:00Z", "Xeon", "580"),
                                             Build("b3", "2026-01-04T02:00:00Z", "Xeon", "580"),  // a night missing
                                             Build("b4", "2026-01-05T02:00:00Z", "EPYC", "590")};
  const std::vector<BuildSummary> history = {
      Summary("b1", "2026-01-01T02:00:00Z", 8, 2), Summary("b2", "2026-01-02T02:00:00Z", 8, 3),
      Summary("b3", "2026-01-04T02:00:00Z", 8, 0), Summary("b4", "2026-01-05T02:00:00Z", 8, 0)};
  const auto alerts = CheckHealth(changes, history);
  REQUIRE(alerts.size() == 3);
  CHECK(alerts[0].kind == "noisy");  // 3 of 8 is over 25 %; 2 of 8 is not
  CHECK(alerts[0].build == "b2");
  CHECK(alerts[0].detail == "3 of 8 runs noisy (38%, above 25%)");
  CHECK(alerts[1].kind == "missing");
  CHECK(alerts[1].build_before == "b2");
  CHECK(alerts[1].build == "b3");
  CHECK(alerts[1].detail.find("no build for 48 h") == 0);
  CHECK(alerts[2].kind == "machine");
  CHECK(alerts[2].build == "b4");
  CHECK(alerts[2].detail.find("CPU model: Xeon \xE2\x86\x92 EPYC; driver: 580 \xE2\x86\x92 590") != std::string::npos);
  CHECK(alerts[2].id.rfind("H-", 0) == 0);
  CHECK(alerts[2].id == CheckHealth(changes, history)[2].id);
  CHECK(alerts[1].id != alerts[2].id);
  // A cache without identities (written before them) judges nothing.
  std::vector<BuildChanges> old = changes;
  for (auto& b : old) b.identities.clear();
  CHECK(CheckHealth(old, {}).empty());
}

TEST_CASE("health: runs that vanished (no result at all), one alert per build and platform; a failed run is not one") {
  BuildSummary b1 = Summary("b1", "2026-01-01T02:00:00Z", 8, 0);
  BuildSummary b2 = Summary("b2", "2026-01-02T02:00:00Z", 8, 0);
  BuildSummary b3 = Summary("b3", "2026-01-03T02:00:00Z", 8, 0);
  b2.platforms[0].medians.erase(b2.platforms[0].medians.begin() + 2);  // m2: no result in b2
  b2.platforms[0].medians.erase(b2.platforms[0].medians.begin() + 2);  // m3: failed in b2 (and b3)
  b2.platforms[0].not_ok.push_back({"m3", "eval"});
  b3.platforms[0].medians.erase(b3.platforms[0].medians.begin() + 3);
  b3.platforms[0].not_ok.push_back({"m3", "eval"});
  b2.platforms[0].medians.push_back({"m9", "eval", 10, false});  // a new run is not an alert
  b3.platforms[0].medians.push_back({"m9", "eval", 10, false});
  const auto alerts = CheckHealth({}, {b1, b2, b3});
  REQUIRE(alerts.size() == 1);  // b3 has m2 back, and m3 still failing is the comparison's
  CHECK(alerts[0].kind == "vanished");
  CHECK(alerts[0].build_before == "b1");
  CHECK(alerts[0].build == "b2");
  CHECK(alerts[0].detail == "1 run(s) of b1 have no result in b2: m2 eval");
  // Many: the first five are named.
  BuildSummary b4 = Summary("b4", "2026-01-04T02:00:00Z", 1, 0);
  const auto many = CheckHealth({}, {b3, b4});
  REQUIRE(many.size() == 1);
  CHECK(many[0].detail ==
        "8 run(s) of b3 have no result in b4: m1 eval, m2 eval, m3 eval, m4 eval, m5 eval, and 3 more");
}

// Issue 60: a platform that stops reporting while another goes on. The gap
// rule judges the time between a platform's own builds, so a platform with
// no build since raised nothing; the platforms that go on date it.
TEST_CASE("health: a platform that stops while another goes on is silent, once, from the night it missed") {
  std::vector<BuildChanges> changes;
  for (int d = 1; d <= 6; ++d) {
    BuildChanges b;
    b.build = "b" + std::to_string(d);
    b.started_at = "2026-01-0" + std::to_string(d) + "T02:00:00Z";
    b.identities["cpu"] = {{"CPU model", "Xeon"}};
    if (d <= 3) b.identities["gpu"] = {{"CPU model", "Xeon"}};  // gpu's last build is b3
    changes.push_back(b);
  }
  const auto alerts = CheckHealth(changes, {});
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].kind == "silent");
  CHECK(alerts[0].platform == "gpu");
  CHECK(alerts[0].build_before == "b3");
  CHECK(alerts[0].build == "b5");  // 48 h after b3: the first build past the 36 h rule
  CHECK(alerts[0].detail ==
        "no build of gpu since b3 (2026-01-03T02:00:00Z): 72 h before the newest build of another platform, b6 "
        "(the schedule allows 36 h)");
  // Its id stays while the platform stays silent: a later night adds no new alert.
  BuildChanges b7 = changes.back();
  b7.build = "b7";
  b7.started_at = "2026-01-07T02:00:00Z";
  changes.push_back(b7);
  const auto later = CheckHealth(changes, {});
  REQUIRE(later.size() == 1);
  CHECK(later[0].id == alerts[0].id);
  // One night late (under 36 h) is not silent; a platform that came back is
  // the gap rule's (missing), not silent.
  CHECK(CheckHealth({changes.begin(), changes.begin() + 4}, {}).empty());
  std::vector<BuildChanges> came_back(changes.begin(), changes.begin() + 6);
  came_back.back().identities["gpu"] = {{"CPU model", "Xeon"}};
  const auto back = CheckHealth(came_back, {});
  REQUIRE(back.size() == 1);
  CHECK(back[0].kind == "missing");
}
