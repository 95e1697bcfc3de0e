// The FLOP formulas against counts derived here by hand (a multiply-add is 2
// FLOPs; convolution backward is two convolutions' worth when both gradients
// are asked for), the outermost-call rule and the null-with-reason cases.
// collector/profiling_test.cc counts a real profiled train step;
// tests/parity/flops_parity_test.cc checks whole models against PyTorch's
// FlopCounterMode.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <ATen/core/List.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "collector/platform/flop_formulas.h"

using namespace torchgauge;
using collector::OpCall;

namespace {

c10::IValue Ints(std::vector<int64_t> v) { return c10::IValue(v); }

// aten::convolution(input, weight, bias, stride, padding, dilation,
// transposed, output_padding, groups) as the profiler records it.
OpCall Conv(std::vector<int64_t> x, std::vector<int64_t> w, int64_t stride, int64_t pad, bool transposed = false) {
  OpCall c;
  c.name = "aten::convolution";
  c.shapes = {x, w, {w[0]}, {}, {}, {}, {}, {}, {}};
  c.args = {c10::IValue(), c10::IValue(),           c10::IValue(), Ints({stride, stride}), Ints({pad, pad}),
            Ints({1, 1}),  c10::IValue(transposed), Ints({0, 0}),  c10::IValue(int64_t{1})};
  return c;
}

// aten::convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask).
OpCall ConvBackward(std::vector<int64_t> grad_out, std::vector<int64_t> x, std::vector<int64_t> w,
                    std::vector<bool> mask, int64_t groups = 1, bool transposed = false) {
  OpCall c;
  c.name = "aten::convolution_backward";
  c.shapes = {grad_out, x, w, {}, {}, {}, {}, {}, {}, {}, {}};
  c10::List<bool> m;
  for (bool b : mask) m.push_back(b);
  c.args = {c10::IValue(), c10::IValue(),           c10::IValue(), Ints({w[0]}),        Ints({1, 1}),  Ints({1, 1}),
            Ints({1, 1}),  c10::IValue(transposed), Ints({0, 0}),  c10::IValue(groups), c10::IValue(m)};
  return c;
}

OpCall Call(const std::string& name, std::vector<std::vector<int64_t>> shapes, int64_t start = 0, int64_t end = 0,
            uint64_t thread = 1) {
  OpCall c;
  c.name = name;
  c.shapes = std::move(shapes);
  c.thread = thread;
  c.start_ns = start;
  c.end_ns = end;
  return c;
}

}  // namespace

TEST_CASE("matmul family: 2 m k n, batched times b; the bias of addmm is not counted") {
  CHECK(collector::FlopsOf(Call("aten::mm", {{4, 8}, {8, 16}})) == 2 * 4 * 8 * 16);
  CHECK(collector::FlopsOf(Call("aten::addmm", {{16}, {4, 8}, {8, 16}})) == 2 * 4 * 8 * 16);
  CHECK(collector::FlopsOf(Call("aten::bmm", {{3, 4, 8}, {3, 8, 16}})) == 3 * 2 * 4 * 8 * 16);
  CHECK(collector::FlopsOf(Call("aten::baddbmm", {{3, 4, 16}, {3, 4, 8}, {3, 8, 16}})) == 3 * 2 * 4 * 8 * 16);
  CHECK_THROWS_WITH_AS(collector::FlopsOf(Call("aten::mm", {{4, 8}, {9, 16}})), doctest::Contains("aten::mm"),
                       std::invalid_argument);
}

