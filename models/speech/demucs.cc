#include "models/speech/demucs.h"

#include <torch/torch.h>

#include <cmath>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

constexpr int64_t kSources = 4, kAudioChannels = 2, kChannels = 64, kKernel = 8, kStride = 4, kContext = 3;
constexpr int64_t kLstmLayers = 2;
constexpr double kRescale = 0.1;
constexpr int64_t kStreams = 5;      // TorchBench's input: the mix and 4 stems
constexpr int64_t kLength = 426888;  // TorchBench's example_inputs length
constexpr int64_t kSmokeLength = 44100 + 20000;
constexpr int64_t kShift = 44100;   // parser.py data_stride -> Shift(data_stride)
constexpr int64_t kRemixGroup = 4;  // parser.py remix_group_size
constexpr double kLr = 3e-4;        // parser.py lr

torch::Tensor CenterTrim(const torch::Tensor& x, int64_t length) {
  const int64_t delta = x.size(-1) - length;
  TORCH_CHECK(delta >= 0, "demucs: skip shorter than the decoder's signal (", x.size(-1), " < ", length, ")");
  return delta == 0 ? x : x.narrow(-1, delta / 2, length);
}

// model.py BLSTM: time-major bidirectional LSTM and a projection back to dim.
struct BLSTMImpl : nn::Module {
  BLSTMImpl(int64_t dim, int64_t layers)
      : lstm(register_module("lstm", nn::LSTM(nn::LSTMOptions(dim, dim).num_layers(layers).bidirectional(true)))),
        linear(register_module("linear", nn::Linear(2 * dim, dim))) {}
  torch::Tensor forward(const torch::Tensor& x) {  // batch x channels x time
    auto y = std::get<0>(lstm(x.permute({2, 0, 1})));
    return linear(y).permute({1, 2, 0});
  }
  nn::LSTM lstm;
  nn::Linear linear;
};
TORCH_MODULE(BLSTM);

struct DemucsImpl : nn::Module {
  explicit DemucsImpl(int64_t depth) {
    TORCH_CHECK(depth >= 1, "demucs: depth must be >= 1, got ", depth);
    encoder = register_module("encoder", nn::ModuleList());
    decoder = register_module("decoder", nn::ModuleList());
    std::vector<nn::Sequential> decode_levels;
    int64_t in = kAudioChannels, ch = kChannels;
    for (int64_t i = 0; i < depth; ++i) {
      encoder->push_back(nn::Sequential(nn::Conv1d(nn::Conv1dOptions(in, ch, kKernel).stride(kStride)), nn::ReLU(),
                                        nn::Conv1d(nn::Conv1dOptions(ch, 2 * ch, 1)), nn::GLU(nn::GLUOptions(1))));
      const int64_t out = i > 0 ? in : kSources * kAudioChannels;
      nn::Sequential dec(nn::Conv1d(nn::Conv1dOptions(ch, 2 * ch, kContext)), nn::GLU(nn::GLUOptions(1)),
                         nn::ConvTranspose1d(nn::ConvTranspose1dOptions(ch, out, kKernel).stride(kStride)));
      if (i > 0) dec->push_back(nn::ReLU());
      decode_levels.push_back(dec);
      in = ch;
      ch *= 2;
    }
    // The deepest level decodes first (model.py inserts at index 0).
    for (auto it = decode_levels.rbegin(); it != decode_levels.rend(); ++it) decoder->push_back(*it);
    lstm = register_module("lstm", BLSTM(in, kLstmLayers));
    // rescale_module(reference=0.1): weights and biases / sqrt(std / 0.1).
    torch::NoGradGuard g;
    for (const auto& m : modules(/*include_self=*/false)) {
      torch::Tensor w, b;
      if (auto* c = m->as<nn::Conv1d>()) {
        w = c->weight, b = c->bias;
      } else if (auto* t = m->as<nn::ConvTranspose1d>()) {
        w = t->weight, b = t->bias;
      } else {
        continue;
      }
      auto scale = (w.std() / kRescale).sqrt();
      w.div_(scale);
      b.div_(scale);
    }
  }

  torch::Tensor forward(const torch::Tensor& mix) {
    auto x = mix;
    std::vector<torch::Tensor> saved{x};
    for (const auto& enc : *encoder) {
      x = enc->as<nn::Sequential>()->forward(x);
      saved.push_back(x);
    }
    x = lstm->forward(x);
    for (const auto& dec : *decoder) {
      x = x + CenterTrim(saved.back(), x.size(-1));
      saved.pop_back();
      x = dec->as<nn::Sequential>()->forward(x);
    }
    return x.view({x.size(0), kSources, kAudioChannels, x.size(-1)});
  }

