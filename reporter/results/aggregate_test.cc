#include "reporter/results/aggregate.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

using namespace torchgauge;
using namespace torchgauge::reporter;

namespace {
core::RunResult Run(const std::string& model, const std::string& domain, const std::string& mode, double median,
                    std::optional<std::array<double, 3>> breakdown = std::nullopt, const std::string& backend = "eager",
                    const std::string& precision = "fp32") {
  core::RunResult r;
  r.model = {model, model, domain, "t", "r"};
  r.mode = mode;
  r.backend = backend;
  r.precision = precision;
  r.timing = core::Timing{};
  r.timing->samples_ms = {median};
  r.timing->median_ms = median;
  if (breakdown) {
    core::GpuBreakdown g;
    g.active_fraction = (*breakdown)[0];
    g.data_movement_fraction = (*breakdown)[1];
    g.idle_fraction = (*breakdown)[2];
    r.gpu_breakdown = g;
  }
  return r;
}
PaperTable2 Paper() {
  PaperTable2 p;
  p.rows.push_back({"vision", "Computer Vision", 53.1, 2.1, 44.8, 62.8, 1.4, 35.7});
  p.rows.push_back({"nlp", "NLP", 84.9, 1.3, 13.8, 64.7, 0.8, 34.5});
  return p;
}
}  // namespace

TEST_CASE("DomainMeans averages configurations per model, then models per domain") {
  std::vector<core::RunResult> runs = {
      Run("a", "vision", "train", 1, {{0.6, 0.1, 0.3}}),
      Run("a", "vision", "train", 1, {{0.8, 0.1, 0.1}}, "eager", "tf32"),  // model a: 0.7
      Run("b", "vision", "train", 1, {{0.3, 0.0, 0.7}}),                   // model b: 0.3
      Run("c", "nlp", "train", 1, {{0.9, 0.0, 0.1}}),
      Run("c", "nlp", "eval", 1, {{0.1, 0.0, 0.9}}),                // other mode: ignored
      Run("d", "nlp", "train", 1, {{0.1, 0.0, 0.9}}, "cudagraph"),  // not eager: ignored
      Run("e", "rl", "train", 1, {{0.2, 0.2, 0.6}}),                // not in the paper: last
  };
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  PaperTable2 paper = Paper();
  auto rows = DomainMeans(ptrs, "train", paper);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].domain == "vision");
  CHECK(rows[0].models == 2);
  CHECK(rows[0].active == doctest::Approx(0.5));
  CHECK(rows[0].idle == doctest::Approx(0.45));
  CHECK(rows[0].paper->train_active == doctest::Approx(53.1));
  CHECK(rows[1].domain == "nlp");
  CHECK(rows[1].models == 1);
  CHECK(rows[1].active == doctest::Approx(0.9));
  CHECK(rows[2].domain == "rl");
  CHECK(rows[2].paper == nullptr);
}

TEST_CASE("BreakdownBars sorts by active share and normalises") {
  std::vector<core::RunResult> runs = {
      Run("low", "rl", "eval", 1, {{0.2, 0.0, 0.6}}), Run("high", "nlp", "eval", 1, {{0.9, 0.05, 0.05}}),
      Run("mid", "vision", "eval", 1, {{0.5, 0.1, 0.4}}), Run("cpu", "vision", "eval", 1)};
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  auto bars = BreakdownBars(ptrs, "eval");
  REQUIRE(bars.size() == 3);
  CHECK(bars[0].model == "high");
  CHECK(bars[1].model == "mid");
  CHECK(bars[2].model == "low");
  CHECK(bars[2].active == doctest::Approx(0.25));  // 0.2 / 0.8
  CHECK(bars[2].active + bars[2].movement + bars[2].idle == doctest::Approx(1.0));
}

TEST_CASE("SuiteGeomean uses the ok eager runs of one mode") {
  std::vector<core::RunResult> runs = {Run("a", "vision", "train", 2), Run("b", "vision", "train", 8),
                                       Run("c", "vision", "eval", 100),
                                       Run("a", "vision", "train", 1, std::nullopt, "torchscript")};
  runs.push_back(Run("d", "vision", "train", 1000));
  runs.back().status = "error";
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  int n = 0;
  auto g = SuiteGeomean(ptrs, "train", &n);
  REQUIRE(g);
  CHECK(*g == doctest::Approx(4.0));
  CHECK(n == 2);
  CHECK_FALSE(SuiteGeomean({}, "eval", &n));
}

