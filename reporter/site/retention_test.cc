#include "reporter/site/retention.h"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace torchgauge::reporter;

namespace {
std::vector<BuildRef> Refs(const std::vector<std::string>& starts) {
  std::vector<BuildRef> refs;
  for (size_t i = 0; i < starts.size(); ++i) {
    std::string id = "b";
    id += std::to_string(i);
    refs.push_back({id, starts[i], {}});
  }
  return refs;
}
}  // namespace

TEST_CASE("UtcDate reads an RFC 3339 time as a UTC calendar date") {
  CHECK(UtcDate("2026-01-02T03:04:05Z") == "2026-01-02");
  CHECK(UtcDate("2026-01-02T03:04:05.123456Z") == "2026-01-02");
  CHECK(UtcDate("2026-01-02T23:30:00-02:00") == "2026-01-03");
  CHECK(UtcDate("2026-01-01T01:00:00+05:30") == "2025-12-31");
  CHECK(UtcDate("2024-02-28T23:00:00-01:00") == "2024-02-29");
  CHECK(UtcDate("") == "");
  CHECK(UtcDate("2026-01-02") == "");
  CHECK(UtcDate("2026-01-02T03:04:05") == "");
  CHECK(UtcDate("2026-01-02T03:04:05+0200") == "");
}

TEST_CASE("PrunedCount prunes the oldest builds, never the newest") {
  SiteOptions o;
  const auto refs = Refs({"", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z", "2026-01-03T10:00:00Z"});
  CHECK(PrunedCount(refs, o) == 0);
  o.max_builds = 2;
  CHECK(PrunedCount(refs, o) == 2);
  o.max_builds = 10;
  CHECK(PrunedCount(refs, o) == 0);
  o.max_builds.reset();
  o.since = "2026-01-02";  // the build without a start time counts as older
  CHECK(PrunedCount(refs, o) == 2);
  o.since = "2026-01-01";
  CHECK(PrunedCount(refs, o) == 1);
  o.max_builds = 1;
  CHECK(PrunedCount(refs, o) == 3);
  o.max_builds.reset();
  o.since = "2027-01-01";
  CHECK(PrunedCount(refs, o) == 3);
  CHECK(PrunedCount({}, o) == 0);
  const Pruned p = DescribePruned(refs, 3, o);
  CHECK(p.policy == "--since 2027-01-01");
  CHECK(p.oldest == "b0");
  CHECK(p.newest == "b2");
  CHECK(p.Has("b1"));
  CHECK_FALSE(p.Has("b3"));
}

TEST_CASE("CheckRetention names the option of a bad value") {
  SiteOptions o;
  CHECK_NOTHROW(CheckRetention(o));
  o.max_builds = 0;
  CHECK_THROWS_WITH_AS(CheckRetention(o), doctest::Contains("--max-builds 0"), std::runtime_error);
  o.max_builds = 1;
  o.since = "2026-02-29";
  CHECK_THROWS_WITH_AS(CheckRetention(o), doctest::Contains("--since '2026-02-29'"), std::runtime_error);
  o.since = "2028-02-29";
  CHECK_NOTHROW(CheckRetention(o));
  CHECK(RetentionPolicy(o) == "--max-builds 1 --since 2028-02-29");
}
