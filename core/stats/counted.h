// Counted measurement: what Valgrind's Callgrind reports for one step of a
// run executed on its simulated CPU, and the one place the estimated cycles
// are computed from those events. LibTorch-free: the worker (running under
// Callgrind) reads its own per-step dumps with it, the reporter reads the
// profiles it keeps.
//
// The events are Callgrind's with --cache-sim=yes: Ir (instructions
// executed), Dr/Dw (data reads and writes), I1mr/D1mr/D1mw (first-level
// misses), ILmr/DLmr/DLmw (last-level misses). The estimate of cycles is
// the one iai-callgrind and CodSpeed use:
//   L1 hits + 5 x LL hits + 35 x RAM accesses
// with accesses = Ir + Dr + Dw, L1 misses = I1mr + D1mr + D1mw, LL misses =
// ILmr + DLmr + DLmw, L1 hits = accesses - L1 misses, LL hits = L1 misses -
// LL misses, RAM accesses = LL misses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

inline constexpr const char* kCyclesFormula =
    "(Ir + Dr + Dw - L1 misses) + 5 * (L1 misses - LL misses) + 35 * LL misses";

// The simulated cache geometry every counted run uses, fixed so that counts
// do not depend on the host's caches (Callgrind's default reads them from
// the host): 32 KiB 8-way L1s and an 8 MiB 16-way last level, 64-byte lines.
inline constexpr const char* kCountedCacheOptions[] = {"--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"};

struct CountedStep {
  int64_t instructions = 0;  // Ir
  int64_t data_reads = 0;    // Dr
  int64_t data_writes = 0;   // Dw
  int64_t l1_misses = 0;     // I1mr + D1mr + D1mw
  int64_t ll_misses = 0;     // ILmr + DLmr + DLmw
  int64_t est_cycles = 0;    // kCyclesFormula

  bool operator==(const CountedStep&) const = default;
};

// A run counted under Callgrind (RunSettings::measure "counted"): how it was
// counted, and each counted step's events. Pooled from several worker
// processes, the steps are concatenated and each process's medians kept.
struct Counted {
  std::string tool = "callgrind";
  std::string valgrind_version;      // "valgrind-3.19.0"
  std::vector<std::string> options;  // Callgrind's options as the worker was started
  std::string cache_model;           // the simulated geometry (kCountedCacheOptions, joined)
  std::string cycles_formula = kCyclesFormula;
  // The CPU capability ATen's kernels dispatched to in the counted process
  // ("AVX2", "DEFAULT", ...): Valgrind has no AVX-512, so ATen picks AVX2.
  std::string cpu_capability;
  std::vector<CountedStep> steps;
  // Several processes: each process's median instructions and estimated
  // cycles, in run order; empty for one process.
  std::vector<double> process_median_instructions, process_median_est_cycles;
  // The Callgrind profile of the run's median step (gzip), relative to the
  // platform's directory, for the functions that moved; unset where none was kept.
  std::optional<std::string> profile_file;
};

nlohmann::json ToJson(const Counted& c);
Counted CountedFromJson(const nlohmann::json& j, const std::filesystem::path& file);
// Several processes' counts of one run, in run order (each with one process's steps).
Counted PoolCounted(const std::vector<Counted>& processes);
std::vector<double> CountedInstructions(const Counted& c);
std::vector<double> CountedCycles(const Counted& c);

// A step from Callgrind's event totals by name (the "events:" header and a
// "totals:" or "summary:" line). Throws std::invalid_argument naming the
// missing event when the cache simulation's events are not all there.
CountedStep StepFromEvents(const std::map<std::string, int64_t>& events);

// The event totals of one Callgrind output file: the "events:" line and the
// "totals:" line (or, failing that, "summary:"). Throws std::runtime_error
// naming the file when it cannot be read or holds neither.
std::map<std::string, int64_t> ReadCallgrindTotals(const std::filesystem::path& file);

// Per-function self cost of a Callgrind profile, for the functions that
// moved between two builds: the key is "<object>\t<function>" (object the
// shared library's file name, "???" where Callgrind knew none). Only the
// events named are summed (default: Ir).
using FunctionCosts = std::map<std::string, int64_t>;
FunctionCosts ReadCallgrindFunctions(std::istream& in, const std::string& event = "Ir");

}  // namespace torchgauge::core
