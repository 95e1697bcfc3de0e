// Stands in for reporter/site/site.h in reporter_layers_planted_test.
#pragma once
