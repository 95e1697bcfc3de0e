// The site's per-build paper kit download (`torchgauge-report build
// --paper-kit`): the kit `torchgauge-report paper` writes (paper/kit.h), for
// the build's every platform at single-column width, as one zip whose
// entries sit in paper-kit-<build>/. Made at render time only when asked:
// its PDFs take vl-convert seconds per build and the zip adds ~0.2 MB per
// build to the site. The zip is deterministic: its entries are stamped with
// the build's start, like the kit's PDFs.
#pragma once

#include <string>
#include <vector>

#include "reporter/results/aggregate.h"
#include "reporter/site/options.h"

namespace torchgauge::reporter {

struct SitePaperKit {
  std::string zip;                 // the archive's bytes
  std::vector<std::string> notes;  // what the kit lacks and why (no PDFs, ...)
};

// Throws std::runtime_error (or std::invalid_argument from the kit) when the
// kit cannot be made. Without vl-convert (o.python) the kit holds the
// Vega-Lite specs and no PDFs, and a note says so; --no-svg does not matter.
SitePaperKit MakeSitePaperKit(const SiteOptions& o, const BuildView& v);

}  // namespace torchgauge::reporter
