// Every output path and URL of the site, computed in one place (like asv's
// single path function). A Target names one output file; SitePath gives its
// path relative to the site root, and Href the relative URL from one page to
// another, so the site works from any static host or from disk.
//
//   index.{html,md}                        figures/index-*.svg
//   regressions.{html,md,atom}             models.{html,md}
//   alerts/<alert-id>.{html,md}            (one page per alert: pages/alert_page.h)
//   compare.html                           (any two builds: #base=<a>&new=<b>)
//   builds/<build>/index.{html,md}         builds/<build>/summary.md
//   builds/<build>/compare.{html,md}       (comparison with the previous build)
//   builds/<build>/table1.{html,md}        (the paper's Table 1 with our state)
//   models/<model>.html                    (one page per model across builds;
//                                          #build=<build> picks the build)
//   history/<model>.js, history/builds.js  (every build's medians, for trends)
//   builds/<build>/figures/<name>.svg      (Figures 1-5: the Markdown twins embed them)
//   builds/<build>/tables/<name>.{csv,tex}
//   builds/<build>/data/<name>.{json,js}   (.js: data for pages, loaded by
//                                          <script src> so file:// works)
//   builds/<build>/paper-kit-<build>.zip   (only with --paper-kit)
//   assets/<name>
//   .torchgauge/<build>.fingerprint       (change detection; not published content)
//   .torchgauge/specs/{figures,builds/<build>/figures}/<name>.vl.json
//                                          (the SVGs' input; the HTML pages inline the specs)
//   .torchgauge/pruned/<build>.json       (a pruned build's summary; site/retention.h)
#pragma once

#include <string>

namespace torchgauge::reporter {

enum class Kind {
  kIndexPage,          // ext: html | md
  kIndexFigure,        // name, ext: vl.json (under .torchgauge/specs/) | svg
  kRegressionsPage,    // ext: html | md | atom (the regressions history and its feed)
  kModelGridPage,      // ext: html | md (models x platforms)
  kCompareBuildsPage,  // compare.html: any two builds, compared in the browser (compare/browser_page.h)
  kBuildPage,          // build, ext: html | md
  kBuildSummary,       // build (Markdown summary for pasting in issues)
  kComparePage,        // build, ext: html | md (the comparison with the previous build)
  kTable1Page,         // build, ext: html | md (the paper's Table 1 with our state: paper/table1_page.h)
  kModelPage,          // name = model id; build (optional): the URL fragment #build=<build>; ext html or empty
  kHistory,      // name: a model id or "builds" (history/<name>.js, rewritten with every build, append-only in content)
  kBuildData,    // build, name (builds/<build>/data/<name>.js)
  kFigure,       // build, name, ext: vl.json (under .torchgauge/specs/) | svg
  kTable,        // build, name, ext: csv | tex
  kData,         // build, name (ext json)
  kAsset,        // name (with extension)
  kFingerprint,  // build: what the build was last rendered from (site/site.cc)
  kPaperKit,     // build: the paper kit as a zip (site --paper-kit)
  kBuildDir,     // build: the build's snapshot directory, builds/<build> (deleted when pruned)
  kPrunedRecord,   // build: a pruned build's summary and changes (site/retention.h)
  kAlertPage,      // name = alert id, ext: html | md (alerts/<id>.{html,md}: pages/alert_page.h)
  kAlertsData,     // alerts.json: every alert and health alert with its state (alerts/tracking.h)
  kTriageApplied,  // .torchgauge/triage.json: the last triage.json a render read whole (alerts/triage.h)
};

struct Target {
  Kind kind;
  std::string build;  // build id (safe id) where the kind is per build
  std::string name;   // model id, figure/table/data/asset name
  std::string ext;    // without the dot
};

// Path relative to the site root, '/'-separated. Throws std::invalid_argument
// when an id is not safe (core::IsSafeId), so no target can leave the site.
std::string SitePath(const Target& t);
// Relative URL from page `from` to `to`.
std::string Href(const Target& from, const Target& to);
// Href with one id left for a page's script to fill in: `to`'s build id is
// written "{build}" (field "build"), or its name "{model}" (field "model"),
// as in "../builds/{build}/data/models.js".
std::string HrefPattern(const Target& from, Target to, const std::string& field);
// Relative URL from page `from` up to the site root, without a trailing
// slash: "." for a top-level page, "../.." for builds/<build>/compare.html.
std::string RootHref(const Target& from);
// The URL of `to` under a link base: the site's public URL
// ("https://host/site"; trailing slashes are ignored) or a RootHref. ""
// when `base` is empty, so a report without a site has no links.
std::string SiteUrl(const std::string& base, const Target& to);
// SiteUrl with the ids left for a page's script to fill in: `to`'s build id
// is written "{build}" and its name "{model}" ("" when `base` is empty).
std::string SiteUrlPattern(const std::string& base, Target to);

}  // namespace torchgauge::reporter
