// Reading and writing result files. Writes are atomic (temp file in the same
// directory, fsync, rename) so a crash never leaves a half-written result.
// Read errors name the file.
#pragma once

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

nlohmann::json ReadJsonFile(const std::filesystem::path& path);
void WriteFileAtomic(const std::filesystem::path& path, const std::string& contents);
void WriteJsonAtomic(const std::filesystem::path& path, const nlohmann::json& value);

}  // namespace torchgauge::core
