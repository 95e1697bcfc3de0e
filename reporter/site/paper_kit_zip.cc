#include "reporter/site/paper_kit_zip.h"

#include <filesystem>
#include <system_error>

#include "reporter/output/assets.h"
#include "reporter/output/paths.h"
#include "reporter/output/writer.h"
#include "reporter/output/zip_archive.h"
#include "reporter/paper/kit.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

SitePaperKit MakeSitePaperKit(const SiteOptions& o, const BuildView& v) {
  // Scratch beside the fingerprints (.torchgauge/), never published.
  const fs::path scratch =
      o.out / fs::path(SitePath({Kind::kFingerprint, v.id, "", ""})).parent_path() / ("paper-kit-" + v.id);
  std::error_code ec;
  fs::remove_all(scratch, ec);
  PaperKitOptions k;
  k.results = o.results;
  k.out = scratch / "kit";
  k.build = v.id;
  k.python = o.python;
  k.helper = DefaultPaperHelper();
  SitePaperKit out;
  try {
    const PaperKitReport r = WritePaperKit(k);
    std::vector<ZipEntry> entries;
    const std::string folder = "paper-kit-" + v.id + "/";
    for (const auto& f : r.files) entries.push_back({folder + f, ReadText(k.out / f)});
    out.zip = ZipArchive(entries, DosTimeFromIso(v.started_at), scratch / "kit.zip");
    if (!r.pdf_skipped.empty()) {
      out.notes.push_back("paper kit of build " + v.id + ": " + std::to_string(r.pdf_skipped.size()) +
                          " PDFs not rendered (" + r.pdf_note + "); the zip holds their Vega-Lite specs");
    }
  } catch (...) {
    fs::remove_all(scratch, ec);
    throw;
  }
  fs::remove_all(scratch, ec);
  return out;
}

}  // namespace torchgauge::reporter
