// Shared by the libFuzzer targets: a scratch directory per process, so the
// targets can hand their input to the project's real file-reading paths
// (the loaders open files; an in-memory shortcut would skip that code), and
// the contract checks every target applies to what a parser accepts.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace torchgauge::fuzz {

// <tmpfs or TMPDIR>/torchgauge-fuzz-<pid>, created on first use and removed
// at exit. tmpfs keeps a million writes off the disk.
inline const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("torchgauge-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(ScratchDir(), ignored);
    });
    return d;
  }();
  return dir;
}

// A plain (not atomic) write: the input as the file's exact bytes.
inline void WriteBytes(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
}

// A broken contract of the code under test (not a rejected input): report
// it and abort, which libFuzzer records as a crash with its input.
[[noreturn]] inline void ContractBroken(const std::string& what) {
  std::fprintf(stderr, "contract broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace torchgauge::fuzz
