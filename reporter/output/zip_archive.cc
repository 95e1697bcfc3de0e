#include "reporter/output/zip_archive.h"

#include <zip.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "reporter/output/writer.h"

namespace torchgauge::reporter {

DosTime DosTimeFromIso(const std::string& iso) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  DosTime t;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6) return t;
  if (y < 1980 || y > 2107 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return t;
  t.date = static_cast<unsigned short>(((y - 1980) << 9) | (mo << 5) | d);
  t.time = static_cast<unsigned short>((h << 11) | (mi << 5) | (s / 2));
  return t;
}

namespace {
struct Discard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
std::string Error(zip_t* z, const std::string& what) {
  return "zip " + what + ": " + (z ? zip_strerror(z) : "cannot open");
}
}  // namespace

std::string ZipArchive(const std::vector<ZipEntry>& entries, DosTime when, const std::filesystem::path& scratch) {
  std::error_code ec;
  std::filesystem::remove(scratch, ec);
  int err = 0;
  std::unique_ptr<zip_t, Discard> z(zip_open(scratch.c_str(), ZIP_CREATE | ZIP_EXCL, &err));
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    const std::string msg = scratch.string() + ": cannot create a zip archive: " + zip_error_strerror(&e);
    zip_error_fini(&e);
    throw std::runtime_error(msg);
  }
  for (const auto& entry : entries) {
    // libzip reads the buffer at zip_close, so the entries must live until then (they do: const&).
    zip_source_t* src = zip_source_buffer(z.get(), entry.bytes.data(), entry.bytes.size(), 0);
    if (!src) throw std::runtime_error(Error(z.get(), entry.name));
    const zip_int64_t idx = zip_file_add(z.get(), entry.name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      throw std::runtime_error(Error(z.get(), entry.name));
    }
    const auto i = static_cast<zip_uint64_t>(idx);
    if (zip_set_file_compression(z.get(), i, ZIP_CM_DEFLATE, 9) != 0 ||
        zip_file_set_dostime(z.get(), i, when.time, when.date, 0) != 0) {
      throw std::runtime_error(Error(z.get(), entry.name));
    }
  }
  zip_t* raw = z.release();
  if (zip_close(raw) != 0) {
    const std::string msg = Error(raw, "write " + scratch.string());
    zip_discard(raw);
    throw std::runtime_error(msg);
  }
  std::string bytes = ReadText(scratch);
  std::filesystem::remove(scratch, ec);
  return bytes;
}

}  // namespace torchgauge::reporter
