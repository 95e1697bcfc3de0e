#include "models/rl/learning_to_paint.h"

#include <torch/torch.h>

#include <cmath>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;
namespace F = torch::nn::functional;

constexpr int64_t kWidth = 128, kStrokes = 5, kStrokeParams = 13, kActionDim = kStrokes * kStrokeParams;
constexpr int64_t kMaxStep = 40;                     // __init__.py args.max_step
constexpr double kDiscount = 0.7737809375;           // 0.95 ** 5
constexpr double kTau = 0.001, kGanTau = 0.001;      // args.tau; wgan.py soft_update(target_netD, netD, 0.001)
constexpr double kCriticLr = 3e-4, kActorLr = 1e-3;  // update_policy's lr = (3e-4, 1e-3)
constexpr double kGanLr = 3e-4, kGanBeta1 = 0.5, kPenaltyWeight = 10.0;
constexpr int64_t kImagePool = 64, kMemorySteps = 4;

// torch.nn.utils.weight_norm(nn.Conv2d(...)): weight = g * v / ||v|| per
// output channel, g and v initialised from nn.Conv2d's default weight.
struct WNConv2dImpl : nn::Module {
  WNConv2dImpl(int64_t in, int64_t out, int64_t k, int64_t stride_arg, int64_t padding_arg)
      : stride(stride_arg), padding(padding_arg) {
    auto v = torch::empty({out, in, k, k});
    nn::init::kaiming_uniform_(v, std::sqrt(5.0));
    const double bound = 1.0 / std::sqrt(static_cast<double>(in * k * k));
    bias = register_parameter("bias", torch::empty({out}).uniform_(-bound, bound));
    weight_g = register_parameter("weight_g", torch::norm_except_dim(v, 2, 0));
    weight_v = register_parameter("weight_v", v);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return F::conv2d(x, torch::_weight_norm(weight_v, weight_g, 0),
                     F::Conv2dFuncOptions().bias(bias).stride(stride).padding(padding));
  }
  int64_t stride, padding;
  torch::Tensor weight_g, weight_v, bias;
};
TORCH_MODULE(WNConv2d);

// critic.py / wgan.py TReLU: relu(x - alpha) + alpha, alpha learned (init 0).
struct TReLUImpl : nn::Module {
  TReLUImpl() : alpha(register_parameter("alpha", torch::zeros({1}))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(x - alpha) + alpha; }
  torch::Tensor alpha;
};
TORCH_MODULE(TReLU);

torch::Tensor Shortcut(nn::Sequential& shortcut, const torch::Tensor& x) {
  return shortcut->is_empty() ? x : shortcut->forward(x);
}

