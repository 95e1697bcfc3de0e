#include "core/contract/results_tree.h"

#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/io/json_io.h"

namespace torchgauge::core {

namespace fs = std::filesystem;

std::string Problem::ToString() const {
  std::string out = file;
  if (!field.empty()) out += ": field '" + field + "'";
  return out + ": " + message;
}

bool Problem::operator<(const Problem& o) const {
  return std::tie(file, field, message) < std::tie(o.file, o.field, o.message);
}

Problem ToProblem(const FileError& e) {
  // FileError's what() is "file: field 'x': message"; keep the parts apart.
  std::string msg = e.what();
  std::string prefix = e.file().string();
  if (!e.field().empty()) prefix += ": field '" + e.field() + "'";
  prefix += ": ";
  if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
  return {e.file().string(), e.field(), msg};
}

const TreePlatform* TreeBuild::Find(const std::string& platform_id) const {
  for (const auto& p : platforms) {
    if (p.id == platform_id) return &p;
  }
  return nullptr;
}

bool BuildBefore(const std::string& started_a, const std::string& id_a, const std::string& started_b,
                 const std::string& id_b) {
  return std::tie(started_a, id_a) < std::tie(started_b, id_b);
}

namespace {

// Safe directory names under `dir`, sorted; unsafe ones become problems.
std::vector<std::string> ListIds(const fs::path& dir, const char* what, std::vector<Problem>* problems) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || name.starts_with(".")) continue;
    if (!IsSafeId(name)) {
      if (problems)
        problems->push_back(
            {it->path().string(), "", std::string("directory name is not a safe ") + what + "; skipped"});
      continue;
    }
    ids.push_back(name);
  }
  if (ec && problems) problems->push_back({dir.string(), "", "cannot list: " + ec.message()});
  std::sort(ids.begin(), ids.end());
  return ids;
}

TreePlatform ScanPlatform(const fs::path& root, const std::string& build_id, const std::string& platform_id) {
  TreePlatform p;
  p.id = platform_id;
  p.dir = PlatformDir(root, build_id, platform_id);
  const fs::path mpath = ManifestPath(p.dir);
  std::error_code ec;
  p.has_manifest_file = fs::exists(mpath, ec);
  try {
    Manifest m = ManifestFromJson(ReadJsonFile(mpath, JsonKind::kManifest), mpath);
    if (m.build_id != build_id) {
      throw FileError(mpath, "build_id", "'" + m.build_id + "' does not match its directory '" + build_id + "'");
    }
    if (m.platform_id != platform_id) {
      throw FileError(mpath, "platform_id",
                      "'" + m.platform_id + "' does not match its directory '" + platform_id + "'");
    }
    p.manifest = std::move(m);
  } catch (const FileError& e) {
    p.manifest_problem = ToProblem(e);
  } catch (const std::exception& e) {
    p.manifest_problem = Problem{mpath.string(), "", e.what()};
  }
  return p;
}

}  // namespace

std::vector<std::string> ListBuildIds(const fs::path& root, std::vector<Problem>* problems) {
  return ListIds(root, "build id", problems);
}

std::vector<std::string> ListPlatformIds(const fs::path& root, const std::string& build_id,
                                         std::vector<Problem>* problems) {
  CheckSafeId(build_id, "build id");
  return ListIds(root / build_id, "platform id", problems);
}

TreeBuild ScanBuild(const fs::path& root, const std::string& build_id) {
  TreeBuild b;
  b.id = build_id;
  for (const auto& pid : ListPlatformIds(root, build_id, &b.problems)) {
    TreePlatform p = ScanPlatform(root, build_id, pid);
    if (p.manifest && (b.started_at.empty() || p.manifest->started_at < b.started_at)) {
      b.started_at = p.manifest->started_at;
    }
    b.platforms.push_back(std::move(p));
  }
  std::sort(b.problems.begin(), b.problems.end());
  return b;
}

TreeScan ScanTree(const fs::path& root, const std::set<std::string>& only_builds) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw FileError(root, "", "not a results directory");
  TreeScan scan;
  for (const auto& id : ListBuildIds(root, &scan.problems)) {
    if (!only_builds.empty() && !only_builds.count(id)) continue;
    scan.builds.push_back(ScanBuild(root, id));
  }
  std::sort(scan.builds.begin(), scan.builds.end(),
            [](const TreeBuild& a, const TreeBuild& b) { return BuildBefore(a.started_at, a.id, b.started_at, b.id); });
  std::sort(scan.problems.begin(), scan.problems.end());
  return scan;
}

