// FLOPs from the operators a profiled step ran: one formula per ATen operator
// (forward and backward), applied to the input shapes and the concrete
// arguments (stride, padding, output mask, ...) that the Kineto profiler
// records. The formulas are those of PyTorch's torch.utils.flop_counter
// (FlopCounterMode): a multiply-add is 2 FLOPs, bias adds and elementwise work
// are not counted, convolution backward counts its input and weight gradients
// as the output mask asks. Two additions, where the counter has no formula:
// the CPU flash attention kernel (_scaled_dot_product_flash_attention_for_cpu
// and its backward), counted with the same attention formulas, and oneDNN's
// recurrent layer (mkldnn_rnn_layer, which ATen's CPU LSTM runs, and its
// backward), counted as its gates' matrix products.
//
// An operator is counted only when no enclosing operator on the same thread
// has a formula (aten::convolution calls aten::_convolution calls
// aten::mkldnn_convolution; FlopCounterMode likewise sees only the outermost
// call below autograd).
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchgauge::collector {

// One operator call as the profiler recorded it.
struct OpCall {
  std::string name;                          // "aten::convolution"
  std::vector<std::vector<int64_t>> shapes;  // one per input; [] for a non-tensor
  std::vector<c10::IValue> args;             // concrete inputs; None for a tensor
  uint64_t thread = 0;                       // the thread it ran on
  int64_t start_ns = 0, end_ns = 0;
};

// True when `name` has a formula.
bool HasFlopFormula(std::string_view name);

// Every operator with a formula.
std::vector<std::string> FlopFormulaOps();

// The argument count of the operator's .default overload, for which its
// formula reads the recorded inputs; nullopt without a formula.
std::optional<size_t> FlopFormulaArity(std::string_view name);

// FLOPs of one call of an operator with a formula. Throws std::invalid_argument
// naming the operator when its recorded inputs do not fit the formula.
double FlopsOf(const OpCall& call);

struct FlopCount {
  std::optional<double> flops;          // null: not measured (see reason)
  std::map<std::string, double> by_op;  // counted FLOPs per operator name
  std::string reason;                   // why flops is null; empty otherwise
};

// The FLOPs of `calls` (any order, any threads): the outermost calls with a
// formula, summed. Null, with the reason, when no operator with a formula ran
// or when one call's inputs did not fit its formula (a partial count would
// understate the work).
FlopCount CountFlops(std::vector<OpCall> calls);

}  // namespace torchgauge::collector
