#include "reporter/pages/shard_view.h"

#include <doctest/doctest.h>

using namespace torchgauge;

TEST_CASE("shard view: the critical path is the slowest shard; a shard that left nothing has no wall time") {
  core::Manifest m;
  CHECK(!reporter::ComputeShardingView(m));
  core::ShardSummary a, b, c;
  a.index = 0, a.host = "n1", a.wall_s = 100, a.runs_assigned = a.runs_present = 4;
  b.index = 1, b.host = "n2", b.wall_s = 130, b.runs_assigned = b.runs_present = 3;
  c.index = 2, c.host = "n1", c.wall_s = 90, c.runs_assigned = c.runs_present = 5;
  m.shards = std::vector<core::ShardSummary>{a, b, c};
  auto v = reporter::ComputeShardingView(m);
  REQUIRE(v);
  CHECK(v->critical == 1);
  CHECK(*v->critical_wall_s == 130);
  CHECK(*v->total_wall_s == 320);
  CHECK(v->hosts == 2);
  CHECK(*v->slowest_over_fastest == doctest::Approx(130.0 / 90.0));
  CHECK(v->missing == 0);

  core::ShardSummary gone;
  gone.index = 1, gone.runs_assigned = gone.runs_missing = 3;
  m.shards->at(1) = gone;
  v = reporter::ComputeShardingView(m);
  CHECK(v->critical == 0);
  CHECK(!v->slowest_over_fastest);
  CHECK(v->missing == 3);
  CHECK(v->hosts == 1);
}
