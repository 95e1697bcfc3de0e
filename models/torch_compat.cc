#include "models/torch_compat.h"

#include <torch/csrc/autograd/profiler_kineto.h>

namespace torchgauge::compat {

std::string CompiledTorchVersion() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

std::optional<std::string> KinetoEventMetadataJson(const torch::autograd::profiler::KinetoEvent& e) {
#if TORCHGAUGE_TORCH_AT_LEAST(2, 11)
  // Checked present in 2.11 and 2.15, absent in 2.9; 2.10 is not checked and
  // takes the conservative branch (bytes not measured).
  return e.metadataJson();
#else
  (void)e;
  return std::nullopt;
#endif
}

}  // namespace torchgauge::compat
