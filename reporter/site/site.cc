// The site driver: scans the builds, streams them oldest first through load,
// aggregate, compare and the page writer, skips the unchanged ones, then
// writes the index, the static assets and the SVGs. Each job has its own
// unit: results/build_refs (which builds), history (the comparison window),
// fingerprint (change detection), page_writer (the pages), pages/figures
// and output/vl_convert (charts), output/writer (files).
#include "reporter/site/site.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"
#include "reporter/output/parallel.h"
#include "reporter/output/paths.h"
#include "reporter/output/render.h"
#include "reporter/output/vega_lite.h"
#include "reporter/output/vl_convert.h"
#include "reporter/output/writer.h"
#include "reporter/pages/figures.h"
#include "reporter/results/aggregate.h"
#include "reporter/results/build_refs.h"
#include "reporter/results/paper_data.h"
#include "reporter/alerts/regressions.h"
#include "reporter/site/fingerprint.h"
#include "reporter/site/history.h"
#include "reporter/site/page_writer.h"
#include "reporter/site/paper_kit_zip.h"
#include "reporter/site/retention.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

// ---------------------------------------------------------------- driver

namespace {

// Compact: the summaries are read back on every render (a year of them is
// tens of megabytes), and only scripts read them.
std::string DumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

// Where the Vega bundle of kVegaLiteVersion is kept between sites: it takes
// vl-convert seconds to make. Empty when there is no cache directory.
fs::path CachedBundle() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir = xdg && *xdg     ? fs::path(xdg) / "torchgauge"
                 : home && *home ? fs::path(home) / ".cache" / "torchgauge"
                                 : fs::path();
  return dir.empty() ? fs::path() : dir / (std::string("vega-bundle-") + kVegaLiteVersion + ".js");
}

// One BuildSite call.
class SiteRender {
 public:
  explicit SiteRender(const SiteOptions& o)
      : o_(o),
        paper_(PaperTable2FromJson(json::parse(kPaperTable2Json))),
        templates_(Templates::Load(o.templates)),
        writer_(o.out),
        figures_(writer_),
        pages_(o, writer_, templates_, figures_, paper_),
        scan_(core::ScanTree(o.results)),
        refs_(BuildRefs(scan_)),
        recent_(scan_, o.compare_options, o.threads, refs_),
        vl_(o.python, o.helper) {}

  SiteReport Run();

 private:
  void CheckSelection() const;
  void CheckReference() const;
  std::optional<BuildSummary> CachedSummary(size_t i);
  std::optional<BuildChanges> CachedChanges(size_t i);
  void PrefetchCached();
  std::optional<BuildSummary> ReadCachedSummary(const BuildRef& ref) const;
  std::optional<BuildChanges> ReadCachedChanges(const BuildRef& ref) const;
  BuildSummary Summary(size_t i, const BuildResults& b, const BuildView& view, RecentRuns& recent,
                       std::optional<core::Comparison>* cmp);
  bool AddPublished(size_t i);
  void AddFromResults(size_t i);
  void CheckPrunedSelection() const;
  void AddPruned(size_t i, ChangeDetector& changes, bool full);
  void DeletePrunedSnapshots();
  // A render thread's own comparison window and page writer.
  struct Worker {
    RecentRuns& recent;
    PageWriter& pages;
    int load_threads;
  };
  // What rendering one build reports, merged in build order.
  struct Rendered {
    std::vector<Problem> problems;
    std::vector<std::string> skipped;
    std::string fp;
    bool rendered = false;
  };
  struct Queued {
    size_t index, slot;
    std::string fp;
  };
  void Render(size_t i, size_t slot, const std::string& fp, Worker& w, Rendered& out);
  void RenderQueued();
  void RemoveRetired(const std::string& build);
  bool WritePaperKitZip(const BuildView& v, std::vector<std::string>* skipped);
  void WriteAssets();
  void WriteBundle();
  bool RenderSvgs();

  const SiteOptions& o_;
  const PaperTable2 paper_;
  const Templates templates_;
  SiteWriter writer_;
  Figures figures_;
  PageWriter pages_;
  const core::TreeScan scan_;  // the tree listed and its manifests parsed once per render
  const std::vector<BuildRef> refs_;
  RecentRuns recent_;
  VlConvert vl_;
  bool vl_ok_ = false;
  SiteReport report_;
  std::vector<BuildSummary> history_;                              // every build's summary so far, oldest first
  std::vector<BuildChanges> changes_;                              // every build's flagged changes so far, oldest first
  std::vector<std::pair<std::string, std::string>> rendered_fps_;  // build id, fingerprint
  size_t pruned_ = 0;                                              // the retention policy prunes refs_[0, pruned_)
  std::vector<Queued> queue_;                                      // builds to render, in order (RenderQueued)
  bool prefetched_ = false;
  std::vector<std::optional<BuildSummary>> prefetched_summaries_;  // PrefetchCached, taken once each
  std::vector<std::optional<BuildChanges>> prefetched_changes_;
};

