// Platform ratios: the paper's Figure 5 (AMD against NVIDIA) generalized to
// any two platforms. Per run key (model, mode, backend, precision, batch
// size) measured on both, the median step time on one platform over the
// median on a reference platform, with each side's effective precision read
// from the run's precision_flags. A requested "fp32" is not always what ran
// (the paper's TF32 finding: on an A100 cuDNN convolutions ran as TF32 by
// default), so a row whose effective precisions differ is flagged: its ratio
// compares precisions as much as platforms.
//
// Pure computation, one implementation: the build page (aggregate.cc,
// pages/build_page_data.cc) and `torchgauge-report ratio` (compare/ratio_command.h) both
// call ComparePlatforms.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/contract/result.h"
#include "reporter/results/load.h"

namespace torchgauge::reporter {

enum class PrecisionCheck { kSame, kDiffers, kUnknown };  // kUnknown: a side recorded no flags
const char* PrecisionCheckName(PrecisionCheck c);         // "same", "differs", "not recorded"

// What the step ran in, from precision_flags: the parameter dtype, autocast
// and its dtype, and on a GPU whether TF32 was allowed for matmuls and cuDNN
// convolutions ("float32 + TF32 (matmul, conv)", "float32 + autocast
// bfloat16", "bfloat16"). TF32 is named only for float32 math outside
// autocast, the only math it changes, and never on the CPU, where the flags
// have no effect. nullopt when the result recorded no flags.
std::optional<std::string> EffectivePrecision(const core::RunResult& r);

// One run key measured on both platforms. The times and the ratio are
// absent unless that side's run is ok with a timing.
struct RatioRow {
  std::string model, mode, backend, precision;
  int64_t batch_size = 0;
  std::string reference_status, other_status;
  std::optional<double> reference_ms, other_ms;
  std::optional<double> ratio;  // other / reference: below 1 the other platform is faster
  std::optional<std::string> reference_precision, other_precision;  // EffectivePrecision
  PrecisionCheck precision_check = PrecisionCheck::kUnknown;
  // Which side's run is noisy and why (core::RunNoise, as aggregate.h's
  // NoisySides words it, sides named by platform id); "" when both are clean.
  std::string noisy;
};

// Why a row has no ratio ("oom on <id>"), "precision differs" where the
// effective precisions differ, and which side is noisy; "" when there is
// nothing to say.
std::string RatioNote(const RatioRow& r, const std::string& reference, const std::string& other);

// Each row's label in a Figure 5 chart, on the site and in the paper kit
// alike: "resnet50", or "resnet50 (cudagraph, tf32)" where the model has
// rows of more than one backend or precision, or its one configuration is
// not eager.
std::vector<std::string> RatioRowLabels(const std::vector<RatioRow>& rows);

// Per mode: the geomean of the ratios, as the paper summarizes its figures.
struct RatioSummary {
  std::string mode;
  int pairs = 0;  // rows with a ratio
  double geomean = 0;
  int precision_differs = 0;  // of those pairs
  int precision_unknown = 0;  // of those pairs: a side recorded no flags
  int noisy = 0;              // of those pairs: a side's run is noisy
};
// "0", "2", "0 (5 not recorded)": the pairs whose effective precisions differ.
std::string PrecisionDiffersText(const RatioSummary& s);

struct PlatformRatios {
  std::string reference, other;              // platform ids
  std::string reference_label, other_label;  // DeviceLabel
  std::string title;                         // RatioTitle
  std::vector<RatioRow> rows;                // sorted by (model, mode, backend, precision, batch)
  std::vector<RatioSummary> summaries;       // train, then eval, then any other mode; only modes with pairs
  int only_reference = 0, only_other = 0;    // run keys found on one platform only
};

// The device as a reader names it: "NVIDIA A100-SXM4-40GB", "AMD Instinct
// MI250X", a CPU's model name; the platform id when the manifest is missing.
std::string DeviceLabel(const Manifest& m);
// "NVIDIA A100 vs AMD MI250: time ratio" where the vendors differ, else
// "<reference id> vs <other id>: time ratio" (two CPUs are told apart by
// their platform ids, not by a shared model name).
std::string RatioTitle(const Manifest& reference, const Manifest& other);

// Compares `other` with `reference` on every run key present on both.
PlatformRatios ComparePlatforms(const Manifest& reference, const std::vector<const core::RunResult*>& reference_runs,
                                const Manifest& other, const std::vector<const core::RunResult*>& other_runs);

// Throws std::invalid_argument "<what> 'id': no such platform in <where>
// (available: a, b)" unless `id` is one of `available`.
void RequirePlatform(const std::string& what, const std::string& id, const std::set<std::string>& available,
                     const std::string& where);

// The platform a build's others are compared with: `wanted` where the build
// has it, else the first id in sorted order, with a note saying why.
struct ReferenceChoice {
  std::string id;
  std::optional<std::string> note;  // set when `wanted` is not among `ids`
};
ReferenceChoice ChooseReference(const std::set<std::string>& ids, const std::optional<std::string>& wanted);

// The comparison as JSON (`torchgauge-report ratio --json`); absent values are null.
nlohmann::json ToJson(const PlatformRatios& r);

}  // namespace torchgauge::reporter
