// What the site reads of the results tree besides reporter/results/load.h: the list
// of builds in render order, taken from the one scan of the tree
// (core/results_tree: manifests parsed once, the one build order), before any
// run result is loaded.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/contract/results_tree.h"

namespace torchgauge::reporter {

struct BuildRef {
  std::string id, started_at;
  std::set<std::string> platforms;  // with a readable manifest of this build
};

// Every build of `scan`, in its order (oldest first, core::BuildBefore). A
// platform whose manifest was refused is left out here and reported when the
// build is loaded.
std::vector<BuildRef> BuildRefs(const core::TreeScan& scan);

}  // namespace torchgauge::reporter
