// A stand-in: a family of one domain including another domain's header, which
// models_layers_planted_test must name.
#pragma once
#include "models/vision/classification/resnet.h"
