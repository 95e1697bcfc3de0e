// The counted measurement (RunSettings::measure "counted"): each worker runs
// under Valgrind's Callgrind, which executes it on a simulated CPU and counts
// instructions and cache events deterministically, whatever else the machine
// does (core/stats/counted.h has the events and the estimate of cycles).
//
// The supervisor side builds the command line (CountedCommand): Callgrind
// with instrumentation and collection off at the start (the process loads
// torch and builds the model at Valgrind's plain speed), a fixed cache
// geometry, --cache-sim=yes, one output file per process in the results'
// .work folder, and address randomisation off (NoAslr). The worker side
// (CountSteps) switches instrumentation on after the warm-up, runs one
// more untimed step to warm the simulated caches, and then brackets each
// counted step with Callgrind's client requests, dumping each step's counts
// to its own file, which it reads back.
//
// Valgrind serialises threads, so a counted run uses one intra-op thread,
// and it emulates no AVX-512, so ATen dispatches to its AVX2 kernels there:
// the worker caps the ISA at AVX2 (RunSettings::cpu_isa) so that the same
// kernels run natively when a time is compared with a count.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/stats/counted.h"

namespace torchgauge::collector {

// `valgrind` on PATH and its version ("valgrind-3.19.0"); unset where there
// is none (the counted mode then refuses to start, saying so).
std::optional<std::string> ValgrindVersion();

// The command line prefix that runs a worker under Callgrind, writing its
// dumps to `out_file`.N (one per counted step).
std::vector<std::string> CountedCommand(const std::filesystem::path& out_file);
// The Callgrind options of CountedCommand, as a result records them.
std::vector<std::string> CountedOptions();

// Sets the environment that caps ATen's and oneDNN's instruction set
// ("avx2", "default"; "" leaves their choice). Must run before the first
// kernel: both read it once.
void CapCpuIsa(const std::string& isa);
// The capability ATen's kernels dispatch to ("AVX2", "AVX512", "DEFAULT").
std::string AtenCpuCapability();

// Whether this process runs under Valgrind.
bool RunningOnValgrind();

// The counted steps of one worker, run under Callgrind: one untimed step
// with instrumentation on, then `repeat` counted steps, each read back from
// its dump (out_file.1, .2, ...). The median step's dump is kept at
// `keep_profile` (gzip) when set; the others are removed.
core::Counted CountSteps(const std::function<void()>& step, int repeat, const std::filesystem::path& out_file,
                         const std::optional<std::filesystem::path>& keep_profile);

// Test hook (--plant-cost OP=N): wraps one ATen CPU kernel (aten::relu or
// aten::addmm) so that each call first spends N iterations of a fixed loop
// in PlantedCost, a function of its own, then runs the kernel. A known
// instruction cost on exactly the runs that call the operator, for the
// counted comparison's tests. Throws std::invalid_argument for another op.
void PlantCost(const std::string& spec);

}  // namespace torchgauge::collector
