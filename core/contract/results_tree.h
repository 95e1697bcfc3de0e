// The one reader of a results tree (layout in core/contract/layout.h):
//   <root>/<build-id>/<platform-id>/{manifest.json, runs/*.json}
// Every command that reads results goes through here: the reporter's site
// and validate, compare, bisect and coverage. So they list the same builds in
// the same order and accept and reject the same files: every content check
// is in ManifestFromJson / RunResultFromJson, and the checks of a file's
// place in the tree (ids matching their directories, the file name matching
// the run key) are in LoadRunFile below.
//
// Build order, the one rule: oldest first by the build's start, then by id.
// A build's start is the earliest started_at among its platforms' valid
// manifests ("" when it has none, which sorts first). The site's history,
// its baselines and `compare`'s default baseline all follow this order.
//
// Per build the directory is listed once and each manifest parsed once
// (ScanTree); run files are read only when a platform is loaded.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/contract/manifest.h"
#include "core/contract/result.h"
#include "core/io/json_io.h"

namespace torchgauge::core {

// A refused file or directory, with the field when one is to blame.
struct Problem {
  std::string file;   // the path as reached from the root given
  std::string field;  // dotted field path; empty for whole-file problems
  std::string message;
  std::string ToString() const;  // "file: field 'x': message", the form of FileError
  bool operator<(const Problem& o) const;
  bool operator==(const Problem& o) const = default;
};
Problem ToProblem(const FileError& e);

struct TreePlatform {
  std::string id;
  std::filesystem::path dir;
  // Parsed and checked against its directory; nullopt when manifest.json is
  // missing or refused (then manifest_problem says why).
  std::optional<Manifest> manifest;
  std::optional<Problem> manifest_problem;
  bool has_manifest_file = false;  // manifest.json exists (valid or not)
};

struct TreeBuild {
  std::string id;
  std::string started_at;               // the ordering key (see above)
  std::vector<TreePlatform> platforms;  // safe directory names, sorted by id
  std::vector<Problem> problems;        // listing problems (unsafe platform names), sorted
  const TreePlatform* Find(const std::string& platform_id) const;
};

struct TreeScan {
  std::vector<TreeBuild> builds;  // oldest first (the one rule)
  std::vector<Problem> problems;  // unsafe build directory names, an unreadable root
};

// Lists the tree and parses every manifest once. `only_builds` (when not
// empty) limits it to those build ids. Throws FileError when `root` is not a
// directory.
TreeScan ScanTree(const std::filesystem::path& root, const std::set<std::string>& only_builds = {});

// The pieces ScanTree is made of, for callers that need one level.
// Build ids under `root` (safe names, not starting with '.'), sorted.
std::vector<std::string> ListBuildIds(const std::filesystem::path& root, std::vector<Problem>* problems);
// Platform ids of one build (safe directory names, not starting with '.'), sorted.
std::vector<std::string> ListPlatformIds(const std::filesystem::path& root, const std::string& build_id,
                                         std::vector<Problem>* problems);
// One build: its platforms and their manifests; started_at set.
TreeBuild ScanBuild(const std::filesystem::path& root, const std::string& build_id);
// A platform's run result files, runs/*.json not starting with '.', sorted.
std::vector<std::filesystem::path> ListRunFiles(const std::filesystem::path& platform_dir);
// The one ordering rule as a comparison of (started_at, id).
bool BuildBefore(const std::string& started_a, const std::string& id_a, const std::string& started_b,
                 const std::string& id_b);

// Reads and checks one run result file: RunResultFromJson plus its place in
// the tree (build and platform ids match the directories, the model id is
// safe, the file name is the run key). Throws FileError naming file and field.
RunResult LoadRunFile(const std::filesystem::path& file, const std::string& build_id, const std::string& platform_id);

// Runs in the one order every reader uses: (model, mode, backend, precision, batch).
void SortRuns(std::vector<RunResult>& runs);

// One platform of one build, loaded: its manifest (a placeholder with
// present == false when refused), the runs that passed every check, and one
// problem per refused file (the manifest's included), sorted. Runs are
// loaded even when the manifest is refused.
struct LoadedPlatform {
  std::filesystem::path dir;  // the platform's folder (profiles are read from it)
  Manifest manifest;
  std::vector<RunResult> runs;
  std::vector<Problem> problems;
};
LoadedPlatform LoadPlatform(const TreeBuild& build, const TreePlatform& platform);
// LoadPlatform in its steps, for a caller that parses the run files of many
// platforms in one parallel pool (the site): BeginPlatform sets the manifest
// (or the placeholder) and its problem; AddRunFile loads one file of
// ListRunFiles(platform.dir) into a result or a problem; FinishPlatform sorts.
LoadedPlatform BeginPlatform(const TreeBuild& build, const TreePlatform& platform);
struct RunFileOutcome {
  std::optional<RunResult> run;
  std::optional<Problem> problem;
};
RunFileOutcome LoadRunFileOutcome(const std::filesystem::path& file, const std::string& build_id,
                                  const std::string& platform_id);
void FinishPlatform(LoadedPlatform& platform);

// Every run under `dir`, which may be a results root, one build or one
// platform directory (told apart by what it holds): the loader of
// `torchgauge-collect coverage`. Refused files go to `problems`.
std::vector<RunResult> LoadRunsIn(const std::filesystem::path& dir, std::vector<Problem>* problems);

}  // namespace torchgauge::core
