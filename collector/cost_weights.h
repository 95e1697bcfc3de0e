// The static cost estimate of each model, for `run --shard I/N` without
// --cost-from (core/shard/shard.h's model_weight): the one place a model's expected
// cost is stated. LibTorch-free data, so it is kept beside the collector
// rather than in each model family's registration.
//
// A model's weight for one run is
//     kStepFloor + forward GFLOPs per sample * batch size / kReferenceStepGflops
// i.e. the cost of one eval step relative to resnet50 at batch 32 (weight
// ~1), plus a floor for the per-step work that does not scale with FLOPs
// (operator dispatch, kernel launches, the optimizer). The GFLOPs are
// forward-pass figures per sample (2 x multiply-adds) from the models'
// published statistics (torchvision's model tables, the papers' parameter
// counts times tokens for the language models) and are rough: they only
// need to rank a 100x heavier model apart from a light one. --cost-from
// replaces them with measured durations (target balance <= 1.25).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace torchgauge::collector {

inline constexpr double kStepFloor = 0.05;
inline constexpr double kReferenceStepGflops = 8.2 * 32;  // resnet50, batch 32

// Forward GFLOPs per sample; nullopt for a model the table does not know.
std::optional<double> ForwardGflopsPerSample(const std::string& model_id);

// The weight above; a model the table does not know weighs 1 (a typical
// model), and cost_weights_test makes sure every registered model is known.
double StaticModelWeight(const std::string& model_id, int64_t batch_size);

}  // namespace torchgauge::collector
