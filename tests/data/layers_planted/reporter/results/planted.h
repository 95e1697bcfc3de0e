// A planted upward include for reporter_layers_planted_test: results/ is below site/.
#pragma once
#include "reporter/site/site.h"