void SiteRender::CheckSelection() const {
  for (const auto& b : o_.builds) {
    if (!core::IsSafeId(b)) throw std::runtime_error("--build '" + b + "' is not a safe build id");
    if (std::none_of(refs_.begin(), refs_.end(), [&](const BuildRef& r) { return r.id == b; })) {
      throw std::runtime_error("--build '" + b + "': no such build under " + o_.results.string());
    }
  }
}

// --reference-platform must name a platform of some build rendered.
void SiteRender::CheckReference() const {
  if (!o_.reference_platform) return;
  std::set<std::string> ids;
  for (const auto& r : refs_) {
    if (o_.builds.empty() || o_.builds.count(r.id)) ids.insert(r.platforms.begin(), r.platforms.end());
  }
  RequirePlatform("--reference-platform", *o_.reference_platform, ids,
                  o_.builds.empty() ? o_.results.string() : "the builds selected");
}

// The cached summaries and changes of every build that may reuse them, read
// on all cores before the builds stream by (a year of summaries is tens of
// megabytes of JSON). Pruned builds have their records instead.
void SiteRender::PrefetchCached() {
  prefetched_summaries_.assign(refs_.size(), std::nullopt);
  prefetched_changes_.assign(refs_.size(), std::nullopt);
  if (o_.force) return;
  ParallelFor(refs_.size(), ThreadCount(o_.threads, refs_.size()), [&](size_t i, int) {
    if (i < pruned_) return;
    prefetched_summaries_[i] = ReadCachedSummary(refs_[i]);
    prefetched_changes_[i] = ReadCachedChanges(refs_[i]);
  });
  prefetched_ = true;
}

std::optional<BuildSummary> SiteRender::CachedSummary(size_t i) {
  if (prefetched_ && i >= pruned_) return std::exchange(prefetched_summaries_[i], std::nullopt);
  return ReadCachedSummary(refs_[i]);
}

std::optional<BuildChanges> SiteRender::CachedChanges(size_t i) {
  if (prefetched_ && i >= pruned_) return std::exchange(prefetched_changes_[i], std::nullopt);
  return ReadCachedChanges(refs_[i]);
}

