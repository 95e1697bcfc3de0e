// What the manifest records about the software and the machine, detected
// from LibTorch and the OS at run time, and the automatic build and
// platform ids derived from it. Read-only: nothing here changes clocks or
// device settings.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/contract/run_settings.h"

namespace torchgauge::collector {

// "cuda" when LibTorch sees a CUDA/ROCm device, else "cpu".
std::string BestDevice();
bool CudaAvailable();

// Who built the LibTorch under test, read from the files beside its
// libraries (`lib_dir`, the folder holding libtorch_cpu.so): a PyPI wheel's
// torch/version.py (git_version, cuda, hip, __version__) or a C++
// distribution's build-hash and build-version. Returns the manifest's
// libtorch fields git_commit, build_version, cuda_build, hip_build (null
// where the files do not say) and origin {kind: "python-package" |
// "libtorch-distribution" | "unknown", path}.
nlohmann::json ReadTorchBuildIdentity(const std::filesystem::path& lib_dir);
// The folder of the libtorch_cpu.so this process runs with.
std::filesystem::path LoadedLibTorchDir();

// The manifest's collector block: version, git commit, compiler.
nlohmann::json CollectorIdentity();

// libtorch, device, cpu and host blocks of the manifest for `device`.
nlohmann::json DescribeEnvironment(const std::string& device);

// Current SM clock and power state, where the runtime can read them
// (nvidia-smi query, read-only); null otherwise.
nlohmann::json ReadClocks(const std::string& device);

// Slugs: e.g. "cpu-x86_64-2c", "nvidia-h100-80gb-hbm3-cu130", "2.11.0-cu130-20261122".
// With `threads` > 0 (--threads N) the platform id ends in "-<N>t": the same
// machine limited to N intra-op threads is a platform of its own, compared
// with the unlimited one rather than mixed into it ("cpu-x86_64-2c-1t").
std::string AutoPlatformId(const nlohmann::json& environment, const core::RunSettings& settings = {});
std::string AutoBuildId(const nlohmann::json& environment);

// The current process's resident set (VmRSS) and peak (VmHWM) in bytes.
int64_t CurrentRssBytes();
int64_t PeakRssBytes();
// Resets VmHWM to the current RSS (writes 5 to Linux's clear_refs, by
// default /proc/self/clear_refs); false if not possible.
bool ResetPeakRss(const std::string& clear_refs = "/proc/self/clear_refs");

}  // namespace torchgauge::collector
