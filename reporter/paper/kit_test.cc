// Integration tests of `torchgauge-report paper` on fixture trees: every
// file of the kit, real PDFs (pdfinfo: page width = the column; pdftoppm: a
// render with ink on it), the tables' rows, what is left out and why,
// byte-identical kits from the same results, paper.tex compiled by pdflatex,
// the kit without vl-convert, errors for an unknown build or platform, and
// the site's --paper-kit zip.
// poppler-utils and texlive-latex-base are in the bootstrap's Debian
// packages, so a missing pdfinfo, pdftoppm or pdflatex fails these tests.
#include "reporter/paper/kit.h"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/manifest.h"
#include "core/contract/result.h"
#include "core/io/shell.h"
#include "reporter/output/sha256.h"
#include "reporter/paper/command.h"
#include "reporter/site/cli.h"
#include "reporter/site/site.h"
#include "reporter/testing/fixtures.h"

namespace fs = std::filesystem;
using namespace torchgauge;
using namespace torchgauge::reporter;
using nlohmann::json;

namespace {

fs::path Tmp(const std::string& name) {
  fs::path p = fs::path(TORCHGAUGE_BINARY_DIR) / "reporter_test_tmp" / "paper" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void Write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
// Runs `cmd` in a shell; its stdout (stderr too) in `out`; returns the exit status.
int Shell(const std::string& cmd, std::string* out = nullptr) {
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  const int rc = ::pclose(f);
  if (out) *out = text;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
std::map<std::string, std::string> Snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(root)) files[e.path().filename().string()] = Read(e.path());
  return files;
}

// The golden fixture's shape (reporter/site/site_test.cc SmallTree): 3 builds x
// 4 models x 6 configurations on a GPU-style and a CPU platform.
struct Tree {
  fs::path results;
  std::string build;
};
Tree GoldenTree(const std::string& name) {
  Tree t{Tmp(name) / "results", ""};
  FixtureSpec spec;
  spec.builds = 3;
  spec.models = 4;
  spec.configs = 6;
  GenerateFixtureTree(t.results, spec);
  t.build = FixtureBuildId(spec, 2);
  return t;
}

// Rewrites one platform's manifest and runs through the contract types.
void EditPlatform(const Tree& t, const std::string& platform, const std::function<void(core::Manifest&)>& manifest,
                  const std::function<void(core::RunResult&)>& run) {
  const fs::path dir = core::PlatformDir(t.results, t.build, platform);
  const fs::path mp = core::ManifestPath(dir);
  core::Manifest m = core::ManifestFromJson(json::parse(Read(mp)), mp);
  manifest(m);
  Write(mp, core::ToJson(m).dump(2) + "\n");
  for (const auto& e : fs::directory_iterator(core::RunsDir(dir))) {
    core::RunResult r = core::RunResultFromJson(json::parse(Read(e.path())), e.path());
    run(r);
    Write(e.path(), core::ToJson(r).dump(1) + "\n");
  }
}
void StripPeaks(const Tree& t) {
  for (const char* p : {"nvidia-a100-40gb-cu130", "cpu-x86_64-2c"}) {
    EditPlatform(
        t, p, [](core::Manifest& m) { m.peaks.reset(); }, [](core::RunResult&) {});
  }
}

PaperKitOptions Options(const Tree& t, const fs::path& out) {
  PaperKitOptions o;
  o.results = t.results;
  o.out = out;
  o.build = t.build;
  o.python = TORCHGAUGE_PYTHON;
  o.helper = fs::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "paper" / "paper_render.py";
  return o;
}

bool LeftOut(const PaperKitReport& r, const std::string& item, const std::string& reason_part) {
  for (const auto& l : r.left_out) {
    if (l.item.starts_with(item) && l.reason.find(reason_part) != std::string::npos) return true;
  }
  return false;
}

// pdfinfo reads it, its page is `width_pt` wide, and pdftoppm renders it
// with ink: a grayscale render (PGM) has dark pixels on a white page.
void CheckPdf(const fs::path& pdf, const std::string& width_pt) {
  INFO(pdf.string());
  const std::string bytes = Read(pdf);
  REQUIRE(bytes.starts_with("%PDF-"));
  CHECK(bytes.size() > 4000);
  std::string info;
  REQUIRE(Shell("pdfinfo " + core::ShellQuote(pdf.string()), &info) == 0);
  CHECK(info.find("Page size:       " + width_pt + " x ") != std::string::npos);
  CHECK(info.find("Title:           Figure ") != std::string::npos);
  CHECK(info.find("CreationDate:") != std::string::npos);
  const fs::path png = pdf.parent_path().parent_path() / "render";
  REQUIRE(Shell("pdftoppm -png -r 40 -singlefile " + core::ShellQuote(pdf.string()) + " " +
                core::ShellQuote(png.string())) == 0);
  CHECK(Read(png.string() + ".png").starts_with("\x89PNG"));
  REQUIRE(Shell("pdftoppm -gray -r 40 -singlefile " + core::ShellQuote(pdf.string()) + " " +
                core::ShellQuote(png.string())) == 0);
  const std::string pgm = Read(png.string() + ".pgm");
  size_t dark = 0;
  for (size_t i = pgm.size() / 4; i < pgm.size(); ++i) dark += static_cast<unsigned char>(pgm[i]) < 128 ? 1 : 0;
  CHECK(dark > 50);
}

}  // namespace

