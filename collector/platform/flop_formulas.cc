#include "collector/platform/flop_formulas.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <unordered_map>

namespace torchgauge::collector {

namespace {

using Shape = std::vector<int64_t>;

std::string ShapesText(const OpCall& c) {
  std::string out = "[";
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    if (i) out += ", ";
    out += "[";
    for (size_t j = 0; j < c.shapes[i].size(); ++j) out += (j ? ", " : "") + std::to_string(c.shapes[i][j]);
    out += "]";
  }
  return out + "]";
}

[[noreturn]] void Misfit(const OpCall& c, const std::string& what) {
  throw std::invalid_argument(c.name + ": recorded input shapes " + ShapesText(c) + " do not fit its FLOP formula (" +
                              what + ")");
}

const Shape& ShapeAt(const OpCall& c, size_t i, size_t rank) {
  if (i >= c.shapes.size()) Misfit(c, "no input " + std::to_string(i));
  const Shape& s = c.shapes[i];
  if (rank != 0 && s.size() != rank) Misfit(c, "input " + std::to_string(i) + " is not " + std::to_string(rank) + "-D");
  return s;
}

const c10::IValue& ArgAt(const OpCall& c, size_t i) {
  if (i >= c.args.size() || c.args[i].isNone()) Misfit(c, "argument " + std::to_string(i) + " not recorded");
  return c.args[i];
}

std::vector<int64_t> Ints(const OpCall& c, size_t i) {
  const c10::IValue& v = ArgAt(c, i);
  if (v.isIntList()) return v.toIntVector();
  if (v.isInt()) return {v.toInt()};
  if (v.isList()) {
    std::vector<int64_t> out;
    for (const c10::IValue& e : v.toListRef()) {
      if (!e.isInt()) Misfit(c, "argument " + std::to_string(i) + " is not a list of integers");
      out.push_back(e.toInt());
    }
    return out;
  }
  Misfit(c, "argument " + std::to_string(i) + " is not a list of integers");
}

bool Bool(const c10::IValue& v, const OpCall& c, size_t i) {
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  Misfit(c, "argument " + std::to_string(i) + " is not a boolean");
}

std::vector<bool> Bools(const OpCall& c, size_t i) {
  const c10::IValue& v = ArgAt(c, i);
  std::vector<bool> out;
  if (v.isBoolList()) {
    for (bool b : v.toBoolList()) out.push_back(b);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) out.push_back(Bool(e, c, i));
  } else {
    Misfit(c, "argument " + std::to_string(i) + " is not a list of booleans");
  }
  return out;
}

double Product(Shape::const_iterator begin, Shape::const_iterator end) {
  double p = 1;
  for (auto it = begin; it != end; ++it) p *= static_cast<double>(*it);
  return p;
}

// torch.utils.flop_counter.mm_flop / bmm_flop.
double MatmulFlops(const OpCall& c, size_t a, size_t b) {
  const Shape& x = ShapeAt(c, a, 2);
  const Shape& y = ShapeAt(c, b, 2);
  if (x[1] != y[0]) Misfit(c, "inner dimensions differ");
  return 2.0 * static_cast<double>(x[0]) * static_cast<double>(x[1]) * static_cast<double>(y[1]);
}

double BatchedMatmulFlops(const OpCall& c, size_t a, size_t b) {
  const Shape& x = ShapeAt(c, a, 3);
  const Shape& y = ShapeAt(c, b, 3);
  if (x[0] != y[0] || x[2] != y[1]) Misfit(c, "batch or inner dimensions differ");
  return 2.0 * static_cast<double>(x[0]) * static_cast<double>(x[1]) * static_cast<double>(x[2]) *
         static_cast<double>(y[2]);
}

