// Removing a directory tree. Use this, not std::filesystem::remove_all, in
// any code the collector links: there remove_all (both overloads) resolves to
// the copy that libtorch.so exports, which jumps to a null pointer on a
// non-empty directory (LibTorch 2.11's wheel, GCC 12; found by the shard
// merge's test).
#pragma once

#include <filesystem>
#include <string>

namespace torchgauge::core {

// Removes `p` and everything below it (symlinks are removed, not followed).
// Nothing there is not an error. Returns false and sets `error` (errno's
// message) when something could not be removed.
bool RemoveTree(const std::filesystem::path& p, std::string* error = nullptr);

}  // namespace torchgauge::core
