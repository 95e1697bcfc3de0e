#include "models/rl/drq.h"

#include <torch/torch.h>

#include <cmath>
#include <deque>
#include <memory>

#include "models/rl/rl_env.h"
#include "models/rl/rl_harness.h"
#include "models/rl/squashed_normal.h"

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kFrameStack = 3, kImage = CartpoleSwingupEnv::kImageSize;
constexpr int64_t kObsChannels = CartpoleSwingupEnv::kChannels * kFrameStack;
constexpr int64_t kActDim = CartpoleSwingupEnv::kActDim;
constexpr int64_t kFilters = 32, kConvOut = 35, kFeatureDim = 50, kHidden = 1024, kImagePad = 4;
constexpr double kLogStdMin = -10.0, kLogStdMax = 2.0;
constexpr double kDiscount = 0.99, kCriticTau = 0.01, kInitTemperature = 0.1, kLr = 1e-3;
constexpr int kActorUpdateFrequency = 2, kCriticTargetUpdateFrequency = 2, kMaxEpisodeSteps = 250;

// utils.weight_init: orthogonal weights (ReLU gain for convolutions), zero bias.
void InitModule(torch::nn::Module& m) {
  torch::NoGradGuard g;
  if (auto* l = m.as<torch::nn::Linear>()) {
    torch::nn::init::orthogonal_(l->weight);
    l->bias.zero_();
  } else if (auto* c = m.as<torch::nn::Conv2d>()) {
    torch::nn::init::orthogonal_(c->weight, std::sqrt(2.0));
    c->bias.zero_();
  }
}

torch::nn::Sequential Mlp(int64_t in, int64_t out) {
  return torch::nn::Sequential(torch::nn::Linear(in, kHidden), torch::nn::ReLU(torch::nn::ReLUOptions(true)),
                               torch::nn::Linear(kHidden, kHidden), torch::nn::ReLU(torch::nn::ReLUOptions(true)),
                               torch::nn::Linear(kHidden, out));
}

struct EncoderImpl : torch::nn::Module {
  EncoderImpl() {
    convs = register_module("convs", torch::nn::ModuleList());
    convs->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(kObsChannels, kFilters, 3).stride(2)));
    for (int i = 0; i < 3; ++i) convs->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(kFilters, kFilters, 3)));
    head = register_module("head",
                           torch::nn::Sequential(torch::nn::Linear(kFilters * kConvOut * kConvOut, kFeatureDim),
                                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({kFeatureDim}))));
  }
  torch::Tensor forward(const torch::Tensor& obs, bool detach = false) {
    auto h = obs / 255.0;
    for (const auto& conv : *convs) h = torch::relu(conv->as<torch::nn::Conv2d>()->forward(h));
    h = h.reshape({h.size(0), -1});
    if (detach) h = h.detach();
    return torch::tanh(head->forward(h));
  }
  torch::nn::ModuleList convs;
  torch::nn::Sequential head;
};
TORCH_MODULE(Encoder);

struct ActorImpl : torch::nn::Module {
  ActorImpl()
      : encoder(register_module("encoder", Encoder())), trunk(register_module("trunk", Mlp(kFeatureDim, 2 * kActDim))) {
    apply(InitModule);
  }
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& obs, bool detach_encoder = false) {
    auto parts = trunk->forward(encoder->forward(obs, detach_encoder)).chunk(2, -1);
    auto log_std = torch::tanh(parts[1]);
    log_std = kLogStdMin + 0.5 * (kLogStdMax - kLogStdMin) * (log_std + 1);
    return {parts[0], log_std.exp()};
  }
  Encoder encoder;
  torch::nn::Sequential trunk;
};
TORCH_MODULE(Actor);

struct CriticImpl : torch::nn::Module {
  CriticImpl()
      : encoder(register_module("encoder", Encoder())),
        Q1(register_module("Q1", Mlp(kFeatureDim + kActDim, 1))),
        Q2(register_module("Q2", Mlp(kFeatureDim + kActDim, 1))) {
    apply(InitModule);
  }
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& obs, const torch::Tensor& action,
                                                  bool detach_encoder = false) {
    TORCH_CHECK(obs.size(0) == action.size(0), "drq critic: obs and action batch differ");
    auto oa = torch::cat({encoder->forward(obs, detach_encoder), action}, -1);
    return {Q1->forward(oa), Q2->forward(oa)};
  }
  Encoder encoder;
  torch::nn::Sequential Q1, Q2;
};
TORCH_MODULE(Critic);