// torch.utils.flop_counter.conv_flop_count: for each point of the output
// (of the input when transposed), the filter times the batch and both
// channel counts of `w`, two FLOPs per multiply-add.
double ConvFlopCount(const Shape& x, const Shape& w, const Shape& out, bool transposed) {
  const Shape& spatial = transposed ? x : out;
  return Product(spatial.begin() + 2, spatial.end()) * Product(w.begin() + 2, w.end()) * static_cast<double>(x[0]) *
         static_cast<double>(w[0]) * static_cast<double>(w[1]) * 2.0;
}

// The value of a per-dimension argument for dimension `d` (a one-element
// list applies to every dimension).
int64_t PerDim(const std::vector<int64_t>& v, size_t d, const OpCall& c) {
  if (v.size() == 1) return v[0];
  if (d >= v.size()) Misfit(c, "a per-dimension argument is too short");
  return v[d];
}

// aten::convolution, aten::_convolution and aten::convolution_overrideable:
// (input, weight, bias, stride, padding, dilation, transposed, ...).
double ConvolutionFlops(const OpCall& c) {
  const Shape& x = ShapeAt(c, 0, 0);
  const Shape& w = ShapeAt(c, 1, 0);
  if (x.size() < 3 || w.size() != x.size()) Misfit(c, "input and weight ranks");
  const bool transposed = Bool(ArgAt(c, 6), c, 6);
  if (transposed) return ConvFlopCount(x, w, x, true);
  const auto stride = Ints(c, 3), padding = Ints(c, 4), dilation = Ints(c, 5);
  Shape out = {x[0], w[0]};
  for (size_t d = 0; d + 2 < x.size(); ++d) {
    const int64_t span = PerDim(dilation, d, c) * (w[d + 2] - 1) + 1;
    out.push_back((x[d + 2] + 2 * PerDim(padding, d, c) - span) / PerDim(stride, d, c) + 1);
  }
  return ConvFlopCount(x, w, out, false);
}

Shape SwapFirstTwo(Shape s) {
  std::swap(s[0], s[1]);
  return s;
}

// aten::convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask):
// the input gradient is a transposed convolution of grad_output by the
// weight, the weight gradient a convolution of the input by grad_output.
// Each costs one forward convolution, whatever the groups.
//
// The weight gradient differs from torch.utils.flop_counter's
// conv_backward_flop, which ignores groups: it convolves the input's
// transpose [C_in, N, ...] with grad_output's [C_out, N, ...], pairing every
// input channel with every output channel. With groups g, output channel o
// only sees the C_in / g input channels of its group, so that count is g
// times the work (C_in times for a depthwise convolution: efficientnet_b0's
// train/eval FLOP ratio read 39.7 instead of 2.97). The count is divided by
// g here; tests/parity/parity_common.py corrects FlopCounterMode the same way
// before comparing. The input gradient's term needs no correction: it reads
// the weight's [C_out, C_in / g, ...] shape, which already holds the groups.
double ConvolutionBackwardFlops(const OpCall& c) {
  const Shape& grad_out = ShapeAt(c, 0, 0);
  const Shape& x = ShapeAt(c, 1, 0);
  const Shape& w = ShapeAt(c, 2, 0);
  if (x.size() < 3 || w.size() != x.size() || grad_out.size() != x.size()) Misfit(c, "ranks");
  const bool transposed = Bool(ArgAt(c, 7), c, 7);
  const auto groups = Ints(c, 9);
  if (groups.size() != 1 || groups[0] < 1) Misfit(c, "groups");
  const auto mask = Bools(c, 10);
  if (mask.size() < 2) Misfit(c, "output mask");
  double flops = 0;
  if (mask[0]) flops += ConvFlopCount(grad_out, w, x, !transposed);
  if (mask[1]) {
    const double all_pairs = transposed
                                 ? ConvFlopCount(SwapFirstTwo(grad_out), SwapFirstTwo(x), SwapFirstTwo(w), false)
                                 : ConvFlopCount(SwapFirstTwo(x), SwapFirstTwo(grad_out), SwapFirstTwo(w), false);
    flops += all_pairs / static_cast<double>(groups[0]);
  }
  return flops;
}

