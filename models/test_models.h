// Hidden models that exercise the harness rather than PyTorch (see
// test_models.cc). test_gpu_phases has a step of known composition, so a
// test can check the GPU time breakdown against its own measurement of each
// phase (tests/gpu_breakdown_test.cc); its constants live here for that.
#pragma once

#include <cstdint>

namespace torchgauge::models::gpu_phases {

inline constexpr const char* kModelId = "test_gpu_phases";
// Phase 1, idle: the host busy-waits this long with nothing queued on the device.
inline constexpr double kHostMs = 2.0;
// Phase 2, data movement: a host-to-device copy of this many float32 values
// from pinned memory (64 MiB).
inline constexpr int64_t kCopyFloats = int64_t{16} << 20;
// Phase 3, active: this many float32 products of two kN x kN matrices.
inline constexpr int kMatmuls = 8;
inline constexpr int64_t kN = 2048;

}  // namespace torchgauge::models::gpu_phases
