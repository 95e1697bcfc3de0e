// Recommendation and RL models (dlrm, nvidia_deeprecommender,
// soft_actor_critic, drq): none has a PyPI reference, so each is checked
// against a parameter count computed here from the published architecture
// (the hyperparameters cited in models/<domain>/<family>.h, re-derived by hand, not
// read from the C++ modules), against the reference's state-dict names, and
// smoke-run at its smoke batch sizes; dlrm is also compared numerically with
// the plain-torch DLRM_Net of ref_dlrm.py, nvidia_deeprecommender with the
// AutoEncoder of ref_deeprecommender.py, soft_actor_critic's and drq's
// updates with ref_sac.py's. The CPU environments of the RL models
// are checked for their physics (energy conservation, a hand-computed Gym
// step), determinism and rendering.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <set>
#include <vector>

#include "models/rl/drq.h"
#include "models/rl/rl_env.h"
#include "models/rl/sac.h"
#include "models/rl/squashed_normal.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// Weights and bias of a Linear(in, out).
int64_t LinearParams(int64_t in, int64_t out) { return in * out + out; }

// smoke: build as the smoke suite does (dlrm and nvidia_deeprecommender then
// use their smaller dataset dimensions); the parameter-count tests build the
// full-size models.
std::unique_ptr<models::Workload> Build(const std::string& id, models::Mode mode, int64_t batch, bool smoke = false) {
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

// An RL workload on its parity hook (OffPolicySettings::replay = false), at
// the reference's update batch: a train step is one update on its batch_*
// inputs. `make` is MakeSacWorkload or MakeDrqWorkload.
using MakeRlWorkload = std::unique_ptr<models::Workload> (*)(const models::WorkloadOptions&, bool replay);
std::unique_ptr<models::Workload> ParityHook(const parity::Reference& ref, MakeRlWorkload make) {
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.inputs.at("batch_obs").size(0);
  opt.seed = 0;
  models::SeedAll(0);
  return make(opt, /*replay=*/false);
}

void CheckShape(torch::nn::Module& net, const std::string& name, std::vector<int64_t> shape) {
  auto shapes = parity::NamedShapes(net);
  auto it = shapes.find(name);
  CHECK_MESSAGE(it != shapes.end(), "missing parameter ", name);
  if (it != shapes.end()) CHECK_MESSAGE(it->second == shape, name);
}

}  // namespace

// ------------------------------------------------------------------ dlrm

TEST_CASE("parity dlrm parameter count") {
  // Naumov et al. 2019 as TorchBench configures it: 8 tables x 1e6 rows x 64,
  // bottom MLP 512-512-64, dot interaction over 8 + 1 feature vectors (the
  // strictly lower triangle, 9 * 8 / 2 = 36, plus the 64-wide dense vector),
  // top MLP 100-1024-1024-1024-1.
  const int64_t tables = 8, rows = 1000000, dim = 64;
  const int64_t interaction = 9 * 8 / 2 + 64;
  const int64_t expected = tables * rows * dim + LinearParams(512, 512) + LinearParams(512, 64) +
                           LinearParams(interaction, 1024) + LinearParams(1024, 1024) + LinearParams(1024, 1024) +
                           LinearParams(1024, 1);
  auto w = Build("dlrm", models::Mode::kEval, 2);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity dlrm: params " << got << " (published architecture: " << expected << ")" << std::endl;
  CHECK(got == expected);
  // DLRM_Net's state-dict names: ReLUs occupy the odd Sequential slots.
  for (int k = 0; k < tables; ++k) CheckShape(w->net(), "emb_l." + std::to_string(k) + ".weight", {rows, dim});
  CheckShape(w->net(), "bot_l.0.weight", {512, 512});
  CheckShape(w->net(), "bot_l.2.weight", {64, 512});
  CheckShape(w->net(), "top_l.0.weight", {1024, interaction});
  CheckShape(w->net(), "top_l.6.weight", {1, 1024});
  CHECK(parity::NamedShapes(w->net()).size() == static_cast<size_t>(tables + 2 * 2 + 4 * 2));
  // The last layer is followed by ReLU (sigmoid_top = -1): outputs are >= 0.
  torch::NoGradGuard g;
  auto out = w->Forward();
  CHECK(out.sizes() == torch::IntArrayRef({2, 1}));
  CHECK(out.min().item<float>() >= 0.0f);
}

