// The generation measurement of a generative workload (models::Generator,
// models/generator.h), in eval mode after the timing pass: one untimed
// generation, then settings.generations timed ones, each a prefill of a
// seeded random prompt (settings.prompt_tokens long) and settings.decode_steps
// greedy single-token decode steps over the key-value cache. Every prefill
// (TTFT) and every decode step (TPOT) is timed on its own, synchronised with
// the device as the timing pass's steps are; core::SummarizeGeneration
// derives the figures (core/stats/generation.h).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>

#include "core/contract/run_settings.h"
#include "core/stats/generation.h"
#include "models/generator.h"

namespace torchgauge::collector {

// Runs `work` once and returns its time in ms, synchronised with the device.
using TimedCall = std::function<double(const std::function<void()>& work)>;

struct GenerationSetup {
  const core::RunSettings& settings;
  int64_t batch_size = 1;
  torch::Device device = torch::kCPU;
  TimedCall timed;
};

// The prompt: token ids [batch, prompt_tokens] in [0, vocab), drawn from a
// generator of its own seeded with settings.seed (the model's generators
// are left alone), on `device`.
torch::Tensor GenerationPrompt(int64_t vocab_size, const GenerationSetup& setup);

// Times the generations under inference mode (the caller sets autocast).
// Throws what the model throws.
core::Generation MeasureGeneration(models::Generator& generator, const GenerationSetup& setup);

}  // namespace torchgauge::collector
