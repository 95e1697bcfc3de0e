// A stand-in: the platform layer including a backend, above it, which
// collector_layers_planted_test must name.
#pragma once
#include "collector/backends/backend.h"
