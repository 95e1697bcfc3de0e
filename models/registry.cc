// The explicit list of model families. Self-registration from static
// initialisers would be dropped by the linker when nothing references the
// object file, so every family is named here through families.inc (copied
// to the build as torchgauge_families.inc, or the subset that
// TORCHGAUGE_MODEL_FAMILIES selects: models/CMakeLists.txt).
#include <mutex>

#include "models/workload.h"

namespace torchgauge::models {

#define TORCHGAUGE_FAMILY(fn) void fn(std::vector<ModelInfo>& out);
#include "torchgauge_families.inc"
#undef TORCHGAUGE_FAMILY

const std::vector<ModelInfo>& Registry() {
  static const std::vector<ModelInfo> registry = [] {
    std::vector<ModelInfo> out;
#define TORCHGAUGE_FAMILY(fn) fn(out);
#include "torchgauge_families.inc"
#undef TORCHGAUGE_FAMILY
    return out;
  }();
  return registry;
}

const ModelInfo* FindModel(const std::string& id) {
  for (const auto& info : Registry()) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

}  // namespace torchgauge::models
