#include "models/vision/classification/efficientnet_blocks.h"

#include <torch/torch.h>

namespace torchgauge::models::timm {

torch::Tensor DropPath(const torch::Tensor& x, double rate, bool training) {
  if (rate == 0.0 || !training) return x;
  const double keep = 1.0 - rate;
  auto mask = x.new_empty({x.size(0), 1, 1, 1}).bernoulli_(keep);
  if (keep > 0.0) mask.div_(keep);
  return x * mask;
}

std::vector<StageDef> EfficientNetStages(double depth_multiplier) {
  std::vector<StageDef> stages = {{true, 1, 3, 1, 1, 16},  {false, 2, 3, 2, 6, 24},  {false, 2, 5, 2, 6, 40},
                                  {false, 3, 3, 2, 6, 80}, {false, 3, 5, 1, 6, 112}, {false, 4, 5, 2, 6, 192},
                                  {false, 1, 3, 1, 6, 320}};
  for (auto& s : stages) s.repeats = static_cast<int64_t>(std::ceil(static_cast<double>(s.repeats) * depth_multiplier));
  return stages;
}

}  // namespace torchgauge::models::timm
