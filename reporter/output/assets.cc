#include "reporter/output/assets.h"

#include <cstdlib>
#include <system_error>

namespace fs = std::filesystem;

namespace torchgauge::reporter {

namespace {
fs::path ExeDir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}
// The installed copy beside the executable's prefix when there is one, so an
// installed reporter never reads a source tree that may have moved on.
fs::path Installed(const char* sub, const char* source_default) {
  fs::path inst = ExeDir() / ".." / "share" / "torchgauge" / sub;
  std::error_code ec;
  if (fs::exists(inst, ec)) return inst.lexically_normal();
  return source_default;
}
}  // namespace

std::string DefaultPython() {
  if (const char* e = std::getenv("TORCHGAUGE_PYTHON"); e && *e) return e;
  std::string baked = TORCHGAUGE_REPORTER_PYTHON;
  return baked.empty() ? "python3" : baked;
}
fs::path DefaultTemplatesDir() {
  if (const char* e = std::getenv("TORCHGAUGE_TEMPLATES"); e && *e) return e;
  return Installed("templates", TORCHGAUGE_REPORTER_TEMPLATES);
}
fs::path DefaultStaticDir() { return Installed("site", TORCHGAUGE_REPORTER_STATIC); }
fs::path DefaultHelper() { return Installed("vl_render.py", TORCHGAUGE_REPORTER_HELPER); }
fs::path DefaultPaperHelper() { return Installed("paper_render.py", TORCHGAUGE_REPORTER_PAPER_HELPER); }

}  // namespace torchgauge::reporter
