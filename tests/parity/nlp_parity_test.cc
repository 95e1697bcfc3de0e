// Parity and smoke tests for the NLP family: hf_bert, hf_gpt2 and hf_t5
// against transformers (ref_transformers.py), and
// attention_is_all_you_need_pytorch against the published architecture: a
// parameter count, and the numbers against a plain-torch statement
// (ref_transformer.py).
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <regex>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// Attention key biases have an identically zero gradient: adding b_k to every
// key shifts each query's scores by the same q.b_k, which softmax ignores.
// Their computed gradients are rounding noise (~1e-10), and Adam's first step
// normalises any gradient to about +-lr, so their updates are noise on both
// sides and cannot agree. For those elements (and only those) the check is
// instead: the C++ gradient is negligible against the model's largest
// gradient, and both updates stay within Adam's first-step bound lr. Every
// other parameter element is held to the normal tolerance.
//
// Only hf_bert needs this: its other parameters match the reference bit for
// bit after the step, but its key-bias gradient noise does not (hf_gpt2 and
// hf_t5 match bit for bit everywhere and use the standard protocol).
struct ZeroGradSlice {
  std::regex name;
  int64_t begin = 0, end = -1;  // elements [begin, end) along dim 0; end -1: all
};

void CheckNlpParity(const std::string& id, const std::vector<ZeroGradSlice>& zero_grad, double lr, double tol = 1e-4) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  auto ref = parity::RunReference("ref_transformers.py", id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = info->create(opt);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  double out_err = 0;
  {
    net.eval();
    torch::NoGradGuard no_grad;
    out_err = parity::RelError(w->Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(1234);  // parity_common.TRAIN_SEED
  double loss_err = parity::RelError(w->TrainStep(), ref.loss);

  double max_grad = 0;
  for (const auto& p : net.parameters()) {
    if (p.grad().defined()) max_grad = std::max(max_grad, p.grad().abs().max().item<double>());
  }
  auto params = net.named_parameters();
  double worst = 0, worst_zero_grad = 0;
  std::string worst_name;
  int64_t zero_grad_elements = 0;
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& expected = entry.second;
    auto* p = params.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    auto keep = torch::ones({p->size(0)}, torch::kBool);
    for (const auto& z : zero_grad) {
      if (!std::regex_match(name, z.name)) continue;
      const int64_t end = z.end < 0 ? p->size(0) : z.end;
      keep.slice(0, z.begin, end).fill_(false);
      auto grad = p->grad().slice(0, z.begin, end);
      worst_zero_grad = std::max(worst_zero_grad, grad.abs().max().item<double>() / max_grad);
      auto before = ref.params.at(name).slice(0, z.begin, end);
      CHECK((p->detach().slice(0, z.begin, end) - before).abs().max().item<double>() <= lr * (1 + 1e-3));
      CHECK((expected.slice(0, z.begin, end) - before).abs().max().item<double>() <= lr * (1 + 1e-3));
      zero_grad_elements += end - z.begin;
    }
    auto idx = keep.nonzero().squeeze(1);
    if (idx.numel() == 0) continue;
    double err = parity::RelError(p->detach().index_select(0, idx), expected.index_select(0, idx));
    if (err > worst) {
      worst = err;
      worst_name = name;
    }
  }
  std::cout << "parity " << id << ": params " << ref.param_count << ", output rel err " << out_err << ", loss rel err "
            << loss_err << ", updated params max rel err " << worst << " (" << worst_name << "); " << zero_grad_elements
            << " zero-gradient key-bias elements: max |grad| / max model |grad| " << worst_zero_grad << std::endl;
  CHECK(out_err <= tol);
  CHECK(loss_err <= tol);
  CHECK(worst <= tol);
  CHECK(worst_zero_grad <= 1e-5);
}

}  // namespace

TEST_CASE("parity hf_bert") {
  CheckNlpParity("hf_bert", {{std::regex(R"(bert\.encoder\.layer\.\d+\.attention\.self\.key\.bias)")}}, 1e-3);
}

TEST_CASE("parity hf_gpt2") { parity::CheckModelParity("hf_gpt2", "ref_transformers.py"); }

TEST_CASE("parity hf_t5") { parity::CheckModelParity("hf_t5", "ref_transformers.py"); }

// No PyPI reference: the count is derived here from the published
// architecture (TorchBench's opt namespace and jadore801120's Models.py),
// independently of the module code.
TEST_CASE("parity attention_is_all_you_need_pytorch parameter count") {
  const int64_t vocab_src = 9521, vocab_trg = 9521;  // shared Multi30k de-en vocabulary
  const int64_t d = 512, d_inner = 2048, heads = 8, d_k = 64, d_v = 64, layers = 6;
  const int64_t layer_norm = 2 * d;  // gain and bias
  const int64_t attention =
      d * heads * d_k * 2 + d * heads * d_v + heads * d_v * d + layer_norm;  // bias-free q, k, v, fc
  const int64_t ffn = d * d_inner + d_inner + d_inner * d + d + layer_norm;
  const int64_t encoder = vocab_src * d + layers * (attention + ffn) + layer_norm;
  const int64_t decoder = vocab_trg * d + layers * (2 * attention + ffn) + layer_norm;
  const int64_t projection = d * vocab_trg;  // proj_share_weight False: its own matrix, no bias
  const int64_t expected = encoder + decoder + projection;

  const auto* info = models::FindModel("attention_is_all_you_need_pytorch");
  REQUIRE(info != nullptr);
  models::WorkloadOptions opt;
  opt.batch_size = 2;
  auto w = info->create(opt);
  const int64_t actual = parity::ParameterCount(w->net());
  std::cout << "parity attention_is_all_you_need_pytorch: params " << actual << ", expected " << expected << std::endl;
  CHECK(actual == expected);
  // The sinusoid tables are buffers, not parameters: 200 positions x d_model.
  auto shapes = parity::NamedShapes(w->net());
  CHECK(shapes.at("encoder.position_enc.pos_table") == std::vector<int64_t>{1, 200, d});
  CHECK(shapes.at("decoder.position_enc.pos_table") == std::vector<int64_t>{1, 200, d});
}
// Numeric parity against the plain-torch statement of jadore801120's code
// and train.py's step (ref_transformer.py), in the full configuration: the
// eval logits, the summed loss with dropout active (both sides draw the
// masks from the same seeded generator in the same order), every gradient,
// and the parameters after Adam at ScheduledOptim's first rate (with
// AdamFirstStep's rule for the elements whose gradients cancel).
TEST_CASE("parity attention_is_all_you_need_pytorch") {
  const double lr = 2.0 / std::sqrt(512.0) * std::pow(128.0, -1.5);  // ScheduledOptim, step 1
  const auto e = parity::CheckModelParity("attention_is_all_you_need_pytorch", "ref_transformer.py", 1e-4, 1234,
                                          parity::AdamFirstStep{.lr = lr, .eps = 1e-9});
  REQUIRE(e.grads > 0);
}
