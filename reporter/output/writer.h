// Writes the site's files under its output root. A file is written only when
// its bytes change, so re-rendering the same inputs leaves every file and its
// mtime alone, and a published file is replaced atomically
// (core::WriteFileAtomic) so a reader never sees half of it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

namespace torchgauge::reporter {

struct WriteCounts {
  size_t files_written = 0, files_unchanged = 0, bytes = 0;
};

class SiteWriter {
 public:
  explicit SiteWriter(std::filesystem::path root) : root_(std::move(root)) {}

  // Writes `contents` to `rel` (a SitePath) unless the file already holds
  // exactly those bytes; returns whether it wrote. Thread-safe: model pages
  // are written from several threads, each path by one of them only.
  bool Write(const std::string& rel, const std::string& contents);
  // Counts a file written beside the writer (the Vega bundle, which the
  // vl-convert helper writes itself).
  void CountWritten();
  std::filesystem::path Abs(const std::string& rel) const { return root_ / rel; }
  WriteCounts counts() const;

 private:
  bool Unchanged(const std::filesystem::path& path, const std::string& contents);
  void CreateNew(const std::filesystem::path& path, const std::string& contents);

  std::filesystem::path root_;
  mutable std::mutex mu_;
  WriteCounts counts_;
  std::set<std::string> created_;  // directories made by this writer
};

// The whole file; throws std::runtime_error naming it when it cannot be read.
std::string ReadText(const std::filesystem::path& p);

}  // namespace torchgauge::reporter