TEST_CASE("paper kit on the golden fixture: every file, real PDFs, the tables' rows, byte-identical, compiles") {
  const Tree t = GoldenTree("golden");
  StripPeaks(t);  // Table 3's absence is part of what this case checks
  const fs::path out = t.results.parent_path() / "kit";
  const PaperKitReport r = WritePaperKit(Options(t, out));
  CHECK(r.primary == "nvidia-a100-40gb-cu130");  // the platform with a GPU breakdown
  REQUIRE_MESSAGE(r.pdf_skipped.empty(), r.pdf_note);
  for (const char* stem : {"fig1_train_breakdown", "fig2_eval_breakdown", "fig3_train_compilers", "fig4_eval_compilers",
                           "fig5_platform_ratios"}) {
    CHECK(fs::exists(out / (std::string(stem) + ".vl.json")));
    CheckPdf(out / (std::string(stem) + ".pdf"), "237.6");
  }
  for (const char* f : {"table1_models.tex", "table1_models.csv", "table2_breakdown.tex", "table2_breakdown.csv",
                        "paper.tex", "MANIFEST.json"}) {
    CHECK_MESSAGE(fs::exists(out / f), f);
  }
  CHECK_FALSE(fs::exists(out / "table3_peaks.tex"));
  CHECK(LeftOut(r, "Table 3", "has measured peaks"));
  CHECK(r.left_out.size() == 1);

  // Table 2: both modes of the four fixture models' domains beside the five paper domains.
  const std::string t2 = Read(out / "table2_breakdown.csv");
  CHECK(t2.starts_with("mode,domain,models,gpu_active_pct,gpu_data_movement_pct,gpu_idle_pct,"));
  CHECK(t2.find("\ntrain,vision,1,") != std::string::npos);
  CHECK(t2.find("\neval,rl,1,") != std::string::npos);
  CHECK(t2.find("\ntrain,speech,0,,,,28.8,0.3,70.9\n") != std::string::npos);
  const std::string t2tex = Read(out / "table2_breakdown.tex");
  CHECK(t2tex.find("Reinforcement Learning & ") != std::string::npos);
  CHECK(t2tex.find("Paper: A100 GPU") != std::string::npos);
  const std::string t1 = Read(out / "table1_models.csv");
  CHECK(t1.find(",resnet50,resnet50,") != std::string::npos);
  CHECK(t1.find(",hf_Bert,hf_bert,") != std::string::npos);

  // MANIFEST.json: every other file, with its SHA-256, and the provenance.
  const json m = json::parse(Read(out / "MANIFEST.json"));
  CHECK(m["build_id"] == t.build);
  CHECK(m["files"].size() == Snapshot(out).size() - 1);
  for (const auto& f : m["files"]) CHECK(Sha256Hex(Read(out / f["path"].get<std::string>())) == f["sha256"]);
  CHECK(m["left_out"][0]["item"] == "Table 3 (table3_peaks)");
  CHECK(Read(out / "table2_breakdown.tex")
            .starts_with("% Table 2 (table2_breakdown), TorchGauge paper kit, build " + t.build +
                         "; platforms cpu-x86_64-2c, nvidia-a100-40gb-cu130; "
                         "collector 0.1.0 (fixture); suite fixture"));
  const json spec = json::parse(Read(out / "fig3_train_compilers.vl.json"));
  CHECK(spec["usermeta"]["torchgauge"]["provenance"].get<std::string>().find("build " + t.build) == 0);

  // Byte-identical: again into a fresh folder, and over itself.
  const fs::path again = t.results.parent_path() / "kit-again";
  WritePaperKit(Options(t, again));
  CHECK(Snapshot(again) == Snapshot(out));
  const auto before = Snapshot(out);
  WritePaperKit(Options(t, out));
  CHECK(Snapshot(out) == before);

  // paper.tex compiles as it is, in a copy (LaTeX's own files stay out of the kit).
  const fs::path tex = t.results.parent_path() / "tex";
  fs::copy(out, tex);
  std::string log;
  const int rc = Shell(
      "cd " + core::ShellQuote(tex.string()) + " && pdflatex -interaction=nonstopmode -halt-on-error paper.tex", &log);
  CHECK_MESSAGE(rc == 0, log.substr(log.size() > 3000 ? log.size() - 3000 : 0));
  CHECK(fs::exists(tex / "paper.pdf"));
}

