#include "collector/cuda_support.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

namespace torchgauge::collector {

CudaDeviceProps CudaProps() {
  const auto* p = at::cuda::getCurrentDeviceProperties();
  CudaDeviceProps out;
  out.name = p->name;
  out.capability = std::to_string(p->major) + "." + std::to_string(p->minor);
#if defined(USE_ROCM)
  out.arch = p->gcnArchName;
#endif
  out.multiprocessor_count = p->multiProcessorCount;
  out.memory_bytes = static_cast<int64_t>(p->totalGlobalMem);
  return out;
}

void CudaSynchronize() { c10::cuda::device_synchronize(); }

struct CudaTimer::Impl {
  at::cuda::CUDAEvent start{cudaEventDefault};
  at::cuda::CUDAEvent stop{cudaEventDefault};
};

CudaTimer::CudaTimer() : impl_(std::make_unique<Impl>()) {}
CudaTimer::~CudaTimer() = default;

void CudaTimer::Start() { impl_->start.record(at::cuda::getCurrentCUDAStream()); }

double CudaTimer::StopMs() {
  impl_->stop.record(at::cuda::getCurrentCUDAStream());
  impl_->stop.synchronize();
  return static_cast<double>(impl_->start.elapsed_time(impl_->stop));
}

void CudaResetPeakMemory() { c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device()); }

CudaMemoryStats CudaMemory() {
  using c10::CachingAllocator::StatType;
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  const auto agg = static_cast<size_t>(StatType::AGGREGATE);
  CudaMemoryStats out;
  out.allocated = stats.allocated_bytes[agg].current;
  out.peak_allocated = stats.allocated_bytes[agg].peak;
  out.peak_reserved = stats.reserved_bytes[agg].peak;
  return out;
}

}  // namespace torchgauge::collector