// actor.py BasicBlock.
struct ActorBlockImpl : nn::Module {
  ActorBlockImpl(int64_t in, int64_t planes, int64_t stride)
      : conv1(register_module("conv1",
                              nn::Conv2d(nn::Conv2dOptions(in, planes, 3).stride(stride).padding(1).bias(false)))),
        bn1(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(planes, planes, 3).padding(1).bias(false)))),
        bn2(register_module("bn2", nn::BatchNorm2d(planes))),
        shortcut(register_module("shortcut", nn::Sequential())) {
    if (stride != 1 || in != planes) {
      shortcut->push_back(nn::Conv2d(nn::Conv2dOptions(in, planes, 1).stride(stride).bias(false)));
      shortcut->push_back(nn::BatchNorm2d(planes));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto out = torch::relu(bn1(conv1(x)));
    return torch::relu(bn2(conv2(out)) + Shortcut(shortcut, x));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Sequential shortcut;
};
TORCH_MODULE(ActorBlock);

// critic.py BasicBlock: weight-normalised convs with biases, TReLU.
struct CriticBlockImpl : nn::Module {
  CriticBlockImpl(int64_t in, int64_t planes, int64_t stride)
      : conv1(register_module("conv1", WNConv2d(in, planes, 3, stride, 1))),
        conv2(register_module("conv2", WNConv2d(planes, planes, 3, 1, 1))),
        shortcut(register_module("shortcut", nn::Sequential())),
        relu_1(register_module("relu_1", TReLU())),
        relu_2(register_module("relu_2", TReLU())) {
    if (stride != 1 || in != planes) shortcut->push_back(WNConv2d(in, planes, 1, stride, 0));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto out = relu_1(conv1(x));
    return relu_2(conv2(out) + Shortcut(shortcut, x));
  }
  WNConv2d conv1, conv2;
  nn::Sequential shortcut;
  TReLU relu_1, relu_2;
};
TORCH_MODULE(CriticBlock);

// ResNet-18 stages as both networks lay them out: every stage strides 2.
template <typename Block>
void AddStages(nn::Module& m, std::vector<nn::Sequential>& layers) {
  int64_t in = 64;
  int i = 1;
  for (int64_t planes : {64, 128, 256, 512}) {
    layers.push_back(m.register_module("layer" + std::to_string(i++),
                                       nn::Sequential(Block(in, planes, 2), Block(planes, planes, 1))));
    in = planes;
  }
}

// actor.py ResNet(9, 18, 65).
struct ActorImpl : nn::Module {
  ActorImpl()
      : conv1(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(9, 64, 3).stride(2).padding(1).bias(false)))),
        bn1(register_module("bn1", nn::BatchNorm2d(64))) {
    AddStages<ActorBlock>(*this, layers);
    fc = register_module("fc", nn::Linear(512, kActionDim));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(bn1(conv1(x)));
    for (auto& layer : layers) h = layer->forward(h);
    return torch::sigmoid(fc(F::avg_pool2d(h, F::AvgPool2dFuncOptions(4)).flatten(1)));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  std::vector<nn::Sequential> layers;
  nn::Linear fc{nullptr};
};
TORCH_MODULE(Actor);

// critic.py ResNet_wobn(3 + 9, 18, 1).
struct CriticImpl : nn::Module {
  CriticImpl() : conv1(register_module("conv1", WNConv2d(12, 64, 3, 2, 1))) {
    AddStages<CriticBlock>(*this, layers);
    fc = register_module("fc", nn::Linear(512, 1));
    relu_1 = register_module("relu_1", TReLU());
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = relu_1(conv1(x));
    for (auto& layer : layers) h = layer->forward(h);
    return fc(F::avg_pool2d(h, F::AvgPool2dFuncOptions(4)).flatten(1));
  }
  WNConv2d conv1;
  std::vector<nn::Sequential> layers;
  nn::Linear fc{nullptr};
  TReLU relu_1{nullptr};
};
TORCH_MODULE(Critic);

// wgan.py Discriminator.
struct DiscriminatorImpl : nn::Module {
  DiscriminatorImpl() {
    const int64_t ch[] = {6, 16, 32, 64, 128, 1};
    for (int k = 0; k < 5; ++k)
      convs.push_back(register_module("conv" + std::to_string(k), WNConv2d(ch[k], ch[k + 1], 5, 2, 2)));
    for (int k = 0; k < 4; ++k) relus.push_back(register_module("relu" + std::to_string(k), TReLU()));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (int k = 0; k < 4; ++k) x = relus[k](convs[k](x));
    return F::avg_pool2d(convs[4](x), F::AvgPool2dFuncOptions(4)).view({-1, 1});
  }
  std::vector<WNConv2d> convs;
  std::vector<TReLU> relus;
};
TORCH_MODULE(Discriminator);

// Renderer/model.py FCN: the neural stroke renderer.
struct RendererImpl : nn::Module {
  RendererImpl() {
    const int64_t fc_dims[] = {10, 512, 1024, 2048, 4096};
    for (int k = 0; k < 4; ++k)
      fcs.push_back(register_module("fc" + std::to_string(k + 1), nn::Linear(fc_dims[k], fc_dims[k + 1])));
    const int64_t conv_dims[][2] = {{16, 32}, {32, 32}, {8, 16}, {16, 16}, {4, 8}, {8, 4}};
    for (int k = 0; k < 6; ++k) {
      convs.push_back(register_module("conv" + std::to_string(k + 1),
                                      nn::Conv2d(nn::Conv2dOptions(conv_dims[k][0], conv_dims[k][1], 3).padding(1))));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& fc : fcs) x = torch::relu(fc(x));
    x = x.view({-1, 16, 16, 16});
    for (int k = 0; k < 3; ++k) x = F::pixel_shuffle(convs[2 * k + 1](torch::relu(convs[2 * k](x))), 2);
    return 1 - torch::sigmoid(x).view({-1, kWidth, kWidth});
  }
  std::vector<nn::Linear> fcs;
  std::vector<nn::Conv2d> convs;
};
TORCH_MODULE(Renderer);