TEST_CASE("ApiCoverage counts distinct ops per domain and the union") {
  std::vector<core::RunResult> runs = {Run("a", "vision", "train", 1), Run("b", "vision", "eval", 1),
                                       Run("c", "nlp", "train", 1)};
  runs[0].operators = std::vector<std::string>{"aten::mm", "aten::add.Tensor"};
  runs[1].operators = std::vector<std::string>{"aten::mm", "aten::relu"};
  runs[2].operators = std::vector<std::string>{"aten::mm", "aten::softmax"};
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  auto rows = ApiCoverage(ptrs);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].domain == "nlp");
  CHECK(rows[0].distinct_ops == 2);
  CHECK(rows[1].domain == "vision");
  CHECK(rows[1].distinct_ops == 3);
  CHECK(rows[1].models == 2);
  CHECK(rows[2].domain == "all");
  CHECK(rows[2].distinct_ops == 4);
}

TEST_CASE("Build ordering: started_at, then id") {
  CHECK(BuildBefore("2026-01-01T00:00:00Z", "b", "2026-01-02T00:00:00Z", "a"));
  CHECK(BuildBefore("2026-01-01T00:00:00Z", "a", "2026-01-01T00:00:00Z", "b"));
  CHECK_FALSE(BuildBefore("2026-01-03T00:00:00Z", "a", "2026-01-02T00:00:00Z", "z"));
}

TEST_CASE("BuildSummary round-trips through JSON") {
  BuildSummary s;
  s.id = "b1";
  s.started_at = "2026-01-01T00:00:00Z";
  s.runs = 3;
  s.ok = 2;
  PlatformSummary p;
  p.id = "cpu";
  p.vendor = "CPU";
  p.geomean_train_ms = 1.5;
  p.status_counts = {{"ok", 2}, {"oom", 1}};
  p.medians = {{"m", "train/eager/fp32/bs1", 1.5}, {"m", "eval/eager/fp32/bs1", 0.5, true}};
  p.counts = {{"n", "eval/eager/default/bs2", 554091, 901245}};
  s.platforms.push_back(p);
  BuildSummary t = BuildSummaryFromJson(ToJson(s));
  REQUIRE(t.platforms[0].counts.size() == 1);
  CHECK(t.platforms[0].counts[0].model == "n");
  CHECK(t.platforms[0].counts[0].instructions == 554091);
  CHECK(t.platforms[0].counts[0].est_cycles == 901245);
  CHECK_FALSE(t.platforms[0].medians[0].noisy);
  CHECK(t.platforms[0].medians[1].noisy);
  CHECK(t.id == "b1");
  CHECK(t.platforms[0].geomean_train_ms == 1.5);
  CHECK_FALSE(t.platforms[0].geomean_eval_ms);
  CHECK(t.platforms[0].medians[0].config == "train/eager/fp32/bs1");
}

TEST_CASE("BackendRatios pairs each backend run with eager; SummarizeBackends takes the paper's geomeans") {
  auto mem = [](core::RunResult r, std::optional<int64_t> cpu, std::optional<int64_t> gpu) {
    r.memory = core::Memory{};
    r.memory->cpu_peak_rss_bytes = cpu;
    r.memory->gpu_peak_allocated_bytes = gpu;
    return r;
  };
  std::vector<core::RunResult> runs = {
      mem(Run("a", "vision", "train", 100), 1000, 400),
      mem(Run("a", "vision", "train", 50, std::nullopt, "torchscript"), 500, 800),  // T 0.5, CM 0.5, GM 2
      mem(Run("b", "nlp", "train", 10), 1000, std::nullopt),
      mem(Run("b", "nlp", "train", 20, std::nullopt, "torchscript"), 2000, 100),  // T 2, CM 2, GM not measured
      Run("c", "nlp", "eval", 10, std::nullopt, "torchscript"),                   // no eager partner
      Run("d", "nlp", "eval", 10),
      Run("d", "nlp", "eval", 5, std::nullopt, "torchscript", "bf16"),  // other precision: no partner
  };
  core::RunResult failed = Run("e", "nlp", "train", 10, std::nullopt, "torchscript");
  failed.status = "unsupported";
  runs.push_back(Run("e", "nlp", "train", 10));
  runs.push_back(failed);
  std::vector<const core::RunResult*> ptrs;
  for (auto& r : runs) {
    if (r.status.empty()) r.status = "ok";
    ptrs.push_back(&r);
  }
  runs[1].timing->backend_setup_ms = 1500;
  auto ratios = BackendRatios(ptrs);
  REQUIRE(ratios.size() == 2);
  CHECK(*ratios[0].backend_setup_ms == doctest::Approx(1500));
  CHECK(!ratios[1].backend_setup_ms);
  CHECK(ratios[0].model == "a");
  CHECK(ratios[0].ratio == doctest::Approx(0.5));
  CHECK(*ratios[0].cpu_memory_ratio == doctest::Approx(0.5));
  CHECK(*ratios[0].gpu_memory_ratio == doctest::Approx(2.0));
  CHECK(ratios[1].model == "b");
  CHECK(ratios[1].ratio == doctest::Approx(2.0));
  CHECK(!ratios[1].gpu_memory_ratio.has_value());  // eager did not measure it: absent, not 0

  auto sums = SummarizeBackends(ratios);
  REQUIRE(sums.size() == 1);
  CHECK(sums[0].backend == "torchscript");
  CHECK(sums[0].mode == "train");
  CHECK(sums[0].pairs == 2);
  CHECK(sums[0].time_geomean == doctest::Approx(1.0));  // sqrt(0.5 * 2)
  CHECK(*sums[0].cpu_memory_geomean == doctest::Approx(1.0));
  CHECK(*sums[0].gpu_memory_geomean == doctest::Approx(2.0));  // over the one pair that measured it
}

