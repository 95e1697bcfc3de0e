#include "core/stats/generation.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "core/stats/stats.h"

using namespace torchgauge::core;

namespace {

// Two generations of 4 decode steps: TTFT 10 and 12 ms, TPOTs 1..4 and 2..5.
Generation TwoGenerations() {
  Generation g;
  g.prompt_tokens = 32;
  g.decode_steps = 4;
  g.output_tokens = 5;
  g.batch_size = 2;
  g.warmup_generations = 1;
  g.generations = 2;
  g.ttft_samples_ms = {10, 12};
  g.tpot_samples_ms = {1, 2, 3, 4, 2, 3, 4, 5};
  g.kv_cache_bytes = 4096;
  return g;
}

}  // namespace

TEST_CASE("generation: TTFT, TPOT median and p90, tokens per second") {
  Generation g = TwoGenerations();
  SummarizeGeneration(g);
  CHECK(g.ttft_ms == doctest::Approx(11));
  CHECK(g.tpot_median_ms == doctest::Approx(3));
  // Linear interpolation over the 8 sorted TPOTs 1 2 2 3 3 4 4 5: rank 6.3.
  CHECK(g.tpot_p90_ms == doctest::Approx(4.3));
  // Each generation: 2 sequences x 5 tokens over 20 ms and 26 ms.
  const auto rates = GenerationRates(g);
  REQUIRE(rates.size() == 2);
  CHECK(rates[0] == doctest::Approx(500));
  CHECK(rates[1] == doctest::Approx(10.0 / 0.026));
  CHECK(g.tokens_per_s == doctest::Approx((500 + 10.0 / 0.026) / 2));
}

TEST_CASE("generation: samples that do not fit the counts are refused") {
  Generation g = TwoGenerations();
  g.tpot_samples_ms.pop_back();
  CHECK(GenerationRates(g).empty());
  CHECK_THROWS_AS(SummarizeGeneration(g), std::invalid_argument);
  g = TwoGenerations();
  g.ttft_samples_ms = {0, 0};
  g.tpot_samples_ms.assign(8, 0.0);
  CHECK_THROWS_AS(SummarizeGeneration(g), std::invalid_argument);  // no time: no rate
}

TEST_CASE("generation: processes pool their samples") {
  Generation a = TwoGenerations(), b = TwoGenerations();
  b.ttft_samples_ms = {20, 22};
  SummarizeGeneration(a);
  SummarizeGeneration(b);
  const Generation p = PoolGenerations({a, b});
  CHECK(p.generations == 4);
  CHECK(p.ttft_samples_ms.size() == 4);
  CHECK(p.tpot_samples_ms.size() == 16);
  CHECK(p.ttft_ms == doctest::Approx(16));
  CHECK(p.process_generations == std::vector<int>{2, 2});
  // One median per process, from that process's samples only.
  const GenerationProcessMedians m = ProcessMedians(p);
  CHECK(m.ttft_ms == std::vector<double>{Quantile(a.ttft_samples_ms, 0.5), 21.0});
  CHECK(m.tpot_ms == std::vector<double>{Quantile(a.tpot_samples_ms, 0.5), Quantile(b.tpot_samples_ms, 0.5)});
  REQUIRE(m.tokens_per_s.size() == 2);
  CHECK(m.tokens_per_s[1] == doctest::Approx(Quantile(GenerationRates(b), 0.5)));
  // Pooling a pool keeps its processes; one process has no medians.
  CHECK(PoolGenerations({p, a}).process_generations == std::vector<int>{2, 2, 2});
  CHECK(ProcessMedians(a).tpot_ms.empty());
  b.decode_steps = 3;
  CHECK_THROWS_AS(PoolGenerations({a, b}), std::invalid_argument);
  CHECK_THROWS_AS(PoolGenerations({}), std::invalid_argument);
}

TEST_CASE("generation: JSON round trip and the reader's checks") {
  Generation g = TwoGenerations();
  SummarizeGeneration(g);
  const nlohmann::json j = ToJson(g);
  const Generation back = GenerationFromJson(j, "r.json");
  CHECK(back.tpot_samples_ms == g.tpot_samples_ms);
  CHECK(back.tpot_p90_ms == g.tpot_p90_ms);
  CHECK(back.kv_cache_bytes == 4096);
  nlohmann::json unmeasured = j;
  unmeasured["kv_cache_bytes"] = nullptr;
  CHECK_FALSE(GenerationFromJson(unmeasured, "r.json").kv_cache_bytes);
  nlohmann::json bad = j;
  bad["tpot_samples_ms"].push_back(1.0);
  CHECK_THROWS_AS(GenerationFromJson(bad, "r.json"), FileError);
  bad = j;
  bad["output_tokens"] = 4;
  CHECK_THROWS_AS(GenerationFromJson(bad, "r.json"), FileError);
  // One process writes no process_generations; a pool's must sum to generations.
  CHECK_FALSE(j.contains("process_generations"));
  Generation two = TwoGenerations();
  SummarizeGeneration(two);
  const nlohmann::json pooled = ToJson(PoolGenerations({two, two}));
  CHECK(GenerationFromJson(pooled, "r.json").process_generations == std::vector<int>{2, 2});
  bad = pooled;
  bad["process_generations"] = {2, 1};
  CHECK_THROWS_AS(GenerationFromJson(bad, "r.json"), FileError);
  bad = j;
  bad["ttft_samples_ms"][0] = -1.0;
  CHECK_THROWS_AS(GenerationFromJson(bad, "r.json"), FileError);
}

TEST_CASE("generation: a run result carries it, or the reason it was not measured") {
  RunResult r;
  r.build_id = "b";
  r.platform_id = "p";
  r.model = {"llama_3_2_1b", "-", "nlp", "language modeling", "r"};
  r.mode = "eval";
  r.started_at = "2026-11-29T00:00:00Z";
  Generation g = TwoGenerations();
  SummarizeGeneration(g);
  r.generation = g;
  RunResult back = RunResultFromJson(ToJson(r), "r.json");
  REQUIRE(back.generation);
  CHECK(back.generation->ttft_samples_ms == g.ttft_samples_ms);
  CHECK_FALSE(back.generation_reason);
  r.generation.reset();
  r.generation_reason = "inductor: prefill and decode are not compiled";
  const nlohmann::json j = ToJson(r);
  CHECK_FALSE(j.contains("generation"));  // not measured: absent, never zeros
  back = RunResultFromJson(j, "r.json");
  CHECK_FALSE(back.generation);
  CHECK(back.generation_reason == r.generation_reason);
  // Processes pool their generations with their samples.
  r.generation = g;
  r.generation_reason.reset();
  Timing t;
  t.samples_ms = {1, 2};
  t.repetitions = 2;
  t.clock = "steady_clock";
  SummarizeTiming(t);
  r.timing = t;
  const RunResult pooled = PoolProcesses({r, r});
  REQUIRE(pooled.generation);
  CHECK(pooled.generation->generations == 4);
}
