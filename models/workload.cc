#include "models/workload.h"

#include <torch/cuda.h>
#include <torch/torch.h>


namespace torchgauge::models {

const char* ModeName(Mode mode) { return mode == Mode::kTrain ? "train" : "eval"; }

const char* DomainName(Domain domain) {
  switch (domain) {
    case Domain::kVision: return "vision";
    case Domain::kNlp: return "nlp";
    case Domain::kRecommendation: return "recommendation";
    case Domain::kReinforcementLearning: return "rl";
    case Domain::kSpeech: return "speech";
    case Domain::kOther: return "other";
    case Domain::kTest: return "test";
  }
  return "other";
}

std::optional<Mode> ParseMode(const std::string& name) {
  if (name == "train") return Mode::kTrain;
  if (name == "eval") return Mode::kEval;
  return std::nullopt;
}

void Workload::Step(Mode mode) {
  if (mode == Mode::kTrain) {
    TrainStep();
  } else {
    c10::InferenceMode guard;
    RunForward();
  }
}

void Workload::CastTo(torch::ScalarType dtype) {
  net().to(dtype);
  for (auto& [name, tensor] : inputs_) {
    if (tensor.is_floating_point()) tensor = tensor.to(dtype);
  }
}

void SeedAll(uint64_t seed) {
  torch::manual_seed(seed);
  if (torch::cuda::is_available()) torch::cuda::manual_seed_all(seed);
}

}  // namespace torchgauge::models
