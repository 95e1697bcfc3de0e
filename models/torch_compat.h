// The one adapter between TorchGauge and the LibTorch releases it builds
// against (tools/bootstrap.sh --torch). The collector is built and run
// against 2.11.0 (the pin), 2.13.0, 2.14.1 and 2.15.0. 2.9.0 does not build
// yet: the models compile, but collector/platform/probe.cc and
// collector/precision.cc use APIs 2.9 lacks (listed below, not yet adapted).
// Where LibTorch's C++ API
// differs between releases, the difference is resolved here, keyed on
// TORCH_VERSION_MAJOR/MINOR, and nowhere else: the rest of the code calls
// these functions and includes <torch/version.h> (every release has it;
// 2.11 moved the macros to <torch/headeronly/version.h> and kept the old
// header as a forwarder).
//
// What differs, release by release (found by building against each, and by
// comparing the headers the collector includes):
//   - KinetoEvent::metadataJson(), which carries a memcpy's byte count on
//     GPU traces, arrived after 2.9 (adapted below).
//   - Not yet adapted, so 2.9.0 does not build: at::cpu::get_cpu_capabilities()
//     and the per-backend fp32 precision API (at::Float32Backend,
//     at::Float32Op, Context::float32Precision); 2.9 has only
//     allowTF32CuBLAS/allowTF32CuDNN.
#pragma once

#include <torch/version.h>

#include <optional>
#include <string>

namespace torch::autograd::profiler {
struct KinetoEvent;
}

// True when the LibTorch being compiled against is at least major.minor.
#define TORCHGAUGE_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace torchgauge::compat {

// "2.15.0": the release this binary was compiled against.
std::string CompiledTorchVersion();

// The event's metadata as JSON text (Kineto's "bytes" of a memcpy among
// it), or nullopt where this release does not expose it.
std::optional<std::string> KinetoEventMetadataJson(const torch::autograd::profiler::KinetoEvent& e);

}  // namespace torchgauge::compat