TEST_CASE("convolution: output points x filter x batch x channels x 2, from stride and padding") {
  // 16x16 input, 3x3 filter, stride 2, padding 1: an 8x8 output.
  const double fwd = 8 * 8 * 9 * 2 * 8 * 3 * 2;
  CHECK(collector::FlopsOf(Conv({2, 3, 16, 16}, {8, 3, 3, 3}, 2, 1)) == fwd);
  // 7x7, stride 2, padding 3 on 224: 112x112 (resnet's stem).
  CHECK(collector::FlopsOf(Conv({1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3)) == 112.0 * 112 * 49 * 64 * 3 * 2);
  // Depthwise: the weight's second dimension is in_channels / groups.
  CHECK(collector::FlopsOf(Conv({1, 4, 8, 8}, {4, 1, 3, 3}, 1, 1)) == 8 * 8 * 9 * 4 * 1 * 2);
  // Transposed: every input point (weight is [in, out / groups, k, k]).
  CHECK(collector::FlopsOf(Conv({2, 8, 8, 8}, {8, 3, 3, 3}, 2, 1, true)) == 8 * 8 * 9 * 2 * 8 * 3 * 2);

  // Backward: the input gradient and the weight gradient each cost one
  // forward; the first layer (input without grad) asks for the weight only.
  CHECK(collector::FlopsOf(ConvBackward({2, 8, 8, 8}, {2, 3, 16, 16}, {8, 3, 3, 3}, {true, true, true})) == 2 * fwd);
  CHECK(collector::FlopsOf(ConvBackward({2, 8, 8, 8}, {2, 3, 16, 16}, {8, 3, 3, 3}, {false, true, true})) == fwd);
  CHECK(collector::FlopsOf(ConvBackward({2, 8, 8, 8}, {2, 3, 16, 16}, {8, 3, 3, 3}, {true, false, false})) == fwd);
}

TEST_CASE("grouped and depthwise convolution backward: each gradient costs one forward, as with groups 1") {
  // Depthwise (mobilenet's and efficientnet's blocks): 32 channels, groups
  // 32, a 3x3 filter, stride 1, padding 1 on 14x14, batch 2. The weight is
  // [32, 1, 3, 3]; each output point is 9 multiply-adds of its own channel:
  // 14 * 14 * 9 * 2 (batch) * 32 (out) * 1 (in per group) * 2 = 225,792.
  const double depthwise = 14.0 * 14 * 9 * 2 * 32 * 1 * 2;
  CHECK(collector::FlopsOf(Conv({2, 32, 14, 14}, {32, 1, 3, 3}, 1, 1)) == depthwise);
  const std::vector<int64_t> dw_out = {2, 32, 14, 14}, dw_x = {2, 32, 14, 14}, dw_w = {32, 1, 3, 3};
  // Both gradients: two forwards (FlopCounterMode counts 1 + 32 = 33).
  CHECK(collector::FlopsOf(ConvBackward(dw_out, dw_x, dw_w, {true, true, false}, 32)) == 2 * depthwise);
  // The weight gradient alone: one forward (FlopCounterMode: 32).
  CHECK(collector::FlopsOf(ConvBackward(dw_out, dw_x, dw_w, {false, true, false}, 32)) == depthwise);
  CHECK(collector::FlopsOf(ConvBackward(dw_out, dw_x, dw_w, {true, false, false}, 32)) == depthwise);

  // Grouped (resnext50_32x4d's 3x3): 64 in, 128 out, groups 32, so 2 input
  // channels per group and a [128, 2, 3, 3] weight; stride 1, padding 1 on
  // 7x7, batch 4: 7 * 7 * 9 * 4 * 128 * 2 * 2 = 903,168.
  const double grouped = 7.0 * 7 * 9 * 4 * 128 * 2 * 2;
  CHECK(collector::FlopsOf(Conv({4, 64, 7, 7}, {128, 2, 3, 3}, 1, 1)) == grouped);
  CHECK(collector::FlopsOf(ConvBackward({4, 128, 7, 7}, {4, 64, 7, 7}, {128, 2, 3, 3}, {true, true, true}, 32)) ==
        2 * grouped);
  CHECK(collector::FlopsOf(ConvBackward({4, 128, 7, 7}, {4, 64, 7, 7}, {128, 2, 3, 3}, {false, true, false}, 32)) ==
        grouped);

  // Transposed and grouped: input [2, 8, 8, 8], weight [8, 3, 3, 3] with
  // groups 2 (in 8, out 3 * 2 = 6), stride 1, padding 1: the forward visits
  // every input point, 8 * 8 * 9 * 2 * 8 * 3 * 2 = 55,296; the weight
  // gradient is one forward's worth too.
  const double transposed = 8.0 * 8 * 9 * 2 * 8 * 3 * 2;
  CHECK(collector::FlopsOf(ConvBackward({2, 6, 8, 8}, {2, 8, 8, 8}, {8, 3, 3, 3}, {false, true, false}, 2,
                                        /*transposed=*/true)) == transposed);
  CHECK(collector::FlopsOf(ConvBackward({2, 6, 8, 8}, {2, 8, 8, 8}, {8, 3, 3, 3}, {true, true, false}, 2,
                                        /*transposed=*/true)) == 2 * transposed);
}

TEST_CASE("attention: Q K^T and scores V forward; five products backward") {
  const std::vector<int64_t> q = {2, 4, 16, 8};
  // b h = 8, s = 16, d = 8: 2 * 8 * 16 * 16 * (8 + 8).
  CHECK(collector::FlopsOf(Call("aten::_scaled_dot_product_flash_attention_for_cpu", {q, q, q})) ==
        2.0 * 8 * 16 * 16 * 16);
  CHECK(collector::FlopsOf(Call("aten::_scaled_dot_product_efficient_attention", {q, q, q, {}})) ==
        2.0 * 8 * 16 * 16 * 16);
  CHECK(collector::FlopsOf(Call("aten::_scaled_dot_product_flash_attention_for_cpu_backward", {q, q, q, q})) ==
        2.0 * 8 * 16 * 16 * (3 * 8 + 2 * 8));
}

TEST_CASE("oneDNN's recurrent layer: 2 x gates x (input + hidden) per step and row; backward twice that") {
  // tts_angular's first LSTM layer at batch 4 over 50 frames: input 40,
  // hidden 768, so 3072 gate rows. Recorded as ATen's CPU LSTM calls it:
  // input, the four weights (biases 1-D), hx, cx, then 9 non-tensors.
  std::vector<std::vector<int64_t>> forward = {{50, 4, 40}, {3072, 40},  {3072, 768}, {3072},
                                               {3072},      {1, 4, 768}, {1, 4, 768}};
  forward.resize(16);
  const double layer = 2.0 * 50 * 4 * 3072 * (40 + 768);
  CHECK(collector::FlopsOf(Call("aten::mkldnn_rnn_layer", forward)) == layer);
  // A packed sequence: the input's rows are every row's steps.
  auto packed = forward;
  packed[0] = {200, 40};
  CHECK(collector::FlopsOf(Call("aten::mkldnn_rnn_layer", packed)) == layer);
  std::vector<std::vector<int64_t>> backward = forward;
  backward.resize(23);
  CHECK(collector::FlopsOf(Call("aten::mkldnn_rnn_layer_backward", backward)) == 2 * layer);
  // An input whose features are not the weight's columns does not fit.
  auto wrong = forward;
  wrong[0] = {50, 4, 41};
  CHECK_THROWS_WITH_AS(collector::FlopsOf(Call("aten::mkldnn_rnn_layer", wrong)),
                       doctest::Contains("aten::mkldnn_rnn_layer"), std::invalid_argument);
}

TEST_CASE("only the outermost call with a formula counts, per thread") {
  std::vector<OpCall> calls = {
      Call("aten::addmm", {{16}, {4, 8}, {8, 16}}, 100, 200),
      Call("aten::mm", {{4, 8}, {8, 16}}, 110, 190),     // inside the addmm
      Call("aten::mm", {{4, 8}, {8, 16}}, 150, 160, 2),  // another thread
      Call("aten::relu", {{4, 16}}, 210, 220),           // no formula
      Call("aten::mm", {{4, 8}, {8, 16}}, 230, 240),     // after it
  };
  auto count = collector::CountFlops(calls);
  REQUIRE(count.flops.has_value());
  CHECK(*count.flops == 3 * 1024);
  CHECK(count.by_op["aten::addmm"] == 1024);
  CHECK(count.by_op["aten::mm"] == 2048);
  CHECK(count.reason.empty());
}

TEST_CASE("no formula ran, or a call that does not fit: null with the reason, never 0") {
  auto none = collector::CountFlops({Call("aten::relu", {{4}}, 0, 1)});
  CHECK_FALSE(none.flops.has_value());
  CHECK(none.reason == "no operator with a FLOP formula ran");
  auto misfit = collector::CountFlops({Call("aten::mm", {{4, 8}, {8, 16}}, 0, 1), Call("aten::bmm", {{4, 8}}, 2, 3)});
  CHECK_FALSE(misfit.flops.has_value());
  CHECK(misfit.reason.find("aten::bmm") != std::string::npos);
}

TEST_CASE("each formula's arity is its operator's .default schema in this LibTorch") {
  for (const auto& name : collector::FlopFormulaOps()) {
    auto op = c10::Dispatcher::singleton().findSchema({name, ""});
    REQUIRE_MESSAGE(op.has_value(), name, " is not an operator of this LibTorch");
    CHECK_MESSAGE(op->schema().arguments().size() == *collector::FlopFormulaArity(name), name);
  }
}

TEST_CASE("TorchScript's recorded window may begin before the operator's inputs") {
  // As the JIT interpreter recorded a classifier's backward: a stack value
  // ([1000], a bias) before mm's two inputs.
  CHECK(collector::FlopsOf(Call("aten::mm", {{1000}, {2, 1000}, {1000, 2048}})) == 2.0 * 2 * 1000 * 2048);
  // mm.out: three inputs, the first two of which are mm's.
  CHECK(collector::FlopsOf(Call("aten::mm", {{4, 8}, {8, 16}, {4, 16}})) == 2 * 4 * 8 * 16);
  // A convolution with one value before its 9 inputs.
  OpCall c = Conv({2, 3, 16, 16}, {8, 3, 3, 3}, 2, 1);
  c.shapes.insert(c.shapes.begin(), std::vector<int64_t>{1000});
  c.args.insert(c.args.begin(), c10::IValue());
  CHECK(collector::FlopsOf(c) == 8 * 8 * 9 * 2 * 8 * 3 * 2);
}