std::vector<fs::path> ListRunFiles(const fs::path& platform_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(RunsDir(platform_dir), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && !it->path().filename().string().starts_with(".")) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

RunResult LoadRunFile(const fs::path& file, const std::string& build_id, const std::string& platform_id) {
  const nlohmann::json j = ReadJsonFile(file, JsonKind::kRunResult);
  RunResult r;
  try {
    r = RunResultFromJson(j, file);
  } catch (const FileError&) {
    throw;
  } catch (const std::exception& e) {
    throw FileError(file, "", std::string("does not match the run result schema: ") + e.what());
  }
  if (r.build_id != build_id) {
    throw FileError(file, "build_id", "'" + r.build_id + "' does not match its directory '" + build_id + "'");
  }
  if (r.platform_id != platform_id) {
    throw FileError(file, "platform_id", "'" + r.platform_id + "' does not match its directory '" + platform_id + "'");
  }
  const RunKey key{r.model.id, r.mode, r.backend, r.precision};
  if (file.filename().string() != key.FileStem() + ".json") {
    throw FileError(file, "", "file name does not match its run key (expected " + key.FileStem() + ".json)");
  }
  return r;
}

void SortRuns(std::vector<RunResult>& runs) {
  std::sort(runs.begin(), runs.end(), [](const RunResult& x, const RunResult& y) {
    return std::tie(x.model.id, x.mode, x.backend, x.precision, x.batch_size) <
           std::tie(y.model.id, y.mode, y.backend, y.precision, y.batch_size);
  });
}

LoadedPlatform BeginPlatform(const TreeBuild& build, const TreePlatform& platform) {
  LoadedPlatform out;
  out.dir = platform.dir;
  if (platform.manifest) {
    out.manifest = *platform.manifest;
  } else {
    out.manifest.build_id = build.id;
    out.manifest.platform_id = platform.id;
  }
  if (platform.manifest_problem) out.problems.push_back(*platform.manifest_problem);
  return out;
}

RunFileOutcome LoadRunFileOutcome(const fs::path& file, const std::string& build_id, const std::string& platform_id) {
  RunFileOutcome out;
  try {
    out.run = LoadRunFile(file, build_id, platform_id);
  } catch (const FileError& e) {
    out.problem = ToProblem(e);
  } catch (const std::exception& e) {
    out.problem = Problem{file.string(), "", e.what()};
  }
  return out;
}

void FinishPlatform(LoadedPlatform& platform) {
  SortRuns(platform.runs);
  std::sort(platform.problems.begin(), platform.problems.end());
}

LoadedPlatform LoadPlatform(const TreeBuild& build, const TreePlatform& platform) {
  LoadedPlatform out = BeginPlatform(build, platform);
  for (const auto& f : ListRunFiles(platform.dir)) {
    RunFileOutcome o = LoadRunFileOutcome(f, build.id, platform.id);
    if (o.run) out.runs.push_back(std::move(*o.run));
    if (o.problem) out.problems.push_back(std::move(*o.problem));
  }
  FinishPlatform(out);
  return out;
}

namespace {
bool LooksLikePlatform(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(ManifestPath(dir), ec) || fs::is_directory(RunsDir(dir), ec);
}
}  // namespace

std::vector<RunResult> LoadRunsIn(const fs::path& dir, std::vector<Problem>* problems) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw FileError(dir, "", "no such directory");
  fs::path norm = fs::absolute(dir).lexically_normal();
  if (norm.filename().empty()) norm = norm.parent_path();
  std::vector<Problem> found;
  std::vector<TreeBuild> builds;
  bool build_level = false;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (e.is_directory(type_ec) && LooksLikePlatform(e.path())) build_level = true;
  }
  const std::string name = norm.filename().string();
  if (LooksLikePlatform(dir)) {
    const std::string build_id = norm.parent_path().filename().string();
    if (!IsSafeId(build_id) || !IsSafeId(name)) {
      throw FileError(dir, "", "a platform directory must sit at <results>/<build-id>/<platform-id> with safe ids");
    }
    TreeBuild b;
    b.id = build_id;
    b.platforms.push_back(ScanPlatform(norm.parent_path().parent_path(), build_id, name));
    builds.push_back(std::move(b));
  } else if (build_level) {
    if (!IsSafeId(name)) throw FileError(dir, "", "a build directory name must be a safe id");
    builds.push_back(ScanBuild(norm.parent_path(), name));
  } else {
    TreeScan scan = ScanTree(dir);
    found = std::move(scan.problems);
    builds = std::move(scan.builds);
  }
  std::vector<RunResult> out;
  for (const auto& b : builds) {
    found.insert(found.end(), b.problems.begin(), b.problems.end());
    for (const auto& p : b.platforms) {
      LoadedPlatform lp = LoadPlatform(b, p);
      std::move(lp.runs.begin(), lp.runs.end(), std::back_inserter(out));
      found.insert(found.end(), lp.problems.begin(), lp.problems.end());
    }
  }
  if (problems) problems->insert(problems->end(), found.begin(), found.end());
  return out;
}

}  // namespace torchgauge::core