struct DrqNetImpl : torch::nn::Module {
  DrqNetImpl()
      : actor(register_module("actor", Actor())),
        critic(register_module("critic", Critic())),
        critic_target(register_module("critic_target", Critic())) {
    torch::NoGradGuard g;
    auto s = critic->parameters(), t = critic_target->parameters();
    for (size_t i = 0; i < s.size(); ++i) {
      t[i].copy_(s[i]);
      t[i].set_requires_grad(false);
    }
    // tie_weights: the actor's convolutions are the critic's (same tensors).
    actor->encoder->convs = actor->encoder->replace_module("convs", critic->encoder->convs);
    log_alpha = register_parameter("log_alpha", torch::scalar_tensor(std::log(kInitTemperature), torch::kFloat));
  }
  Actor actor;
  Critic critic, critic_target;
  torch::Tensor log_alpha;
};
TORCH_MODULE(DrqNet);

// Random shift (DrQ's augmentation): replicate-pad by kImagePad, then crop
// 84 x 84 at an independent random offset per sample, done on the device
// with two gathers.
torch::Tensor RandomShift(const torch::Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), p = kImagePad;
  auto padded = F::pad(x, F::PadFuncOptions({p, p, p, p}).mode(torch::kReplicate));
  auto opts = torch::TensorOptions().device(x.device()).dtype(torch::kLong);
  auto rows = torch::randint(0, 2 * p + 1, {n, 1}, opts) + torch::arange(h, opts);
  auto cols = torch::randint(0, 2 * p + 1, {n, 1}, opts) + torch::arange(w, opts);
  auto r = padded.gather(2, rows.view({n, 1, h, 1}).expand({n, c, h, w + 2 * p}));
  return r.gather(3, cols.view({n, 1, 1, w}).expand({n, c, h, w}));
}

// One cart-pole rendered into a 3-frame stack, as utils.FrameStack.
struct PixelEnv {
  explicit PixelEnv(uint64_t seed) : env(seed) {}
  void Reset() {
    env.Reset();
    Render();
    for (int i = 0; i < kFrameStack; ++i) frames.push_back(frame.clone());
    while (static_cast<int64_t>(frames.size()) > kFrameStack) frames.pop_front();
  }
  double Step(double action) {
    double reward = env.Step(action);
    Render();
    frames.push_back(frame.clone());
    frames.pop_front();
    return reward;
  }
  void Render() {
    if (!frame.defined()) frame = torch::empty({CartpoleSwingupEnv::kChannels, kImage, kImage}, torch::kByte);
    env.Render(frame.data_ptr<uint8_t>());
  }
  // Writes the stacked observation (9 x 84 x 84) into `out`.
  void Observe(torch::Tensor out) const {
    torch::cat_out(out, std::vector<torch::Tensor>(frames.begin(), frames.end()), 0);
  }
  CartpoleSwingupEnv env;
  torch::Tensor frame;
  std::deque<torch::Tensor> frames;
};