TEST_CASE("parity dlrm embedding gradients are sparse") {
  // EmbeddingBag(sparse=True): the gradient of a table is a sparse tensor
  // whose rows are exactly the looked-up indices, and SGD touches no other row.
  // (TorchBench's top MLP ends in ReLU, sigmoid_top = -1, so the gradient
  // values may be zero for samples whose output is clamped; the rows are not.)
  auto w = Build("dlrm", models::Mode::kTrain, 8);
  auto table0 = w->net().named_parameters()["emb_l.0.weight"];
  auto before = table0.clone();
  w->net().train();
  w->TrainStep();
  auto grad = table0.grad();
  REQUIRE(grad.defined());
  CHECK(grad.is_sparse());
  auto grad_rows = std::get<0>(torch::_unique(grad.coalesce().indices().flatten()));
  auto looked_up = std::get<0>(torch::_unique(w->inputs()["lS_i"][0]));
  CHECK(torch::equal(grad_rows, looked_up));
  auto changed = (table0 != before).any(1);
  changed.index_fill_(0, looked_up, false);
  CHECK_FALSE(changed.any().item<bool>());
}

TEST_CASE("parity dlrm") {
  // Against the plain-torch DLRM_Net of ref_dlrm.py at the smoke tables'
  // 10,000 rows: the eval output, the loss, and every parameter after one
  // SGD(lr 0.01) step, sparse embedding updates included. The top MLP ends
  // in ReLU, so the train step says something only if some output is
  // positive: checked.
  auto ref = parity::RunReference("ref_dlrm.py", "dlrm");
  auto w = Build("dlrm", models::Mode::kTrain, ref.output.size(0), /*smoke=*/true);
  const parity::ParityErrors e = parity::MeasureParity(*w, ref);
  const int64_t positive = (ref.output > 0).sum().item<int64_t>();
  double moved = 0;
  for (const auto& [name, t] : ref.updated)
    moved = std::max(moved, (t - ref.params.at(name)).abs().max().item<double>());
  std::cout << "parity dlrm: params " << ref.param_count << " (smoke tables), output rel err " << e.output
            << ", loss rel err " << e.loss << ", updated params max rel err " << e.updated_max << " (" << e.worst_param
            << "); " << positive << " of " << ref.output.size(0) << " outputs positive, largest update " << moved
            << std::endl;
  REQUIRE(positive > 0);
  REQUIRE(moved > 0);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
}

// ------------------------------------------------------- nvidia_deeprecommender

TEST_CASE("parity nvidia_deeprecommender parameter count") {
  // Kuchaiev & Ginsburg 2017 with TorchBench's layer sizes 197951-512-512-1024,
  // unconstrained decoder: each of the three encoder layers and its mirrored
  // decoder layer has in*out weights; biases are the output widths.
  const std::vector<int64_t> s = {197951, 512, 512, 1024};
  int64_t expected = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) expected += 2 * s[i] * s[i + 1] + s[i + 1] + s[i];
  auto w = Build("nvidia_deeprecommender", models::Mode::kEval, 2);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity nvidia_deeprecommender: params " << got << " (published architecture: " << expected << ")"
            << std::endl;
  CHECK(got == expected);
  CheckShape(w->net(), "encode_w.0", {512, 197951});
  CheckShape(w->net(), "encode_w.2", {1024, 512});
  CheckShape(w->net(), "decode_w.0", {512, 1024});
  CheckShape(w->net(), "decode_w.2", {197951, 512});
  CheckShape(w->net(), "decode_b.2", {197951});
}

