// Stage 1 of the pipeline: load and validate a results tree
// (results/<build-id>/<platform-id>/{manifest.json, runs/*.json}).
// The reading and every check are core's (core/contract/results_tree.h: the one
// reader, shared with compare, bisect and coverage); this adds the site's
// view: every build at once, the run files parsed in parallel, problems
// gathered per build, and --strict. A bad file becomes a Problem naming file
// and field; it is skipped (the build page reports it missing) or, with
// strict, fails the load.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/contract/manifest.h"
#include "core/contract/result.h"
#include "core/contract/results_tree.h"

namespace torchgauge::reporter {

using Problem = core::Problem;

// The typed manifest and its parser live in core (the collector writes it).
using Manifest = core::Manifest;
using core::ManifestFromJson;

// One platform: manifest, runs (sorted), one problem per refused file.
using PlatformResults = core::LoadedPlatform;

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
  std::vector<BuildResults> builds;  // oldest first: core's one build order
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

// The listing, the build order and the run file checks are core's.
using core::BuildBefore;
using core::ListBuildIds;
using core::ListPlatformIds;
using core::ListRunFiles;
using core::LoadRunFile;

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
// The same on a tree already scanned (manifests parsed once): loads the
// scan's builds (those in options.only_builds when it is not empty) and
// reports the scan's tree-level problems.
LoadedResults LoadResults(const core::TreeScan& scan, const LoadOptions& options);

}  // namespace torchgauge::reporter
