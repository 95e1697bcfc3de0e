// The contract between a benchmark model and everything that measures it.
//
// A model family (one file pair in a domain folder under models/) describes
// each of its variants with a ModelInfo and builds a Workload for one (mode,
// device, batch size).
// A Workload owns the network, its seeded example inputs (already on the
// device, as in the paper's setup: data loading is out of scope) and, for
// train mode, its loss and optimizer. The collector times Step(); parity
// tests reach into net(), inputs(), Forward() and TrainStep() to compare with
// the Python reference.
//
// Backends other than eager replace the forward pass: the collector installs a
// compiled forward (SetCompiledForward) and Step()/TrainStep() reach it through
// RunForward(). Loss, backward, optimizer and any host-side work stay eager, as
// when a Python user compiles the model and keeps the training loop.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/contract/vocabulary.h"

namespace torch::optim {
class Optimizer;
}

namespace torchgauge::models {

// The contract's vocabulary (core/contract/vocabulary.h): a model's domain and the
// mode it runs in are the same enums the result records by name.
using Mode = core::Mode;
using Domain = core::Domain;

inline const char* ModeName(Mode mode) { return core::Name(mode); }  // "train" | "eval"

struct BatchSizes {
  int64_t train = 1;
  int64_t eval = 1;
  int64_t For(Mode mode) const { return mode == Mode::kTrain ? train : eval; }
};

struct WorkloadOptions {
  Mode mode = Mode::kEval;
  torch::Device device = torch::kCPU;
  int64_t batch_size = 1;
  uint64_t seed = 0;
  // Smoke runs (a quick health check on small CPUs): a model may shrink input
  // dimensions that are not part of its architecture (the spatial size of a
  // fully convolutional network, say). The result records it as smoke.
  bool smoke = false;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // The network whose parameters are trained and whose state-dict names must
  // match the reference implementation's.
  virtual torch::nn::Module& net() = 0;

  // Named example inputs (and targets), created seeded on the device. A parity
  // test may replace a tensor here with the reference's before calling
  // Forward()/TrainStep(); names match the Python reference script.
  std::map<std::string, torch::Tensor>& inputs() { return inputs_; }

  // The model's forward pass on inputs(); returns the output compared in
  // parity tests. Callers decide the grad mode.
  virtual torch::Tensor Forward() = 0;

  // The forward pass as the run's backend executes it: the compiled forward
  // when one is installed, Forward() otherwise. Step() and TrainStep() call
  // this, never Forward() directly.
  torch::Tensor RunForward() { return compiled_forward_ ? compiled_forward_() : Forward(); }
  void SetCompiledForward(std::function<torch::Tensor()> forward) { compiled_forward_ = std::move(forward); }
  const std::function<torch::Tensor()>& compiled_forward() const { return compiled_forward_; }

  // A compiled train step, where a backend compiles forward, loss and
  // backward together (inductor's joint package): Step(kTrain) runs it in
  // place of TrainStep(). Returns the (detached) loss.
  void SetCompiledTrainStep(std::function<torch::Tensor()> step) { compiled_train_step_ = std::move(step); }
  const std::function<torch::Tensor()>& compiled_train_step() const { return compiled_train_step_; }
  // The train step split into the parts a joint forward-backward compiler
  // needs: the loss of one forward pass over inputs() (calling Forward(), with
  // no zero_grad, backward or optimizer step), and the one optimizer that
  // TrainStep() steps over net()'s parameters. Empty where the step does not
  // split so (several optimizers, several forward passes, host work between
  // them, gradients clipped or rescaled); a backend then says why.
  struct TrainParts {
    std::function<torch::Tensor()> loss;
    torch::optim::Optimizer* optimizer = nullptr;
  };
  virtual std::optional<TrainParts> SplitTrainStep() { return std::nullopt; }
  // Why a compiled forward cannot stand for this workload's computation in
  // `mode` (its step differentiates inside the forward, say, or trains
  // networks that Forward() does not run); nullopt when it can.
  virtual std::optional<std::string> CompiledForwardUnsupported(Mode) const { return std::nullopt; }

  // One training iteration, the paper's Listing 1 segment: forward, loss,
  // zero_grad, backward, optimizer step. Returns the (detached) loss.
  virtual torch::Tensor TrainStep() = 0;

