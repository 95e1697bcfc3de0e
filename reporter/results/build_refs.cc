#include "reporter/results/build_refs.h"

namespace torchgauge::reporter {

std::vector<BuildRef> BuildRefs(const core::TreeScan& scan) {
  std::vector<BuildRef> refs;
  refs.reserve(scan.builds.size());
  for (const auto& b : scan.builds) {
    BuildRef ref{b.id, b.started_at, {}};
    for (const auto& p : b.platforms) {
      if (p.manifest) ref.platforms.insert(p.id);
    }
    refs.push_back(std::move(ref));
  }
  return refs;
}

}  // namespace torchgauge::reporter
