// Export for the ecosystem: every result as records of the PyTorch OSS
// benchmark database, schema v3 (pytorch/test-infra,
// clickhouse_db_schema/oss_ci_benchmark_v3/schema.sql), so a team can feed
// the PyTorch HUD from TorchGauge. One record per metric of a run:
//   step_time_ms               every timed step's sample (timing.samples_ms)
//   throughput_samples_per_s   [timing.throughput_per_s]
//   peak_cpu_memory_mb         [memory.cpu_peak_rss_bytes / 2^20]
//   peak_gpu_memory_mb         [memory.gpu_peak_allocated_bytes / 2^20]
//   achieved_tflops            [flops.achieved_tflops_analytic]
//   ttft_ms, tpot_ms           generative runs: every TTFT and TPOT sample (generation)
//   p90_tpot_ms                [generation.tpot_p90_ms]
//   tokens_per_second          [generation.tokens_per_s]
//   kv_cache_mb                [generation.kv_cache_bytes / 2^20]
//   instructions               counted runs: each counted step's instructions (counted.steps)
//   estimated_cycles           counted runs: each counted step's est_cycles
// A metric a run did not measure has no record (never a record of 0); runs
// that are not ok have none. docs/export.md maps every field.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/results/load.h"

namespace torchgauge::reporter {

// The v3 records of every ok run of `b`, by platform, run and metric.
nlohmann::json V3Records(const BuildResults& b);

// The fields a v3 record must carry: the schema's columns that have no
// default and that the uploader does not fill (`_meta`), with the members
// of its tuples, as dotted paths ("metric.benchmark_values"); "runners[]."
// for every runner's.
const std::vector<std::string>& V3RequiredFields();

// The required fields `record` lacks or carries with the wrong JSON type,
// as "path: why"; empty when it is valid.
std::vector<std::string> V3Problems(const nlohmann::json& record);

}  // namespace torchgauge::reporter
