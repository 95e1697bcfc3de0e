// The Vega-Lite version every spec the reporter writes is made for: the
// site's charts, the comparison page's and the paper kit's figures name the
// schema; vl-convert renders with, and the site's offline JS bundle is made
// at, the pinned version. One place, so a spec never names one version and
// renders with another; the version also enters the site's fingerprints.
#pragma once

namespace torchgauge::reporter {

inline constexpr const char* kVegaLiteSchema = "https://vega.github.io/schema/vega-lite/v6.json";
inline constexpr const char* kVegaLiteVersion = "6.4";  // pinned for vl-convert and the JS bundle

}  // namespace torchgauge::reporter
