#include "reporter/pages/shard_view.h"

#include <algorithm>
#include <set>

#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"

namespace torchgauge::reporter {

std::optional<ShardingView> ComputeShardingView(const core::Manifest& m) {
  if (!m.shards || m.shards->empty()) return std::nullopt;
  ShardingView v;
  v.shards = *m.shards;
  std::set<std::string> hosts;
  double fastest = 0;
  bool every_wall = true;
  for (const auto& s : v.shards) {
    if (!s.host.empty()) hosts.insert(s.host);
    v.missing += s.runs_missing;
    if (!s.wall_s) {
      every_wall = false;
      continue;
    }
    v.total_wall_s = v.total_wall_s.value_or(0) + *s.wall_s;
    // Ties: the lowest index, so the page does not flicker between builds.
    if (!v.critical_wall_s || *s.wall_s > *v.critical_wall_s) v.critical = s.index, v.critical_wall_s = s.wall_s;
    if (fastest == 0 || *s.wall_s < fastest) fastest = *s.wall_s;
  }
  v.hosts = hosts.size();
  if (every_wall && fastest > 0) v.slowest_over_fastest = *v.critical_wall_s / fastest;
  return v;
}

namespace {

std::string Seconds(const std::optional<double>& s) { return s ? Sig3(*s) + " s" : Dash(); }

}  // namespace

void SetShardView(mu::data& platform, const core::Manifest& m) {
  const auto v = ComputeShardingView(m);
  if (!v) return;
  mu::data rows = List();
  for (const auto& s : v->shards) {
    mu::data r;
    Set(r, "index", std::to_string(s.index));
    Set(r, "critical", v->critical == s.index);
    Set(r, "host", s.host.empty() ? Dash() : s.host);
    Set(r, "start", s.started_at.empty() ? Dash() : s.started_at);
    Set(r, "end", s.finished_at.empty() ? Dash() : s.finished_at);
    Set(r, "wall", Seconds(s.wall_s));
    Set(r, "runs", std::to_string(s.runs_present) + " of " + std::to_string(s.runs_assigned));
    Set(r, "missing", std::to_string(s.runs_missing));
    Set(r, "cost", Sig3(s.planned_cost));
    Append(rows, std::move(r));
  }
  mu::data d;
  Set(d, "count", std::to_string(v->shards.size()));
  Set(d, "hosts", std::to_string(v->hosts));
  Set(d, "critical",
      v->critical ? "shard " + std::to_string(*v->critical) + ", " + Seconds(v->critical_wall_s) : Dash());
  Set(d, "total_wall", Seconds(v->total_wall_s));
  Set(d, "ratio", v->slowest_over_fastest ? Num(*v->slowest_over_fastest, "%.2f") : Dash());
  Set(d, "missing", std::to_string(v->missing));
  Set(d, "rows", std::move(rows));
  Set(platform, "sharding", std::move(d));
}

}  // namespace torchgauge::reporter
