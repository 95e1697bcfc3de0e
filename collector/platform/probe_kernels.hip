// The probe kernels built by hipcc (gfx90a in CI; runs only on an AMD GPU):
// the HIP names for probe_kernels_common.inc.
#include <hip/hip_runtime.h>

using gpuError_t = hipError_t;
using gpuEvent_t = hipEvent_t;
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemset hipMemset
#define gpuMemcpy hipMemcpy
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuGetLastError hipGetLastError

#include "collector/platform/probe_kernels_common.inc"
