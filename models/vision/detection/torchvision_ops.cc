#include "models/vision/detection/torchvision_ops.h"

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <torch/autograd.h>

#include <cstdlib>
#include <filesystem>

#ifndef TORCHGAUGE_TORCHVISION_OPS
#define TORCHGAUGE_TORCHVISION_OPS ""
#endif
#ifndef TORCHGAUGE_LIBPYTHON
#define TORCHGAUGE_LIBPYTHON ""
#endif

namespace torchgauge::models::tvops {
namespace {

std::string PathFrom(const char* env, const char* configured) {
  const char* v = std::getenv(env);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string(configured);
}

// dlopen with RTLD_GLOBAL; an error message naming the file, or nullopt.
std::optional<std::string> Open(const std::string& path, const std::string& what, const char* env) {
  if (path.empty()) {
    return what + " is not known: configure with TORCHGAUGE_PYTHON (a Python with torchvision) or set " + env;
  }
  if (!std::filesystem::exists(path)) return what + " not found: " + path + " (set " + env + ")";
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* err = dlerror();
    return what + " " + path + " cannot be loaded: " + (err ? err : "unknown dlopen error");
  }
  return std::nullopt;
}

// libtorch_python.so beside the libtorch_cpu.so this process runs with: _C.so
// needs it by name and its own RPATH points at torchvision's build machine.
std::string TorchPythonLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::globalContext), &info) == 0 || info.dli_fname == nullptr) return "";
  return (std::filesystem::path(info.dli_fname).parent_path() / "libtorch_python.so").string();
}

std::optional<std::string> LoadOnce() {
  const std::string libpython = PathFrom("TORCHGAUGE_LIBPYTHON", TORCHGAUGE_LIBPYTHON);
  const std::string ops = PathFrom("TORCHGAUGE_TORCHVISION_OPS", TORCHGAUGE_TORCHVISION_OPS);
  // torchvision 0.29 on builds its operators against LibTorch's stable ABI
  // as _C_stable.so, which needs neither libpython nor libtorch_python.
  const bool stable_abi = std::filesystem::path(ops).filename() == "_C_stable.so";
  if (!stable_abi) {
    if (auto why = Open(libpython, "libpython (needed by torchvision's _C.so)", "TORCHGAUGE_LIBPYTHON")) return why;
    if (auto why = Open(TorchPythonLibrary(), "libtorch_python.so (needed by torchvision's _C.so)",
                        "TORCHGAUGE_TORCHVISION_OPS")) {
      return why;
    }
  }
  if (auto why = Open(ops, "torchvision's operator library", "TORCHGAUGE_TORCHVISION_OPS")) return why;
  for (const char* op : {"torchvision::roi_align", "torchvision::nms"}) {
    if (!c10::Dispatcher::singleton().findSchema({op, ""})) {
      return std::string(op) + " is not registered after loading " + ops;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> Unavailable() {
  static const std::optional<std::string> why = LoadOnce();
  return why;
}

namespace {

// roi_align's autograd, stated here rather than taken from the library:
// torchvision 0.29's _C_stable.so registers the forward and
// torchvision::_roi_align_backward but leaves the autograd formula to
// Python (torchvision/_autograd_registrations.py), so through the
// dispatcher alone the backward silently gives no gradient to the
// features. Older _C.so registered the same formula in C++.
class RoiAlignFunction : public torch::autograd::Function<RoiAlignFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               const torch::Tensor& rois, double spatial_scale, int64_t pooled_h, int64_t pooled_w,
                               int64_t sampling_ratio, bool aligned) {
    ctx->save_for_backward({rois});
    ctx->saved_data["spatial_scale"] = spatial_scale;
    ctx->saved_data["pooled_h"] = pooled_h;
    ctx->saved_data["pooled_w"] = pooled_w;
    ctx->saved_data["sampling_ratio"] = sampling_ratio;
    ctx->saved_data["aligned"] = aligned;
    ctx->saved_data["input_shape"] = input.sizes().vec();
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    static auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow("torchvision::roi_align", "")
            .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, c10::SymInt, c10::SymInt, int64_t, bool)>();
    return op.call(input, rois, spatial_scale, c10::SymInt(pooled_h), c10::SymInt(pooled_w), sampling_ratio, aligned);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_output) {
    const auto rois = ctx->get_saved_variables()[0];
    const auto shape = ctx->saved_data["input_shape"].toIntVector();
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("torchvision::_roi_align_backward", "");
    torch::jit::Stack stack{grad_output[0].contiguous(),
                            rois,
                            ctx->saved_data["spatial_scale"],
                            ctx->saved_data["pooled_h"],
                            ctx->saved_data["pooled_w"],
                            shape[0],
                            shape[1],
                            shape[2],
                            shape[3],
                            ctx->saved_data["sampling_ratio"],
                            ctx->saved_data["aligned"]};
    op.callBoxed(&stack);
    return {stack.at(0).toTensor(), torch::Tensor(), torch::Tensor(), torch::Tensor(),
            torch::Tensor(),        torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor RoiAlign(const torch::Tensor& input, const torch::Tensor& rois, double spatial_scale, int64_t pooled_h,
                       int64_t pooled_w, int64_t sampling_ratio, bool aligned) {
  if (auto why = Unavailable()) TORCH_CHECK(false, *why);
  return RoiAlignFunction::apply(input, rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned);
}

torch::Tensor Nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold) {
  if (auto why = Unavailable()) TORCH_CHECK(false, *why);
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("torchvision::nms", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  return op.call(boxes, scores, iou_threshold);
}

}  // namespace torchgauge::models::tvops
