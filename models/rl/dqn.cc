#include "models/rl/dqn.h"

#include <torch/torch.h>

#include <deque>
#include <random>

#include "models/rl/rl_env.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

constexpr int64_t kFrames = 4, kImage = CartpoleSwingupEnv::kImageSize, kActions = 3;
constexpr double kDiscount = 0.99, kLr = 2.5e-4, kRmsDecay = 0.95, kRmsEps = 0.01;
constexpr double kTrainEpsilon = 0.1, kEvalEpsilon = 0.05;
constexpr int kActionsPerUpdate = 4, kTargetUpdatePeriod = 10000, kMaxEpisodeSteps = 250;
constexpr int64_t kBufferCapacity = 10000;

struct QNetworkImpl : nn::Module {
  QNetworkImpl()
      : features(register_module("features",
                                 nn::Sequential(nn::Conv2d(nn::Conv2dOptions(kFrames, 32, 8).stride(4)), nn::ReLU(),
                                                nn::Conv2d(nn::Conv2dOptions(32, 64, 4).stride(2)), nn::ReLU(),
                                                nn::Conv2d(nn::Conv2dOptions(64, 64, 3).stride(1)), nn::ReLU()))),
        head(register_module("head",
                             nn::Sequential(nn::Linear(64 * 7 * 7, 512), nn::ReLU(), nn::Linear(512, kActions)))) {}
  // obs: batch x 4 x 84 x 84 frames in [0, 255] (uint8 or float).
  torch::Tensor forward(const torch::Tensor& obs, torch::ScalarType dtype) {
    auto h = features->forward(obs.to(dtype) / 255.0);
    return head->forward(h.flatten(1));
  }
  nn::Sequential features, head;
};
TORCH_MODULE(QNetwork);

struct DqnNetImpl : nn::Module {
  DqnNetImpl() : online(register_module("online", QNetwork())), target(register_module("target", QNetwork())) {
    SyncTarget();
    for (auto& p : target->parameters()) p.set_requires_grad(false);
  }
  void SyncTarget() {
    torch::NoGradGuard g;
    auto s = online->parameters(), t = target->parameters();
    for (size_t i = 0; i < s.size(); ++i) t[i].copy_(s[i]);
  }
  QNetwork online, target;
};
TORCH_MODULE(DqnNet);

// One cart-pole seen as DQN sees Atari: 8-bit luminance frames, 4 stacked.
struct GrayFrameStack {
  explicit GrayFrameStack(uint64_t seed) : env(seed), rgb(3 * kImage * kImage) {}
  void Reset() {
    env.Reset();
    frames.clear();
    for (int i = 0; i < kFrames; ++i) frames.push_back(Render());
  }
  double Step(int64_t action) {
    const double reward = env.Step(static_cast<double>(action - 1));  // actions 0, 1, 2 -> force -1, 0, +1
    frames.push_back(Render());
    frames.pop_front();
    return reward;
  }
  torch::Tensor Render() {
    env.Render(rgb.data());
    auto frame = torch::empty({kImage, kImage}, torch::kByte);
    uint8_t* out = frame.data_ptr<uint8_t>();
    const size_t n = kImage * kImage;
    for (size_t i = 0; i < n; ++i) {
      const double y = 0.299 * rgb[i] + 0.587 * rgb[n + i] + 0.114 * rgb[2 * n + i];
      out[i] = static_cast<uint8_t>(y + 0.5);
    }
    return frame;
  }
  void Observe(torch::Tensor out) const {
    torch::stack_out(out, std::vector<torch::Tensor>(frames.begin(), frames.end()), 0);
  }

  CartpoleSwingupEnv env;
  std::vector<uint8_t> rgb;
  std::deque<torch::Tensor> frames;
};

