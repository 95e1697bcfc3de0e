#include "core/json_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

nlohmann::json ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for a double (1e999) is out_of_range.
    throw FileError(path, "", std::string("not valid JSON: ") + e.what());
  }
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
