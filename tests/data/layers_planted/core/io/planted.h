// A planted upward include for core_layers_planted_test: io/ is below contract/.
#pragma once
#include "core/contract/result.h"
