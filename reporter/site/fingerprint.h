// Change detection for full renders. A build's fingerprint covers its
// results, those of the builds its pages read (Dependencies), and the render
// itself (the reporter's executable, templates, static files and every
// option that changes output; not the retention policy, since a kept build's
// pages never link another build's snapshot). A full render skips a build whose stored
// fingerprint matches; a build's fingerprint is removed before the build is
// rendered and stored only once all its files, SVG included, are done, so an
// interrupted render is redone next time. The fingerprints live in
// .torchgauge/ beside the site: a cache, not published content.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "reporter/results/build_refs.h"
#include "reporter/site/options.h"

namespace torchgauge::reporter {

// Everything besides the results that decides a rendered build's bytes. With
// `svg_ok` false no SVG was made, so a later render that can make them does
// not count the build as unchanged.
std::string RenderFingerprint(const SiteOptions& o, bool svg_ok);

class ChangeDetector {
 public:
  ChangeDetector(const SiteOptions& o, const std::vector<BuildRef>& refs, bool svg_ok);
  // Hashes every build's inputs up front, on o.threads threads; a full
  // render reads them all anyway.
  void HashAllInputs();
  // Build refs[i]'s fingerprint for this render.
  std::string Fingerprint(size_t i);
  // Whether build `id` was last rendered with fingerprint `fp`.
  bool Unchanged(const std::string& id, const std::string& fp) const;
  void Forget(const std::string& id) const;
  void Store(const std::string& id, const std::string& fp) const;

 private:
  const std::string& Input(size_t j);
  std::filesystem::path PathOf(const std::string& id) const;

  const SiteOptions& o_;
  const std::vector<BuildRef>& refs_;
  std::string render_;
  std::vector<std::string> inputs_;  // per build, hashed on first use
};

}  // namespace torchgauge::reporter
