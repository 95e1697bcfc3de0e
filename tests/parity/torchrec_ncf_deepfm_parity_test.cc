// Recommendation models beyond the paper's 84 (torchrec_dlrm, ncf, deepfm).
// None has a pip reference this project can install, so each is checked
// three ways:
//   - parity: CheckModelParity's protocol (structure, weight copy, eval
//     output, one train step's loss and every updated parameter, rel. error
//     <= 1e-4) against a plain-torch re-statement of the published source in
//     ref_torchrec_ncf_deepfm.py, at the workload's smoke dataset dimensions (table rows;
//     the architecture is the full one) so the reference file stays small;
//   - parameter count of the full-size model against a count derived here by
//     hand from the published configuration (cited per model);
//   - smoke: Step() at the smoke batch in each mode, finite loss and
//     parameters.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

int64_t LinearParams(int64_t in, int64_t out) { return in * out + out; }

std::unique_ptr<models::Workload> Build(const std::string& id, models::Mode mode, int64_t batch, bool smoke) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.seed = 0;
  opt.smoke = smoke;
  models::SeedAll(0);
  return info->create(opt);
}

// parity::CheckModelParity with the workload built at its smoke dataset
// dimensions (opt.smoke), which the reference script uses too.
void SmokeShapedParity(const std::string& id, double tol = 1e-4, uint64_t train_seed = 1234) {
  auto t0 = std::chrono::steady_clock::now();
  auto ref = parity::RunReference("ref_torchrec_ncf_deepfm.py", id);
  auto w = Build(id, models::Mode::kTrain, ref.output.size(0), /*smoke=*/true);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  double out_err = 0;
  {
    net.eval();
    torch::NoGradGuard g;
    out_err = parity::RelError(w->Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(train_seed);
  const double loss_err = parity::RelError(w->TrainStep(), ref.loss);
  double worst = 0;
  std::string worst_name;
  auto ours = net.named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    const double e = parity::RelError(*p, t);
    if (e >= worst) worst = e, worst_name = name;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "parity " << id << ": params " << ref.param_count << " (smoke dataset dims), output rel err " << out_err
            << ", loss rel err " << loss_err << ", updated params max rel err " << worst << " (" << worst_name << "), "
            << ms << " ms" << std::endl;
  CHECK(out_err <= tol);
  CHECK(loss_err <= tol);
  CHECK(worst <= tol);
}

}  // namespace

// ------------------------------------------------------------ torchrec_dlrm

TEST_CASE("parity torchrec_dlrm") { SmokeShapedParity("torchrec_dlrm"); }

TEST_CASE("parity torchrec_dlrm parameter count") {
  // TorchBench torchrec_dlrm (args.py defaults into TorchRec's DLRM_DCN):
  // 26 tables x 100,000 rows x 64; dense arch 13-512-256-64; LowRankCrossNet
  // over (26 + 1) * 64 = 1728 features, 3 layers of W [1728, 512],
  // V [512, 1728] and a 1728 bias; over arch 1728-512-512-256 + Linear(256, 1).
  const int64_t width = 27 * 64;
  const int64_t expected = 26LL * 100000 * 64 + LinearParams(13, 512) + LinearParams(512, 256) + LinearParams(256, 64) +
                           3 * (2 * width * 512 + width) + LinearParams(width, 512) + LinearParams(512, 512) +
                           LinearParams(512, 256) + LinearParams(256, 1);
  auto w = Build("torchrec_dlrm", models::Mode::kEval, 2, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity torchrec_dlrm: params " << got << " (published configuration: " << expected << ")" << std::endl;
  CHECK(got == expected);
  auto shapes = parity::NamedShapes(w->net());
  CHECK((shapes.at("sparse_arch.embedding_bag_collection.embedding_bags.t_cat_25.weight") ==
         std::vector<int64_t>{100000, 64}));
  CHECK((shapes.at("inter_arch.crossnet.V_kernels.2") == std::vector<int64_t>{512, width}));
  CHECK((shapes.at("over_arch.model.1.weight") == std::vector<int64_t>{1, 256}));
  // The tables start at EmbeddingBagConfig's U(-sqrt(1/n), sqrt(1/n)).
  auto table = w->net().named_parameters()["sparse_arch.embedding_bag_collection.embedding_bags.t_cat_3.weight"];
  CHECK(table.abs().max().item<double>() <= std::sqrt(1.0 / 100000));
  CHECK(table.abs().max().item<double>() > 0.9 * std::sqrt(1.0 / 100000));
}

TEST_CASE("parity torchrec_dlrm tables get sparse gradients on looked-up rows only") {
  auto w = Build("torchrec_dlrm", models::Mode::kTrain, 4, /*smoke=*/true);
  auto table = w->net().named_parameters()["sparse_arch.embedding_bag_collection.embedding_bags.t_cat_7.weight"];
  auto before = table.clone();
  w->net().train();
  w->TrainStep();
  REQUIRE(table.grad().defined());
  CHECK(table.grad().is_sparse());
  auto changed = (table != before).any(1);
  auto looked_up = w->inputs()["sparse_values"][7];
  changed.index_fill_(0, looked_up, false);
  CHECK_FALSE(changed.any().item<bool>());
}

// ------------------------------------------------------------------- ncf

TEST_CASE("parity ncf") { SmokeShapedParity("ncf"); }

TEST_CASE("parity ncf parameter count") {
  // MLPerf v0.5 NeuMF on ML-20m (138,493 users, 26,744 items), -f 64,
  // --layers 256 256 128 64: GMF tables of width 64, MLP tables of width 128,
  // Linear 256-256-128-64 and final Linear(64 + 64, 1).
  const int64_t rows = 138493 + 26744;
  const int64_t expected = rows * 64 + rows * 128 + LinearParams(256, 256) + LinearParams(256, 128) +
                           LinearParams(128, 64) + LinearParams(128, 1);
  REQUIRE(expected == 31832577);
  auto w = Build("ncf", models::Mode::kEval, 5, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity ncf: params " << got << " (published configuration: " << expected << ")" << std::endl;
  CHECK(got == expected);
  auto shapes = parity::NamedShapes(w->net());
  CHECK((shapes.at("mf_user_embed.weight") == std::vector<int64_t>{138493, 64}));
  CHECK((shapes.at("mlp_item_embed.weight") == std::vector<int64_t>{26744, 128}));
  CHECK((shapes.at("final.weight") == std::vector<int64_t>{1, 128}));
  // Inputs follow dataset.py: each positive is followed by four negatives of
  // the same user; the eval output is a probability (predict's sigmoid).
  auto& label = w->inputs()["label"];
  CHECK(label.sum().item<double>() == 1.0);
  CHECK(label[0].item<double>() == 1.0);
  CHECK((w->inputs()["user"] == w->inputs()["user"][0]).all().item<bool>());
  w->net().eval();
  torch::NoGradGuard g;
  auto p = w->Forward();
  CHECK(p.sizes() == torch::IntArrayRef({5, 1}));
  CHECK(((p > 0) & (p < 1)).all().item<bool>());
}

// ---------------------------------------------------------------- deepfm

TEST_CASE("parity deepfm") { SmokeShapedParity("deepfm"); }

TEST_CASE("parity deepfm parameter count") {
  // DeepFM-D with the paper's Criteo settings (k = 10, DNN 400-400-400) on the
  // Criteo Kaggle vocabularies (33,762,577 categorical rows in all): per row a
  // 10-wide vector and a first-order weight; the 13 continuous fields have a
  // vector each and a first-order Linear(13, 1) carrying the global bias; the
  // DNN reads the 39 x 10 field vectors.
  const int64_t rows = 33762577;
  const int64_t expected = rows * (10 + 1) + 13 * 10 + LinearParams(13, 1) + LinearParams(390, 400) +
                           2 * LinearParams(400, 400) + LinearParams(400, 1);
  auto w = Build("deepfm", models::Mode::kEval, 2, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity deepfm: params " << got << " (published configuration: " << expected << ")" << std::endl;
  CHECK(got == expected);
  auto shapes = parity::NamedShapes(w->net());
  CHECK((shapes.at("embeddings.2.weight") == std::vector<int64_t>{10131227, 10}));
  CHECK((shapes.at("first_order.25.weight") == std::vector<int64_t>{142572, 1}));
  CHECK((shapes.at("dnn.9.weight") == std::vector<int64_t>{1, 400}));
}

TEST_CASE("parity deepfm FM term is the sum of pairwise inner products") {
  // The square-of-sum identity against the explicit sum over field pairs
  // i < j of <e_i, e_j>, in double precision on the smoke model: with the
  // DNN's last layer and the first-order parts zeroed, the output is
  // sigmoid(pairwise sum).
  auto w = Build("deepfm", models::Mode::kEval, 3, /*smoke=*/true);
  auto& net = w->net();
  net.eval();
  torch::NoGradGuard g;
  auto params = net.named_parameters();
  params["dnn.9.weight"].zero_();
  params["dnn.9.bias"].zero_();
  params["dense_first_order.weight"].zero_();
  params["dense_first_order.bias"].zero_();
  for (int k = 0; k < 26; ++k) params["first_order." + std::to_string(k) + ".weight"].zero_();
  const auto dense = w->inputs()["dense"].to(torch::kDouble);
  const auto sparse = w->inputs()["sparse"];
  std::vector<torch::Tensor> fields;
  for (int i = 0; i < 13; ++i) {
    fields.push_back(dense.select(1, i).unsqueeze(1) * params["dense_embedding"][i].to(torch::kDouble));
  }
  for (int k = 0; k < 26; ++k) {
    fields.push_back(
        params["embeddings." + std::to_string(k) + ".weight"].index_select(0, sparse[k]).to(torch::kDouble));
  }
  auto pairwise = torch::zeros({3}, torch::kDouble);
  for (size_t i = 0; i < fields.size(); ++i) {
    for (size_t j = i + 1; j < fields.size(); ++j) pairwise += (fields[i] * fields[j]).sum(1);
  }
  // Compared before the sigmoid (the pairwise term is ~1e-2 here; float32
  // output rounding leaves ~1e-5 of it).
  auto logit = torch::logit(w->Forward().squeeze(1).to(torch::kDouble));
  std::cout << "parity deepfm: FM pairwise term rel err " << parity::RelError(logit, pairwise) << std::endl;
  CHECK(parity::RelError(logit, pairwise) <= 1e-4);
}
