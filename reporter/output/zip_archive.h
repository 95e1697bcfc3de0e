// A zip archive of named byte strings (libzip), for the paper kit the site
// offers per build (site/site.cc, --paper-kit). Deterministic: the same entries
// and time give the same bytes (entries in the order given, deflate at level
// 9, every entry stamped with `dos_time`, no extra fields).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace torchgauge::reporter {

struct ZipEntry {
  std::string name;  // the path inside the archive, '/'-separated
  std::string bytes;
};

// An MS-DOS timestamp (what zip stores): from "YYYY-MM-DDTHH:MM:SS..." (UTC),
// or 1980-01-01 00:00:00 (the format's first day) when `iso` is empty or
// unreadable.
struct DosTime {
  unsigned short time = 0, date = (1 << 5) | 1;
};
DosTime DosTimeFromIso(const std::string& iso);

// The archive's bytes. `scratch` is a file path libzip writes through (it
// is removed). Throws std::runtime_error with libzip's message on failure.
std::string ZipArchive(const std::vector<ZipEntry>& entries, DosTime when, const std::filesystem::path& scratch);

}  // namespace torchgauge::reporter
