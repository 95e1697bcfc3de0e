// Parity with Python reference implementations (torchvision, transformers).
//
// A reference script (tests/parity/ref_<family>.py, built on parity_common.py)
// builds the reference model randomly initialised, and saves with torch.save
// a dict: params (state dict: parameters and buffers), param_count, inputs
// (named like Workload::inputs()), output (eval forward), loss and updated
// (the state after one train step). These helpers run the script, load its
// file, copy the weights into the C++ model by name and compare.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::parity {

struct Reference {
  std::map<std::string, torch::Tensor> params;  // parameters and buffers
  std::map<std::string, torch::Tensor> inputs;
  std::map<std::string, torch::Tensor> updated;  // parameters after one train step
  std::map<std::string, torch::Tensor> grads;    // their gradients in that step, when the script saves them
  torch::Tensor output;
  torch::Tensor loss;
  int64_t param_count = 0;
};

// Runs `python tests/parity/<script> --model <id> --out <build>/parity/<id>.pt`
// with the project's Python and returns everything the script saved (for
// scripts that save more than Reference's fields, or other fields). Throws
// with the script's output when it fails.
c10::impl::GenericDict RunReferenceScript(const std::string& script, const std::string& model_id,
                                          const std::vector<std::string>& extra_args = {});

// Reference's fields of what a script saved.
Reference ReferenceFromDict(const c10::impl::GenericDict& saved);

// RunReferenceScript, then ReferenceFromDict.
Reference RunReference(const std::string& script, const std::string& model_id,
                       const std::vector<std::string>& extra_args = {});

// A saved dict of tensors by name; `what` names the field in errors.
std::map<std::string, torch::Tensor> Tensors(const c10::IValue& v, const std::string& what);

// Normwise relative error: max|a - b| / max(max|b|, 1e-12).
double RelError(const torch::Tensor& actual, const torch::Tensor& expected);

// Every parameter and buffer name of `net` with its shape, sorted by name.
std::map<std::string, std::vector<int64_t>> NamedShapes(torch::nn::Module& net);
int64_t ParameterCount(torch::nn::Module& net);

// Checks (with doctest) that names and shapes of parameters and buffers match
// the reference exactly, and that the parameter counts agree.
void CheckSameStructure(torch::nn::Module& net, const Reference& ref);

// Copies the reference's params into `net` by name (parameters and buffers).
void LoadWeights(torch::nn::Module& net, const Reference& ref);

// Replaces the workload's inputs by the reference's (same names required).
void UseReferenceInputs(models::Workload& workload, const Reference& ref);

struct ParityErrors {
  double output = 0;       // eval output
  double loss = 0;         // train-step loss
  double updated_max = 0;  // worst parameter after the train step
  std::string worst_param;
  size_t grads = 0;      // gradients compared (those the script saved)
  double grads_max = 0;  // worst of them
  std::string worst_grad;
};

// The protocol on a workload built from the reference's batch: structure
// check, weight copy and the reference's inputs, eval forward (net().eval(),
// no grad), then one TrainStep() from the same weights (net().train(), seeded
// with `train_seed` as the script does), and the train step's gradients
// where the script saved them (every one must exist here). Returns the
// errors; checks nothing against a tolerance.
ParityErrors MeasureParity(models::Workload& workload, const Reference& ref, uint64_t train_seed = 1234);

// The whole protocol for one model: structure check, weight copy, eval
// forward (net().eval(), no grad), then one TrainStep() from the same weights
// (net().train(), seeded with `train_seed` as the script does), and the
// gradients where the script saves them. Checks every error against `tol`
// and prints the errors so CI logs carry the figures.
ParityErrors CheckModelParity(const std::string& model_id, const std::string& script, double tol = 1e-4,
                              uint64_t train_seed = 1234);

// The smoke check of one registered model, as the collector's worker runs
// it: for each mode the model supports, a seeded workload at the model's
// smoke batch (WorkloadOptions::smoke), net().train()/eval() as the worker
// sets it, `steps - 1` plain steps, then one checked step: TrainStep()'s loss
// or Forward()'s output (inference mode) must be finite, and after a train
// step every parameter too. A mode the model does not support must carry a
// reason. Prints each mode's last step in ms (wall and process CPU time: on a
// shared machine the wall clock mostly measures the neighbours).
struct SmokeOptions {
  int train_steps = 2;
  int eval_steps = 2;
  // Leave train out, for the models whose smoke train step needs more memory
  // than CI spares next to another test (their parity test checks train).
  bool skip_train = false;
  // Also check that the eval output's first dimension is the batch.
  bool eval_batch_first = false;
};
void SmokeCheck(const std::string& model_id, const SmokeOptions& options = {});

}  // namespace torchgauge::parity
