#include "collector/generation.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <vector>

namespace torchgauge::collector {

torch::Tensor GenerationPrompt(int64_t vocab_size, const GenerationSetup& setup) {
  auto gen = at::detail::createCPUGenerator(setup.settings.seed);
  auto ids = torch::randint(0, vocab_size, {setup.batch_size, setup.settings.prompt_tokens}, gen,
                            torch::TensorOptions().dtype(torch::kLong));
  return ids.to(setup.device);
}

core::Generation MeasureGeneration(models::Generator& generator, const GenerationSetup& setup) {
  const auto& settings = setup.settings;
  core::Generation g;
  g.prompt_tokens = settings.prompt_tokens;
  g.decode_steps = settings.decode_steps;
  g.output_tokens = g.decode_steps + 1;
  g.batch_size = setup.batch_size;
  g.warmup_generations = 1;
  g.generations = settings.generations;
  c10::InferenceMode guard;
  const torch::Tensor prompt = GenerationPrompt(generator.vocab_size(), setup);
  std::vector<double> tpot;
  for (int i = 0; i < g.warmup_generations + g.generations; ++i) {
    torch::Tensor token;
    const double ttft = setup.timed([&] { token = generator.Prefill(prompt, g.output_tokens); });
    tpot.clear();
    for (int64_t k = 0; k < g.decode_steps; ++k) tpot.push_back(setup.timed([&] { token = generator.Decode(token); }));
    if (i < g.warmup_generations) continue;
    g.ttft_samples_ms.push_back(ttft);
    g.tpot_samples_ms.insert(g.tpot_samples_ms.end(), tpot.begin(), tpot.end());
  }
  g.kv_cache_bytes = generator.KvCacheBytes();
  core::SummarizeGeneration(g);
  return g;
}

}  // namespace torchgauge::collector
