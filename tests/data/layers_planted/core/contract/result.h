// Stands in for core/contract/result.h in core_layers_planted_test.
#pragma once
