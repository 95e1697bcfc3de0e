// Thrown by a workload factory when this machine cannot run the model at all
// (a run-time library it needs cannot be loaded, say), or by
// Workload::SplitTrainStep when a compiler cannot take the model's train step. The collector's worker
// records the run as `unsupported` with what() as the reason, never as an
// error and never by falling back to other code.
#pragma once

#include <stdexcept>
#include <string>

namespace torchgauge::models {

class UnsupportedError : public std::runtime_error {
 public:
  explicit UnsupportedError(const std::string& why) : std::runtime_error(why) {}
};

// Why a model whose embedding tables take sparse gradients (EmbeddingBag with
// sparse=True, updated row by row by the optimizer) has no joint
// forward-backward package: SplitTrainStep throws it for dlrm and
// torchrec_dlrm.
inline constexpr const char* kSparseGradientsUnsupported =
    "the embedding tables' gradients are sparse tensors (EmbeddingBag sparse=True, applied row by row by the "
    "optimizer), and the joint forward-backward export produces dense outputs only (tried: it fails on the "
    "SparseCPU backend)";

}  // namespace torchgauge::models
