// Thrown by a workload factory when this machine cannot run the model at all
// (a run-time library it needs cannot be loaded, say). The collector's worker
// records the run as `unsupported` with what() as the reason, never as an
// error and never by falling back to other code.
#pragma once

#include <stdexcept>
#include <string>

namespace torchgauge::models {

class UnsupportedError : public std::runtime_error {
 public:
  explicit UnsupportedError(const std::string& why) : std::runtime_error(why) {}
};

}  // namespace torchgauge::models