TEST_CASE("parity nvidia_deeprecommender masked loss") {
  // The MMSE loss counts only rated items: recompute it from the eval-mode
  // output (dropout off) and the ratings.
  auto w = Build("nvidia_deeprecommender", models::Mode::kTrain, 2);
  auto& x = w->inputs()["ratings"];
  CHECK((x == 0).any().item<bool>());
  CHECK(x.max().item<float>() <= 5.0f);
  w->net().eval();
  torch::Tensor expected;
  {
    torch::NoGradGuard g;
    auto y = w->Forward();
    auto rated = x != 0;
    expected = (y.masked_select(rated) - x.masked_select(rated)).pow(2).sum() / rated.sum();
  }
  auto loss = w->TrainStep();
  CHECK(parity::RelError(loss, expected) <= 1e-5);
}

TEST_CASE("parity nvidia_deeprecommender") {
  // Against the plain-torch AutoEncoder of ref_deeprecommender.py at the
  // smoke catalogue's 8,192 items: the eval output, the loss (with the 0.8
  // code-layer dropout drawn from the same seed), every gradient and every
  // parameter after one SGD(0.005, momentum 0.9) step.
  auto ref = parity::RunReference("ref_deeprecommender.py", "nvidia_deeprecommender");
  auto w = Build("nvidia_deeprecommender", models::Mode::kTrain, ref.output.size(0), /*smoke=*/true);
  const parity::ParityErrors e = parity::MeasureParity(*w, ref);
  std::cout << "parity nvidia_deeprecommender: params " << ref.param_count << " (smoke catalogue), output rel err "
            << e.output << ", loss rel err " << e.loss << ", " << e.grads << " gradients max rel err " << e.grads_max
            << " (" << e.worst_grad << "), updated params max rel err " << e.updated_max << std::endl;
  REQUIRE(e.grads > 0);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.grads_max <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
}

// ------------------------------------------------------- soft_actor_critic

