#include "core/io/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace torchgauge::core {

namespace {
int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }
}  // namespace

bool RemoveTree(const std::filesystem::path& p, std::string* error) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return true;  // nothing there
  if (::nftw(p.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    if (error) *error = std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace torchgauge::core
