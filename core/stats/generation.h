// The generation measurement of a generative workload (a decoder-only
// language model with a key-value cache): what the collector records of its
// timed generations and the one place the figures derived from them are
// computed. The terms are those of vLLM's and gpt-fast's dashboards and of
// MLPerf Inference:
//   TTFT (time to first token) = the prefill: the prompt's forward pass and
//        the choice of the first new token, one sample per generation;
//   TPOT (time per output token) = one decode step: the forward pass of one
//        new token over the cache and the choice of the next, one sample per
//        decode step (decode_steps per generation);
//   tokens per second = batch * output_tokens over one generation's wall
//        time (TTFT plus its decode steps), the median over the generations.
// output_tokens = 1 + decode_steps: the prefill gives the first new token.
// LibTorch-free; the collector times, this file summarises.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

struct Generation {
  int64_t prompt_tokens = 0;  // per sequence
  int64_t decode_steps = 0;   // per generation: one token each
  int64_t output_tokens = 0;  // per sequence: 1 + decode_steps
  int64_t batch_size = 1;     // sequences decoded together
  int warmup_generations = 0;
  int generations = 0;  // timed; with several processes, the pool's count
  // Every sample kept: one TTFT per timed generation, in order, and every
  // decode step's time, generation after generation (decode_steps each).
  std::vector<double> ttft_samples_ms, tpot_samples_ms;
  // Derived by SummarizeGeneration.
  double ttft_ms = 0;  // median TTFT
  double tpot_median_ms = 0, tpot_p90_ms = 0;
  double tokens_per_s = 0;  // median of GenerationRates
  // The key-value cache's memory for one generation (every layer's keys and
  // values at their allocated capacity); unset where the workload cannot say.
  std::optional<int64_t> kv_cache_bytes;
  // Pooled from several worker processes (PoolGenerations): each process's
  // timed generations, in the samples' order, summing to `generations`.
  // Empty for one process.
  std::vector<int> process_generations;
};

// One value per worker process for each generation metric, the median of
// that process's samples: the unit the comparison's rank test and noise
// band read (core/analysis/compare.h), since the steps of one process share
// its memory layout and the minute it ran in. Empty with fewer than two
// processes.
struct GenerationProcessMedians {
  std::vector<double> ttft_ms, tpot_ms, tokens_per_s;
};
GenerationProcessMedians ProcessMedians(const Generation& g);

// Each timed generation's output tokens per second: batch * output_tokens /
// (its TTFT + its decode steps' times). Empty when the samples do not hold
// `generations` TTFTs and decode_steps TPOTs for each, or a time is not positive.
std::vector<double> GenerationRates(const Generation& g);

// The one place the generation figures are computed: the median TTFT, the
// TPOT median and 90th percentile (Quantile's linear interpolation) over
// every decode step, and tokens_per_s. Throws std::invalid_argument when the
// samples are empty or do not fit the counts (GenerationRates).
void SummarizeGeneration(Generation& g);

// Several worker processes' generations of one run, pooled: samples
// concatenated in process order, generations summed, the figures recomputed.
// Throws std::invalid_argument for an empty list or differing lengths.
Generation PoolGenerations(const std::vector<Generation>& processes);

nlohmann::json ToJson(const Generation& g);
// Reads and checks a "generation" object (counts, every sample >= 0, the
// samples fitting the counts); throws FileError naming `file` and the field.
Generation GenerationFromJson(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace torchgauge::core
