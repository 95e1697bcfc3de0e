// torchgauge-gen-fixtures: writes a synthetic results tree (see fixtures.h).
#include <iostream>

#include <CLI/CLI.hpp>

#include "reporter/testing/fixtures.h"

int main(int argc, char** argv) {
  torchgauge::reporter::FixtureSpec spec;
  std::string out;
  CLI::App app("torchgauge-gen-fixtures: synthetic results trees for tests and benchmarks");
  app.add_option("--out", out, "Results directory to write")->required();
  app.add_option("--builds", spec.builds, "Number of builds")->capture_default_str();
  app.add_option("--models", spec.models, "Models per build")->capture_default_str();
  app.add_option("--configs", spec.configs, "Configurations per model (1-8)")->capture_default_str();
  app.add_option("--seed", spec.seed, "Seed")->capture_default_str();
  app.add_option("--first-day", spec.first_day, "Days after 2026-01-01 of the first build")->capture_default_str();
  app.add_option("--plant-at", spec.plant_at,
                 "Build index of a planted step regression and a one-build spike (-1: none)")
      ->capture_default_str();
  app.add_option("--samples", spec.samples,
                 "Timed samples per run (the CPU platform splits 4 or more in two processes)")
      ->capture_default_str();
  app.add_option("--busy-from", spec.busy_from, "Build index from which every run is noisy (-1: none)")
      ->capture_default_str();
  bool no_cpu = false;
  app.add_flag("--no-cpu-platform", no_cpu, "Only the GPU-style platform");
  CLI11_PARSE(app, argc, argv);
  spec.cpu_platform = !no_cpu;
  try {
    size_t n = torchgauge::reporter::GenerateFixtureTree(out, spec);
    std::cout << "Wrote " << n << " run results under " << out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "torchgauge-gen-fixtures: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