namespace {
core::SystemLoad Busy(double outside) {
  core::SystemLoad l;
  l.window_s = 2;
  l.cpus = 2;
  l.own_cpu_cores = 1;
  l.outside_cpu_cores = outside;
  l.resolution_cores = 0.01;
  return l;
}
core::ProbeResult CpuPeaks() {
  core::ProbeResult p;
  core::MatmulPeak fp32;
  fp32.precision = "fp32";
  fp32.tflops = 0.2;
  core::MatmulPeak fp16;
  fp16.precision = "fp16";
  fp16.status = "unsupported";
  p.matmul = {fp32, fp16};
  return p;
}
}  // namespace

TEST_CASE("% of peak: analytic rate first, else the profiler's; 'not probed' and missing peaks are never 0") {
  core::RunResult r = Run("a", "vision", "train", 10);
  r.status = "ok";
  Manifest m;
  CHECK(PeakShareOf(r, m).why_not == "not probed");
  CHECK_FALSE(PeakShareOf(r, m).percent);
  m.peaks = CpuPeaks();
  CHECK(PeakShareOf(r, m).why_not == "no FLOP count");
  r.flops = core::Flops{};
  r.flops->achieved_tflops_profiler = 0.05;
  PeakShare s = PeakShareOf(r, m);
  CHECK(s.basis == "profiler");
  CHECK(*s.percent == doctest::Approx(25));
  r.flops->achieved_tflops_analytic = 0.1;
  s = PeakShareOf(r, m);
  CHECK(s.basis == "analytic");
  CHECK(*s.percent == doctest::Approx(50));
  // Above the peak (a peak probed under load): withheld, never published over 100 %.
  r.flops->achieved_tflops_analytic = 0.5;
  s = PeakShareOf(r, m);
  CHECK_FALSE(s.percent);
  CHECK(s.why_not == "withheld: the probed peak is below this run's rate (250 %)");
  r.flops->achieved_tflops_analytic = 0.2;  // exactly the peak: 100 %, published
  CHECK(*PeakShareOf(r, m).percent == doctest::Approx(100));
  r.precision = "fp16";  // unsupported on this CPU
  s = PeakShareOf(r, m);
  CHECK_FALSE(s.percent);
  CHECK(s.why_not == "no fp16 peak");
}

