// Precompiled header: the LibTorch API that models and the collector use.
// Parsing these headers dominates compile time, so they are parsed once.
#pragma once
#include <torch/torch.h>
