// The registration of TorchBench's long-document masked LMs (hf_BigBird,
// hf_Longformer): the registry entry from a family's network and config, and
// the same entry with fewer encoder layers for the parity tests.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {

struct LongDocumentNames {
  std::string id, paper_name, reference;
};

// LongDocumentMaskedLmInfo for Net (a TORCH_MODULE holder built from Config
// and reading the input ids only).
template <typename Net, typename Config>
ModelInfo LongDocumentMaskedLm(const LongDocumentNames& names, const Config& config) {
  return LongDocumentMaskedLmInfo({
      .id = names.id,
      .paper_name = names.paper_name,
      .reference = names.reference,
      .vocab_size = config.vocab_size,
      .build = BuildFromIds<Net>(config),
  });
}

// The same with `num_hidden_layers` encoder layers.
template <typename Net, typename Config>
ModelInfo LongDocumentMaskedLmWithLayers(const LongDocumentNames& names, int64_t num_hidden_layers) {
  TORCH_CHECK(num_hidden_layers > 0, names.id, ": bad test configuration");
  Config config;
  config.num_hidden_layers = num_hidden_layers;
  return LongDocumentMaskedLm<Net>(names, config);
}

}  // namespace torchgauge::models
