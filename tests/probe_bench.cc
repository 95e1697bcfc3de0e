// The probe's CPU figures beside an independent reference, for the closing
// note of issue 13: `probe` at its default sizes (matmul n=2048, triad over
// 4x the last-level cache), then tools/probe_reference.py (NumPy) at the same
// sizes, and LibTorch's fp32 matmul as a percentage of NumPy's (the issue
// asks for >= 80 %). Prints only; label bench (no assertion on speed).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector/platform/probe.h"

int main() {
  using namespace torchgauge;
  collector::ProbeOptions o;
  const auto p = collector::RunProbe(o);
  std::printf("%s", collector::FormatProbe(p).c_str());
  const std::string python = TORCHGAUGE_PYTHON;
  if (python.empty() || !p.triad) return 0;
  const std::string cmd = python + " " + TORCHGAUGE_SOURCE_DIR + "/tools/probe_reference.py --n 2048 --elements " +
                          std::to_string(p.triad->elements) + " --repeats " + std::to_string(o.repeats) + " --warmup " +
                          std::to_string(o.warmup);
  std::fflush(stdout);
  return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
