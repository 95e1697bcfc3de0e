#include "reporter/pages/charts.h"

#include <doctest/doctest.h>

using namespace torchgauge::reporter;
using nlohmann::json;

namespace {
std::vector<TrendPoint> Points(bool noisy_second, const std::string& facet = "") {
  return {{"b1", "2026-01-01T00:00:00Z", "eager/fp32", 10.0, facet},
          {"b2", "2026-01-02T00:00:00Z", "eager/fp32", 12.0, facet, noisy_second}};
}
}  // namespace

TEST_CASE("trend charts: a noisy point gets a cross and a tooltip; a clean chart is unchanged") {
  const json clean = TrendChart(Points(false), "m: median", "ms");
  CHECK_FALSE(clean.contains("layer"));
  CHECK(clean["data"]["values"][0].contains("noisy") == false);
  CHECK(clean["transform"][0]["flatten"] == json({"build", "t", "ms"}));

  const json noisy = TrendChart(Points(true), "m: median", "ms");
  CHECK(noisy["title"].dump().find("\xC3\x97: noisy run") != std::string::npos);
  CHECK(noisy["data"]["values"][0]["noisy"] == json({false, true}));
  CHECK(noisy["transform"][0]["flatten"] == json({"build", "t", "ms", "noisy"}));
  REQUIRE(noisy["layer"].size() == 2);
  // The legend selection stays with the line; the crosses are drawn over the noisy points only.
  CHECK(noisy["layer"][0]["params"][0]["name"] == "pick");
  CHECK(noisy["layer"][0]["mark"]["type"] == "line");
  CHECK(noisy["layer"][1]["transform"][0]["filter"] == "datum.noisy");
  CHECK(noisy["layer"][1]["mark"]["shape"] == "cross");
  CHECK(noisy["layer"][1]["encoding"]["y"] == noisy["layer"][0]["encoding"]["y"]);
  CHECK(noisy["layer"][1]["encoding"]["tooltip"].back()["field"] == "noise");
  // The top level keeps only the reader's controls (log scale, since).
  CHECK(noisy["params"].size() == 2);

  // Small multiples: the layered unit is the facet's spec.
  std::vector<TrendPoint> many;
  for (int f = 0; f < 2; ++f) {
    for (int s = 0; s < 4; ++s) {
      for (auto p : Points(s == 0 && f == 1, "plat" + std::to_string(f))) {
        p.series = "cfg" + std::to_string(s);
        many.push_back(p);
      }
    }
  }
  const json faceted = TrendChart(many, "m: median", "ms");
  REQUIRE(faceted.contains("facet"));
  CHECK(faceted["spec"]["layer"].size() == 2);
  CHECK(faceted["spec"]["width"] == 300);
}

TEST_CASE("the paired chart: a bar for each range, coloured by verdict; runs without a paired pass left out") {
  auto paired = [](double speedup, std::optional<double> low, std::optional<double> high) {
    torchgauge::core::PairedTiming p;
    p.order = "interleaved";
    p.speedup = speedup;
    p.speedup_low = low;
    p.speedup_high = high;
    if (low) p.process_speedups = {*low, speedup, *high};
    return p;
  };
  const auto faster = paired(1.4, 1.3, 1.5), noise = paired(1.02, 0.97, 1.08), single = paired(0.8, {}, {});
  std::vector<BackendRatio> ratios(4);
  const char* models[] = {"a", "b", "c", "d"};
  const torchgauge::core::PairedTiming* passes[] = {&faster, &noise, &single, nullptr};
  for (int i = 0; i < 4; ++i) {
    ratios[i].model = models[i];
    ratios[i].mode = "eval";
    ratios[i].backend = "inductor";
    ratios[i].precision = "default";
    ratios[i].paired = passes[i];
  }
  const json spec = PairedChart(ratios, "paired");
  const json cols = spec["data"]["values"][0];
  // Sorted by speedup; "d" has no paired pass.
  CHECK(cols["run"] ==
        json({"c (eval, inductor, default)", "b (eval, inductor, default)", "a (eval, inductor, default)"}));
  CHECK(cols["verdict"] == json({"one process: no interval", "within noise", "faster"}));
  CHECK(cols["low"] == json({nullptr, 0.97, 1.3}));
  CHECK(cols["high"] == json({nullptr, 1.08, 1.5}));
  CHECK(cols["processes"] == json({1, 3, 3}));
  REQUIRE(spec["layer"].size() == 3);
  // The range bar is drawn only where there is a range, from low to high.
  CHECK(spec["layer"][0]["transform"][0]["filter"] == "isValid(datum.low)");
  CHECK(spec["layer"][0]["encoding"]["x"]["field"] == "low");
  CHECK(spec["layer"][0]["encoding"]["x2"]["field"] == "high");
  CHECK(spec["layer"][1]["encoding"]["color"]["field"] == "verdict");
  CHECK(spec["layer"][2]["encoding"]["x"]["datum"] == 1);
}

#include "reporter/pages/model_page_data.h"

TEST_CASE("model history: counted runs make a counted series beside the timed ones, in millions") {
  auto build = [](const std::string& id, const std::string& t, double ir, double cycles) {
    BuildSummary b;
    b.id = id;
    b.started_at = t;
    PlatformSummary p;
    p.id = "cpu-counted";
    p.counts = {{"ncf", "eval/eager/default/bs2", ir, cycles}};
    b.platforms.push_back(p);
    PlatformSummary timed;
    timed.id = "cpu";
    timed.medians = {{"ncf", "eval/eager/default/bs2", 1.25}};
    b.platforms.push_back(timed);
    return b;
  };
  const auto histories = ModelHistories(
      {build("b1", "2026-01-01T00:00:00Z", 554091, 901245), build("b2", "2026-01-02T00:00:00Z", 567412, 917211)});
  const ModelHistory& h = histories.at("ncf");
  REQUIRE(h.series.size() == 1);
  REQUIRE(h.counted.size() == 1);
  CHECK(h.counted[0].builds == std::vector<int>{0, 1});
  CHECK(h.counted[0].facet == "cpu-counted \xC2\xB7 eval \xC2\xB7 bs2");
  CHECK(h.latest == "b2");
  const json j = ToJson(h);
  CHECK(j["counted"][0]["cycles"] == json({0.9012, 0.9172}));
  CHECK(j["counted"][0]["ir"] == json({0.5541, 0.5674}));
  // A model with no counted run has no "counted" key: the timed history's bytes are unchanged.
  CHECK_FALSE(ToJson(ModelHistories({}).operator[]("x")).contains("counted"));
}
