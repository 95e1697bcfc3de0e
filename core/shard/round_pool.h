// Pooling rounds of collections into one (`torchgauge-collect pool --into
// RESULTS ROUND_DIR...`): the interleaved measurement of several builds.
//
// Why: a build collected in one block shares its minutes with nothing else,
// so a slow episode of the machine (host steal, a neighbour's load, thermal
// state) lands on one build and reads as a change between builds. Collected
// round by round instead (round 1: A B C, round 2: C B A, ...), each round
// one worker process per run, every build sees every stretch of the machine.
// Pooled, each run holds one process per round: the comparison's rank test
// and noise band then read the rounds as the processes they are.
//
// Contract:
// - A round directory is the --out root of `run --processes 1` for one or
//   more builds. Every round holds the same <build-id>/<platform-id>/
//   collections, each with the same runs; a collection, a run or a file
//   missing from a round, or refused by the readers, is an error naming the
//   round directory and the file.
// - The rounds of one collection must agree on the LibTorch under test (its
//   version and commit), the suite and the host's CPU; a mismatch names the
//   field.
// - A run "ok" in every round is pooled as core::PoolProcesses pools worker
//   processes (settings.processes is then the round count). A run already
//   measured in several processes in a round is refused: its processes would
//   collapse into one value. A run that is not ok in some round keeps that
//   round's result, its reason prefixed with the round, since what failed
//   once is what a reader must see.
// - The pooled manifest is the first round's, with the rounds' earliest
//   start, latest finish and any interruption. Each round's logs go to
//   logs/round-<k>/.
// - Each pooled collection is written beside its target and swapped in with
//   one rename. A target that exists is replaced only with `replace` (the
//   rounds stay where they are, so nothing collected is lost).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/shard/shard_merge.h"

namespace torchgauge::core {

struct PoolOutcome {
  struct Collection {
    std::string build_id, platform_id;
    std::filesystem::path platform_dir;  // <into>/<build-id>/<platform-id>
    std::size_t runs_pooled = 0;         // ok in every round
    std::size_t runs_not_ok = 0;         // not ok in some round: that round's result kept
  };
  std::vector<Collection> collections;  // sorted by build, then platform
  std::size_t rounds = 0;
};

// Throws MergeError with what is wrong (the round directory and the file or field).
PoolOutcome PoolRounds(const std::filesystem::path& into, const std::vector<std::filesystem::path>& round_dirs,
                       bool replace);

}  // namespace torchgauge::core