struct Attention {
  double bh, s_q, s_k, d_q, d_v;
};

Attention AttentionShapes(const OpCall& c, size_t first) {
  const Shape& q = ShapeAt(c, first, 4);
  const Shape& k = ShapeAt(c, first + 1, 4);
  const Shape& v = ShapeAt(c, first + 2, 4);
  if (q[0] != k[0] || q[0] != v[0] || q[1] != k[1] || q[1] != v[1] || q[3] != k[3] || k[2] != v[2]) {
    Misfit(c, "query, key and value shapes");
  }
  auto d = [](int64_t x) { return static_cast<double>(x); };
  return {d(q[0]) * d(q[1]), d(q[2]), d(k[2]), d(q[3]), d(v[3])};
}

// sdpa_flop_count: scores = Q K^T, then scores V.
double AttentionFlops(const OpCall& c) {
  const Attention a = AttentionShapes(c, 0);
  return 2.0 * a.bh * a.s_q * a.s_k * (a.d_q + a.d_v);
}

// sdpa_backward_flop_count: the scores recomputed, then four products for
// the gradients of V, the scores, Q and K.
double AttentionBackwardFlops(const OpCall& c) {
  const Attention a = AttentionShapes(c, 1);
  const Shape& g = ShapeAt(c, 0, 4);
  if (static_cast<double>(g[2]) != a.s_q || static_cast<double>(g[3]) != a.d_v) Misfit(c, "grad_out shape");
  return 2.0 * a.bh * a.s_q * a.s_k * (3.0 * a.d_q + 2.0 * a.d_v);
}

// A recurrent layer in oneDNN's kernel (aten::mkldnn_rnn_layer: one layer,
// one direction, the whole sequence; ATen's LSTM on CPU runs it), which
// FlopCounterMode has no formula for: per time step and batch row, the gates'
// products with the input and with the hidden state, 2 x gates x (input +
// hidden) FLOPs, gates being the rows of both weights (4 x hidden for an
// LSTM). The gates' elementwise work is not counted, as nowhere else. A
// packed sequence's input is 2-D (its rows are the steps of all rows).
double RnnLayerFlops(const OpCall& c) {
  const Shape& x = ShapeAt(c, 0, 0);
  const Shape& w_ih = ShapeAt(c, 1, 2);
  const Shape& w_hh = ShapeAt(c, 2, 2);
  if (x.size() < 2 || x.back() != w_ih[1]) Misfit(c, "the input's features are not weight0's columns");
  if (w_ih[0] != w_hh[0]) Misfit(c, "the two weights' gate rows differ");
  return 2.0 * Product(x.begin(), x.end() - 1) * static_cast<double>(w_ih[0]) * static_cast<double>(w_ih[1] + w_hh[1]);
}

// Its backward (aten::mkldnn_rnn_layer_backward, inputs input, weight1,
// weight2, ...): the gradients of the input and hidden state and of both
// weights, each the forward's products once more: twice the forward.
double RnnLayerBackwardFlops(const OpCall& c) { return 2.0 * RnnLayerFlops(c); }

struct Formula {
  size_t arity;  // the .default overload's argument count
  std::function<double(const OpCall&)> flops;
};

