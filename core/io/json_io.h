// Reading and writing result files. Writes are atomic (temp file in the same
// directory, fsync, rename) so a crash never leaves a half-written result.
// Read errors name the file.
//
// Every JSON file the tools read goes through ReadJsonFile, which refuses a
// file over the size cap of its kind before parsing it (a hostile or runaway
// file must not exhaust memory). The caps are documented in schemas/README.md;
// each is far above what a real file of its kind holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

// An error about one input file, optionally one field in it.
class FileError : public std::runtime_error {
 public:
  FileError(std::filesystem::path file, std::string field, const std::string& message);
  const std::filesystem::path& file() const { return file_; }
  const std::string& field() const { return field_; }

 private:
  std::filesystem::path file_;
  std::string field_;
};

enum class JsonKind {
  kRunResult,    // runs/*.json and the worker's .result/.part files
  kManifest,     // manifest.json
  kSuiteConfig,  // a suite configuration (--config)
  kRunSpec,      // the collector's per-run .spec file
  kOther,        // anything else the tools read back (the site's own data files)
};
inline constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;
// The caps, in one place (schemas/README.md lists them).
std::uintmax_t SizeCap(JsonKind kind);
const char* JsonKindName(JsonKind kind);  // "run result", "manifest", ...

// Reads and parses `path`; throws FileError naming the file: cannot open,
// over the cap (with its size and the cap) or not valid JSON.
nlohmann::json ReadJsonFile(const std::filesystem::path& path, JsonKind kind = JsonKind::kOther);
// The parse behind ReadJsonFile: simdjson validates and tokenizes the text
// (several times faster than nlohmann's lexer, which was a fifth of a cold
// site render), and the tree is rebuilt as the same nlohmann::json that
// nlohmann::json::parse gives (non-negative integers unsigned, the last of
// duplicate keys kept). Any text simdjson refuses (malformed, a number out
// of its range, nesting deeper than 1024) goes to nlohmann::json::parse, so
// what is accepted, and every error message, stay nlohmann's. Returns a
// discarded value when the text is not valid JSON.
nlohmann::json ParseJsonText(const std::string& text);
void WriteFileAtomic(const std::filesystem::path& path, const std::string& contents);
// The first line of a small text file (a sysfs entry, a build stamp) without
// trailing blanks or carriage return; "" when the file is missing or empty.
std::string ReadFirstLine(const std::filesystem::path& path);
void WriteJsonAtomic(const std::filesystem::path& path, const nlohmann::json& value);

}  // namespace torchgauge::core