TEST_CASE("parity soft_actor_critic parameter count") {
  // TorchBench SAC on Pendulum-v1 (state 3, action 1), hidden 1024:
  // StochasticActor 3-1024-1024-2, BigCritic (3+1)-1024-1024-1 for critic1,
  // critic2 and their two targets, plus the scalar log_alpha.
  const int64_t h = 1024;
  const int64_t actor = LinearParams(3, h) + LinearParams(h, h) + LinearParams(h, 2);
  const int64_t critic = LinearParams(4, h) + LinearParams(h, h) + LinearParams(h, 1);
  const int64_t expected = actor + 4 * critic + 1;
  auto w = Build("soft_actor_critic", models::Mode::kEval, 1);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity soft_actor_critic: params " << got << " (published architecture: " << expected
            << "; trainable actor + critics " << actor + 2 * critic << ")" << std::endl;
  CHECK(got == expected);
  CheckShape(w->net(), "actor.fc3.weight", {2, h});
  CheckShape(w->net(), "critic1.fc1.weight", {h, 4});
  CheckShape(w->net(), "critic2.fc3.bias", {1});
  CheckShape(w->net(), "target_critic2.fc2.weight", {h, h});
  // Targets start as copies and are excluded from gradient updates.
  auto params = w->net().named_parameters();
  CHECK(torch::equal(params["critic1.fc2.weight"], params["target_critic1.fc2.weight"]));
  CHECK_FALSE(params["target_critic1.fc2.weight"].requires_grad());
  CHECK(std::abs(params["log_alpha"].item<double>() - std::log(0.1)) < 1e-6);
}

TEST_CASE("parity soft_actor_critic target critics track by Polyak averaging") {
  auto w = Build("soft_actor_critic", models::Mode::kTrain, 8);
  auto params = w->net().named_parameters();
  auto target_before = params["target_critic1.fc3.weight"].clone();
  w->net().train();
  w->TrainStep();  // update 0: critic changes, then the target moves tau = 0.005 toward it
  auto critic = params["critic1.fc3.weight"];
  auto expected = 0.995 * target_before + 0.005 * critic;
  CHECK(parity::RelError(params["target_critic1.fc3.weight"], expected) <= 1e-6);
  CHECK_FALSE(torch::equal(params["target_critic1.fc3.weight"], target_before));
}

TEST_CASE("parity soft_actor_critic") {
  // Against ref_sac.py: TorchBench's learn_standard on a 256-transition batch
  // given as inputs (the workload's parity hook runs the update without its
  // environment loop), with the squashed-Gaussian samples drawn from the same
  // seed. Compared: the deterministic action of 256 states (eval), the critic
  // loss, every gradient the update leaves (the actor's, log_alpha's, and the
  // critics', where the actor loss's backward adds to the critic loss's), and
  // every parameter afterwards, the Polyak-averaged target critics included.
  auto ref = parity::RunReference("ref_sac.py", "soft_actor_critic");
  auto w = ParityHook(ref, models::MakeSacWorkload);
  const parity::ParityErrors e = parity::MeasureParity(*w, ref);
  std::cout << "parity soft_actor_critic: params " << ref.param_count << ", output rel err " << e.output
            << ", loss rel err " << e.loss << ", " << e.grads << " gradients max rel err " << e.grads_max << " ("
            << e.worst_grad << "), updated params max rel err " << e.updated_max << " (" << e.worst_param << ")"
            << std::endl;
  // Actor and both critics (6 tensors each) and log_alpha.
  CHECK(e.grads == 19);
  CHECK(ref.updated.count("target_critic2.fc3.weight") == 1);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.grads_max <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
}

// ------------------------------------------------------------------ drq

TEST_CASE("parity drq parameter count") {
  // DrQ as TorchBench configures it: 9 x 84 x 84 input; Encoder = Conv(9,32,3,s2)
  // and three Conv(32,32,3,s1) -> 32 x 35 x 35 ((84-3)/2+1 = 41, then 39, 37, 35),
  // head Linear(39200, 50) + LayerNorm(50). Actor: encoder + 50-1024-1024-2.
  // Critic: encoder + two (50+1)-1024-1024-1 heads. critic_target = critic.
  const int64_t conv_hw = ((84 - 3) / 2 + 1) - 2 - 2 - 2;
  REQUIRE(conv_hw == 35);
  const int64_t convs = (9 * 32 * 9 + 32) + 3 * (32 * 32 * 9 + 32);
  const int64_t head = LinearParams(32 * conv_hw * conv_hw, 50) + 2 * 50;
  const int64_t trunk = LinearParams(50, 1024) + LinearParams(1024, 1024) + LinearParams(1024, 2);
  const int64_t q = LinearParams(51, 1024) + LinearParams(1024, 1024) + LinearParams(1024, 1);
  const int64_t critic = convs + head + 2 * q;
  const int64_t actor_own = head + trunk;  // the convolutions are the critic's
  const int64_t unique = actor_own + 2 * critic + 1;
  auto w = Build("drq", models::Mode::kEval, 1);
  auto& net = w->net();
  // Distinct tensors, as Python's model.parameters() would count them.
  std::set<const void*> seen;
  int64_t distinct = 0;
  for (const auto& p : net.parameters()) {
    if (seen.insert(p.unsafeGetTensorImpl()).second) distinct += p.numel();
  }
  const int64_t named = parity::ParameterCount(net);
  std::cout << "parity drq: params " << distinct << " distinct (published architecture: " << unique << "), " << named
            << " by name with the tied convolutions listed under actor and critic" << std::endl;
  CHECK(distinct == unique);
  CHECK(named == unique + convs);
  auto params = net.named_parameters();
  for (int i = 0; i < 4; ++i) {
    const auto a = "actor.encoder.convs." + std::to_string(i) + ".weight";
    const auto c = "critic.encoder.convs." + std::to_string(i) + ".weight";
    CHECK(params[a].unsafeGetTensorImpl() == params[c].unsafeGetTensorImpl());
  }
  CheckShape(net, "critic.encoder.head.0.weight", {50, 39200});
  CheckShape(net, "critic.encoder.head.1.weight", {50});
  CheckShape(net, "actor.trunk.4.weight", {2, 1024});
  CheckShape(net, "critic.Q2.0.weight", {1024, 51});
  CheckShape(net, "critic_target.Q1.4.bias", {1});
  CheckShape(net, "actor.encoder.convs.0.weight", {32, 9, 3, 3});
}

TEST_CASE("parity drq actor loss leaves the shared convolutions to the critic") {
  // A train step must change the tied convolutions (critic loss) while the
  // actor's encoder is detached: both names still hold one tensor afterwards.
  auto w = Build("drq", models::Mode::kTrain, 2);
  auto params = w->net().named_parameters();
  auto conv_before = params["critic.encoder.convs.1.weight"].clone();
  auto head_before = params["actor.encoder.head.0.weight"].clone();
  w->net().train();
  auto loss = w->TrainStep();
  CHECK(std::isfinite(loss.item<double>()));
  CHECK_FALSE(torch::equal(params["critic.encoder.convs.1.weight"], conv_before));
  CHECK(torch::equal(params["actor.encoder.convs.1.weight"], params["critic.encoder.convs.1.weight"]));
  // The actor's own head is trained by the actor loss (step 0 updates the actor).
  CHECK_FALSE(torch::equal(params["actor.encoder.head.0.weight"], head_before));
}

TEST_CASE("parity drq") {
  // Against ref_sac.py's DrQ: drq.py's update_critic and
  // update_actor_and_alpha on a 128-transition batch of random pixels given
  // as inputs (the workload's parity hook runs the update without its
  // environment loop), the random-shift offsets and the squashed-Gaussian
  // samples drawn from the same seed in the same order. Compared: the
  // deterministic action of 8 observations (eval), the critic loss, every
  // gradient the update leaves and every parameter afterwards: the tied
  // convolutions (moved by the critic's Adam step alone), the heads, the
  // Polyak-averaged critic_target and log_alpha.
  auto ref = parity::RunReference("ref_sac.py", "drq");
  auto w = ParityHook(ref, models::MakeDrqWorkload);
  // Adam(1e-3)'s first step moves each element by lr g / (|g| + eps): some
  // elements of the actor's gradients are near eps (|g| ~ 1e-8 in
  // actor.encoder.head.0.weight, whose largest is 4e-2), where float32
  // rounding (2.6e-7 of the largest gradient) moves the step by up to 3e-4
  // of the weights. Those take AdamFirstStep's rule, which covers the
  // parameters whose saved gradient is the one their step used: the actor's
  // heads and log_alpha. The critic's saved gradients have the actor loss's
  // added after its step, the convolutions' were cleared by the actor's
  // zero_grad; they, and critic_target, are compared element by element.
  const parity::AdamFirstStep adam{.lr = 1e-3, .only = {"actor.encoder.head.", "actor.trunk.", "log_alpha"}};
  const parity::ParityErrors e = parity::MeasureParity(*w, ref, 1234, adam);
  parity::CheckParityErrors("drq", ref, e, 1e-4, adam);
  // The gradients left are the reference's: the actor's and critic's heads
  // and MLPs and log_alpha. The convolutions have none on either side: the
  // actor optimizer's zero_grad cleared the critic loss's, and the actor
  // loss stops at the detached encoder output.
  std::set<std::string> ours, theirs;
  for (const auto& p : w->net().named_parameters()) {
    if (p.value().grad().defined()) ours.insert(p.key());
  }
  for (const auto& [name, g] : ref.grads) theirs.insert(name);
  CHECK(ours == theirs);
  CHECK(e.grads == 27);  // actor 4 + 6, critic 4 + 2 x 6, log_alpha
  CHECK(ref.updated.count("actor.encoder.convs.0.weight") == 1);
  CHECK(ref.updated.count("critic_target.encoder.convs.3.weight") == 1);
}

// ------------------------------------------------------------ environments

TEST_CASE("rl_env pendulum matches Gym's Pendulum-v1 step") {
  // Hand-computed from gymnasium's pendulum.py: g = 10, m = l = 1, dt = 0.05,
  // u = 2 * a. From theta = 1, theta_dot = 0.5 with a = 0.5 (u = 1):
  models::PendulumEnv env(0);
  env.SetState(1.0, 0.5);
  const double reward = env.Step(0.5);
  const double new_dot = 0.5 + (3 * 10 / 2.0 * std::sin(1.0) + 3.0 * 1.0) * 0.05;
  CHECK(env.theta_dot() == doctest::Approx(new_dot).epsilon(1e-12));
  CHECK(env.theta() == doctest::Approx(1.0 + new_dot * 0.05).epsilon(1e-12));
  CHECK(reward == doctest::Approx(-(1.0 + 0.1 * 0.25 + 0.001 * 1.0)).epsilon(1e-12));
  float obs[3];
  env.Observe(obs);
  CHECK(obs[0] == doctest::Approx(std::cos(env.theta())));
  CHECK(obs[1] == doctest::Approx(std::sin(env.theta())));
  // Speed is clipped to 8 rad/s and actions to [-1, 1].
  env.SetState(0.0, 7.9);
  env.Step(5.0);
  CHECK(env.theta_dot() == doctest::Approx(8.0));
}

TEST_CASE("rl_env pendulum conserves energy without torque") {
  // Semi-implicit Euler is symplectic: the energy of a free swing oscillates
  // within O(dt) of its start but does not drift. Swing of 0.5 rad around the
  // bottom (theta = pi), 2000 steps = 100 s.
  models::PendulumEnv env(0);
  env.SetState(M_PI + 0.5, 0.0);
  const double e0 = env.Energy();
  const double swing = 10.0 * 0.5 * (1 - std::cos(0.5));  // potential energy range of the swing
  double worst = 0, first = 0, last = 0;
  for (int i = 0; i < 2000; ++i) {
    env.Step(0.0);
    const double e = env.Energy();
    worst = std::max(worst, std::abs(e - e0));
    if (i < 200) first += e / 200;
    if (i >= 1800) last += e / 200;
  }
  std::cout << "pendulum energy: max deviation " << worst / swing << " of the swing, drift "
            << std::abs(last - first) / swing << std::endl;
  CHECK(worst / swing < 0.15);
  CHECK(std::abs(last - first) / swing < 0.01);
}

TEST_CASE("rl_env cartpole conserves energy without force") {
  // Florian's frictionless cart-pole with F = 0: the total energy
  // 1/2 (M+m) x'^2 + m l cos(th) x' th' + 2/3 m l^2 th'^2 + m g l cos(th)
  // is conserved by the equations. Semi-implicit Euler in generalised
  // coordinates (MuJoCo's default too) is not exactly symplectic here: the
  // error is first order in dt (0.060, 0.031, 0.006 of the swing for dt =
  // 0.01, 0.005, 0.001 over 50 s, checked offline) and slightly dissipative.
  // One DrQ episode is 250 steps x 4 = 1000 physics steps.
  models::CartpoleSwingupEnv env(0);
  env.SetState(0.0, 0.0, M_PI - 0.6, 0.0);
  const double e0 = env.Energy();
  const double swing = 0.1 * 9.81 * 0.5 * (1 - std::cos(0.6));
  double worst_episode = 0, worst = 0;
  for (int i = 0; i < 5000; ++i) {
    env.PhysicsStep(0.0);
    worst = std::max(worst, std::abs(env.Energy() - e0));
    if (i < 1000) worst_episode = worst;
  }
  std::cout << "cartpole energy: max deviation " << worst_episode / swing << " of the swing over one episode, "
            << worst / swing << " over 50 s" << std::endl;
  CHECK(worst_episode / swing < 0.05);
  CHECK(worst / swing < 0.1);
  // With a constant force the cart accelerates along it.
  env.SetState(0.0, 0.0, M_PI, 0.0);
  for (int i = 0; i < 10; ++i) env.Step(1.0);
  CHECK(env.x() > 0.05);
}

TEST_CASE("rl_env environments are deterministic per seed") {
  auto run_pendulum = [](uint64_t seed) {
    models::PendulumEnv env(seed);
    env.Reset();
    std::vector<double> trace;
    for (int i = 0; i < 50; ++i) trace.push_back(env.Step(std::sin(0.3 * i)) + env.theta());
    return trace;
  };
  CHECK(run_pendulum(3) == run_pendulum(3));
  CHECK(run_pendulum(3) != run_pendulum(4));
  auto run_cartpole = [](uint64_t seed) {
    models::CartpoleSwingupEnv env(seed);
    env.Reset();
    std::vector<uint8_t> pixels(3 * 84 * 84);
    std::vector<double> trace;
    for (int i = 0; i < 30; ++i) trace.push_back(env.Step(std::cos(0.2 * i)));
    env.Render(pixels.data());
    return std::make_pair(trace, pixels);
  };
  CHECK(run_cartpole(5) == run_cartpole(5));
  CHECK(run_cartpole(5).first != run_cartpole(6).first);
}

TEST_CASE("rl_env cartpole renders the pole where it points") {
  models::CartpoleSwingupEnv env(0);
  std::vector<uint8_t> up(3 * 84 * 84), down(3 * 84 * 84);
  env.SetState(0.0, 0.0, 0.0, 0.0);
  env.Render(up.data());
  env.SetState(0.0, 0.0, M_PI, 0.0);
  env.Render(down.data());
  // 12 pixels above and below the hinge (row 42, column 42), inside the 21-pixel
  // pole and outside the cart; red channel.
  const int above = (42 - 12) * 84 + 42, below = (42 + 12) * 84 + 42;
  CHECK(up[above] != down[above]);
  CHECK(up[below] != down[below]);
  CHECK(up[above] == down[below]);  // pole colour in both
  // The upright reward is near 1 at the top and near 0 hanging down.
  env.SetState(0.0, 0.0, 0.0, 0.0);
  const double top = env.Step(0.0);
  env.SetState(0.0, 0.0, M_PI, 0.0);
  const double bottom = env.Step(0.0);
  CHECK(top > 3.5);  // 4 physics steps of reward ~1
  CHECK(bottom < 0.1);
}

TEST_CASE("rl_env replay buffer samples stored transitions") {
  models::ReplayBuffer buffer(4, {3}, torch::kFloat, 1, torch::kCPU);
  for (int i = 0; i < 6; ++i) {
    auto obs = torch::full({3}, static_cast<float>(i));
    buffer.Add(obs, torch::full({1}, 0.1f * i), i, obs + 1, i == 5);
  }
  CHECK(buffer.size() == 4);
  torch::manual_seed(0);
  auto b = buffer.Sample(64, torch::kFloat);
  CHECK(b.obs.sizes() == torch::IntArrayRef({64, 3}));
  CHECK(torch::equal(b.next_obs, b.obs + 1));
  CHECK(b.obs.min().item<float>() >= 2.0f);  // transitions 0 and 1 were overwritten
  CHECK(torch::allclose(b.reward.squeeze(1), b.obs.select(1, 0)));
  CHECK(torch::equal(b.not_done.squeeze(1) == 0, b.obs.select(1, 0) == 5));
}

TEST_CASE("parity soft_actor_critic and drq squashed Gaussian: log-density by the change of variables") {
  // log p(tanh x) = log N(x; mu, sigma) - log(1 - tanh(x)^2), computed here
  // directly in double precision where 1 - tanh^2 is still accurate.
  torch::manual_seed(0);
  auto mu = torch::randn({64, 3}, torch::kDouble) * 0.5;
  auto sigma = torch::rand({64, 3}, torch::kDouble) * 0.9 + 0.1;
  models::SquashedSample s = models::SquashedRSample(mu, sigma);
  CHECK(torch::allclose(s.action, torch::tanh(s.pre_tanh)));
  auto normal = -0.5 * ((s.pre_tanh - mu) / sigma).pow(2) - sigma.log() - 0.5 * std::log(2 * M_PI);
  auto want = normal - torch::log(1 - torch::tanh(s.pre_tanh).pow(2));
  auto got = models::SquashedLogProb(s, mu, sigma);
  CHECK(torch::allclose(got, want, 1e-9, 1e-9));
  // Samples follow mu + sigma * N(0, 1): standardised, mean ~0 and sd ~1.
  auto big_mu = torch::full({20000}, 0.3, torch::kDouble), big_sigma = torch::full({20000}, 0.2, torch::kDouble);
  auto z = (models::SquashedRSample(big_mu, big_sigma).pre_tanh - big_mu) / big_sigma;
  CHECK(std::abs(z.mean().item<double>()) < 0.05);
  CHECK(std::abs(z.std().item<double>() - 1.0) < 0.05);
}