// ddpg.py decode: render the 5 strokes of each action onto the canvas.
torch::Tensor Decode(const torch::Tensor& action, torch::Tensor canvas, Renderer& renderer) {
  auto x = action.view({-1, kStrokeParams});
  auto stroke = (1 - renderer->forward(x.slice(1, 0, 10))).view({-1, kWidth, kWidth, 1});
  auto color =
      (stroke * x.slice(1, 10).view({-1, 1, 1, 3})).permute({0, 3, 1, 2}).reshape({-1, kStrokes, 3, kWidth, kWidth});
  stroke = stroke.permute({0, 3, 1, 2}).reshape({-1, kStrokes, 1, kWidth, kWidth});
  for (int64_t i = 0; i < kStrokes; ++i) canvas = canvas * (1 - stroke.select(1, i)) + color.select(1, i);
  return canvas;
}

void CopyParameters(nn::Module& target, nn::Module& source) {
  torch::NoGradGuard g;
  auto t = target.parameters(), s = source.parameters();
  for (size_t i = 0; i < t.size(); ++i) t[i].copy_(s[i]);
}

void SoftUpdate(nn::Module& target, nn::Module& source, double tau) {
  torch::NoGradGuard g;
  auto t = target.parameters(), s = source.parameters();
  for (size_t i = 0; i < t.size(); ++i) t[i].copy_(t[i] * (1.0 - tau) + s[i] * tau);
}

// utils.hard_update shares the source's buffer tensors with the target.
void ShareBuffers(nn::Module& target, nn::Module& source) {
  torch::NoGradGuard g;
  auto t = target.buffers(), s = source.buffers();
  for (size_t i = 0; i < t.size(); ++i) t[i].set_(s[i]);
}

struct LearningToPaintNetImpl : nn::Module {
  LearningToPaintNetImpl()
      : actor(register_module("actor", Actor())),
        actor_target(register_module("actor_target", Actor())),
        critic(register_module("critic", Critic())),
        critic_target(register_module("critic_target", Critic())),
        netD(register_module("netD", Discriminator())),
        target_netD(register_module("target_netD", Discriminator())),
        decoder(register_module("decoder", Renderer())) {
    CopyParameters(*actor_target, *actor);
    CopyParameters(*critic_target, *critic);
    CopyParameters(*target_netD, *netD);
    ShareTargetBuffers();
  }
  void ShareTargetBuffers() { ShareBuffers(*actor_target, *actor); }
  Actor actor, actor_target;
  Critic critic, critic_target;
  Discriminator netD, target_netD;
  Renderer decoder;
};
TORCH_MODULE(LearningToPaintNet);

