// The result contract in C++: the types that mirror schemas/*.schema.json,
// and their JSON conversion. The collector fills these and writes them; the
// reporter reads them back. The JSON Schema files are the source of truth;
// a test validates real collector output against them.
//
// Optional fields are std::optional: nullopt is written as null (or left out)
// and means "not measured on this platform", never 0.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/contract/run_settings.h"
#include "core/contract/vocabulary.h"
#include "core/stats/counted.h"
#include "core/stats/generation.h"
#include "core/stats/gpu_breakdown.h"
#include "core/stats/host_breakdown.h"
#include "core/stats/system_load.h"

namespace torchgauge::core {

inline constexpr int kRunSchemaVersion = 1;
inline constexpr int kManifestSchemaVersion = 1;

struct ModelIdentity {
  std::string id, paper_name, domain, task, reference;
};

struct PrecisionFlags {
  std::string param_dtype;  // float32, bfloat16, float16
  bool matmul_allow_tf32 = false;
  bool cudnn_allow_tf32 = false;
  std::string float32_matmul_precision;  // highest | high | medium
  bool cudnn_enabled = true;
  bool cudnn_benchmark = false;
  bool cudnn_deterministic = false;
  bool autocast_enabled = false;
  std::optional<std::string> autocast_dtype;
};

struct Timing {
  std::vector<double> samples_ms;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, stdev_ms = 0, iqr_ms = 0, cov = 0;
  int warmup_iterations = 0;
  int repetitions = 0;
  std::string clock;  // steady_clock | cuda_event
  int64_t samples_per_step = 1;
  std::optional<double> throughput_per_s;
  // With settings.processes > 1: each worker process's median, in run order.
  // samples_ms then pools every process's samples (in the same order) and the
  // summary statistics describe the pool. Empty for a single process.
  std::vector<double> process_medians_ms;
  // Backends other than eager: wall time of preparing the backend once,
  // before warm-up (for torchscript: tracing, the check against eager, the
  // executor's profiling and optimising calls). Absent for eager. With
  // several processes, the first process's.
  std::optional<double> backend_setup_ms;
};

// A compiled backend's one-off preparation, split as the paper and the HUD
// report compilation latency (inductor: trace in C++, convert to an
// ExportedProgram and compile with AOTInductor in Python, load in C++).
// A phase that did not run (a cache hit compiles nothing) is unset.
struct CompileInfo {
  std::optional<double> trace_ms, convert_ms, compile_ms, load_ms;
  bool cache_hit = false;
  std::string cache_key;  // "" where the backend has no package cache
  // How the compiled code was checked against eager when it was installed:
  // "output" (eval), "loss_and_gradients" (train), "loss_and_gradients_fp64"
  // (train, judged against a float64 eager step where float32 rounding
  // exceeds the plain check's tolerance), "loss_loose" (a train step that
  // draws random numbers, which compiled code draws from its own generator:
  // only the loss's size is compared), "" where not checked. The error is the
  // largest relative difference found; for _fp64, the compiled RMSE from the
  // float64 step of the output nearest its bound (or the failing one), and
  // check_reference_error, for _fp64 only, float32 eager's RMSE in that output.
  std::string check;
  std::optional<double> check_error;
  std::optional<double> check_reference_error;
};

// Backends other than eager (RunSettings::pairing): the eager forward and the
// compiled one timed in the same worker process after the timing pass, on the
// same weights and inputs. With "interleaved" the steps run in pairs whose
// order alternates (A B B A A B ...), so drift in the machine or the process
// hits both sides alike; "back_to_back" runs every eager step first. Pooled over
// processes, the samples are concatenated and process_speedups keeps each
// process's ratio; speedup is their median, speedup_low/high their range.
struct PairedTiming {
  std::string order;  // interleaved | back_to_back
  std::vector<double> eager_samples_ms, compiled_samples_ms;
  double eager_median_ms = 0, compiled_median_ms = 0;
  double speedup = 0;  // eager / compiled: > 1 the compiled forward is faster
  std::vector<double> process_speedups;
  std::optional<double> speedup_low, speedup_high;
};

// The one place the paired figures are computed: the medians and the speedup
// of one process's paired samples (throws std::invalid_argument when either
// list is empty or the compiled median is 0).
void SummarizePaired(PairedTiming& p);

struct Memory {
  std::optional<int64_t> cpu_peak_rss_bytes;
  // What cpu_peak_rss_bytes spans: "timed_steps" (VmHWM was reset after the
  // warm-up) or "process" (the kernel refused the reset, so the peak may be
  // the model's construction or warm-up). Null in results written before it.
  std::optional<std::string> cpu_peak_rss_scope;
  std::optional<int64_t> cpu_rss_after_warmup_bytes;
  std::optional<int64_t> gpu_peak_allocated_bytes;
  std::optional<int64_t> gpu_peak_reserved_bytes;
  std::optional<int64_t> gpu_allocated_after_warmup_bytes;
};

struct Flops {
  // By formula from the profiled operators' shapes (collector/platform/
  // flop_formulas.h); null when not measured, with the reason.
  std::optional<double> profiler_flops_per_iter;
  std::optional<std::string> profiler_flops_reason;
  std::vector<std::string> profiler_counted_ops;
  std::optional<double> analytic_flops_per_iter;
  std::optional<double> achieved_tflops_profiler;
  std::optional<double> achieved_tflops_analytic;
};

struct Profiling {
  int iterations = 0;
  double wall_ms_per_iter = 0;
  std::optional<double> overhead_ratio;
  std::optional<std::string> trace_file;
};

struct RunResult {
  int schema_version = kRunSchemaVersion;
  std::string build_id, platform_id;
  ModelIdentity model;
  std::string mode, backend = "eager", precision = "fp32";
  int64_t batch_size = 1;
  std::string device = "cpu";
  std::string status = "ok";
  std::optional<std::string> reason;
  std::optional<int> signal;
  std::string started_at;
  std::optional<double> duration_s;
  std::optional<RunSettings> settings;
  std::optional<PrecisionFlags> precision_flags;
  std::optional<Timing> timing;
  std::optional<Memory> memory;
  std::optional<GpuBreakdown> gpu_breakdown;
  // On every device, from the profiling pass's CPU operator events. Unset in
  // results written before it existed or when the profiling pass was off.
  std::optional<HostBreakdown> host_breakdown;
  // Why a profiled run has no host breakdown (an Inductor run's generated
  // kernels are no profiler operators); unset otherwise.
  std::optional<std::string> host_breakdown_reason;
  // What the machine was doing during the timing pass. Unset: not measured.
  std::optional<SystemLoad> system_load;
  std::optional<Flops> flops;
  std::optional<std::vector<std::string>> operators;  // distinct ATen ops with overloads
  std::optional<Profiling> profiling;
  std::optional<CompileInfo> compile;  // compiled backends with a split setup (inductor)
  std::optional<PairedTiming> paired;  // backends other than eager, pairing not "off"
  // Generative workloads in eval mode (core/stats/generation.h): prefill and
  // decode timed apart. Unset for other workloads; for a generative one
  // that could not be measured, unset with generation_reason saying why.
  std::optional<Generation> generation;
  std::optional<std::string> generation_reason;
  // Counted runs (settings.measure "counted", core/stats/counted.h): the
  // steps executed under Callgrind's simulated CPU. Such a run has no timing
  // (the wall time would be the simulator's) and no memory (the process is
  // Valgrind's): both not measured.
  std::optional<Counted> counted;
};

nlohmann::json ToJson(const RunResult& r);
// Parses a run result. Throws FileError naming `file` and the offending field.
// Refuses a newer schema_version with advice; an older shape is brought to
// the current one first (MigrateRunResult, core/contract/result_migration.h).
RunResult RunResultFromJson(const nlohmann::json& j, const std::filesystem::path& file);

// Checks the "schema_version" and "kind" of a document; throws FileError with
// what to do when the file is newer than this program understands.
void CheckSchema(const nlohmann::json& j, const std::filesystem::path& file, const char* kind, int supported_version);

// The one place the timing summary is computed: fills median, min, max, mean,
// stdev, IQR, CoV and throughput (samples_per_step per median step) from
// t.samples_ms.
void SummarizeTiming(Timing& t);

// The one place the rates that follow the median step time are computed:
// achieved TFLOP/s (analytic and profiler) and the profiling pass's overhead
// ratio. Leaves them unset where the median is 0 or the count is unknown.
void DeriveRates(RunResult& r);

// Merges the results of one run measured in several worker processes (all
// "ok", in run order; the first did the profiling pass): samples are pooled,
// process_medians_ms and settings.processes record the split, the summary
// and DeriveRates follow the pooled median, the CPU peak is the largest of
// the processes' and duration_s their sum; system_load is the window with the
// most CPU used by other processes (the pool is judged by its worst window).
// Everything else comes from the first process (which profiled: the host and
// GPU breakdowns). Throws std::invalid_argument for an empty list.
RunResult PoolProcesses(const std::vector<RunResult>& processes);

// The one place a run's noise verdict is taken from its own fields: the
// timing CoV within its worker processes (for a pooled run, each sample
// against its own process's median) and the system load of its timing pass
// (ClassifyNoise).
NoiseVerdict RunNoise(const RunResult& r, const NoiseThresholds& thresholds = kDefaultNoiseThresholds);

// Current UTC time as RFC 3339 (e.g. 2026-11-22T10:34:48Z).
std::string NowUtc();

}  // namespace torchgauge::core
