// torchvision's own C++ operators (torchvision::roi_align, torchvision::nms),
// reached through the dispatcher by name after loading the torchvision
// wheel's operator library (site-packages/torchvision/_C.so, or from 0.29
// _C_stable.so, built on LibTorch's stable ABI and needing nothing more) at
// run time. No Python interpreter is started: _C.so links libtorch_python.so, whose
// Python symbols come from libpython, loaded first with RTLD_GLOBAL; then
// libtorch_python.so from the directory of the running libtorch_cpu.so (the
// RPATH in _C.so names torchvision's build machine), then _C.so.
//
// Paths: found at CMake configure time from TORCHGAUGE_PYTHON (models/
// CMakeLists.txt); the environment variables TORCHGAUGE_TORCHVISION_OPS and
// TORCHGAUGE_LIBPYTHON override them at run time.
#pragma once

#include <torch/types.h>

#include <optional>
#include <string>

namespace torchgauge::models::tvops {

// Loads the library once; nullopt when the operators are usable, otherwise
// why not (naming the missing or unloadable file).
std::optional<std::string> Unavailable();

// torchvision::roi_align, with its autograd stated in torchvision_ops.cc
// (backward: torchvision::_roi_align_backward), since torchvision 0.29's
// library registers that formula from Python only.
torch::Tensor RoiAlign(const torch::Tensor& input, const torch::Tensor& rois, double spatial_scale, int64_t pooled_h,
                       int64_t pooled_w, int64_t sampling_ratio, bool aligned);

// torchvision::nms: indices of the kept boxes, by decreasing score.
torch::Tensor Nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold);

}  // namespace torchgauge::models::tvops
