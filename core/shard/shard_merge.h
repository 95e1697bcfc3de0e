// Merging the shards of one sharded collection (`torchgauge-collect merge
// --into RESULTS SHARD_DIR...`, docs/cluster.md) into one platform tree that
// every reader takes for a single-machine collection.
//
// Contract:
// - A shard directory is the --out root one `run --shard I/N` wrote: exactly
//   one <build-id>/<platform-id>/ whose manifest carries a `shard` block. A
//   directory holding no collection at all (a task cancelled before it
//   started) contributes nothing; its runs are missing.
// - The shards must agree on every field of ShardAgreementFields(): the
//   build, the platform class, the suite and its settings, the hardware
//   fingerprint and the partition itself. A mismatch throws MergeError naming
//   the shard directory and the field.
// - Every planned run is taken exactly once, from the shard that owed it. A
//   run file in a shard that did not owe it, or outside the plan, is an error.
//   Runs no shard produced are missing: an error listing them, or with
//   allow_missing a result with status `missing` whose reason names the shard
//   that owed it.
// - The output is written to a temporary directory beside the target and
//   swapped in with one rename; when the target already holds exactly the
//   same bytes it is left untouched, so merging twice changes nothing. A
//   target that is not itself a merge (no `shards` in its manifest) is never
//   replaced.
// - Each shard probes its own node's peaks (logs/probe.shard-<i>.log); the
//   merged manifest's peaks and cpu_frequency are those of the lowest shard
//   present, as its host, times and clocks come from the shards' extremes.
#pragma once

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/manifest.h"
#include "core/contract/result.h"

namespace torchgauge::core {

// A merge refused: the message names the shard directory and the field or run.
class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A directory as MergeError's messages name it: 'path'.
std::string QuotedDir(const std::filesystem::path& dir);

// One field the shards of a collection must agree on: its dotted manifest
// name and how to read it.
struct AgreementField {
  const char* name;
  std::function<nlohmann::json(const Manifest&)> value;
};
const std::vector<AgreementField>& ShardAgreementFields();

// The run key of a file stem model.mode.backend.precision (the model id may
// itself contain dots); nullopt when the stem has fewer than four parts.
std::optional<RunKey> RunKeyFromStem(const std::string& stem);

struct MergeOptions {
  bool allow_missing = false;
  // The model's identity for a `missing` result (the collector's registry).
  std::function<ModelIdentity(const std::string& model_id)> identity;
};

struct MissingRun {
  std::string run;  // file stem
  int shard = 0;
  std::string why;  // the `reason` written with allow_missing
};

struct MergeOutcome {
  std::filesystem::path platform_dir;  // <into>/<build-id>/<platform-id>
  Manifest manifest;                   // as written
  std::vector<MissingRun> missing;     // in plan order
  std::size_t runs_taken = 0;
  bool changed = true;  // false: the target already held exactly this tree
};

MergeOutcome MergeShards(const std::filesystem::path& into, const std::vector<std::filesystem::path>& shard_dirs,
                         const MergeOptions& options);

// True when the two directories hold the same relative paths with the same
// bytes (the idempotence check; also used by the tests).
bool SameTree(const std::filesystem::path& a, const std::filesystem::path& b);

// Puts the directory `fresh` in the place of `target` (its sibling): one
// rename where the kernel can swap the two, and what was there removed.
// Throws MergeError when the old tree cannot be removed.
void SwapInTree(const std::filesystem::path& fresh, const std::filesystem::path& target);
// Removes a directory tree; throws MergeError naming it when it cannot.
void RemoveTreeOrThrow(const std::filesystem::path& p);
// Writes a platform tree in place of `target`: `fill` writes the runs (and
// logs) into a temporary sibling whose runs/ exists and returns the
// manifest, which is written and read back with the readers' checks; the
// tree is then swapped in, unless `target` already holds the same bytes
// (returns false). On any failure the temporary tree is removed and the
// error passed on; `target` is untouched. `what` names the temporary
// directory (".<platform>.<what>-<pid>").
bool ReplacePlatformTree(const std::filesystem::path& target, const std::string& what,
                         const std::function<Manifest(const std::filesystem::path& tmp)>& fill);

}  // namespace torchgauge::core