class DrqWorkload final : public OffPolicyWorkload {
 public:
  DrqWorkload(const WorkloadOptions& opt, bool replay)
      : OffPolicyWorkload(opt, {
                                   .id = "drq",
                                   .obs_input = "obs",
                                   .act_dim = kActDim,
                                   .max_episode_steps = kMaxEpisodeSteps,
                                   .env_seed = 31,
                                   .warmup_seed = 7,
                                   // DrQ's num_seed_steps: enough for one batch.
                                   .warmup_transitions = opt.batch_size,
                                   // TorchBench allocates replay_buffer_capacity = 100000
                                   // transitions (12.7 GB of uint8 frames, untouched by its few
                                   // steps). Sampling cost does not depend on capacity, so a
                                   // smaller buffer keeps memory honest.
                                   .buffer_capacity = 10000,
                                   // TorchBench's loop updates before the environment step.
                                   .update_before_env_step = true,
                                   .train_compiled_forward_unsupported =
                                       "the DrQ update trains the encoder, actor and critic outside the policy's "
                                       "forward pass",
                                   .replay = replay,
                               }) {
    net_->to(opt.device);
    if (opt.mode == Mode::kTrain) {
      critic_opt_ = std::make_unique<torch::optim::Adam>(net_->critic->parameters(), torch::optim::AdamOptions(kLr));
      actor_opt_ = std::make_unique<torch::optim::Adam>(net_->actor->parameters(), torch::optim::AdamOptions(kLr));
      alpha_opt_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{net_->log_alpha},
                                                        torch::optim::AdamOptions(kLr));
    }
    Start({kObsChannels, kImage, kImage}, torch::kByte);
  }

  torch::nn::Module& net() override { return *net_; }

 private:
  void AddEnv(uint64_t seed) override { envs_.emplace_back(seed); }
  void ResetEnv(size_t i) override { envs_[i].Reset(); }
  double StepEnv(size_t i, double action) override { return envs_[i].Step(action); }
  void ObserveEnv(size_t i, torch::Tensor out) const override { envs_[i].Observe(out); }
  torch::nn::Module& actor() override { return *net_->actor; }
  std::pair<torch::Tensor, torch::Tensor> Policy(const torch::Tensor& obs) override {
    return net_->actor->forward(obs);
  }

  // agent.update from a sampled, augmented batch.
  torch::Tensor Update(int64_t step) override {
    auto b = UpdateBatch();
    // replay_buffer.sample: .float() on the device, then four augmentations.
    auto obs_u = b.obs.to(dtype()), next_u = b.next_obs.to(dtype());
    auto obs = RandomShift(obs_u), next_obs = RandomShift(next_u);
    auto obs_aug = RandomShift(obs_u), next_obs_aug = RandomShift(next_u);
    auto alpha = net_->log_alpha.exp();

    torch::Tensor target_q;
    {
      torch::NoGradGuard g;
      auto target = [&](const torch::Tensor& next) {
        auto [mu, sigma] = net_->actor->forward(next);
        auto s = SquashedRSample(mu, sigma);
        auto log_prob = SquashedLogProb(s, mu, sigma).sum(-1, true);
        auto [q1, q2] = net_->critic_target->forward(next, s.action);
        auto v = torch::min(q1, q2) - alpha.detach() * log_prob;
        return b.reward + b.not_done * kDiscount * v;
      };
      // Two statements: the operands of + are evaluated in an unspecified
      // order, and update_critic samples the next_obs action first.
      auto target_q_obs = target(next_obs);
      auto target_q_aug = target(next_obs_aug);
      target_q = (target_q_obs + target_q_aug) / 2;
    }
    auto [q1, q2] = net_->critic->forward(obs, b.action);
    auto critic_loss = F::mse_loss(q1, target_q) + F::mse_loss(q2, target_q);
    auto [q1_aug, q2_aug] = net_->critic->forward(obs_aug, b.action);
    critic_loss = critic_loss + (F::mse_loss(q1_aug, target_q) + F::mse_loss(q2_aug, target_q));
    critic_opt_->zero_grad();
    critic_loss.backward();
    critic_opt_->step();

    if (step % kActorUpdateFrequency == 0) {
      auto [mu, sigma] = net_->actor->forward(obs, /*detach_encoder=*/true);
      auto s = SquashedRSample(mu, sigma);
      auto log_prob = SquashedLogProb(s, mu, sigma).sum(-1, true);
      auto [aq1, aq2] = net_->critic->forward(obs, s.action, /*detach_encoder=*/true);
      auto actor_loss = (alpha.detach() * log_prob - torch::min(aq1, aq2)).mean();
      actor_opt_->zero_grad();
      actor_loss.backward();
      actor_opt_->step();
      alpha_opt_->zero_grad();
      const double target_entropy = -static_cast<double>(kActDim);
      auto alpha_loss = (net_->log_alpha.exp() * (-log_prob - target_entropy).detach()).mean();
      alpha_loss.backward();
      alpha_opt_->step();
    }
    if (step % kCriticTargetUpdateFrequency == 0) {
      torch::NoGradGuard g;
      auto s = net_->critic->parameters(), t = net_->critic_target->parameters();
      for (size_t i = 0; i < s.size(); ++i) t[i].copy_(kCriticTau * s[i] + (1 - kCriticTau) * t[i]);
    }
    return critic_loss.detach();
  }

  DrqNet net_;
  std::vector<PixelEnv> envs_;
  std::unique_ptr<torch::optim::Adam> critic_opt_, actor_opt_, alpha_opt_;
};

}  // namespace

std::unique_ptr<Workload> MakeDrqWorkload(const WorkloadOptions& opt, bool replay) {
  return std::make_unique<DrqWorkload>(opt, replay);
}

void AddDrqModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "drq";
  info.paper_name = "drq";
  info.domain = Domain::kReinforcementLearning;
  info.task = "reinforcement learning";
  info.reference = "TorchBench drq (DrQ, Kostrikov et al. 2020, denisyarats/drq) on cartpole_swingup pixels";
  // TorchBench drq/__init__.py fixes DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE
  // = 1 (ALLOW_CUSTOMIZE_BSIZE = False): one environment. The batch that
  // reaches the networks in training is DRQConfig.batch_size = 128, so the
  // train batch here is the update batch; eval acts in one environment per
  // batch element (1, as TorchBench).
  info.default_batch = {128, 1};
  info.cpu_batch = BatchSizes{16, 1};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) { return MakeDrqWorkload(opt, /*replay=*/true); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
