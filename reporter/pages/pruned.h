// What the site's retention policy pruned (site/retention.h), as the pages
// that list every build need it: the policy in words and the pruned builds'
// ids, which those pages name without a link. Its own header so that the
// page builders can read it without depending on the retention code.
#pragma once

#include <set>
#include <string>

namespace torchgauge::reporter {

struct Pruned {
  std::string policy;            // "--max-builds 3 --since 2026-01-02"; empty: no policy
  std::set<std::string> builds;  // the pruned builds' ids
  std::string oldest, newest;    // the first and last pruned build ids (site order)
  bool Has(const std::string& id) const { return builds.count(id) > 0; }
};

}  // namespace torchgauge::reporter
