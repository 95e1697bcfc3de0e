// A content fingerprint for change detection (not for security): 64-bit
// FNV-1a over a sequence of fields. Each field is length-prefixed, so
// ("ab","c") and ("a","bc") differ.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace torchgauge::core {

class Fingerprint {
 public:
  Fingerprint& Add(std::string_view bytes);
  Fingerprint& Add(int64_t value);
  Fingerprint& Add(double value);
  // The bytes of a file; throws std::runtime_error naming it if unreadable.
  Fingerprint& AddFile(const std::filesystem::path& file);
  uint64_t value() const { return h_; }
  std::string Hex() const;  // 16 lowercase hex digits

 private:
  void Mix(const void* data, size_t n);
  uint64_t h_ = 14695981039346656037ull;
};

}  // namespace torchgauge::core