  nn::ModuleList encoder{nullptr}, decoder{nullptr};
  BLSTM lstm{nullptr};
};
TORCH_MODULE(Demucs);

// TorchBench's DemucsWrapper: the network under "model." (the augmentation
// modules have no parameters).
struct DemucsWrapperImpl : nn::Module {
  explicit DemucsWrapperImpl(int64_t depth) : model(register_module("model", Demucs(depth))) {}
  Demucs model;
};
TORCH_MODULE(DemucsWrapper);

// augment.py, in TorchBench's order: FlipSign, FlipChannels, Shift, Remix.
// Eval keeps only Shift's cut of the last kShift samples.
torch::Tensor Augment(torch::Tensor wav, bool training) {
  const int64_t b = wav.size(0), s = wav.size(1), c = wav.size(2), t = wav.size(3);
  const int64_t length = t - kShift;
  TORCH_CHECK(length > 0, "demucs: streams must be longer than the shift of ", kShift, " samples, got ", t);
  if (!training) return wav.narrow(3, 0, length);
  auto dev = torch::TensorOptions().device(wav.device());
  auto signs = torch::randint(2, {b, s, 1, 1}, dev.dtype(torch::kFloat));
  wav = wav * (2 * signs - 1);
  auto left = torch::randint(2, {b, s, 1, 1}, dev.dtype(torch::kLong)).expand({-1, -1, -1, t});
  wav = torch::cat({wav.gather(2, left), wav.gather(2, 1 - left)}, 2);
  auto offsets = torch::randint(kShift, {b, s, 1, 1}, dev.dtype(torch::kLong)).expand({-1, -1, c, -1});
  wav = wav.gather(3, torch::arange(length, dev.dtype(torch::kLong)) + offsets);
  TORCH_CHECK(b % kRemixGroup == 0, "demucs: Remix needs the batch (", b, ") to be a multiple of ", kRemixGroup);
  const int64_t groups = b / kRemixGroup;
  wav = wav.reshape({groups, kRemixGroup, s, c, length});
  auto perm =
      torch::rand({groups, kRemixGroup, s, 1, 1}, dev.dtype(torch::kFloat)).argsort(/*dim=*/1, /*descending=*/false);
  wav = wav.gather(1, perm.expand({-1, -1, -1, c, length}));
  return wav.reshape({b, s, c, length});
}

class DemucsWorkload : public Workload {
 public:
  DemucsWorkload(const WorkloadOptions& opt, int64_t depth) : net_(depth) {
    TORCH_CHECK(opt.batch_size >= 1, "demucs: batch size must be >= 1, got ", opt.batch_size);
    TORCH_CHECK(opt.mode != Mode::kTrain || opt.batch_size % kRemixGroup == 0,
                "demucs: the train batch must be a multiple of the Remix group size ", kRemixGroup, ", got ",
                opt.batch_size);
    net_->to(opt.device);
    inputs_["streams"] = torch::rand({opt.batch_size, kStreams, kAudioChannels, opt.smoke ? kSmokeLength : kLength},
                                     torch::TensorOptions(opt.device));
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    sources_ = Augment(inputs_["streams"].slice(1, 1), net_->is_training());
    return net_->model->forward(sources_.sum(1));
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "demucs: TrainStep on a workload built for eval");
    auto estimates = RunForward();
    auto loss = torch::l1_loss(estimates, CenterTrim(sources_, estimates.size(-1)));
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    return loss.detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string("the loss needs the augmented sources that the forward draws at random");
    }
    return std::nullopt;
  }

 private:
  DemucsWrapper net_;
  torch::Tensor sources_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace

std::unique_ptr<Workload> MakeDemucsWorkload(const WorkloadOptions& opt, int64_t depth) {
  return std::make_unique<DemucsWorkload>(opt, depth);
}

void AddDemucsModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "demucs";
  info.paper_name = "demucs";
  info.domain = Domain::kSpeech;
  info.task = "audio source separation";
  info.reference =
      "Demucs v2 (Défossez et al. 2019) as TorchBench demucs: Demucs(channels=64), depth 6, GLU, "
      "BiLSTM bottleneck; augmented L1 step with Adam(3e-4)";
  // torchbenchmark/models/demucs/__init__.py: DEFAULT_TRAIN_BSIZE = 64,
  // DEFAULT_EVAL_BSIZE = 8.
  info.default_batch = {64, 8};
  // On CPU the 2048-wide BiLSTM dominates: the smallest train batch Remix
  // allows (4) and one eval stream.
  info.cpu_batch = BatchSizes{4, 1};
  info.smoke_batch = {4, 1};
  info.create = [](const WorkloadOptions& opt) { return MakeDemucsWorkload(opt, 6); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