TEST_CASE("paper kit from a host breakdown and measured peaks: host captions, Table 3, no Figure 5 on one platform") {
  const Tree t = GoldenTree("host");
  EditPlatform(
      t, "cpu-x86_64-2c",
      [](core::Manifest& m) {
        core::ProbeResult p;
        p.threads = 2;
        core::MatmulPeak fp32;
        fp32.precision = "fp32";
        fp32.n = 2048;
        fp32.repeats = 3;
        fp32.best_ms = 40;
        fp32.tflops = 0.43;
        p.matmul.push_back(fp32);
        core::TriadPeak triad;
        triad.elements = 1 << 24;
        triad.best_ms = 12;
        triad.gb_per_s = 16.8;
        p.triad = triad;
        m.peaks = p;
      },
      [](core::RunResult& r) {
        r.gpu_breakdown.reset();
        if (r.status != "ok") return;
        core::HostBreakdown h;
        h.iterations = 1;
        h.compute_fraction = 0.6;
        h.data_movement_fraction = 0.1;
        h.outside_operators_fraction = 0.3;
        r.host_breakdown = h;
      });
  PaperKitOptions o = Options(t, t.results.parent_path() / "kit");
  o.platforms = {"cpu-x86_64-2c"};
  o.width = PaperWidth::kDouble;
  const PaperKitReport r = WritePaperKit(o);
  CHECK(r.primary == "cpu-x86_64-2c");
  REQUIRE_MESSAGE(r.pdf_skipped.empty(), r.pdf_note);
  CheckPdf(o.out / "fig1_train_breakdown.pdf", "504");
  CHECK(LeftOut(r, "Figure 5", "needs two platforms"));
  const std::string paper = Read(o.out / "paper.tex");
  CHECK(paper.find("the host breakdown: no run on this platform measured a GPU breakdown") != std::string::npos);
  CHECK(Read(o.out / "table2_breakdown.tex").find("Ours (host CPU)") != std::string::npos);
  CHECK(Read(o.out / "table2_breakdown.csv").find("\ntrain,vision,1,60,10,30,53.1,2.1,44.8\n") != std::string::npos);
  const std::string t3 = Read(o.out / "table3_peaks.csv");
  CHECK(t3.find("\ncpu-x86_64-2c,Synthetic CPU,0.430,,,,16.8,,2,\n") != std::string::npos);
  CHECK(paper.find("attainable through LibTorch") != std::string::npos);
  CHECK(paper.find("\\input{table3_peaks.tex}") != std::string::npos);
  CHECK(paper.find("Left out: Figure 5 (fig5_platform_ratios): needs two platforms") != std::string::npos);

  // The same folder with both platforms: Figure 5 appears; back to one: it goes.
  o.platforms = {};
  WritePaperKit(o);
  CHECK(fs::exists(o.out / "fig5_platform_ratios.vl.json"));
  o.platforms = {"cpu-x86_64-2c"};
  WritePaperKit(o);
  CHECK_FALSE(fs::exists(o.out / "fig5_platform_ratios.vl.json"));
  CHECK_FALSE(fs::exists(o.out / "fig5_platform_ratios.pdf"));
}

TEST_CASE("paper kit without vl-convert: the tables and specs, the PDFs listed as not rendered") {
  const Tree t = GoldenTree("novl");
  PaperKitOptions o = Options(t, t.results.parent_path() / "kit");
  o.python = "/bin/false";
  std::ostringstream out, err;
  REQUIRE(RunPaperCommand(o, out, err) == kPaperOk);
  CHECK(out.str().find("PDFs not rendered (vl-convert-python is not importable by /bin/false") != std::string::npos);
  CHECK(out.str().find("fig1_train_breakdown.pdf") != std::string::npos);
  CHECK(fs::exists(o.out / "fig1_train_breakdown.vl.json"));
  CHECK_FALSE(fs::exists(o.out / "fig1_train_breakdown.pdf"));
  CHECK(fs::exists(o.out / "table2_breakdown.tex"));
  const std::string paper = Read(o.out / "paper.tex");
  CHECK(paper.find("\\tgfigure{fig") == std::string::npos);
  CHECK(paper.find("% Not included: fig1_train_breakdown.pdf was not rendered.") != std::string::npos);
  CHECK(json::parse(Read(o.out / "MANIFEST.json"))["pdf_not_rendered"].size() == 5);
}

