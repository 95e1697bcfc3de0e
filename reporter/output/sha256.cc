#include "reporter/output/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <stdexcept>

namespace torchgauge::reporter {

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 (OpenSSL EVP_Digest) failed");
  }
  std::string hex;
  hex.reserve(2 * len);
  char two[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(two, sizeof two, "%02x", digest[i]);
    hex += two;
  }
  return hex;
}

}  // namespace torchgauge::reporter