// The summary cached when the build was last rendered, if it is still its own.
std::optional<BuildSummary> SiteRender::ReadCachedSummary(const BuildRef& ref) const {
  try {
    BuildSummary s = BuildSummaryFromJson(core::ReadJsonFile(o_.out / SitePath({Kind::kData, ref.id, "summary", ""})));
    if (s.id == ref.id && s.started_at == ref.started_at) return s;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// What the build's comparison flagged, as cached when it was last rendered.
std::optional<BuildChanges> SiteRender::ReadCachedChanges(const BuildRef& ref) const {
  try {
    BuildChanges c =
        BuildChangesFromJson(core::ReadJsonFile(o_.out / SitePath({Kind::kData, ref.id, "regressions", ""})));
    if (c.build == ref.id && c.started_at == ref.started_at) return c;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The build's summary, with what its comparison with earlier builds flagged.
BuildSummary SiteRender::Summary(size_t i, const BuildResults& b, const BuildView& view, RecentRuns& recent,
                                 std::optional<core::Comparison>* cmp) {
  BuildSummary s = Summarize(view);
  if (o_.compare) {
    recent.Add(i, b);
    *cmp = recent.Compare(i);
    if (*cmp) s.flagged = Flagged(**cmp);
  }
  return s;
}

// A build not selected for rendering: its cached summary for the index and
// the trends, else its summary from the results (then true). Its files are
// left alone.
bool SiteRender::AddPublished(size_t i) {
  auto s = CachedSummary(i);
  auto c = CachedChanges(i);
  if (s && c) {
    history_.push_back(std::move(*s));
    changes_.push_back(std::move(*c));
    return false;
  }
  AddFromResults(i);
  return true;
}

// A build's summary and changes from its results, as when it is rendered.
void SiteRender::AddFromResults(size_t i) {
  LoadOptions quiet;
  quiet.threads = o_.threads;
  quiet.only_builds = {refs_[i].id};
  for (const auto& b : LoadResults(scan_, quiet).builds) {
    std::optional<core::Comparison> cmp;
    history_.push_back(Summary(i, b, AggregateBuild(b, paper_, o_.reference_platform), recent_, &cmp));
    changes_.push_back(CollectChanges(b, refs_[i].started_at, cmp ? &*cmp : nullptr));
  }
}

// --build cannot render a build the retention policy prunes.
void SiteRender::CheckPrunedSelection() const {
  for (size_t i = 0; i < pruned_; ++i) {
    if (!o_.builds.count(refs_[i].id)) continue;
    throw std::runtime_error("--build '" + refs_[i].id + "': pruned by the retention policy " + RetentionPolicy(o_) +
                             ", which keeps the pages of builds " + refs_[pruned_].id + " to " + refs_.back().id +
                             " only; relax the policy to render it");
  }
}

// A build the retention policy prunes: its summary and changes from its
// record beside the site (made under the same fingerprint on a full render),
// else from its cached files (when they are current), else from its results;
// then the record is kept; its snapshot is deleted once no page links it
// (DeletePrunedSnapshots).
void SiteRender::AddPruned(size_t i, ChangeDetector& changes, bool full) {
  const BuildRef& ref = refs_[i];
  const PrunedStore store(o_.out);
  // A --build render trusts any record, as it trusts the cached summaries of
  // the builds it does not render; hashing old results would cost it more.
  const std::string fp = full || o_.force ? changes.Fingerprint(i) : "";
  std::optional<std::pair<BuildSummary, BuildChanges>> record;
  if (!o_.force) record = store.Load(ref, fp);
  if (record) {
    history_.push_back(std::move(record->first));
    changes_.push_back(std::move(record->second));
  } else {
    const size_t before = history_.size();
    const bool cache_current = !o_.force && (!full || changes.Unchanged(ref.id, fp));
    bool reloaded = true;
    if (cache_current) {
      reloaded = AddPublished(i);
    } else {
      AddFromResults(i);
    }
    if (reloaded) report_.pruned_reloaded++;
    if (history_.size() > before) store.Save(history_.back(), changes_.back(), fp);
  }
  report_.builds_pruned++;
}

// The pruned builds' snapshots go after the pages over the history stopped
// linking them, so an interrupted render leaves no link to a deleted page.
void SiteRender::DeletePrunedSnapshots() {
  const PrunedStore store(o_.out);
  for (size_t i = 0; i < pruned_; ++i) {
    if (store.RemoveSnapshot(refs_[i].id)) report_.snapshots_deleted++;
  }
}

// Outputs of the layout before one page per model across builds: the
// build's models/ directory, its index.md, runs.json, per-model charts and
// spec files (now in the cache, .torchgauge/specs/); for "" the site root's
// spec files. Removed
// when the build is rendered again, so a site rendered by an older reporter
// does not keep them (nothing links them any more).
void SiteRender::RemoveRetired(const std::string& build) {
  std::error_code ec;
  const fs::path dir = build.empty() ? o_.out : o_.out / SitePath({Kind::kBuildDir, build, "", ""});
  if (!build.empty()) {
    fs::remove_all(dir / "models", ec);
    fs::remove(dir / "index.md", ec);
    fs::remove(dir / "data" / "runs.json", ec);  // the runs CSV tables hold the same
  }
  for (const auto& e : fs::directory_iterator(dir / "figures", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find(".trend.") != std::string::npos || name.find(".samples.") != std::string::npos ||
        name.ends_with(".vl.json")) {
      fs::remove(e.path(), ec);
    }
  }
}

// Renders build refs_[i] into history_/changes_[slot], with the worker's own
// comparison window and page writer; what it reports goes to `out`.
void SiteRender::Render(size_t i, size_t slot, const std::string& fp, Worker& w, Rendered& out) {
  LoadOptions lo;
  lo.strict = o_.strict;
  lo.threads = w.load_threads;
  lo.only_builds = {refs_[i].id};
  LoadedResults loaded = LoadResults(scan_, lo);
  for (const auto& b : loaded.builds) {
    BuildView view = AggregateBuild(b, paper_, o_.reference_platform);
    std::optional<core::Comparison> cmp;
    BuildSummary summary = Summary(i, b, view, w.recent, &cmp);
    history_[slot] = summary;
    changes_[slot] = CollectChanges(b, refs_[i].started_at, cmp ? &*cmp : nullptr);
    writer_.Write(SitePath({Kind::kData, b.id, "regressions", ""}), DumpJson(ToJson(changes_[slot])));
    RemoveRetired(b.id);
    w.pages.WriteBuild(view, cmp ? &*cmp : nullptr, WritePaperKitZip(view, &out.skipped));
    writer_.Write(SitePath({Kind::kData, b.id, "summary", ""}), DumpJson(ToJson(summary)));
    out.problems.insert(out.problems.end(), b.problems.begin(), b.problems.end());
    out.rendered = true;
  }
  out.fp = fp;
  out.problems.insert(out.problems.end(), loaded.problems.begin(), loaded.problems.end());
}

// Renders the queued builds. Builds are independent but for their
// comparison windows, so the queue is cut into contiguous runs, one per
// worker thread, each with its own comparison window (which loads the few
// builds before its first on demand) and page writer. What each build
// reports is merged in build order, so the site does not depend on the
// thread count.
void SiteRender::RenderQueued() {
  const int workers = ThreadCount(o_.threads, queue_.size());
  std::vector<Rendered> out(queue_.size());
  std::vector<std::thread> threads;
  const size_t per = (queue_.size() + workers - 1) / std::max(workers, 1);
  std::exception_ptr error;
  std::mutex error_mu;
  for (int t = 0; t < workers; ++t) {
    const size_t begin = t * per, end = std::min(queue_.size(), begin + per);
    if (begin >= end) break;
    auto run = [this, begin, end, workers, &out, &error, &error_mu] {
      try {
        RecentRuns recent(scan_, o_.compare_options, workers > 1 ? 1 : o_.threads, refs_);
        PageWriter pages(o_, writer_, templates_, figures_, paper_);
        Worker w{recent, pages, workers > 1 ? 1 : o_.threads};
        for (size_t q = begin; q < end; ++q) Render(queue_[q].index, queue_[q].slot, queue_[q].fp, w, out[q]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
      }
    };
    if (workers == 1) {
      run();
    } else {
      threads.emplace_back(run);
    }
  }
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  // A build whose results could not be read leaves no summary.
  for (size_t q = queue_.size(); q-- > 0;) {
    if (out[q].rendered) continue;
    history_.erase(history_.begin() + static_cast<std::ptrdiff_t>(queue_[q].slot));
    changes_.erase(changes_.begin() + static_cast<std::ptrdiff_t>(queue_[q].slot));
  }
  for (size_t q = 0; q < queue_.size(); ++q) {
    report_.problems.insert(report_.problems.end(), out[q].problems.begin(), out[q].problems.end());
    report_.skipped.insert(report_.skipped.end(), out[q].skipped.begin(), out[q].skipped.end());
    if (!out[q].rendered) continue;
    report_.builds_rendered++;
    rendered_fps_.emplace_back(refs_[queue_[q].index].id, out[q].fp);
  }
  queue_.clear();
}

// builds/<id>/paper-kit-<id>.zip with --paper-kit (removed without it);
// whether the build page may link it.
bool SiteRender::WritePaperKitZip(const BuildView& v, std::vector<std::string>* skipped) {
  const std::string rel = SitePath({Kind::kPaperKit, v.id, "", ""});
  std::error_code ec;
  if (!o_.paper_kit) {
    fs::remove(writer_.Abs(rel), ec);
    return false;
  }
  try {
    const SitePaperKit kit = MakeSitePaperKit(o_, v);
    writer_.Write(rel, kit.zip);
    skipped->insert(skipped->end(), kit.notes.begin(), kit.notes.end());
    return true;
  } catch (const std::exception& e) {
    fs::remove(writer_.Abs(rel), ec);
    skipped->push_back(rel + ": the paper kit could not be made: " + e.what());
    return false;
  }
}

// The Vega bundle the HTML pages embed charts with, once per version: copied
// from the user's cache (made there first when it can be), else made in place.
void SiteRender::WriteBundle() {
  std::error_code ec;
  const fs::path bundle = o_.out / SitePath({Kind::kAsset, "", "vega-bundle.js", ""});
  const std::string version_file = SitePath({Kind::kAsset, "", "vega-bundle.version", ""});
  const std::string want_version = std::string("vega-lite ") + kVegaLiteVersion + "\n";
  if (fs::exists(bundle, ec) && fs::exists(o_.out / version_file, ec) &&
      ReadText(o_.out / version_file) == want_version) {
    return;
  }
  const fs::path cached = CachedBundle();
  std::string err;
  if (!cached.empty() && !fs::exists(cached, ec) && vl_.Available()) {
    fs::create_directories(cached.parent_path(), ec);
    vl_.Run("bundle " + core::ShellQuote(cached.string()) + " " + kVegaLiteVersion, "", &err);
  }
  if (!cached.empty() && fs::exists(cached, ec)) {
    writer_.Write(SitePath({Kind::kAsset, "", "vega-bundle.js", ""}), ReadText(cached));
    writer_.Write(version_file, want_version);
  } else if (vl_ok_ && vl_.Run("bundle " + core::ShellQuote(bundle.string()) + " " + kVegaLiteVersion, "", &err)) {
    writer_.Write(version_file, want_version);
    writer_.CountWritten();
  } else {
    report_.skipped.push_back("assets/vega-bundle.js: vl-convert-python is not available to " + o_.python +
                              " (charts in HTML pages will not render; install vl-convert-python or pass --python)");
  }
}

// Static files: CSS and JS from site/, and the Vega bundle.
void SiteRender::WriteAssets() {
  for (const char* name : {"torchgauge.css", "torchgauge.js", "readers.js", "compare.js"}) {
    writer_.Write(SitePath({Kind::kAsset, "", name, ""}), ReadText(o_.static_dir / name));
  }
  WriteBundle();
}

// Makes the queued SVGs; false when vl-convert failed on some.
bool SiteRender::RenderSvgs() {
  const std::vector<FigureJob> jobs = figures_.jobs();
  if (!o_.svg) {
    report_.skipped.push_back(std::to_string(jobs.size()) + " SVG figures: --no-svg");
    return true;
  }
  if (jobs.empty()) return true;
  if (!vl_ok_) {
    report_.skipped.push_back(std::to_string(jobs.size()) + " SVG figures: vl-convert-python is not available to " +
                              o_.python + " (Markdown pages link to missing images)");
    return true;
  }
  std::string input, err;
  for (const auto& j : jobs) input += j.spec.string() + "\t" + j.svg.string() + "\n";
  report_.svg_rendered = jobs.size();
  if (vl_.Run(std::string("svg ") + kVegaLiteVersion, input, &err)) return true;
  report_.skipped.push_back("some SVG figures failed to render:\n" + err);
  return false;
}

SiteReport SiteRender::Run() {
  fs::create_directories(o_.out);
  CheckSelection();
  CheckReference();
  CheckRetention(o_);
  pruned_ = PrunedCount(refs_, o_);
  CheckPrunedSelection();
  if (o_.compare) o_.compare_options.Validate();
  vl_ok_ = o_.svg && vl_.Available();
  ChangeDetector changes(o_, refs_, vl_ok_);
  const bool full = o_.builds.empty() && !o_.force;  // may skip unchanged builds
  if (full) changes.HashAllInputs();
  PrefetchCached();
  for (size_t i = 0; i < refs_.size(); ++i) {
    const BuildRef& ref = refs_[i];
    if (i < pruned_) {
      AddPruned(i, changes, full);
      continue;
    }
    if (!o_.builds.empty() && !o_.builds.count(ref.id)) {
      AddPublished(i);
      continue;
    }
    const std::string fp = changes.Fingerprint(i);
    if (full && changes.Unchanged(ref.id, fp)) {
      auto s = CachedSummary(i);
      auto c = CachedChanges(i);
      if (s && c) {
        history_.push_back(std::move(*s));
        changes_.push_back(std::move(*c));
        report_.builds_unchanged++;
        continue;
      }
    }
    changes.Forget(ref.id);
    queue_.push_back({i, history_.size(), fp});
    history_.emplace_back();
    changes_.emplace_back();
  }
  RenderQueued();
  const Pruned pruned = DescribePruned(refs_, pruned_, o_);
  pages_.WriteIndex(history_, &pruned);
  pages_.WriteModelPages(history_, &pruned);
  RemoveRetired("");
  report_.triage_problem = pages_.WriteReaderPages(history_, changes_, &pruned);
  DeletePrunedSnapshots();
  report_.index = o_.out / SitePath({Kind::kIndexPage, "", "", "html"});
  WriteAssets();
  // The fingerprints are a cache beside the site, not published files, and
  // are not counted as written.
  if (RenderSvgs()) {
    for (const auto& [id, fp] : rendered_fps_) changes.Store(id, fp);
  }
  const WriteCounts counts = writer_.counts();
  report_.files_written = counts.files_written;
  report_.files_unchanged = counts.files_unchanged;
  report_.bytes = counts.bytes;
  report_.figures = figures_.count();
  return report_;
}

}  // namespace

SiteReport BuildSite(const SiteOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.results, ec)) throw std::runtime_error(o.results.string() + ": not a results directory");
  return SiteRender(o).Run();
}

}  // namespace torchgauge::reporter
