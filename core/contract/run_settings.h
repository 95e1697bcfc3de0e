// How one run is measured: warm-up, timed repetitions, worker processes,
// the profiling pass, timeout, seed, threads, smoke inputs. One struct, with
// each default written once here, travels the whole way: the suite
// (collector/config.h) holds it, the command line overrides it, each run's
// spec carries it to the worker, and the result records it (the "settings"
// object of schemas/run_result.schema.json, same field names).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

class JsonFields;

struct RunSettings {
  int warmup = 3;              // untimed iterations before timing
  int repeat = 10;             // timed iterations per worker process, one sample each
  int processes = 1;           // worker processes per run; their samples are pooled
  int profile_iterations = 3;  // iterations of the separate profiling pass; 0: no pass
  double timeout_s = 1800;     // per worker process
  uint64_t seed = 0;           // weights and inputs
  int threads = 0;             // intra-op CPU threads; 0: not set, LibTorch's choice (null in JSON)
  bool smoke = false;          // smoke inputs: see models::WorkloadOptions::smoke
  // Backends other than eager: how the paired pass times eager against the
  // compiled forward inside the same worker process (result "paired"):
  // "interleaved" (pairs in alternating order, A B B A A B ..., so that a
  // steady drift favours neither side), "back_to_back" (every eager step, then every compiled one:
  // what interleaving protects against) or "off" (no paired pass).
  std::string pairing = "interleaved";
  // Generative workloads in eval mode (the result's "generation",
  // core/stats/generation.h): the prompt's length in tokens, the single-token
  // decode steps of each generation, and the generations timed after one
  // untimed one.
  int prompt_tokens = 64;
  int decode_steps = 16;
  int generations = 5;
  // What the timed steps measure: "time" (wall time on the real CPU) or
  // "counted" (each step executed under Valgrind's Callgrind, its
  // instructions and simulated cache events counted: core/stats/counted.h).
  std::string measure = "time";
  // The CPU instruction set ATen's and oneDNN's kernels may use: "" for
  // their own choice, or a cap ("avx2", "default") set through
  // ATEN_CPU_CAPABILITY and ONEDNN_MAX_CPU_ISA before the first kernel runs,
  // so that a native time measures the kernels a counted run counts
  // (Valgrind has no AVX-512). A counted run is always capped at avx2.
  std::string cpu_isa;

  bool operator==(const RunSettings&) const = default;
};

// The first out-of-range field and what is wrong with it.
struct SettingsProblem {
  std::string field, message;
};
std::optional<SettingsProblem> CheckRunSettings(const RunSettings& s);

// The values of RunSettings::pairing.
inline constexpr const char* kPairings[] = {"interleaved", "back_to_back", "off"};
// The values of RunSettings::measure and RunSettings::cpu_isa.
inline constexpr const char* kMeasures[] = {"time", "counted"};
inline constexpr const char* kCpuIsas[] = {"", "avx2", "default"};

// The "settings" object of a run result (and of a run spec).
nlohmann::json ToJson(const RunSettings& s);
// The one reader of run settings, for the three places they are written: a
// result's "settings", a run spec's "settings" and a suite file (whose
// fields sit at its top level; the manifest records the suite). A field
// absent or null keeps its default; the values must pass CheckRunSettings,
// the suite's rules, so a result or manifest with "repeat": 0 is refused as
// the suite file would be. Throws FileError naming the file and the field
// (settings.repeat).
RunSettings RunSettingsFromJson(const JsonFields& fields);
// The same for a run spec's "settings", handed over without a file: errors
// name "run spec" as the file.
RunSettings RunSettingsFromJson(const nlohmann::json& j);

}  // namespace torchgauge::core
