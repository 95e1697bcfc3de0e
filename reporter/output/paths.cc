#include "reporter/output/paths.h"

#include <stdexcept>

#include "core/contract/layout.h"

namespace torchgauge::reporter {

namespace {
std::string Ext(const Target& t, const char* fallback) {
  const std::string& e = t.ext.empty() ? std::string(fallback) : t.ext;
  if (e != "html" && e != "md" && e != "json" && e != "vl.json" && e != "svg" && e != "csv" && e != "tex" &&
      e != "atom") {
    throw std::invalid_argument("unknown output extension '" + e + "'");
  }
  return "." + e;
}
std::string Build(const Target& t) {
  core::CheckSafeId(t.build, "build id");
  return "builds/" + t.build + "/";
}
// A long name's characters past the first 128, as an id to check: "x" takes
// the first place, where an id may not have a separator but the tail may.
std::string Tail(const std::string& name) {
  std::string tail = "x";
  tail += name.substr(128);
  return tail;
}
// Figure and table names combine ids (e.g. "fig1-train.<platform>"), so they
// may be longer than one id; the character set is the same.
std::string Name(const Target& t, const char* what) {
  if (t.name.size() <= 128) {
    core::CheckSafeId(t.name, what);
  } else if (t.name.size() > 255 || !core::IsSafeId(t.name.substr(0, 128)) || !core::IsSafeId(Tail(t.name))) {
    throw std::invalid_argument(std::string(what) + " '" + t.name + "' is not safe");
  }
  return t.name;
}
}  // namespace

std::string SitePath(const Target& t) {
  switch (t.kind) {
    case Kind::kIndexPage:
      return "index" + Ext(t, "html");
    case Kind::kRegressionsPage:
      return "regressions" + Ext(t, "html");
    case Kind::kModelGridPage:
      return "models" + Ext(t, "html");
    case Kind::kCompareBuildsPage:
      if (!t.ext.empty() && t.ext != "html")
        throw std::invalid_argument("the compare page is HTML only, not '" + t.ext + "'");
      return "compare.html";
    // A figure's spec is inlined in its HTML page; the spec file is the SVG's
    // input and change detection, kept in the cache beside the site.
    case Kind::kIndexFigure:
      return (Ext(t, "vl.json") == ".vl.json" ? ".torchgauge/specs/figures/" : "figures/") + Name(t, "figure name") +
             Ext(t, "vl.json");
    case Kind::kBuildPage:
      return Build(t) + "index" + Ext(t, "html");
    case Kind::kBuildSummary:
      return Build(t) + "summary.md";
    case Kind::kComparePage:
      return Build(t) + "compare" + Ext(t, "html");
    case Kind::kTable1Page:
      return Build(t) + "table1" + Ext(t, "html");
    case Kind::kModelPage:
      // One HTML page per model across builds; the build, if any, is the
      // URL's fragment (ModelFragment), not part of the path.
      if (!t.build.empty()) core::CheckSafeId(t.build, "build id");
      if (!t.ext.empty() && t.ext != "html")
        throw std::invalid_argument("model pages are HTML only, not '" + t.ext + "'");
      return "models/" + Name(t, "model id") + ".html";
    case Kind::kHistory:
      return "history/" + Name(t, "history name") + ".js";
    case Kind::kBuildData:
      return Build(t) + "data/" + Name(t, "data name") + ".js";
    case Kind::kFigure:
      return (Ext(t, "vl.json") == ".vl.json" ? ".torchgauge/specs/" + Build(t) : Build(t)) + "figures/" +
             Name(t, "figure name") + Ext(t, "vl.json");
    case Kind::kTable:
      return Build(t) + "tables/" + Name(t, "table name") + Ext(t, "csv");
    case Kind::kData:
      return Build(t) + "data/" + Name(t, "data name") + ".json";
    case Kind::kAsset:
      return "assets/" + Name(t, "asset name");
    case Kind::kFingerprint:
      core::CheckSafeId(t.build, "build id");
      return ".torchgauge/" + t.build + ".fingerprint";
    case Kind::kPaperKit:
      return Build(t) + "paper-kit-" + t.build + ".zip";
    case Kind::kBuildDir:
      return Build(t).substr(0, Build(t).size() - 1);
    case Kind::kAlertPage:
      return "alerts/" + Name(t, "alert id") + Ext(t, "html");
    case Kind::kAlertsData:
      return "alerts.json";
    case Kind::kTriageApplied:
      return ".torchgauge/triage.json";
    case Kind::kPrunedRecord:
      core::CheckSafeId(t.build, "build id");
      return ".torchgauge/pruned/" + t.build + ".json";
  }
  throw std::invalid_argument("unknown target kind");
}

namespace {
// "#build=<id>" for a model page of one build (Kind::kModelPage), else "".
std::string Fragment(const Target& to) {
  return to.kind == Kind::kModelPage && !to.build.empty() ? "#build=" + to.build : "";
}
}  // namespace

std::string Href(const Target& from, const Target& to) {
  const std::string a = SitePath(from), b = SitePath(to) + Fragment(to);
  // Strip the common directory prefix, then climb out of what is left of `from`.
  size_t common = 0;
  for (size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) {
    if (a[i] == '/') common = i + 1;
  }
  std::string up;
  for (size_t i = common; i < a.size(); ++i) {
    if (a[i] == '/') up += "../";
  }
  return up + b.substr(common);
}

namespace {
// Safe ids that no path part contains, standing for the ids a page's script fills in.
const std::string kBuildMark = "tg0pattern0id";
const std::string kModelMark = "tg0pattern1id";
std::string FillMarks(std::string url) {
  for (const auto& [mark, field] : {std::pair{kBuildMark, "{build}"}, std::pair{kModelMark, "{model}"}}) {
    for (size_t at; (at = url.find(mark)) != std::string::npos;) url.replace(at, mark.size(), field);
  }
  return url;
}
}  // namespace

std::string HrefPattern(const Target& from, Target to, const std::string& field) {
  if (field == "build") {
    to.build = kBuildMark;
  } else if (field == "model") {
    to.name = kModelMark;
  } else {
    throw std::invalid_argument("unknown pattern field '" + field + "'");
  }
  return FillMarks(Href(from, to));
}

std::string RootHref(const Target& from) {
  const std::string path = SitePath(from);
  std::string up;
  for (char c : path) {
    if (c == '/') up += up.empty() ? ".." : "/..";
  }
  return up.empty() ? "." : up;
}

std::string SiteUrl(const std::string& base, const Target& to) {
  if (base.empty()) return "";
  std::string root = base;
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root + "/" + SitePath(to) + Fragment(to);
}

std::string SiteUrlPattern(const std::string& base, Target to) {
  to.build = kBuildMark;
  to.name = kModelMark;
  return FillMarks(SiteUrl(base, to));
}

}  // namespace torchgauge::reporter
