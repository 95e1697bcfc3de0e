// Unit tests of the paper kit's parts: the checksum, the publication theme,
// the paper's model list, and Tables 1-3 from in-memory results (a host
// breakdown and measured peaks, which the fixture trees need not carry).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/contract/vocabulary.h"
#include "reporter/output/sha256.h"
#include "reporter/paper/figures.h"
#include "reporter/paper/tables.h"
#include "reporter/paper/theme.h"
#include "reporter/results/aggregate.h"
#include "reporter/results/paper_data.h"

using namespace torchgauge;
using namespace torchgauge::reporter;
using nlohmann::json;

namespace {

// One instance: a BuildView points into the paper table it was built from.
const PaperTable2& Paper() {
  static const PaperTable2 paper = PaperTable2FromJson(json::parse(kPaperTable2Json));
  return paper;
}

core::RunResult HostRun(const std::string& model, const std::string& domain, const std::string& mode, double compute,
                        double movement) {
  core::RunResult r;
  r.build_id = "b1";
  r.platform_id = "cpu-x86_64-2c";
  r.model = {model, model, domain, "task", "ref"};
  r.mode = mode;
  r.timing = core::Timing{};
  r.timing->samples_ms = {10, 11, 12};
  core::SummarizeTiming(*r.timing);
  core::HostBreakdown h;
  h.iterations = 1;
  h.compute_fraction = compute;
  h.data_movement_fraction = movement;
  h.outside_operators_fraction = 1 - compute - movement;
  r.host_breakdown = h;
  return r;
}

BuildResults CpuBuild(bool peaks) {
  BuildResults b;
  b.id = "b1";
  b.started_at = "2026-01-01T02:00:00Z";
  core::LoadedPlatform p;
  p.manifest.present = true;
  p.manifest.build_id = "b1";
  p.manifest.platform_id = "cpu-x86_64-2c";
  p.manifest.vendor = "CPU";
  p.manifest.device_name = "Test CPU";
  p.manifest.cpu_model = "Test CPU";
  if (peaks) {
    core::ProbeResult pr;
    pr.threads = 2;
    core::MatmulPeak fp32, bf16;
    fp32.precision = "fp32";
    fp32.n = 2048;
    fp32.repeats = 5;
    fp32.best_ms = 20;
    fp32.tflops = 0.859;
    bf16.precision = "bf16";
    bf16.status = "unsupported";
    bf16.reason = "no bf16 matmul on this CPU";
    pr.matmul = {fp32, bf16};
    core::TriadPeak triad;
    triad.elements = 1 << 24;
    triad.best_ms = 10;
    triad.gb_per_s = 20.1;
    pr.triad = triad;
    p.manifest.peaks = pr;
    core::CpuFrequencyPolicy frequency;
    frequency.governor = "performance";
    frequency.turbo = false;
    p.manifest.cpu_frequency = frequency;
  }
  p.runs = {HostRun("resnet50", "vision", "train", 0.7, 0.1), HostRun("resnet50", "vision", "eval", 0.8, 0.05),
            HostRun("hf_bert", "nlp", "train", 0.9, 0.02), HostRun("my_model", "test", "eval", 0.5, 0.1)};
  b.platforms.push_back(std::move(p));
  return b;
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++n;
  return n;
}

bool HasKey(const json& j, const std::string& key) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == key || HasKey(v, key)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (HasKey(v, key)) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("Sha256Hex matches the FIPS 180-4 values across the padding boundaries") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(Sha256Hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(Sha256Hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  CHECK(Sha256Hex(std::string(119, 'a')) == "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  CHECK(Sha256Hex(std::string(1000, 'x')) == "44f8354494a5ba03ba1792a8d3e9c534c47a9181980fde7a3f44b06ef2ae7c7f");
}

TEST_CASE("the publication theme: column widths, serif 8-9 pt, no tooltips or actions") {
  CHECK(PaperWidthPt(PaperWidth::kSingle) == doctest::Approx(237.6));
  CHECK(PaperWidthPt(PaperWidth::kDouble) == doctest::Approx(504));
  CHECK(PaperWidthFromName("double") == PaperWidth::kDouble);
  CHECK_THROWS_WITH_AS(PaperWidthFromName("wide"), doctest::Contains("single"), std::invalid_argument);
  json spec = {{"mark", "point"},
               {"encoding", {{"tooltip", {{"field", "x"}}}}},
               {"layer", {{{"encoding", {{"tooltip", {{"field", "y"}}}}}}}}};
  ApplyPaperTheme(spec, PaperWidth::kDouble, 100);
  CHECK_FALSE(HasKey(spec, "tooltip"));
  CHECK(spec["width"] == 504.0);
  CHECK(spec["autosize"]["type"] == "fit");
  CHECK(spec["config"]["font"] == "serif");
  CHECK(spec["config"]["axis"]["labelFontSize"] == 8.0);
  CHECK(spec["config"]["axis"]["titleFontSize"] == 9.0);
  CHECK(spec["usermeta"]["embedOptions"]["actions"] == false);
}

TEST_CASE("paper figures: log ratio axes, shapes as well as colours, parts named by the breakdown source") {
  BackendRatio r;
  r.model = "resnet50";
  r.mode = "train";
  r.precision = "fp32";
  r.backend = "torchscript";
  r.eager_ms = 10;
  r.backend_ms = 8;
  r.ratio = 0.8;
  r.cpu_memory_ratio = 0.5;
  const json f3 = PaperCompilerFigure({r}, PaperWidth::kSingle);
  CHECK(f3["layer"][0]["encoding"]["x"]["scale"]["type"] == "log");
  CHECK(f3["layer"][0]["encoding"]["shape"]["scale"]["range"] == json({"circle", "square"}));
  CHECK(f3["layer"][0]["encoding"]["color"]["scale"]["domain"] == json({"T", "CM"}));  // no GM measured: no point
  CHECK(f3["data"]["values"].size() == 2);
  const json f1 = PaperBreakdownFigure({{"resnet50", "resnet50", "vision", 0.7, 0.1, 0.2}}, BreakdownSource::kHost,
                                       PaperWidth::kSingle);
  CHECK(f1["encoding"]["color"]["scale"]["domain"] == json({"Compute", "Data movement", "Outside operators"}));
  CHECK_FALSE(HasKey(f1, "tooltip"));
}

TEST_CASE("model labels too long for a single column wrap onto two lines at a break point, never cut") {
  CHECK(WrapPaperLabel("resnet50", 20) == std::vector<std::string>{"resnet50"});
  CHECK(WrapPaperLabel("attention_is_all_you_need_pytorch", 20) ==
        std::vector<std::string>{"attention_is_all_", "you_need_pytorch"});
  CHECK(WrapPaperLabel("resnet50 (bf16), inductor", 20) == std::vector<std::string>{"resnet50", "(bf16), inductor"});
  CHECK(WrapPaperLabel("averyveryverylongmodelname", 20) == std::vector<std::string>{"averyveryverylongmodelname"});
  const json bars = {"attention_is_all_you_need_pytorch", "drq"};
  const PaperLabelAxis single = PaperModelAxis(bars, PaperWidth::kSingle);
  CHECK(single.lines == 2);
  CHECK(single.axis["labelExpr"] ==
        "datum.label === 'attention_is_all_you_need_pytorch' ? ['attention_is_all_', 'you_need_pytorch'] : "
        "datum.label");
  CHECK(single.axis["labelOffset"]["expr"] == "(datum.value === 'attention_is_all_you_need_pytorch') ? -4.5 : 0");
  CHECK(PaperModelAxis(bars, PaperWidth::kDouble).lines == 1);  // 100 characters fit in a double column
  CHECK(PaperModelAxis(bars, PaperWidth::kDouble).axis.empty());
  std::vector<BreakdownBar> rows;
  for (const char* m : {"attention_is_all_you_need_pytorch", "drq"}) rows.push_back({m, m, "nlp", 0.7, 0.1, 0.2});
  const json f1 = PaperBreakdownFigure(rows, BreakdownSource::kHost, PaperWidth::kSingle);
  CHECK(f1["encoding"]["y"]["axis"]["labelExpr"] == single.axis["labelExpr"]);
  CHECK(f1["height"] > PaperBreakdownFigure({rows[1]}, BreakdownSource::kHost, PaperWidth::kSingle)["height"]);
}

TEST_CASE("the paper's model list: reconstructed entries, our ids, known domains") {
  const PaperModels& m = core::EmbeddedPaperTable1();
  CHECK(m.models.size() == 83);
  std::set<std::string> names, ours;
  for (const auto& e : m.models) {
    names.insert(e.paper_name);
    if (e.ours) ours.insert(*e.ours);
    CHECK_MESSAGE(std::find(core::kDomains.begin(), core::kDomains.end(), e.domain) != core::kDomains.end(),
                  e.paper_name);
  }
  CHECK(names.size() == m.models.size());  // no duplicates
  CHECK(static_cast<int>(ours.size()) == m.CountIn(core::PaperModelState::kNative));
  CHECK(ours.count("hf_gpt2"));  // the paper's renamed hf_ptg1
  CHECK(names.count("Super_SloMo"));
  CHECK(m.CountIn(core::PaperModelState::kNotPossible) >= 2);  // pig1, pig2
}

TEST_CASE("Table 1: every paper model, our state in the build, models outside the list after them") {
  const BuildResults b = CpuBuild(false);
  const BuildView v = AggregateBuild(b, Paper());
  const CsvTex t = PaperTable1(core::EmbeddedPaperTable1(), {&v.platforms[0]}, Paper(), "Caption");
  CHECK(Count(t.csv, "\n") ==
        1 + 83 + core::EmbeddedPaperTable1().ours_only.size() + 1);  // header, the list, ours only, my_model
  CHECK(t.csv.find("Computer Vision,image classification,resnet50,resnet50,2,2,2/2 ok\n") != std::string::npos);
  CHECK(t.csv.find(",alexnet,alexnet,0,0,not run\n") != std::string::npos);
  CHECK(t.csv.find(",pig1,,0,0,not possible here\n") != std::string::npos);
  CHECK(t.csv.find("(not in the paper's list),my_model,1,1,1/1 ok\n") != std::string::npos);
  CHECK(t.tex.find("\\begin{longtable}") == 0);
  CHECK(t.tex.find("\\caption{Caption}") != std::string::npos);
  CHECK(t.tex.find("\\texttt{my\\_model}") != std::string::npos);
}

TEST_CASE("Table 2 from a host breakdown: labelled as ours (host), the A100 columns as the paper's GPU figures") {
  const BuildResults b = CpuBuild(false);
  const BuildView v = AggregateBuild(b, Paper());
  REQUIRE(v.platforms[0].breakdown_source == BreakdownSource::kHost);
  const CsvTex t = PaperTable2Tables(v.platforms[0], Paper());
  CHECK(
      t.csv.starts_with("mode,domain,models,host_compute_pct,host_data_movement_pct,host_outside_operators_pct,"
                        "paper_a100_gpu_active_pct,paper_a100_gpu_data_movement_pct,paper_a100_gpu_idle_pct\n"));
  CHECK(t.csv.find("train,vision,1,70,10,20,53.1,2.1,44.8\n") != std::string::npos);
  CHECK(t.csv.find("eval,nlp,0,,,,64.7,0.8,34.5\n") != std::string::npos);
  CHECK(t.tex.find("Ours (host CPU)") != std::string::npos);
  CHECK(t.tex.find("Paper: A100 GPU") != std::string::npos);
  CHECK(t.tex.find("Computer Vision & 70.0 & 10.0 & 20.0 & 53.1 & 2.1 & 44.8 & 80.0 & 5.0 & 15.0 & 62.8 & 1.4 & "
                   "35.7 \\\\") != std::string::npos);
  // The five paper domains each have a row (ours or the paper's); "test" has ours only.
  CHECK(Count(t.tex, "\\\\\n") == 3 + 5 + 1);
  core::RunResult bare = b.platforms[0].runs[0];
  bare.host_breakdown.reset();
  BuildResults none = b;
  none.platforms[0].runs = {bare};
  const BuildView nv = AggregateBuild(none, Paper());
  CHECK_THROWS_AS(PaperTable2Tables(nv.platforms[0], Paper()), std::invalid_argument);
}

TEST_CASE("Table 3: measured peaks per platform, unsupported and unprobed told apart") {
  const BuildResults b = CpuBuild(true);
  const BuildView v = AggregateBuild(b, Paper());
  const CsvTex t = PaperTable3({&v.platforms[0]});
  CHECK(t.csv ==
        "platform,device,matmul_fp32_tflops,matmul_tf32_tflops,matmul_bf16_tflops,matmul_fp16_tflops,"
        "triad_gb_per_s,kernel_fma_fp32_tflops,threads,cpu_frequency_policy\n"
        "cpu-x86_64-2c,Test CPU,0.859,,unsupported,,20.1,,2,\"performance, turbo off\"\n");
  CHECK(t.tex.find("cpu-x86\\_64-2c & Test CPU & 0.859 & -- & n/s & -- & 20.1 & -- & performance, turbo off \\\\") !=
        std::string::npos);
  const BuildResults unprobed = CpuBuild(false);
  const BuildView without = AggregateBuild(unprobed, Paper());
  CHECK(Count(PaperTable3({&without.platforms[0]}).csv, "\n") == 1);  // the header only
}
