// Parts of torchvision's detection models (torchvision.models.detection,
// torchvision 0.26) shared by Mask R-CNN (models/vision/detection/maskrcnn.h) and FCOS
// (models/vision/detection/fcos.h): FrozenBatchNorm2d, the ResNet-50 body with
// _resnet_fpn_extractor's freezing, the FeaturePyramidNetwork with its
// extra blocks (LastLevelMaxPool / LastLevelP6P7), AnchorGenerator,
// GeneralizedRCNNTransform, the box utilities of torchvision.ops.boxes, and
// the seeded COCO-like samples the workloads feed.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace torchgauge::models::detection {

using torch::Tensor;

// torchvision.ops.misc.FrozenBatchNorm2d: batch norm with fixed statistics
// and affine parameters, all buffers.
struct FrozenBatchNorm2dImpl : torch::nn::Module {
  FrozenBatchNorm2dImpl(int64_t n, double eps);
  Tensor forward(const Tensor& x);
  Tensor weight, bias, running_mean, running_var;
  double eps;
};
TORCH_MODULE(FrozenBatchNorm2d);

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias);

// A Sequential that can sit inside another: torchvision's Conv2dNormActivation.
struct BlockImpl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  Tensor forward(const Tensor& x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Block);

// IntermediateLayerGetter over torchvision's resnet50 (Bottleneck, stride on
// the 3x3 conv) with FrozenBatchNorm2d of the given eps; forward returns the
// outputs of layer1..layer4 (C2..C5). _resnet_fpn_extractor(trainable_layers
// = 3): conv1 and layer1 are frozen.
struct ResNetBodyImpl : torch::nn::Module {
  explicit ResNetBodyImpl(double bn_eps);
  std::vector<Tensor> forward(const Tensor& x);
  torch::nn::Conv2d conv1{nullptr};
  FrozenBatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
};
TORCH_MODULE(ResNetBody);

// torchvision.ops.feature_pyramid_network.LastLevelP6P7 with in == out
// channels (use_P5): P6 = conv3x3/2(P5), P7 = conv3x3/2(relu(P6)).
struct LastLevelP6P7Impl : torch::nn::Module {
  explicit LastLevelP6P7Impl(int64_t channels);
  torch::nn::Conv2d p6{nullptr}, p7{nullptr};
};
TORCH_MODULE(LastLevelP6P7);

enum class FpnExtra { kMaxPool, kP6P7 };

// torchvision.ops.FeaturePyramidNetwork (256 channels, nearest top-down,
// kaiming_uniform(a=1) weights, zero biases) over the given input channels,
// then its extra block: LastLevelMaxPool (one more level, max_pool 1x1 / 2)
// or LastLevelP6P7 from P5 (two more levels, module "extra_blocks").
struct FpnImpl : torch::nn::Module {
  FpnImpl(const std::vector<int64_t>& in_channels, FpnExtra extra);
  std::vector<Tensor> forward(const std::vector<Tensor>& c);
  torch::nn::ModuleList inner_blocks{nullptr}, layer_blocks{nullptr};
  LastLevelP6P7 extra_blocks{nullptr};
  FpnExtra extra;
};
TORCH_MODULE(Fpn);

// ---------------------------------------------------------------- boxes
Tensor BoxArea(const Tensor& b);
Tensor BoxIou(const Tensor& a, const Tensor& b);
Tensor ClipBoxes(const Tensor& boxes, int64_t height, int64_t width);  // clip_boxes_to_image
Tensor RemoveSmallBoxes(const Tensor& b, double min_size);
// batched_nms: torchvision::nms per class (coordinate offsets, or class by
// class above torchvision's size switch).
Tensor BatchedNms(const Tensor& boxes, const Tensor& scores, const Tensor& idxs, double iou);
// transform.resize_boxes from (h, w) `from` to `to`.
Tensor ResizeBoxes(const Tensor& boxes, std::pair<int64_t, int64_t> from, std::pair<int64_t, int64_t> to);

// AnchorGenerator over the padded batch, one size per level and the given
// aspect ratios: the anchors of all levels, concatenated (shared by all
// images).
Tensor Anchors(const std::vector<Tensor>& features, int64_t image_h, int64_t image_w, const std::vector<double>& sizes,
               const std::vector<double>& ratios);

// ------------------------------------------------------------ transform
struct ImageBatch {
  Tensor tensors;                                  // padded (N, 3, H, W)
  std::vector<std::pair<int64_t, int64_t>> sizes;  // resized (h, w) of each image
};

struct Target {
  Tensor boxes, labels, masks;  // masks undefined for box-only models
};

struct TransformSizes {
  int64_t min_size = 800, max_size = 1333, size_divisible = 32;
};

// GeneralizedRCNNTransform: normalize (ImageNet mean/std), resize (bilinear;
// targets' boxes scaled, masks nearest), zero-padded batch divisible by
// size_divisible. In training torch_choice draws one uniform per image from
// the default generator, as torchvision's does.
ImageBatch TransformImages(const std::vector<Tensor>& images, std::vector<Target>* targets, const TransformSizes& s,
                           bool training);

// Checks torchvision's "All bounding boxes should have positive height and width."
void CheckBoxes(const std::vector<Target>& targets);

// ------------------------------------------------------------- samples
// The 80 COCO category ids (1..90 with gaps), as COCO val2017's labels.
const std::vector<int64_t>& CocoCategoryIds();

// One seeded COCO-like sample image<i>, boxes<i>, labels<i> (COCO ids) and,
// with `masks`, masks<i> (see detection_common.cc for the statistics).
void MakeSample(std::map<std::string, Tensor>& in, int64_t i, int64_t long_side, const torch::Device& device,
                bool masks);

}  // namespace torchgauge::models::detection
