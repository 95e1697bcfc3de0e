// Everything that touches the CUDA (or HIP, on ROCm builds of LibTorch) C++
// API: device properties, event timing, caching-allocator statistics and
// synchronisation. Compiled on every build (the LibTorch wheel is a CUDA
// build), exercised only where a GPU is present.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace torchgauge::collector {

struct CudaDeviceProps {
  std::string name;
  std::string capability;  // "9.0"
  std::string arch;        // gcnArchName on ROCm
  int multiprocessor_count = 0;
  int64_t memory_bytes = 0;
};

CudaDeviceProps CudaProps();
void CudaSynchronize();

// Times one interval on the current stream with CUDA events.
class CudaTimer {
 public:
  CudaTimer();
  ~CudaTimer();
  void Start();
  // Records the stop event, waits for it, returns milliseconds.
  double StopMs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct CudaMemoryStats {
  int64_t allocated = 0, peak_allocated = 0, peak_reserved = 0;
};
void CudaResetPeakMemory();
CudaMemoryStats CudaMemory();

}  // namespace torchgauge::collector
