// The project's own CUDA kernels on a real GPU: the copy kernel's bandwidth
// within 20 % of cudaMemcpy device-to-device (both count a read and a write
// per byte), the triad and FMA figures positive. Exit 77 (skipped) without a
// CUDA device.
#include <cmath>
#include <cstdio>
#include <string>

#include "collector/platform/probe_kernels.h"

int main() {
  torchgauge::collector::GpuKernelFigures f;
  std::string error;
  // 64 Mi floats: 256 MiB per array, far beyond any GPU's L2.
  if (!torchgauge::collector::MeasureGpuKernels(int64_t{1} << 26, 10, &f, &error)) {
    std::printf("skipped: %s\n", error.c_str());
    return 77;
  }
  std::printf("copy kernel %.1f GB/s, triad kernel %.1f GB/s, cudaMemcpy D2D %.1f GB/s, FMA kernel %.2f TFLOP/s fp32\n",
              f.copy_gb_per_s, f.triad_gb_per_s, f.memcpy_d2d_gb_per_s, f.fma_fp32_tflops);
  int failures = 0;
  const double ratio = f.copy_gb_per_s / f.memcpy_d2d_gb_per_s;
  if (!(std::fabs(ratio - 1.0) <= 0.20)) {
    std::printf("FAIL: copy kernel / cudaMemcpy D2D = %.3f, outside 1 +- 0.20\n", ratio);
    ++failures;
  }
  for (double v : {f.triad_gb_per_s, f.fma_fp32_tflops}) {
    if (!(std::isfinite(v) && v > 0)) {
      std::printf("FAIL: a figure is not positive and finite\n");
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
