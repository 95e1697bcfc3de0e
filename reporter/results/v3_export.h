// Export for the ecosystem: every result as records of the PyTorch OSS
// benchmark database, schema v3 (pytorch/test-infra,
// clickhouse_db_schema/benchmark.oss_ci_benchmark_v3/schema.sql), shaped so
// that test-infra's own uploader (.github/scripts/upload_benchmark_results.py)
// accepts them and the HUD's pages show them as TorchGauge does. One record
// per metric of a run; `metric.benchmark_values` holds the one value
// TorchGauge reports for it, because the HUD shows the mean of that array:
//   step_time_ms               [timing.median_ms]
//   throughput_samples_per_s   [timing.throughput_per_s]
//   peak_cpu_memory_mb         [memory.cpu_peak_rss_bytes / 2^20]
//   peak_gpu_memory_mb         [memory.gpu_peak_allocated_bytes / 2^20]
//   achieved_tflops            [flops.achieved_tflops_analytic]
//   ttft_ms, tpot_ms           generative runs: [median TTFT], [median TPOT]
//   p90_tpot_ms                [generation.tpot_p90_ms]
//   tokens_per_second          [generation.tokens_per_s]
//   kv_cache_mb                [generation.kv_cache_bytes / 2^20]
//   instructions               counted runs: [median of the counted steps' instructions]
//   estimated_cycles           counted runs: [median of their est_cycles]
// A metric a run did not measure has no record (never a record of 0); runs
// that are not ok have none. docs/export.md maps every field.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/results/load.h"

namespace torchgauge::reporter {

// What a results tree does not know: the change under test and the CI job
// that exported it. An unset field is left out of the records, never written
// as 0 or "": the uploader merges {**metadata, **record}, so a record's field
// wins over its --metadata, and a 0 id makes it skip the whole file.
struct V3Context {
  std::optional<std::string> repo, head_branch, head_sha;  // head_sha unset: the torch build's commit
  std::optional<uint64_t> workflow_id, run_attempt, job_id;
};

// `ctx` with the ids it lacks taken from GitHub Actions' environment
// (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT; `env` reads a variable, null when
// unset). Actions gives a job no numeric id in the environment: job_id comes
// from the caller or the uploader's --metadata. Throws std::invalid_argument
// on a value that is not a positive integer.
V3Context WithCiEnvironment(V3Context ctx, const std::function<const char*(const char*)>& env);

// The v3 records of every ok run of `b`, by platform, run and metric.
nlohmann::json V3Records(const BuildResults& b, const V3Context& ctx = {});

// The HUD's dtype word for a TorchGauge precision (torchci's compilers
// dashboard: float32, float16, bfloat16, amp, notset).
std::string HudDtype(const std::string& precision);

// The fields a v3 row must carry: the schema's columns that have no default
// and that the replicator does not fill (`_meta`), with the members of its
// tuples, as dotted paths ("metric.benchmark_values"); "runners[]." for
// every runner's.
const std::vector<std::string>& V3RequiredFields();

// The required fields `record` lacks or carries with the wrong JSON type,
// as "path: why"; empty when it is valid. The uploader's --metadata keys
// (repo, head_branch, head_sha and the three ids) may be left out, since it
// supplies them, but an id that is there must be positive.
std::vector<std::string> V3Problems(const nlohmann::json& record);

}  // namespace torchgauge::reporter