TEST_CASE("% of peak summaries: per domain and the suite, never pooling modes, backends or counting bases") {
  std::vector<core::RunResult> runs = {Run("a", "vision", "train", 10), Run("b", "vision", "eval", 10),
                                       Run("c", "nlp", "train", 10),    Run("d", "nlp", "train", 10),
                                       Run("e", "vision", "train", 10), Run("f", "vision", "train", 10)};
  const double rates[] = {0.02, 0.06, 0.1, 0, 0.04, 0.08};
  for (size_t i = 0; i < runs.size(); ++i) {
    if (rates[i] <= 0) continue;
    runs[i].flops = core::Flops{};
    runs[i].flops->achieved_tflops_analytic = rates[i];
  }
  // e's FLOPs come from the profiler's formulas, not an analytic count.
  runs[4].flops->achieved_tflops_profiler = runs[4].flops->achieved_tflops_analytic;
  runs[4].flops->achieved_tflops_analytic.reset();
  runs[2].status = "oom";  // not ok: left out
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  Manifest m;
  CHECK(SummarizePeakShares(ptrs, m).empty());  // not probed: no summary at all
  m.peaks = CpuPeaks();
  auto s = SummarizePeakShares(ptrs, m);
  // vision: eval (b), train analytic (a, f), train profiler (e); then the suite's three.
  REQUIRE(s.size() == 6);
  CHECK(s[0].domain == "vision");
  CHECK(s[0].mode == "eval");
  CHECK(s[0].runs == 1);
  CHECK(s[0].median_percent == doctest::Approx(30));
  CHECK(s[1].mode == "train");
  CHECK(s[1].basis == "analytic");
  CHECK(s[1].backend == "eager");
  CHECK(s[1].runs == 2);
  CHECK(s[1].median_percent == doctest::Approx(25));  // 10 % and 40 %
  CHECK(s[1].max_percent == doctest::Approx(40));
  CHECK(s[2].basis == "profiler");
  CHECK(s[2].runs == 1);
  CHECK(s[2].median_percent == doctest::Approx(20));
  CHECK(s[3].domain == "all");
  CHECK(s[3].mode == "eval");
  CHECK(s[5].domain == "all");
  CHECK(s[5].basis == "profiler");
}

TEST_CASE("noise: RunNoise marks a run, its bar, its backend ratio and its platform ratio") {
  core::RunResult eager = Run("a", "vision", "train", 10),
                  compiled = Run("a", "vision", "train", 8, std::nullopt, "cudagraph");
  eager.host_breakdown = core::HostBreakdown{};
  eager.host_breakdown->compute_fraction = 0.7;
  eager.host_breakdown->outside_operators_fraction = 0.3;
  eager.host_breakdown->data_movement_ops = {"aten::copy_"};
  eager.host_breakdown->profiler_overhead_per_op_us = 2.5;
  CHECK_FALSE(NoisyVerdict(eager));
  CHECK(NoisySides(eager, "eager", compiled, "cudagraph").empty());
  eager.system_load = Busy(1.4);
  REQUIRE(NoisyVerdict(eager));
  CHECK(NoisySides(eager, "eager", compiled, "cudagraph") == "eager run noisy: other processes used 1.4 cores");
  compiled.system_load = Busy(0.02);  // quiet
  std::vector<const core::RunResult*> ptrs = {&eager, &compiled};
  auto ratios = BackendRatios(ptrs);
  REQUIRE(ratios.size() == 1);
  CHECK(ratios[0].noisy == "eager run noisy: other processes used 1.4 cores");
  auto sums = SummarizeBackends(ratios);
  REQUIRE(sums.size() == 1);
  CHECK(sums[0].noisy == 1);
  auto bars = BreakdownBars(ptrs, "train", BreakdownSource::kHost);
  REQUIRE(bars.size() == 1);
  CHECK(bars[0].noisy);
  const HostBreakdownNote note = HostNote(ptrs);
  CHECK(note.data_movement_ops == std::vector<std::string>{"aten::copy_"});
  CHECK(*note.profiler_overhead_per_op_us == 2.5);
  CHECK(note.overhead_runs == 1);
  // A failed run is never judged: it has no figures.
  eager.status = "error";
  CHECK_FALSE(NoisyVerdict(eager));
}

