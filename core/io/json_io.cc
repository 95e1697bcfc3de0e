#include "core/io/json_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

#include <simdjson.h>
#include <nlohmann/json.hpp>

namespace torchgauge::core {

namespace {
std::string Describe(const std::filesystem::path& file, const std::string& field, const std::string& message) {
  std::string out = file.string();
  if (!field.empty()) out += ": field '" + field + "'";
  return out + ": " + message;
}
}  // namespace

FileError::FileError(std::filesystem::path file, std::string field, const std::string& message)
    : std::runtime_error(Describe(file, field, message)), file_(std::move(file)), field_(std::move(field)) {}

std::uintmax_t SizeCap(JsonKind kind) {
  switch (kind) {
    case JsonKind::kRunResult:
      return 16 * kMiB;
    case JsonKind::kManifest:
      return 1 * kMiB;
    case JsonKind::kSuiteConfig:
      return 1 * kMiB;
    case JsonKind::kRunSpec:
      return 1 * kMiB;
    case JsonKind::kOther:
      return 64 * kMiB;
  }
  return 64 * kMiB;
}

const char* JsonKindName(JsonKind kind) {
  switch (kind) {
    case JsonKind::kRunResult:
      return "run result";
    case JsonKind::kManifest:
      return "manifest";
    case JsonKind::kSuiteConfig:
      return "suite configuration";
    case JsonKind::kRunSpec:
      return "run spec";
    case JsonKind::kOther:
      return "JSON input";
  }
  return "JSON input";
}

namespace {

std::string Mib(std::uintmax_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return buf;
}

[[noreturn]] void TooLarge(const std::filesystem::path& path, std::uintmax_t size, bool at_least, JsonKind kind) {
  throw FileError(path, "",
                  std::string(at_least ? "more than " : "") + Mib(size) + " (" + std::to_string(size) +
                      " bytes) is over the " + Mib(SizeCap(kind)) + " cap for a " + JsonKindName(kind) +
                      " file (schemas/README.md); refused");
}

// Reads the whole file, never more than the cap (+1 byte to tell): the size
// from fstat is checked first, and the read stops at the cap for files whose
// size the kernel does not report (pipes, /proc).
std::string ReadCapped(const std::filesystem::path& path, JsonKind kind) {
  const std::uintmax_t cap = SizeCap(kind);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw FileError(path, "", "is a directory, not a file");
  }
  if (st.st_size > 0 && static_cast<std::uintmax_t>(st.st_size) > cap) {
    ::close(fd);
    TooLarge(path, static_cast<std::uintmax_t>(st.st_size), false, kind);
  }
  std::string out;
  if (st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw FileError(path, "", std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > cap) {
      ::close(fd);
      TooLarge(path, out.size(), true, kind);
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

namespace {
// simdjson's DOM as nlohmann's: nlohmann stores a non-negative integer as
// unsigned, and its object is a map in which a repeated key keeps the last value.
nlohmann::json FromSimdjson(simdjson::dom::element e) {
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
    case Type::ARRAY: {
      const simdjson::dom::array items = e.get_array().value_unsafe();
      nlohmann::json out = nlohmann::json::array();
      auto& v = out.get_ref<nlohmann::json::array_t&>();
      v.reserve(items.size());
      for (simdjson::dom::element item : items) v.push_back(FromSimdjson(item));
      return out;
    }
    case Type::OBJECT: {
      const simdjson::dom::object fields = e.get_object().value_unsafe();
      nlohmann::json out = nlohmann::json::object();
      auto& m = out.get_ref<nlohmann::json::object_t&>();
      for (simdjson::dom::key_value_pair field : fields) m[std::string(field.key)] = FromSimdjson(field.value);
      return out;
    }
    case Type::INT64: {
      const int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? nlohmann::json(static_cast<uint64_t>(v)) : nlohmann::json(v);
    }
    case Type::UINT64:
      return nlohmann::json(e.get_uint64().value_unsafe());
    case Type::DOUBLE:
      return nlohmann::json(e.get_double().value_unsafe());
    case Type::STRING:
      return nlohmann::json(std::string(e.get_string().value_unsafe()));
    case Type::BOOL:
      return nlohmann::json(e.get_bool().value_unsafe());
    case Type::NULL_VALUE:
      return nlohmann::json(nullptr);
  }
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

// Texts up to this size share one parser per thread (its buffers grow to the
// largest text it saw and stay); a larger one gets a parser of its own.
constexpr size_t kSharedParserBytes = 4 * kMiB;
}  // namespace

nlohmann::json ParseJsonText(const std::string& text) {
  {
    thread_local simdjson::dom::parser shared;
    std::optional<simdjson::dom::parser> own;
    simdjson::dom::parser& parser = text.size() <= kSharedParserBytes ? shared : own.emplace();
    simdjson::dom::element root;
    if (parser.parse(text).get(root) == simdjson::SUCCESS) return FromSimdjson(root);
  }
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

nlohmann::json ReadJsonFile(const std::filesystem::path& path, JsonKind kind) {
  const std::string text = ReadCapped(path, kind);
  nlohmann::json j = ParseJsonText(text);
  if (!j.is_discarded()) return j;
  // Parse again with exceptions for the position and the reason.
  try {
    nlohmann::json again = nlohmann::json::parse(text);
    (void)again;
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for a double (1e999) is out_of_range.
    throw FileError(path, "", std::string("not valid JSON (truncated or malformed): ") + e.what());
  }
  throw FileError(path, "", "not valid JSON");
}

std::string ReadFirstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

void WriteFileAtomic(const std::filesystem::path& path, const std::string& contents) {
  // A bare file name ("report.md") has no parent: it lives in the working directory.
  if (!path.parent_path().empty()) std::filesystem::create_directories(path.parent_path());
  std::string tmpl = (path.parent_path() / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw FileError(path, "", std::string("cannot create temporary file: ") + std::strerror(errno));
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw FileError(path, "", std::string("write failed: ") + std::strerror(err));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw FileError(path, "", std::string("rename failed: ") + std::strerror(err));
  }
}

void WriteJsonAtomic(const std::filesystem::path& path, const nlohmann::json& value) {
  WriteFileAtomic(path, value.dump(2) + "\n");
}

}  // namespace torchgauge::core
