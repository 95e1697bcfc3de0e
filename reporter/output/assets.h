// Where the reporter finds what it does not compile in: the Mustache
// templates (templates/), the static files copied into every site (site/),
// the two Python helpers it runs (output/vl_render.py for the site's SVGs,
// paper/paper_render.py for the paper kit's PDFs) and the interpreter that
// runs them. An installed reporter reads them from <prefix>/share/torchgauge/; a
// reporter run from its build tree reads the source tree, whose paths are
// baked in at build time. Every command asks here, so the site, the paper
// kit and the tests agree on where each file is.
#pragma once

#include <filesystem>
#include <string>

namespace torchgauge::reporter {

// The environment overrides the interpreter (TORCHGAUGE_PYTHON) and the
// templates (TORCHGAUGE_TEMPLATES); the command line overrides them all.
std::string DefaultPython();
std::filesystem::path DefaultTemplatesDir();
std::filesystem::path DefaultStaticDir();
std::filesystem::path DefaultHelper();       // reporter/output/vl_render.py
std::filesystem::path DefaultPaperHelper();  // reporter/paper/paper_render.py

}  // namespace torchgauge::reporter
