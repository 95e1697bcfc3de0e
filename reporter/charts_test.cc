#include "reporter/charts.h"

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