TEST_CASE("paper: an unknown build or platform is a clear error; the command is in --help") {
  const Tree t = GoldenTree("errors");
  PaperKitOptions o = Options(t, t.results.parent_path() / "kit");
  o.build = "2.11.0-19990101";
  std::ostringstream out, err;
  CHECK(RunPaperCommand(o, out, err) == kPaperBadInput);
  CHECK(err.str().find("--build '2.11.0-19990101': no such build in ") != std::string::npos);
  CHECK(err.str().find("(available: 2.11.0-20260101, 2.11.0-20260102, 2.11.0-20260103)") != std::string::npos);
  o.build = t.build;
  o.platforms = {"amd-mi210"};
  std::ostringstream out2, err2;
  CHECK(RunPaperCommand(o, out2, err2) == kPaperBadInput);
  CHECK(err2.str().find("--platform 'amd-mi210': no such platform in build " + t.build) != std::string::npos);
  CHECK_FALSE(fs::exists(o.out));
  CliState state;
  auto app = MakeApp(state);
  CHECK(app->help().find("paper") != std::string::npos);
  CHECK(app->get_subcommand("paper")->help().find("--width") != std::string::npos);
}

TEST_CASE("site --paper-kit: the build page links a zip holding exactly the kit, byte-identical on re-render") {
  const Tree t = GoldenTree("site");
  SiteOptions o;
  o.results = t.results;
  o.out = t.results.parent_path() / "site";
  o.templates = fs::path(TORCHGAUGE_SOURCE_DIR) / "templates";
  o.static_dir = fs::path(TORCHGAUGE_SOURCE_DIR) / "site";
  o.helper = fs::path(TORCHGAUGE_SOURCE_DIR) / "reporter" / "output" / "vl_render.py";
  o.python = TORCHGAUGE_PYTHON;
  o.svg = false;  // the kit's PDFs do not depend on the site's SVGs
  o.builds = {t.build};
  o.paper_kit = true;
  const SiteReport r = BuildSite(o);
  for (const auto& s : r.skipped) CHECK_MESSAGE(s.find("paper kit") == std::string::npos, s);
  const std::string zip_name = "paper-kit-" + t.build + ".zip";
  const fs::path zip = o.out / "builds" / t.build / zip_name;
  REQUIRE(fs::exists(zip));
  CHECK(Read(o.out / "builds" / t.build / "summary.md").find("[Download the paper kit (zip)](" + zip_name + ")") !=
        std::string::npos);
  CHECK(Read(o.out / "builds" / t.build / "index.html").find("href=\"" + zip_name + "\"") != std::string::npos);
  std::string listing;
  REQUIRE(Shell("unzip -t " + core::ShellQuote(zip.string()), &listing) == 0);
  CHECK(listing.find("No errors detected") != std::string::npos);
  // The zip's files are the kit `paper` writes for the build, byte for byte.
  const fs::path unpacked = t.results.parent_path() / "unpacked";
  REQUIRE(Shell("unzip -q " + core::ShellQuote(zip.string()) + " -d " + core::ShellQuote(unpacked.string())) == 0);
  const PaperKitReport direct = WritePaperKit(Options(t, t.results.parent_path() / "direct"));
  const auto from_zip = Snapshot(unpacked / ("paper-kit-" + t.build));
  CHECK(from_zip.size() == direct.files.size());
  CHECK(from_zip == Snapshot(t.results.parent_path() / "direct"));
  CHECK(from_zip.count("fig1_train_breakdown.pdf") == 1);
  CHECK(from_zip.count("MANIFEST.json") == 1);
  // The same results again: the same zip bytes.
  const std::string first = Read(zip);
  SiteOptions again = o;
  again.force = true;
  BuildSite(again);
  CHECK(Read(zip) == first);
  // Without --paper-kit the zip and the link go.
  SiteOptions without = o;
  without.paper_kit = false;
  BuildSite(without);
  CHECK_FALSE(fs::exists(zip));
  CHECK(Read(o.out / "builds" / t.build / "summary.md").find("paper kit") == std::string::npos);
}
