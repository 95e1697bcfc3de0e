// Stage 1 of the pipeline: load and validate a results tree
// (results/<build-id>/<platform-id>/{manifest.json, runs/*.json}).
// Parsing goes through core::RunResultFromJson; on top of it the loader checks
// the layout contract (ids safe and matching their directories, file names
// matching the run key) and the value ranges of the schema that the parser
// does not enforce. A bad file becomes a Problem naming file and field; it is
// skipped (the build page reports it missing) or, with strict, fails the load.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/manifest.h"
#include "core/result.h"

namespace torchgauge::reporter {

struct Problem {
  std::string file;   // path as given on the command line, joined with the tree path
  std::string field;  // dotted field path; empty for whole-file problems
  std::string message;
  std::string ToString() const;
  bool operator<(const Problem& o) const;
};

// The typed manifest and its parser live in core (the collector writes it).
using Manifest = core::Manifest;
using core::ManifestFromJson;

struct PlatformResults {
  Manifest manifest;
  std::vector<core::RunResult> runs;  // sorted by (model, mode, backend, precision, batch)
  std::vector<Problem> problems;      // each one a result the build page reports missing
};

struct BuildResults {
  std::string id;
  std::string started_at;                  // earliest manifest started_at ("" if none)
  std::vector<PlatformResults> platforms;  // sorted by platform id
  std::vector<Problem> problems;           // all problems of this build, sorted
};

struct LoadOptions {
  bool strict = false;
  std::set<std::string> only_builds;  // empty: every build
  int threads = 0;                    // 0: hardware concurrency
};

struct LoadedResults {
  std::vector<BuildResults> builds;  // oldest first: by started_at, then id
  std::vector<Problem> problems;     // tree-level problems (unsafe directory names, ...)
  size_t ProblemCount() const;
};

class StrictError : public std::runtime_error {
 public:
  explicit StrictError(std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }
 private:
  std::vector<Problem> problems_;
};

// Build ids found under `root` (safe ids only), unordered.
std::vector<std::string> ListBuildIds(const std::filesystem::path& root, std::vector<Problem>* problems);

// What LoadResults reads of one build, listed in one place: its platform
// directories (names not starting with '.'; unsafe names go to `problems`)
// and each platform's runs/*.json (sorted).
std::vector<std::string> ListPlatformIds(const std::filesystem::path& root, const std::string& build_id,
                                         std::vector<Problem>* problems);
std::vector<std::filesystem::path> ListRunFiles(const std::filesystem::path& platform_dir);

// A fingerprint of everything LoadResults reads for `build_id`: the entry
// names under the build directory and the name, size, inode and mtime of
// each manifest and run file. It changes whenever a file the loader reads is
// added, removed, rewritten or replaced; reading no file contents, it costs
// a directory listing and one stat per file.
std::string InputFingerprint(const std::filesystem::path& root, const std::string& build_id);

// Loads the tree. With options.strict, throws StrictError listing every
// problem; otherwise problems are recorded and the bad files skipped.
// Throws std::runtime_error only when `root` is not a readable directory.
LoadedResults LoadResults(const std::filesystem::path& root, const LoadOptions& options);

// Orders builds oldest first by (started_at, id).
bool BuildBefore(const std::string& started_a, const std::string& id_a, const std::string& started_b,
                 const std::string& id_b);

// Loads one run result file with every check; throws core::FileError.
core::RunResult LoadRunFile(const std::filesystem::path& file, const std::string& build_id,
                            const std::string& platform_id);

}  // namespace torchgauge::reporter
