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
#include <functional>
#include <map>
#include <optional>
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
// with the script's output when it fails. Under ctest the script runs in a
// child of tests/parity/ref_server.py, which has imported the heavy packages
// once; without a server (the binary run by hand) it starts its own Python.
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

// The parameter count the reference saves for `model_id` + ".meta" (its
// published configuration built on torch.device("meta"), as an int64 tensor:
// LibTorch's unpickler does not read a Python int over 2^31).
int64_t MetaParameterCount(const std::string& script, const std::string& model_id);

// A stack of `layers` alike layers counted from two small builds:
// count_at(1) + (layers - 1) * (count_at(2) - count_at(1)), where count_at(n)
// is the parameter count of the model built with n layers.
int64_t CountByLayers(int64_t layers, const std::function<int64_t(int64_t)>& count_at);

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
  // With AdamFirstStep: the parameter elements held to Adam's bound instead
  // of compared, of all elements, and the largest step among them on either
  // side, as a multiple of lr (at most 1 when the bound holds).
  int64_t adam_bounded = 0, elements = 0;
  double adam_bounded_step = 0;
  // With AdamFirstStep: gradients that are rounding noise on the reference's
  // side, and the largest of ours among them over the model's largest.
  size_t noise_grads = 0;
  double noise_grad_max = 0;
};

// Adam's first step moves each element by lr * g / (|g| + eps): about lr
// times the sign of its gradient. Where an element's gradient is a nearly
// cancelling sum over a batch's tokens, the two sides' gradients agree to a
// millionth of the largest and yet may differ in sign, or in a good part of
// their own tiny size near eps; their steps then differ by up to 2 lr. Given
// this option, MeasureParity compares after the step only the elements whose
// first-step directions g / (|g| + eps) from the two sides' gradients agree
// to 1e-5, and holds the others to Adam's bound: both steps within lr (CheckModelParity
// also requires them to stay under 1 % of all elements). It also treats a
// gradient tensor that is rounding noise on the reference's side (largest
// element at most 1e-7 of the model's largest, like an attention key bias's,
// zero in exact arithmetic) as such: ours must be noise too (at most 1e-6),
// not equal to it. Every other gradient is compared; the script must save
// them.
struct AdamFirstStep {
  double lr = 0;
  double eps = 1e-8;
  // The parameters the rule covers, by name prefix; all when empty. The
  // others are compared as without the option. The rule needs each covered
  // parameter's saved gradient to be the one its step used: an update with
  // several optimizers may add to a gradient after its step (drq's actor
  // loss reaches the critic's heads) or clear it (drq's actor optimizer,
  // over the convolutions it shares with the critic).
  std::vector<std::string> only = {};
};

// The protocol on a workload built from the reference's batch: structure
// check, weight copy and the reference's inputs, eval forward (net().eval(),
// no grad), then one TrainStep() from the same weights (net().train(), seeded
// with `train_seed` as the script does), and the train step's gradients
// where the script saved them (every one must exist here). Returns the
// errors; checks nothing against a tolerance.
// `zero_grads` names (by suffix) the parameters whose gradient is zero in
// exact arithmetic (a key bias, which softmax cancels): their gradients are
// rounding noise on both sides, counted in noise_grads with the larger
// side's share of the reference's largest gradient in noise_grad_max,
// which CheckParityErrors holds to 1e-6, instead of compared.
ParityErrors MeasureParity(models::Workload& workload, const Reference& ref, uint64_t train_seed = 1234,
                           const std::optional<AdamFirstStep>& adam = std::nullopt,
                           const std::vector<std::string>& zero_grads = {});

// The whole protocol for one model: structure check, weight copy, eval
// forward (net().eval(), no grad), then one TrainStep() from the same weights
// (net().train(), seeded with `train_seed` as the script does), and the
// gradients where the script saves them. Checks every error against `tol`
// and prints the errors so CI logs carry the figures.
// With `adam`, also checks that the bounded elements are fewer than 1 % of
// the covered ones and within the bound.
ParityErrors CheckModelParity(const std::string& model_id, const std::string& script, double tol = 1e-4,
                              uint64_t train_seed = 1234, const std::optional<AdamFirstStep>& adam = std::nullopt);

// CheckModelParity's checks and printed line, for the errors MeasureParity
// returned on a workload a test built itself (a parity hook).
void CheckParityErrors(const std::string& model_id, const Reference& ref, const ParityErrors& e, double tol = 1e-4,
                       const std::optional<AdamFirstStep>& adam = std::nullopt);

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
