#include "core/io/hash.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace torchgauge::core {

void Fingerprint::Mix(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h_ ^= p[i];
    h_ *= 1099511628211ull;
  }
}

Fingerprint& Fingerprint::Add(std::string_view bytes) {
  Add(static_cast<int64_t>(bytes.size()));
  Mix(bytes.data(), bytes.size());
  return *this;
}

Fingerprint& Fingerprint::Add(int64_t value) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(static_cast<uint64_t>(value) >> (8 * i));
  Mix(b, sizeof b);
  return *this;
}

Fingerprint& Fingerprint::Add(double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return Add(bits);
}

Fingerprint& Fingerprint::AddFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read");
  std::string buf(1 << 16, '\0');
  int64_t total = 0;
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    Mix(buf.data(), static_cast<size_t>(in.gcount()));
    total += in.gcount();
  }
  if (in.bad()) throw std::runtime_error(file.string() + ": read failed");
  return Add(total);
}

std::string Fingerprint::Hex() const {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h_));
  return out;
}

}  // namespace torchgauge::core
