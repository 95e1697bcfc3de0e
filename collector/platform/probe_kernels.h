// The project's only hand-written GPU kernels: a copy and a triad kernel for
// raw memory bandwidth and an FMA kernel for fp32 arithmetic rate without
// cuBLAS, with cudaMemcpy device-to-device timed beside them as the
// reference. One source (probe_kernels_common.inc) compiled by nvcc
// (probe_kernels.cu) and by hipcc for gfx90a (probe_kernels.hip); the
// interface has no CUDA or HIP types, so the collector's C++ code calls it
// without either toolkit's headers.
#pragma once

#include <cstdint>
#include <string>

namespace torchgauge::collector {

struct GpuKernelFigures {
  double copy_gb_per_s = 0;        // 2 x bytes per copy (read + write)
  double triad_gb_per_s = 0;       // 3 x bytes per triad
  double memcpy_d2d_gb_per_s = 0;  // 2 x bytes, counted as the copy kernel is
  double fma_fp32_tflops = 0;
};

// Measures on the current device with `elements` floats per array, best of
// `repeats` after one warm-up. Returns false with `error` set when there is
// no device or a call fails.
bool MeasureGpuKernels(int64_t elements, int repeats, GpuKernelFigures* out, std::string* error);

}  // namespace torchgauge::collector