const std::unordered_map<std::string_view, Formula>& Formulas() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Formula>;
    auto& m = *t;
    m["aten::mm"] = {2, [](const OpCall& c) { return MatmulFlops(c, 0, 1); }};
    m["aten::addmm"] = {5, [](const OpCall& c) { return MatmulFlops(c, 1, 2); }};
    m["aten::_scaled_mm"] = {8, [](const OpCall& c) { return MatmulFlops(c, 0, 1); }};
    m["aten::bmm"] = {2, [](const OpCall& c) { return BatchedMatmulFlops(c, 0, 1); }};
    m["aten::baddbmm"] = {5, [](const OpCall& c) { return BatchedMatmulFlops(c, 1, 2); }};
    m["aten::convolution"] = {9, ConvolutionFlops};
    m["aten::_convolution"] = {13, ConvolutionFlops};
    m["aten::convolution_overrideable"] = {9, ConvolutionFlops};
    m["aten::convolution_backward"] = {11, ConvolutionBackwardFlops};
    m["aten::_scaled_dot_product_flash_attention"] = {7, AttentionFlops};
    m["aten::_scaled_dot_product_efficient_attention"] = {8, AttentionFlops};
    m["aten::_scaled_dot_product_cudnn_attention"] = {9, AttentionFlops};
    m["aten::_scaled_dot_product_flash_attention_for_cpu"] = {7, AttentionFlops};
    m["aten::_scaled_dot_product_flash_attention_backward"] = {15, AttentionBackwardFlops};
    m["aten::_scaled_dot_product_efficient_attention_backward"] = {13, AttentionBackwardFlops};
    m["aten::_scaled_dot_product_cudnn_attention_backward"] = {16, AttentionBackwardFlops};
    m["aten::_scaled_dot_product_flash_attention_for_cpu_backward"] = {10, AttentionBackwardFlops};
    m["aten::mkldnn_rnn_layer"] = {16, RnnLayerFlops};
    m["aten::mkldnn_rnn_layer_backward"] = {23, RnnLayerBackwardFlops};
    return t;
  }();
  return *table;
}

// The last `n` recorded inputs of `c`.
OpCall LastInputs(const OpCall& c, size_t n) {
  OpCall out = c;
  out.shapes.erase(out.shapes.begin(), out.shapes.end() - static_cast<std::ptrdiff_t>(n));
  if (out.args.size() >= n) out.args.erase(out.args.begin(), out.args.end() - static_cast<std::ptrdiff_t>(n));
  return out;
}

}  // namespace

bool HasFlopFormula(std::string_view name) { return Formulas().count(name) > 0; }

std::vector<std::string> FlopFormulaOps() {
  std::vector<std::string> out;
  for (const auto& [name, _] : Formulas()) out.emplace_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<size_t> FlopFormulaArity(std::string_view name) {
  auto it = Formulas().find(name);
  if (it == Formulas().end()) return std::nullopt;
  return it->second.arity;
}

double FlopsOf(const OpCall& call) {
  auto it = Formulas().find(call.name);
  if (it == Formulas().end()) throw std::invalid_argument(call.name + ": no FLOP formula");
  const Formula& f = it->second;
  // The TorchScript interpreter records a window of its stack that may begin
  // with values before the operator's own inputs: try the operator's last
  // `arity` inputs first, then all of them (another overload: mm.out).
  if (call.shapes.size() > f.arity) {
    try {
      return f.flops(LastInputs(call, f.arity));
    } catch (const std::invalid_argument&) {
    }
  }
  return f.flops(call);
}

FlopCount CountFlops(std::vector<OpCall> calls) {
  std::erase_if(calls, [](const OpCall& c) { return !HasFlopFormula(c.name); });
  // Per thread in start order (the longer call first on a tie): a call that
  // starts before the enclosing counted call ends is inside it.
  std::sort(calls.begin(), calls.end(), [](const OpCall& a, const OpCall& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  FlopCount out;
  double total = 0;
  bool any = false;
  uint64_t thread = 0;
  int64_t open_until = 0;
  for (const OpCall& c : calls) {
    if (any && c.thread == thread && c.start_ns < open_until) continue;
    try {
      const double f = FlopsOf(c);
      total += f;
      out.by_op[c.name] += f;
    } catch (const std::invalid_argument& e) {
      out.by_op.clear();
      out.reason = e.what();
      return out;
    }
    any = true;
    thread = c.thread;
    open_until = c.end_ns;
  }
  if (!any) {
    out.reason = "no operator with a FLOP formula ran";
    return out;
  }
  out.flops = total;
  return out;
}

}  // namespace torchgauge::collector
