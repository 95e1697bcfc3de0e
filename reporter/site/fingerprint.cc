#include "reporter/site/fingerprint.h"

#include <algorithm>
#include <fstream>

#include "core/contract/version.h"
#include "core/io/hash.h"
#include "core/io/json_io.h"
#include "reporter/output/parallel.h"
#include "reporter/output/paths.h"
#include "reporter/output/vega_lite.h"
#include "reporter/site/history.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

namespace {
// Templates and static files by name and content, in name order.
void AddDirectory(core::Fingerprint& f, const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) f.Add(file.filename().string()).AddFile(file);
}
}  // namespace

std::string RenderFingerprint(const SiteOptions& o, bool svg_ok) {
  core::Fingerprint f;
  try {
    f.AddFile("/proc/self/exe");
  } catch (const std::exception&) {
    f.Add(std::string(core::Version())).Add(std::string(core::GitSha()));
  }
  for (const fs::path& dir : {o.templates, o.static_dir}) AddDirectory(f, dir);
  // strict too: a build rendered leniently may hold problems a strict
  // render must fail on.
  f.Add(o.site_url).Add(int64_t{svg_ok}).Add(int64_t{o.trend_builds}).Add(int64_t{o.compare}).Add(int64_t{o.strict});
  f.Add(int64_t{o.paper_kit});
  const core::CompareOptions& c = o.compare_options;
  f.Add(c.threshold_percent).Add(c.alpha).Add(int64_t{c.window}).Add(int64_t{c.persist}).Add(c.memory_min_abs_bytes);
  for (const auto& r : c.rules) f.Add(r.metric).Add(r.model_regex).Add(r.percent);
  f.Add(std::string(kVegaLiteVersion));
  if (o.reference_platform) f.Add(*o.reference_platform);
  return f.Hex();
}

ChangeDetector::ChangeDetector(const SiteOptions& o, const std::vector<BuildRef>& refs, bool svg_ok)
    : o_(o), refs_(refs), render_(RenderFingerprint(o, svg_ok)), inputs_(refs.size()) {}

const std::string& ChangeDetector::Input(size_t j) {
  if (inputs_[j].empty()) inputs_[j] = InputFingerprint(o_.results, refs_[j].id);
  return inputs_[j];
}

void ChangeDetector::HashAllInputs() {
  ParallelFor(refs_.size(), ThreadCount(o_.threads, refs_.size()), [&](size_t j, int) { Input(j); });
}

std::string ChangeDetector::Fingerprint(size_t i) {
  core::Fingerprint f;
  f.Add(render_).Add(refs_[i].id).Add(refs_[i].started_at).Add(Input(i));
  for (size_t j : Dependencies(refs_, i, o_.trend_builds, o_.compare, o_.compare_options)) {
    f.Add(refs_[j].id).Add(Input(j));
  }
  return f.Hex();
}

fs::path ChangeDetector::PathOf(const std::string& id) const {
  return o_.out / SitePath({Kind::kFingerprint, id, "", ""});
}

bool ChangeDetector::Unchanged(const std::string& id, const std::string& fp) const {
  std::ifstream in(PathOf(id));
  std::string line;
  std::getline(in, line);
  return line == fp;
}

void ChangeDetector::Forget(const std::string& id) const {
  std::error_code ec;
  fs::remove(PathOf(id), ec);
}

void ChangeDetector::Store(const std::string& id, const std::string& fp) const {
  core::WriteFileAtomic(PathOf(id), fp + "\n");
}

}  // namespace torchgauge::reporter
