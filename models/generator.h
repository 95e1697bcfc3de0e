// The generative capability of a workload (models/workload.h): a decoder-only
// language model with a key-value cache decodes one token at a time, and the
// collector's generation measurement (collector/generation.h) times its
// prefill and each decode step (TTFT, TPOT, tokens per second).
//
// A workload that can generate derives from GenerativeWorkload besides
// Workload; the collector asks for the capability with dynamic_cast, so a
// workload without it is untouched. Later decoder families (nanogpt, ...)
// implement Generator for their network and hand it to their workload (the
// Hugging Face harness takes it in LanguageModel::generator).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>

namespace torchgauge::models {

// A generative workload's decoding, one token at a time with a key-value
// cache (decoder-only language models): what the collector's generation
// measurement times (collector/generation.h). Prefill and Decode run under
// the caller's grad mode and return token ids without synchronising the
// device; the measurement synchronises around them.
class Generator {
 public:
  virtual ~Generator() = default;
  // Starts a generation: a fresh cache for `prompt_ids` [batch, prompt]
  // followed by up to `max_new_tokens` tokens, the prompt's forward pass,
  // and the first new token [batch, 1] (greedy: the argmax of the last
  // position's logits).
  virtual torch::Tensor Prefill(const torch::Tensor& prompt_ids, int64_t max_new_tokens) = 0;
  // One decode step: `token` [batch, 1] through the model over the cache;
  // returns the next token [batch, 1] (greedy).
  virtual torch::Tensor Decode(const torch::Tensor& token) = 0;
  // Bytes of the current generation's key-value cache as allocated; nullopt
  // before a Prefill or where the model cannot say.
  virtual std::optional<int64_t> KvCacheBytes() const = 0;
  // Token ids a prompt may hold: [0, vocab_size).
  virtual int64_t vocab_size() const = 0;
};

// The capability: a workload's Generator over its net(), or nullptr where
// this workload, though of a generative harness, has none.
class GenerativeWorkload {
 public:
  virtual ~GenerativeWorkload() = default;
  virtual Generator* generator() = 0;
};

}  // namespace torchgauge::models
