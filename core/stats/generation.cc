#include "core/stats/generation.h"

#include <numeric>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/stats/stats.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {
// Whether the samples hold one TTFT per generation and decode_steps TPOTs
// for each.
bool SamplesFitCounts(const Generation& g) {
  return g.generations > 0 && g.decode_steps >= 0 && g.ttft_samples_ms.size() == static_cast<size_t>(g.generations) &&
         g.tpot_samples_ms.size() == static_cast<size_t>(g.generations) * static_cast<size_t>(g.decode_steps);
}
}  // namespace

std::vector<double> GenerationRates(const Generation& g) {
  if (!SamplesFitCounts(g)) return {};
  std::vector<double> rates;
  const auto steps = static_cast<size_t>(g.decode_steps);
  for (size_t i = 0; i < g.ttft_samples_ms.size(); ++i) {
    const auto first = g.tpot_samples_ms.begin() + static_cast<std::ptrdiff_t>(i * steps);
    const double wall_ms = std::accumulate(first, first + static_cast<std::ptrdiff_t>(steps), g.ttft_samples_ms[i]);
    if (!(wall_ms > 0)) return {};
    rates.push_back(static_cast<double>(g.batch_size * g.output_tokens) / (wall_ms / 1e3));
  }
  return rates;
}

GenerationProcessMedians ProcessMedians(const Generation& g) {
  GenerationProcessMedians out;
  const int pooled = std::accumulate(g.process_generations.begin(), g.process_generations.end(), 0);
  if (g.process_generations.size() < 2 || pooled != g.generations) return out;
  const std::vector<double> rates = GenerationRates(g);
  if (rates.empty()) return out;
  const auto steps = static_cast<size_t>(g.decode_steps);
  size_t first = 0;  // the process's first generation
  for (int n : g.process_generations) {
    const auto count = static_cast<size_t>(n);
    auto median_of = [&](const std::vector<double>& v, size_t per_generation) {
      const auto begin = v.begin() + static_cast<std::ptrdiff_t>(first * per_generation);
      return Quantile(std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(count * per_generation)), 0.5);
    };
    out.ttft_ms.push_back(median_of(g.ttft_samples_ms, 1));
    out.tpot_ms.push_back(median_of(g.tpot_samples_ms, steps));
    out.tokens_per_s.push_back(median_of(rates, 1));
    first += count;
  }
  return out;
}

void SummarizeGeneration(Generation& g) {
  const std::vector<double> rates = GenerationRates(g);
  if (rates.empty() || g.tpot_samples_ms.empty()) {
    throw std::invalid_argument("SummarizeGeneration: the samples do not hold " + std::to_string(g.generations) +
                                " generations of " + std::to_string(g.decode_steps) + " decode steps");
  }
  g.ttft_ms = Quantile(g.ttft_samples_ms, 0.5);
  g.tpot_median_ms = Quantile(g.tpot_samples_ms, 0.5);
  g.tpot_p90_ms = Quantile(g.tpot_samples_ms, 0.9);
  g.tokens_per_s = Quantile(rates, 0.5);
}

Generation PoolGenerations(const std::vector<Generation>& processes) {
  if (processes.empty()) throw std::invalid_argument("PoolGenerations: no process results");
  Generation out = processes.front();
  if (processes.size() == 1) return out;
  out.ttft_samples_ms.clear();
  out.tpot_samples_ms.clear();
  out.generations = 0;
  out.process_generations.clear();
  for (const Generation& p : processes) {
    if (p.prompt_tokens != out.prompt_tokens || p.decode_steps != out.decode_steps || p.batch_size != out.batch_size) {
      throw std::invalid_argument("PoolGenerations: the processes generated different lengths");
    }
    out.ttft_samples_ms.insert(out.ttft_samples_ms.end(), p.ttft_samples_ms.begin(), p.ttft_samples_ms.end());
    out.tpot_samples_ms.insert(out.tpot_samples_ms.end(), p.tpot_samples_ms.begin(), p.tpot_samples_ms.end());
    out.generations += p.generations;
    if (p.process_generations.empty()) {
      out.process_generations.push_back(p.generations);
    } else {
      out.process_generations.insert(out.process_generations.end(), p.process_generations.begin(),
                                     p.process_generations.end());
    }
  }
  SummarizeGeneration(out);
  return out;
}

json ToJson(const Generation& g) {
  json j = {{"prompt_tokens", g.prompt_tokens},
            {"decode_steps", g.decode_steps},
            {"output_tokens", g.output_tokens},
            {"batch_size", g.batch_size},
            {"warmup_generations", g.warmup_generations},
            {"generations", g.generations},
            {"ttft_samples_ms", g.ttft_samples_ms},
            {"tpot_samples_ms", g.tpot_samples_ms},
            {"ttft_ms", g.ttft_ms},
            {"tpot_median_ms", g.tpot_median_ms},
            {"tpot_p90_ms", g.tpot_p90_ms},
            {"tokens_per_s", g.tokens_per_s},
            {"kv_cache_bytes", Opt(g.kv_cache_bytes)}};
  if (!g.process_generations.empty()) j["process_generations"] = g.process_generations;
  return j;
}

Generation GenerationFromJson(const json& j, const std::filesystem::path& file) {
  const JsonFields in(j, file, "generation");
  Generation g;
  g.prompt_tokens = in.AtLeast<int64_t>("prompt_tokens", 1);
  g.decode_steps = in.AtLeast<int64_t>("decode_steps", 1);
  g.output_tokens = in.AtLeast<int64_t>("output_tokens", 1);
  if (g.output_tokens != g.decode_steps + 1) in.Fail("output_tokens", "must be decode_steps + 1");
  g.batch_size = in.AtLeast<int64_t>("batch_size", 1);
  g.warmup_generations = in.AtLeast("warmup_generations", 0);
  g.generations = in.AtLeast("generations", 1);
  g.ttft_samples_ms = in.EachAtLeast("ttft_samples_ms", 0.0);
  g.tpot_samples_ms = in.EachAtLeast("tpot_samples_ms", 0.0);
  if (!SamplesFitCounts(g)) {
    in.Fail("tpot_samples_ms", "must hold one TTFT per generation and decode_steps TPOTs for each");
  }
  g.ttft_ms = in.AtLeast("ttft_ms", 0.0);
  g.tpot_median_ms = in.AtLeast("tpot_median_ms", 0.0);
  g.tpot_p90_ms = in.AtLeast("tpot_p90_ms", 0.0);
  g.tokens_per_s = in.AtLeast("tokens_per_s", 0.0);
  g.kv_cache_bytes = in.OptAtLeast<int64_t>("kv_cache_bytes", 0);
  if (in.Has("process_generations")) {
    g.process_generations = in.EachAtLeast("process_generations", 1);
    const int sum = std::accumulate(g.process_generations.begin(), g.process_generations.end(), 0);
    if (!g.process_generations.empty() && sum != g.generations) {
      in.Fail("process_generations", "must sum to generations (" + std::to_string(g.generations) + ")");
    }
  }
  return g;
}

}  // namespace torchgauge::core
