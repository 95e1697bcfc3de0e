// SHA-256 of a byte string, as lowercase hex: the checksums the paper kit's
// MANIFEST.json lists, so a reader can check a file with `sha256sum`. The
// site's change detection uses core::Fingerprint (FNV-1a) instead: it needs
// speed, not a checksum anyone else computes.
#pragma once

#include <string>
#include <string_view>

namespace torchgauge::reporter {

std::string Sha256Hex(std::string_view bytes);

}  // namespace torchgauge::reporter
