#include "core/contract/vocabulary.h"

namespace torchgauge::core {

std::string JoinNames(std::span<const char* const> names, const char* separator) {
  std::string out;
  for (const char* n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

}  // namespace torchgauge::core