  // One measured iteration in the workload's mode. Eval runs Forward() under
  // inference mode. RL workloads override this to include their CPU-side
  // environment step.
  virtual void Step(Mode mode);

  // Analytic FLOPs of one Step() in the given mode when the model can state
  // them (e.g. from layer shapes); nullopt otherwise.
  virtual std::optional<double> AnalyticFlops(Mode) const { return std::nullopt; }

  // Converts parameters and floating-point inputs to `dtype` (bf16/fp16 runs).
  // Models with extra floating state override and call this.
  virtual void CastTo(torch::ScalarType dtype);

  // Samples processed by one Step() (usually the batch size), for throughput.
  int64_t samples_per_step() const { return samples_per_step_; }

 protected:
  std::map<std::string, torch::Tensor> inputs_;
  int64_t samples_per_step_ = 1;

 private:
  std::function<torch::Tensor()> compiled_forward_;
  std::function<torch::Tensor()> compiled_train_step_;
};

// Where a train step clears the gradients within Listing 1's segment. The
// result is the same in each place; a family keeps its reference training
// loop's order, so that the timed operators run in the reference's order.
enum class ZeroGradAt {
  kBeforeBackward,  // forward, loss, zero_grad, backward, step (Listing 1)
  kBeforeForward,   // zero_grad, forward, loss, backward, step
  kAfterStep,       // forward, loss, backward, step, zero_grad
};

// A workload whose train step is one forward pass, one loss and one
// optimizer step. The family states its loss once (Loss) and owns one
// optimizer (optimizer_, built in train mode only); the eager TrainStep() and
// the parts a joint forward-backward compiler takes (SplitTrainStep) are both
// built from that Loss, so the compiled step cannot differentiate another
// loss than the eager one.
class LossWorkload : public Workload {
 public:
  // Out of line: optimizer_'s type is complete in workload.cc only.
  explicit LossWorkload(ZeroGradAt zero_grad_at = ZeroGradAt::kBeforeBackward);
  ~LossWorkload() override;

  // RunForward(), Loss, zero_grad, backward and optimizer_'s step, in
  // zero_grad_at's order. Returns Reported(loss), detached.
  torch::Tensor TrainStep() final;
  // Loss(Forward()) and optimizer_; nullopt in eval mode. A family whose loss
  // a traced package cannot hold overrides it to throw UnsupportedError.
  std::optional<TrainParts> SplitTrainStep() override;

 protected:
  // The loss differentiated by the train step, of `output` (the network's
  // output on inputs()).
  virtual torch::Tensor Loss(const torch::Tensor& output) = 0;
  // What TrainStep() returns for the differentiated loss: the loss itself,
  // unless the family reports another quantity (a log-likelihood whose
  // negation is the loss, say).
  virtual torch::Tensor Reported(const torch::Tensor& loss) { return loss; }

  std::unique_ptr<torch::optim::Optimizer> optimizer_;

 private:
  ZeroGradAt zero_grad_at_;
};

using WorkloadFactory = std::function<std::unique_ptr<Workload>(const WorkloadOptions&)>;

struct ModelInfo {
  std::string id;          // stable, lowercase: appears in JSON and URLs
  std::string paper_name;  // the name in the paper's Table 1
  Domain domain = Domain::kOther;
  std::string task;                     // e.g. "image classification"
  std::string reference;                // the reference implementation, e.g. "torchvision.models.resnet50"
  BatchSizes default_batch;             // the paper's / TorchBench's defaults (full suite on GPU)
  std::optional<BatchSizes> cpu_batch;  // full suite on CPU, where it differs
  BatchSizes smoke_batch;               // small sizes for the smoke suite on 2 CPU cores
  bool supports_train = true;
  bool supports_eval = true;
  std::string unsupported_reason;  // why a mode is not supported, when one is not
  bool hidden = false;             // test models: not listed, not in suites
  WorkloadFactory create;
};

// The explicit, linker-proof list of all models (models/registry.cc).
const std::vector<ModelInfo>& Registry();
const ModelInfo* FindModel(const std::string& id);

// Seeds every generator a workload may draw from (CPU and CUDA).
void SeedAll(uint64_t seed);

}  // namespace torchgauge::models
