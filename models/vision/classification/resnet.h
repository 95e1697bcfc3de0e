// The resnet family: torchvision's ResNet network (models/shared/
// resnet_network.h) registered as resnet18 (BasicBlock, [2,2,2,2]), resnet50
// (Bottleneck, [3,4,6,3]), resnet152 (Bottleneck, [3,8,36,3]) and
// resnext50_32x4d (Bottleneck, [3,4,6,3], 32 groups of width 4), each in
// torchvision's classification harness.
#pragma once

#include <vector>

#include "models/shared/resnet_network.h"
#include "models/workload.h"

namespace torchgauge::models {

// Registers resnet18, resnet50, resnet152 and resnext50_32x4d.
void AddResNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
