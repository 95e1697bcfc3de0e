#include "reporter/output/writer.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/io/json_io.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

bool SiteWriter::Unchanged(const fs::path& path, const std::string& contents) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec || size != contents.size()) return false;
  std::ifstream in(path, std::ios::binary);
  std::string old(contents.size(), '\0');
  return in.read(old.data(), static_cast<std::streamsize>(old.size())) && old == contents;
}

// A new file: nobody can be reading a half-written version of it, so it is
// written in place (a temp file and a rename would cost a second inode and an
// fsync per file, which dominated a fresh render's kernel time).
void SiteWriter::CreateNew(const fs::path& path, const std::string& contents) {
  fs::path dir = path.parent_path();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!created_.count(dir.string())) {
      fs::create_directories(dir);
      created_.insert(dir.string());
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) throw std::runtime_error(path.string() + ": write failed");
}

bool SiteWriter::Write(const std::string& rel, const std::string& contents) {
  fs::path path = root_ / rel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.bytes += contents.size();
  }
  if (Unchanged(path, contents)) {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.files_unchanged++;
    return false;
  }
  std::error_code ec;
  if (fs::exists(path, ec)) {
    core::WriteFileAtomic(path, contents);  // replacing a published file
  } else {
    CreateNew(path, contents);
  }
  CountWritten();
  return true;
}

void SiteWriter::CountWritten() {
  std::lock_guard<std::mutex> lock(mu_);
  counts_.files_written++;
}

WriteCounts SiteWriter::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace torchgauge::reporter