class LearningToPaintWorkload : public Workload {
 public:
  LearningToPaintWorkload(const WorkloadOptions& opt, bool replay)
      : mode_(opt.mode), device_(opt.device), batch_(opt.batch_size), replay_(replay) {
    TORCH_CHECK(opt.batch_size >= 2 || opt.mode != Mode::kTrain,
                "learning_to_paint: the train batch must be >= 2 (BatchNorm in train mode), got ", opt.batch_size);
    TORCH_CHECK(opt.batch_size >= 1, "learning_to_paint: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    net_->ShareTargetBuffers();  // to() gives every buffer its own storage
    auto dev = torch::TensorOptions().device(device_);
    // ddpg.py coord: CoordConv channels i / 127 and j / 127 (not a buffer).
    auto idx = torch::arange(kWidth, dev.dtype(torch::kFloat)) / 127.0;
    coord_ =
        torch::stack({idx.view({kWidth, 1}).expand({kWidth, kWidth}), idx.view({1, kWidth}).expand({kWidth, kWidth})})
            .unsqueeze(0);
    images_ = torch::randint(0, 256, {kImagePool, 3, kWidth, kWidth}, dev.dtype(torch::kByte));
    samples_per_step_ = batch_;
    inputs_["state"] = ResetEnv();
    if (mode_ != Mode::kTrain) return;
    critic_opt_ =
        std::make_unique<torch::optim::Adam>(net_->critic->parameters(), torch::optim::AdamOptions(kCriticLr));
    actor_opt_ = std::make_unique<torch::optim::Adam>(net_->actor->parameters(), torch::optim::AdamOptions(kActorLr));
    gan_opt_ = std::make_unique<torch::optim::Adam>(net_->netD->parameters(),
                                                    torch::optim::AdamOptions(kGanLr).betas({kGanBeta1, 0.999}));
    if (!replay_) {
      // The parity hook's batch, replaced by the reference's.
      inputs_["batch_state"] = inputs_["state"].clone();
      inputs_["batch_action"] = torch::rand({batch_, kActionDim}, dev.dtype(torch::kFloat));
      inputs_["batch_next_state"] = inputs_["state"].clone();
      inputs_["batch_terminal"] = torch::zeros({batch_}, dev.dtype(torch::kFloat));
      return;
    }
    const int64_t capacity = kMemorySteps * batch_;
    mem_state_ = torch::empty({capacity, 7, kWidth, kWidth}, dev.dtype(torch::kByte));
    mem_next_state_ = torch::empty_like(mem_state_);
    mem_action_ = torch::empty({capacity, kActionDim}, dev.dtype(torch::kFloat));
    mem_reward_ = torch::empty({capacity}, dev.dtype(torch::kFloat));
    mem_terminal_ = torch::empty({capacity}, dev.dtype(torch::kFloat));
    // One environment step fills the memory with a batch before the first update.
    ActStepStore();
  }

  torch::nn::Module& net() override { return *net_; }

  // The actor's strokes for the current observations.
  torch::Tensor Forward() override { return Play(inputs_["state"], net_->actor); }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(critic_opt_, "learning_to_paint: TrainStep on a workload built for eval");
    if (replay_) {
      ActStepStore();
      auto idx = torch::randint(0, mem_size_, {batch_}, torch::TensorOptions().dtype(torch::kLong)).to(device_);
      inputs_["batch_state"] = mem_state_.index_select(0, idx);
      inputs_["batch_action"] = mem_action_.index_select(0, idx);
      inputs_["batch_next_state"] = mem_next_state_.index_select(0, idx);
      inputs_["batch_terminal"] = mem_terminal_.index_select(0, idx);
    }
    return UpdatePolicy();
  }

  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    c10::InferenceMode guard;
    EnvStep(SelectAction());
  }

  void CastTo(torch::ScalarType dtype) override {
    Workload::CastTo(dtype);
    net_->ShareTargetBuffers();
    coord_ = coord_.to(dtype);
    dtype_ = dtype;
    for (auto* t : {&mem_action_, &mem_reward_, &mem_terminal_}) {
      if (t->defined()) *t = t->to(dtype);
    }
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string("the DDPG update trains the discriminator, critic and actor outside the acting forward");
    }
    return std::nullopt;
  }

 private:
  // ddpg.py play: canvas and target / 255, step / max_step, coordinates.
  torch::Tensor Play(const torch::Tensor& state, Actor& actor) {
    auto x = torch::cat({state.slice(1, 0, 6).to(dtype_) / 255, state.slice(1, 6, 7).to(dtype_) / kMaxStep,
                         coord_.expand({state.size(0), 2, kWidth, kWidth})},
                        1);
    return actor->forward(x);
  }

  // ddpg.py evaluate: Q of the critic (or its target) plus the WGAN reward.
  std::pair<torch::Tensor, torch::Tensor> Evaluate(const torch::Tensor& state, const torch::Tensor& action,
                                                   bool target) {
    auto t = state.slice(1, 6, 7);
    auto gt = state.slice(1, 3, 6).to(dtype_) / 255;
    auto canvas0 = state.slice(1, 0, 3).to(dtype_) / 255;
    auto canvas1 = Decode(action, canvas0, net_->decoder);
    auto gan_reward = net_->target_netD->forward(torch::cat({gt, canvas1}, 1)) -
                      net_->target_netD->forward(torch::cat({gt, canvas0}, 1));
    auto merged = torch::cat(
        {canvas0, canvas1, gt, (t + 1).to(dtype_) / kMaxStep, coord_.expand({state.size(0), 2, kWidth, kWidth})}, 1);
    auto q = target ? net_->critic_target->forward(merged) : net_->critic->forward(merged);
    return {q + gan_reward, gan_reward};
  }

  // wgan.py update: one WGAN-GP step of the discriminator.
  void UpdateGan(const torch::Tensor& state) {
    auto fake_img = state.slice(1, 0, 3).to(dtype_) / 255;
    auto real_img = state.slice(1, 3, 6).to(dtype_) / 255;
    auto fake = torch::cat({real_img, fake_img}, 1);
    auto real = torch::cat({real_img, real_img}, 1);
    auto d_real = net_->netD->forward(real);
    auto d_fake = net_->netD->forward(fake);
    const int64_t b = real.size(0);
    auto alpha = torch::rand({b, 1}).expand({b, real.numel() / b}).contiguous().view({b, 6, kWidth, kWidth});
    alpha = alpha.to(device_, dtype_);
    auto interp = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(true);
    auto d_interp = net_->netD->forward(interp);
    auto grads = torch::autograd::grad({d_interp}, {interp}, {torch::ones_like(d_interp)}, /*retain_graph=*/true,
                                       /*create_graph=*/true)[0];
    auto penalty = (grads.view({b, -1}).norm(2, 1) - 1).pow(2).mean() * kPenaltyWeight;
    gan_opt_->zero_grad();
    (d_fake.mean() - d_real.mean() + penalty).backward();
    gan_opt_->step();
    SoftUpdate(*net_->target_netD, *net_->netD, kGanTau);
  }

  // ddpg.py update_policy on the batch in inputs().
  torch::Tensor UpdatePolicy() {
    const auto& state = inputs_["batch_state"];
    const auto& action = inputs_["batch_action"];
    const auto& next_state = inputs_["batch_next_state"];
    const auto& terminal = inputs_["batch_terminal"];
    UpdateGan(next_state);
    torch::Tensor target_q;
    {
      torch::NoGradGuard g;
      auto next_action = Play(next_state, net_->actor_target);
      target_q = Evaluate(next_state, next_action, /*target=*/true).first;
      target_q = kDiscount * (1 - terminal.to(dtype_)).view({-1, 1}) * target_q;
    }
    auto [cur_q, step_reward] = Evaluate(state, action, /*target=*/false);
    target_q = target_q + step_reward.detach();
    auto value_loss = F::mse_loss(cur_q, target_q);
    net_->critic->zero_grad();
    value_loss.backward();
    critic_opt_->step();

    auto pre_q = Evaluate(state, Play(state, net_->actor), /*target=*/false).first;
    auto policy_loss = -pre_q.mean();
    net_->actor->zero_grad();
    policy_loss.backward();
    actor_opt_->step();
    SoftUpdate(*net_->actor_target, *net_->actor, kTau);
    SoftUpdate(*net_->critic_target, *net_->critic, kTau);
    return value_loss.detach();
  }

  // ddpg.py select_action: the actor in eval mode, actions through the host.
  torch::Tensor SelectAction() {
    torch::NoGradGuard g;
    const bool was_training = net_->actor->is_training();
    net_->actor->eval();
    auto action = Play(inputs_["state"], net_->actor).to(torch::kCPU);  // to_numpy
    net_->actor->train(was_training);
    return action.to(device_);  // fastenv.step: torch.tensor(action).to(device)
  }

  // env.py Paint.reset: new targets, blank canvases.
  torch::Tensor ResetEnv() {
    auto ids = torch::randint(0, kImagePool, {batch_}, torch::TensorOptions().dtype(torch::kLong)).to(device_);
    gt_ = images_.index_select(0, ids);
    canvas_ = torch::zeros_like(gt_);
    step_num_ = 0;
    last_dis_ = ini_dis_ = Distance();
    return Observation();
  }
  torch::Tensor Distance() const {
    return ((canvas_.to(torch::kFloat) - gt_.to(torch::kFloat)) / 255).pow(2).mean({1, 2, 3});
  }
  torch::Tensor Observation() const {
    return torch::cat({canvas_, gt_, torch::full({batch_, 1, kWidth, kWidth}, step_num_, canvas_.options())}, 1);
  }

  // env.py Paint.step: paint, observe, reward (copied to the host as
  // to_numpy does), done after max_step.
  std::pair<torch::Tensor, torch::Tensor> EnvStep(const torch::Tensor& action) {
    torch::NoGradGuard g;
    canvas_ = (Decode(action, canvas_.to(dtype_) / 255, net_->decoder) * 255).to(torch::kByte);
    ++step_num_;
    auto obs = Observation();
    auto dis = Distance();
    auto reward = ((last_dis_ - dis) / (ini_dis_ + 1e-8)).to(torch::kCPU);
    last_dis_ = dis;
    inputs_["state"] = obs;
    return {obs, reward};
  }

  void ActStepStore() {
    auto state = inputs_["state"];
    auto action = SelectAction();
    auto [next_state, reward] = EnvStep(action);
    const bool done = step_num_ == kMaxStep;
    const int64_t capacity = mem_state_.size(0);
    auto rows = (torch::arange(batch_, torch::TensorOptions().dtype(torch::kLong)) + mem_next_) % capacity;
    rows = rows.to(device_);
    mem_state_.index_copy_(0, rows, state);
    mem_next_state_.index_copy_(0, rows, next_state);
    mem_action_.index_copy_(0, rows, action.to(mem_action_.scalar_type()));
    mem_reward_.index_copy_(0, rows, reward.to(device_, mem_reward_.scalar_type()));
    mem_terminal_.index_fill_(0, rows, done ? 1.0 : 0.0);
    mem_next_ = (mem_next_ + batch_) % capacity;
    mem_size_ = std::min(mem_size_ + batch_, capacity);
    if (done) inputs_["state"] = ResetEnv();
  }

  Mode mode_;
  torch::Device device_;
  int64_t batch_;
  bool replay_;
  LearningToPaintNet net_;
  torch::Tensor coord_, images_, gt_, canvas_, last_dis_, ini_dis_;
  int64_t step_num_ = 0;
  torch::Tensor mem_state_, mem_next_state_, mem_action_, mem_reward_, mem_terminal_;
  int64_t mem_next_ = 0, mem_size_ = 0;
  std::unique_ptr<torch::optim::Adam> critic_opt_, actor_opt_, gan_opt_;
  torch::ScalarType dtype_ = torch::kFloat;
};

}  // namespace

std::unique_ptr<Workload> MakeLearningToPaintWorkload(const WorkloadOptions& opt, bool replay) {
  return std::make_unique<LearningToPaintWorkload>(opt, replay);
}

void AddLearningToPaintModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "learning_to_paint";
  info.paper_name = "LearningToPaint";
  info.domain = Domain::kReinforcementLearning;
  info.task = "reinforcement learning";
  info.reference =
      "TorchBench LearningToPaint (Huang et al. 2019): DDPG with ResNet-18 CoordConv actor, "
      "weight-normalised critic, WGAN-GP reward and the FCN stroke renderer; one env step + one update";
  // torchbenchmark/models/LearningToPaint/__init__.py: DEFAULT_TRAIN_BSIZE =
  // DEFAULT_EVAL_BSIZE = 96 (the environment batch and the update batch).
  info.default_batch = {96, 96};
  // One update runs four ResNet-18s forward (three backward) at 128 x 128.
  info.cpu_batch = BatchSizes{8, 8};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return MakeLearningToPaintWorkload(opt, /*replay=*/true); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