TEST_CASE("HudCompilerMetrics: pass rate, geomean speedup, compile latency, compression, flags and causes") {
  auto mem = [](core::RunResult r, int64_t cpu) {
    r.memory = core::Memory{};
    r.memory->cpu_peak_rss_bytes = cpu;
    return r;
  };
  std::vector<core::RunResult> runs = {
      mem(Run("a", "vision", "eval", 100), 1000),
      mem(Run("a", "vision", "eval", 50, std::nullopt, "inductor"), 800),  // 2x by the medians, compression 1.25
      mem(Run("b", "nlp", "eval", 10), 1000),
      mem(Run("b", "nlp", "eval", 20, std::nullopt, "inductor"), 2000),  // medians say 0.5x; its paired pass 0.9x
      Run("c", "nlp", "eval", 10),
      Run("c", "nlp", "eval", 10, std::nullopt, "inductor"),  // unsupported
      Run("d", "nlp", "eval", 10),
      Run("d", "nlp", "eval", 10, std::nullopt, "inductor"),  // unsupported, same cause
      Run("e", "nlp", "eval", 10, std::nullopt, "inductor"),  // no ok eager: left out
      Run("f", "nlp", "eval", 10),
      Run("f", "nlp", "eval", 10, std::nullopt, "inductor"),  // its package came from the cache
  };
  runs[5].status = runs[7].status = "unsupported";
  runs[5].reason = runs[7].reason = "inductor: the export or compile failed: boom\nTraceback...";
  runs[1].compile = core::CompileInfo{};
  runs[1].compile->trace_ms = 1000;
  runs[1].compile->convert_ms = 2000;
  runs[1].compile->compile_ms = 6000;
  runs[1].compile->load_ms = 1000;
  runs[3].timing->backend_setup_ms = 2000;
  runs[10].compile = core::CompileInfo{};  // a cache hit: traced and loaded, compiled nothing
  runs[10].compile->cache_hit = true;
  runs[10].compile->trace_ms = 300;
  runs[10].compile->load_ms = 700;
  core::PairedTiming paired;
  paired.speedup = 0.9;
  runs[3].paired = paired;
  std::vector<const core::RunResult*> ptrs;
  for (auto& r : runs) {
    if (r.status.empty()) r.status = "ok";
    ptrs.push_back(&r);
  }
  auto m = HudCompilerMetrics(ptrs);
  REQUIRE(m.size() == 1);
  CHECK(m[0].backend == "inductor");
  CHECK(m[0].mode == "eval");
  CHECK(m[0].attempted == 5);
  CHECK(m[0].passed == 3);
  CHECK(*m[0].geomean_speedup == doctest::Approx(std::cbrt(2.0 * 0.9 * 1.0)));  // b by its paired pass
  // Compilation latency counts the cold compiles only; the cache hit's
  // trace + load is a load time, reported apart.
  CHECK(*m[0].mean_compile_s == doctest::Approx(6.0));  // (10 s + 2 s) / 2
  CHECK(m[0].compiles == 2);
  REQUIRE(m[0].mean_load_s.has_value());
  CHECK(*m[0].mean_load_s == doctest::Approx(1.0));
  CHECK(m[0].cache_hits == 1);
  CHECK(*m[0].compression_geomean == doctest::Approx(std::sqrt(1.25 * 0.5)));
  CHECK(m[0].slow == 1);
  CHECK(m[0].poor_compression == 1);
  REQUIRE(m[0].failure_causes.size() == 1);
  CHECK(m[0].failure_causes[0].first == "unsupported: inductor: the export or compile failed: boom");
  CHECK(m[0].failure_causes[0].second == 2);
}

TEST_CASE("PairedVerdict: a range on one side of 1 is faster or slower, one that includes 1 is within noise") {
  core::PairedTiming p;
  p.speedup = 1.2;
  CHECK(PairedVerdict(p) == "one process: no interval");
  p.speedup_low = 1.1;
  p.speedup_high = 1.3;
  CHECK(PairedVerdict(p) == "faster");
  p.speedup_low = 0.98;
  CHECK(PairedVerdict(p) == "within noise");
  p.speedup = 0.9;
  p.speedup_low = 0.85;
  p.speedup_high = 1.0;  // touching 1 counts as including it
  CHECK(PairedVerdict(p) == "within noise");
  p.speedup_high = 0.95;
  CHECK(PairedVerdict(p) == "slower");
}

TEST_CASE("GenerationRows: the generative runs, measured or with the reason they were not") {
  std::vector<core::RunResult> runs = {Run("resnet", "vision", "eval", 1), Run("llm", "nlp", "eval", 5),
                                       Run("llm", "nlp", "eval", 4, std::nullopt, "inductor"),
                                       Run("llm", "nlp", "train", 9)};
  runs[0].status = runs[1].status = runs[2].status = runs[3].status = "ok";
  core::Generation g;
  g.prompt_tokens = 32;
  g.decode_steps = 2;
  g.output_tokens = 3;
  g.generations = 1;
  g.ttft_samples_ms = {4};
  g.tpot_samples_ms = {1, 1};
  core::SummarizeGeneration(g);
  runs[1].generation = g;
  runs[2].generation_reason = "inductor: prefill and decode are not compiled";
  std::vector<const core::RunResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  const auto rows = GenerationRows(ptrs);
  REQUIRE(rows.size() == 2);  // neither the vision run nor the train run
  CHECK(rows[0].backend == "eager");
  REQUIRE(rows[0].generation);
  CHECK(rows[0].generation->tokens_per_s == doctest::Approx(500));  // 3 tokens in 6 ms
  CHECK(rows[1].backend == "inductor");
  CHECK_FALSE(rows[1].generation);
  CHECK(rows[1].reason == "inductor: prefill and decode are not compiled");
}
