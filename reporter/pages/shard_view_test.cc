#include "reporter/pages/shard_view.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace torchgauge;

TEST_CASE("shard view: the critical path is the slowest shard; a shard that left nothing has no wall time") {
  core::Manifest m;
  CHECK(!reporter::ComputeShardingView(m));
  auto shard = [](int index, std::string host, double wall_s, int64_t runs) {
    core::ShardSummary s;
    s.index = index;
    s.host = std::move(host);
    s.wall_s = wall_s;
    s.runs_assigned = s.runs_present = runs;
    return s;
  };
  m.shards = std::vector<core::ShardSummary>{shard(0, "n1", 100, 4), shard(1, "n2", 130, 3), shard(2, "n1", 90, 5)};
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