class DqnWorkload : public Workload {
 public:
  DqnWorkload(const WorkloadOptions& opt, bool replay)
      : mode_(opt.mode), device_(opt.device), batch_(opt.batch_size), replay_(replay), rng_(opt.seed * 7919 + 17) {
    TORCH_CHECK(opt.batch_size >= 1, "dqn: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    samples_per_step_ = opt.batch_size;
    const int64_t num_envs = mode_ == Mode::kTrain ? 1 : batch_;
    for (int64_t i = 0; i < num_envs; ++i) {
      envs_.emplace_back(opt.seed * 1000003 + 53 + static_cast<uint64_t>(i));
      envs_.back().Reset();
    }
    episode_steps_.assign(num_envs, 0);
    host_obs_ = torch::empty({num_envs, kFrames, kImage, kImage}, torch::kByte);
    ObserveAll();
    inputs_["obs"] = host_obs_.to(device_);
    if (mode_ != Mode::kTrain) return;
    optimizer_ = std::make_unique<torch::optim::RMSprop>(
        net_->online->parameters(), torch::optim::RMSpropOptions(kLr).alpha(kRmsDecay).eps(kRmsEps).centered(true));
    if (!replay_) {
      // The parity hook's minibatch, replaced by the reference's.
      auto dev = torch::TensorOptions().device(device_);
      inputs_["batch_obs"] = torch::randint(0, 256, {batch_, kFrames, kImage, kImage}, dev.dtype(torch::kByte));
      inputs_["batch_next_obs"] = torch::randint(0, 256, {batch_, kFrames, kImage, kImage}, dev.dtype(torch::kByte));
      inputs_["batch_action"] = torch::randint(0, kActions, {batch_, 1}, dev.dtype(torch::kLong));
      inputs_["batch_reward"] = torch::rand({batch_, 1}, dev.dtype(torch::kFloat));
      inputs_["batch_not_done"] = torch::ones({batch_, 1}, dev.dtype(torch::kFloat));
      return;
    }
    buffer_ = std::make_unique<ReplayBuffer>(kBufferCapacity, std::vector<int64_t>{kFrames, kImage, kImage},
                                             torch::kByte, 1, device_);
    // Replay start: one minibatch of uniformly random actions.
    std::uniform_int_distribution<int64_t> any(0, kActions - 1);
    for (int64_t i = 0; i < batch_; ++i) ActAndStore(any(rng_));
  }

  torch::nn::Module& net() override { return *net_; }

  // Q-values of the online network for the current observations.
  torch::Tensor Forward() override { return net_->online->forward(inputs_["obs"], dtype_); }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "dqn: TrainStep on a workload built for eval");
    if (replay_) {
      for (int i = 0; i < kActionsPerUpdate; ++i) {
        torch::Tensor q;
        {
          torch::NoGradGuard g;
          inputs_["obs"].copy_(host_obs_);
          q = RunForward();
        }
        const int64_t greedy = q.argmax(1).item<int64_t>();  // the device-to-host sync of acting
        ActAndStore(Explore(kTrainEpsilon) ? RandomAction() : greedy);
      }
      auto b = buffer_->Sample(batch_, dtype_);
      inputs_["batch_obs"] = b.obs;
      inputs_["batch_next_obs"] = b.next_obs;
      inputs_["batch_action"] = b.action.to(torch::kLong);
      inputs_["batch_reward"] = b.reward;
      inputs_["batch_not_done"] = b.not_done;
    }
    torch::Tensor target;
    {
      torch::NoGradGuard g;
      auto next_q = std::get<0>(net_->target->forward(inputs_["batch_next_obs"], dtype_).max(1, /*keepdim=*/true));
      target = inputs_["batch_reward"] + kDiscount * inputs_["batch_not_done"] * next_q;
    }
    auto q = net_->online->forward(inputs_["batch_obs"], dtype_).gather(1, inputs_["batch_action"]);
    auto loss = torch::smooth_l1_loss(q, target);
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    if (++updates_ % kTargetUpdatePeriod == 0) net_->SyncTarget();
    return loss.detach();
  }

  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    torch::Tensor actions;
    {
      c10::InferenceMode guard;
      inputs_["obs"].copy_(host_obs_);
      actions = RunForward().argmax(1).to(torch::kCPU);
    }
    const int64_t* a = actions.data_ptr<int64_t>();
    for (size_t i = 0; i < envs_.size(); ++i) {
      envs_[i].Step(Explore(kEvalEpsilon) ? RandomAction() : a[i]);
      if (++episode_steps_[i] >= kMaxEpisodeSteps) {
        envs_[i].Reset();
        episode_steps_[i] = 0;
      }
    }
    ObserveAll();
  }

  void CastTo(torch::ScalarType dtype) override {
    Workload::CastTo(dtype);
    dtype_ = dtype;
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string(
          "the DQN update runs the online and target networks on a sampled minibatch, "
          "outside the acting forward");
    }
    return std::nullopt;
  }

 private:
  bool Explore(double epsilon) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < epsilon; }
  int64_t RandomAction() { return std::uniform_int_distribution<int64_t>(0, kActions - 1)(rng_); }

  void ObserveAll() {
    for (size_t i = 0; i < envs_.size(); ++i) envs_[i].Observe(host_obs_[static_cast<int64_t>(i)]);
  }

  void ActAndStore(int64_t action) {
    auto obs = host_obs_[0].clone();
    const double reward = envs_[0].Step(action);
    ObserveAll();
    buffer_->Add(obs, torch::full({1}, static_cast<float>(action)), reward, host_obs_[0], /*done=*/false);
    if (++episode_steps_[0] >= kMaxEpisodeSteps) {  // a truncation, stored as not done
      envs_[0].Reset();
      episode_steps_[0] = 0;
      ObserveAll();
    }
  }

  Mode mode_;
  torch::Device device_;
  int64_t batch_;
  bool replay_;
  std::mt19937_64 rng_;
  DqnNet net_;
  std::vector<GrayFrameStack> envs_;
  std::vector<int> episode_steps_;
  torch::Tensor host_obs_;
  std::unique_ptr<ReplayBuffer> buffer_;
  std::unique_ptr<torch::optim::RMSprop> optimizer_;
  torch::ScalarType dtype_ = torch::kFloat;
  int64_t updates_ = 0;
};

}  // namespace

std::unique_ptr<Workload> MakeDqnWorkload(const WorkloadOptions& opt, bool replay) {
  return std::make_unique<DqnWorkload>(opt, replay);
}

void AddDqnModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "dqn";
  info.paper_name = "";  // not among the TorchBench paper's 84 models
  info.domain = Domain::kReinforcementLearning;
  info.task = "reinforcement learning";
  info.reference =
      "NOT IN THE TORCHBENCH PAPER: DQN (Mnih et al. 2015, Nature) conv Q-network on 84x84x4 "
      "frames, target network, Huber loss, RMSProp; cart-pole swing-up pixels, 3 actions";
  // No TorchBench model, so no DEFAULT_*_BSIZE: train batch = the paper's
  // minibatch of 32; eval = one environment, as TorchBench's RL models.
  info.default_batch = {32, 1};
  info.smoke_batch = {4, 1};
  info.create = [](const WorkloadOptions& opt) { return MakeDqnWorkload(opt, /*replay=*/true); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
