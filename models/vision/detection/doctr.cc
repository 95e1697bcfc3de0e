#include "models/vision/detection/doctr.h"

#include <torch/torch.h>

#include "models/optimizers.h"
#include "models/shared/resnet_network.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// --- doctr_det_predictor: DBNet db_resnet50 ---------------------------------

constexpr int64_t kDetSide = 1024;      // TorchBench: torch.randn(batch, 3, 1024, 1024)
constexpr int64_t kDetSmokeSide = 128;  // smoke: the network is fully convolutional
constexpr int64_t kHeadChans = 256;     // DBNet(head_chans=256)
constexpr int64_t kNumClasses = 1;      // class_names = [CLASS_NAME] ("words")

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t pad, bool bias) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).padding(pad).bias(bias));
}

nn::Upsample Upsample(double scale) {
  return nn::Upsample(
      nn::UpsampleOptions().scale_factor(std::vector<double>{scale, scale}).mode(torch::kBilinear).align_corners(true));
}

// torchvision resnet50 without avgpool / fc, as IntermediateLayerGetter keeps
// it (names conv1, bn1, layer1.0.conv1, ... as torchvision's).
struct DbBackboneImpl : nn::Module {
  DbBackboneImpl() {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    bn1 = register_module("bn1", nn::BatchNorm2d(64));
    maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
    const int64_t planes[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3}, strides[4] = {1, 2, 2, 2};
    int64_t inplanes = 64;
    for (int i = 0; i < 4; ++i) {
      const int64_t width = planes[i] * BottleneckImpl::kExpansion;
      nn::Sequential down{nullptr};
      if (strides[i] != 1 || inplanes != width) {
        down = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(inplanes, width, 1).stride(strides[i]).bias(false)),
                              nn::BatchNorm2d(width));
      }
      nn::Sequential layer;
      layer->push_back(Bottleneck(inplanes, planes[i], strides[i], down, 1, 64));
      for (int64_t b = 1; b < blocks[i]; ++b) layer->push_back(Bottleneck(width, planes[i], 1, nullptr, 1, 64));
      inplanes = width;
      layers.push_back(register_module("layer" + std::to_string(i + 1), layer));
    }
  }
  std::vector<torch::Tensor> forward(torch::Tensor x) {
    x = maxpool(torch::relu(bn1(conv1(x))));
    std::vector<torch::Tensor> feats;
    for (auto& layer : layers) {
      x = layer->forward(x);
      feats.push_back(x);
    }
    return feats;
  }
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::MaxPool2d maxpool{nullptr};
  std::vector<nn::Sequential> layers;
};
TORCH_MODULE(DbBackbone);

// docTR's FeaturePyramidNetwork(in_channels, out_channels=256).
struct FeaturePyramidImpl : nn::Module {
  explicit FeaturePyramidImpl(const std::vector<int64_t>& in_channels) {
    const int64_t out_chans = kHeadChans / static_cast<int64_t>(in_channels.size());
    for (size_t i = 0; i < in_channels.size(); ++i) {
      in_branches->push_back(
          nn::Sequential(Conv(in_channels[i], kHeadChans, 1, 0, false), nn::BatchNorm2d(kHeadChans), nn::ReLU(true)));
      out_branches->push_back(nn::Sequential(Conv(kHeadChans, out_chans, 3, 1, false), nn::BatchNorm2d(out_chans),
                                             nn::ReLU(true), Upsample(static_cast<double>(1 << i))));
    }
    register_module("in_branches", in_branches);
    register_module("upsample", upsample);
    register_module("out_branches", out_branches);
  }
  torch::Tensor forward(const std::vector<torch::Tensor>& x) {
    const size_t n = x.size();
    TORCH_CHECK(n == out_branches->size(), "FeaturePyramidNetwork: expected ", out_branches->size(), " maps");
    std::vector<torch::Tensor> lateral(n), merged(n);
    for (size_t i = 0; i < n; ++i) lateral[i] = in_branches[i]->as<nn::Sequential>()->forward(x[i]);
    // Top-down: out = [x_3, up(x_3) + x_2, up(.) + x_1, up(.) + x_0], kept by level.
    merged[n - 1] = lateral[n - 1];
    for (size_t i = n - 1; i-- > 0;) merged[i] = upsample(merged[i + 1]) + lateral[i];
    std::vector<torch::Tensor> out;
    for (size_t i = 0; i < n; ++i) out.push_back(out_branches[i]->as<nn::Sequential>()->forward(merged[i]));
    return torch::cat(out, 1);
  }
  nn::ModuleList in_branches, out_branches;
  nn::Upsample upsample = Upsample(2.0);
};
TORCH_MODULE(FeaturePyramid);

// DBNet's prob_head / thresh_head: conv3x3, two ConvTranspose2d(2, stride 2).
nn::Sequential DbHead() {
  const int64_t c = kHeadChans / 4;
  return nn::Sequential(Conv(kHeadChans, c, 3, 1, false), nn::BatchNorm2d(c), nn::ReLU(true),
                        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(c, c, 2).stride(2).bias(false)),
                        nn::BatchNorm2d(c), nn::ReLU(true),
                        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(c, kNumClasses, 2).stride(2)));
}

// kaiming_normal (fan_out, relu) for every Conv2d, BN weight 1 / bias 0: the
// torchvision backbones' init and docTR's for its own layers; ConvTranspose2d
// keeps PyTorch's default (docTR's isinstance(m, nn.Conv2d) misses it).
void InitConvAndNorm(nn::Module& net) {
  torch::NoGradGuard g;
  for (auto& m : net.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

struct DbNetImpl : nn::Module {
  DbNetImpl()
      : feat_extractor(register_module("feat_extractor", DbBackbone())),
        fpn(register_module("fpn", FeaturePyramid(std::vector<int64_t>{256, 512, 1024, 2048}))),
        prob_head(register_module("prob_head", DbHead())),
        thresh_head(register_module("thresh_head", DbHead())) {
    InitConvAndNorm(*this);
  }
  // forward(x, return_model_output=True)["out_map"]: sigmoid of the logits.
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::sigmoid(prob_head->forward(fpn->forward(feat_extractor->forward(x))));
  }
  DbBackbone feat_extractor;
  FeaturePyramid fpn;
  nn::Sequential prob_head, thresh_head;
};
TORCH_MODULE(DbNet);

class DoctrDetWorkload : public Workload {
 public:
  explicit DoctrDetWorkload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.batch_size >= 1, "doctr_det_predictor: batch size must be positive, got ", opt.batch_size);
    TORCH_CHECK(opt.mode == Mode::kEval, "doctr_det_predictor: TorchBench implements eval only");
    net_->to(opt.device);
    const int64_t side = opt.smoke ? kDetSmokeSide : kDetSide;
    inputs_["images"] = torch::randn({opt.batch_size, 3, side, side}, torch::TensorOptions(opt.device));
    samples_per_step_ = opt.batch_size;
  }
  nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->forward(inputs_["images"]); }
  torch::Tensor TrainStep() override { TORCH_CHECK(false, "doctr_det_predictor has no train mode"); }
  // Eval: the network and sigmoid, then the host copy DBPostProcessor reads
  // (prob_map.detach().cpu().permute((0, 2, 3, 1))); its OpenCV / NumPy
  // contour search is not a LibTorch workload and is not run.
  void Step(Mode mode) override {
    TORCH_CHECK(mode == Mode::kEval, "doctr_det_predictor has no train mode");
    c10::InferenceMode guard;
    auto host = RunForward().detach().to(torch::kCPU).permute({0, 2, 3, 1});
    (void)host;
  }

 private:
  DbNet net_;
};

// --- doctr_reco_predictor: CRNN crnn_vgg16_bn ------------------------------

constexpr int64_t kRecoH = 32, kRecoW = 128;      // TorchBench: torch.randn(batch, 3, 32, 128)
constexpr int64_t kVocabSize = 126;               // len(VOCABS["french"]); blank = 126
constexpr int64_t kRnnUnits = 128;                // CRNN(rnn_units=128)
constexpr int64_t kMaxLength = 32;                // CRNN.max_length: encode_sequences target_size
constexpr int64_t kMinChars = 1, kMaxChars = 12;  // train.py --min-chars 1, --max-chars 12
// train.py: Adam(lr 1e-3, betas (0.95, 0.999), eps 1e-6, weight_decay 0);
// clip_grad_norm_(model.parameters(), 5).
constexpr double kLr = 1e-3, kBeta1 = 0.95, kBeta2 = 0.999, kAdamEps = 1e-6, kClipNorm = 5.0;

// vgg16_bn_r features: torchvision's vgg16_bn cfg "D" with BN, the last three
// of its five max pools replaced by MaxPool2d((2, 1)).
nn::Sequential Vgg16BnR() {
  const int64_t cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  nn::Sequential features;
  int64_t in = 3, pools = 0;
  for (int64_t v : cfg) {
    if (v == 0) {
      const bool rect = ++pools > 2;  // pools 3, 4, 5 of 5
      auto size = rect ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{2, 2};
      features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(size).stride(size)));
      continue;
    }
    features->push_back(Conv(in, v, 3, 1, true));
    features->push_back(nn::BatchNorm2d(v));
    features->push_back(nn::ReLU(true));
    in = v;
  }
  return features;
}

struct CrnnImpl : nn::Module {
  CrnnImpl()
      : feat_extractor(register_module("feat_extractor", Vgg16BnR())),
        decoder(register_module(
            "decoder", nn::LSTM(nn::LSTMOptions(512, kRnnUnits).num_layers(2).bidirectional(true).batch_first(true)))),
        linear(register_module("linear", nn::Linear(2 * kRnnUnits, kVocabSize + 1))) {
    InitConvAndNorm(*feat_extractor);
  }
  // The logits, N x W/4 x 127 (forward's out["out_map"]).
  torch::Tensor forward(const torch::Tensor& x) {
    auto f = feat_extractor->forward(x);
    // B x C x H x W -> B x C*H x W -> B x W x C*H
    auto seq = torch::reshape(f, {-1, f.size(1) * f.size(2), f.size(3)}).transpose(1, 2);
    return linear(std::get<0>(decoder->forward(seq)));
  }
  nn::Sequential feat_extractor;
  nn::LSTM decoder;
  nn::Linear linear;
};
TORCH_MODULE(Crnn);

// Random words as encode_sequences writes them: N x 32 indices into the
// vocab, padded with eos = len(vocab) (also CTC's blank); lengths 1..12.
void RandomWords(int64_t batch, torch::Device device, std::map<std::string, torch::Tensor>& inputs) {
  auto i32 = torch::TensorOptions(device).dtype(torch::kInt);
  auto lengths = torch::randint(kMinChars, kMaxChars + 1, {batch}, i32);
  auto chars = torch::randint(0, kVocabSize, {batch, kMaxLength}, i32);
  auto pos = torch::arange(kMaxLength, i32).unsqueeze(0);
  inputs["targets"] = torch::where(pos < lengths.unsqueeze(1), chars, torch::full_like(chars, kVocabSize));
  inputs["target_lengths"] = lengths;
}

class DoctrRecoWorkload : public LossWorkload {
 public:
  explicit DoctrRecoWorkload(const WorkloadOptions& opt) : train_(opt.mode == Mode::kTrain) {
    TORCH_CHECK(opt.batch_size >= 1, "doctr_reco_predictor: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    const auto f32 = torch::TensorOptions(opt.device);
    samples_per_step_ = opt.batch_size;
    if (!train_) {
      inputs_["images"] = torch::randn({opt.batch_size, 3, kRecoH, kRecoW}, f32);  // TorchBench's eval input
      return;
    }
    // train.py: word crops as ToTensor gives them, in [0, 1].
    inputs_["images"] = torch::rand({opt.batch_size, 3, kRecoH, kRecoW}, f32);
    RandomWords(opt.batch_size, opt.device, inputs_);
    mean_ = torch::tensor({0.694, 0.695, 0.693}, f32).view({1, 3, 1, 1});
    std_ = torch::tensor({0.299, 0.296, 0.301}, f32).view({1, 3, 1, 1});
    // clip_grad_norm_(5) between backward and the Adam step.
    optimizer_ = std::make_unique<HookedAdam>(
        net_->parameters(), torch::optim::AdamOptions(kLr).betas({kBeta1, kBeta2}).eps(kAdamEps).weight_decay(0),
        [this](HookedAdam&) { nn::utils::clip_grad_norm_(net_->parameters(), kClipNorm); });
  }

  nn::Module& net() override { return *net_; }

  // The logits. Train normalizes the batch first (train.py batch_transforms =
  // Normalize(mean (0.694, 0.695, 0.693), std (0.299, 0.296, 0.301))); eval
  // takes TorchBench's random batch as it is.
  torch::Tensor Forward() override {
    const auto& x = inputs_["images"];
    return net_->forward(train_ ? (x - mean_.to(x.dtype())) / std_.to(x.dtype()) : x);
  }

  // CRNN.compute_loss: CTC over log_softmax of the T x N x C logits, input
  // lengths T, blank len(vocab), mean reduction, zero_infinity; then
  // fit_one_epoch: zero_grad, backward, clip_grad_norm_(5) (the optimizer's
  // hook), Adam step.
  torch::Tensor Loss(const torch::Tensor& logits) override {
    const int64_t n = logits.size(0), t = logits.size(1);
    auto input_lengths = torch::full({n}, t, torch::TensorOptions(logits.device()).dtype(torch::kInt));
    auto log_probs = torch::log_softmax(logits.permute({1, 0, 2}), -1);
    return torch::ctc_loss(log_probs, inputs_["targets"], input_lengths, inputs_["target_lengths"], kVocabSize,
                           at::Reduction::Mean, /*zero_infinity=*/true);
  }

  // Eval: the logits, then CTCPostProcessor's tensor part (softmax max / min
  // confidences, argmax best path) and their host copies; the groupby and
  // vocab lookup to strings is Python, not a LibTorch workload.
  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    c10::InferenceMode guard;
    auto logits = RunForward();
    auto conf = std::get<0>(std::get<0>(torch::softmax(logits, -1).max(-1)).min(1));
    auto best = logits.argmax(-1);
    (void)conf.to(torch::kCPU);
    (void)best.to(torch::kCPU);
  }

 private:
  bool train_;
  Crnn net_;
  torch::Tensor mean_, std_;
};

ModelInfo DetInfo() {
  ModelInfo info;
  info.id = "doctr_det_predictor";
  info.paper_name = "doctr_det_predictor";
  info.domain = Domain::kVision;
  info.task = "text detection";
  info.reference =
      "python-doctr 1.1.0 doctr.models.detection.db_resnet50 (DBNet, ResNet-50 + FPN), as "
      "torchbenchmark/models/doctr_det_predictor: 3x1024x1024, eval model(x, return_model_output=True)";
  // torchbenchmark/models/doctr_det_predictor/__init__.py: DEFAULT_EVAL_BSIZE
  // = 1 (no train batch: eval only).
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};  // smoke at 128x128 (opt.smoke)
  info.supports_train = false;
  info.unsupported_reason =
      "train: TorchBench implements eval only (doctr_det_predictor/__init__.py: train() raises "
      "NotImplementedError(\"Train is not implemented for this model.\"))";
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<DoctrDetWorkload>(opt);
  };
  return info;
}

ModelInfo RecoInfo() {
  ModelInfo info;
  info.id = "doctr_reco_predictor";
  info.paper_name = "doctr_reco_predictor";
  info.domain = Domain::kVision;
  info.task = "text recognition";
  info.reference =
      "python-doctr 1.1.0 doctr.models.recognition.crnn_vgg16_bn (CRNN, vgg16_bn_r + 2-layer BiLSTM, CTC), as "
      "torchbenchmark/models/doctr_reco_predictor: 3x32x128; train as docTR's references/recognition/train.py";
  // torchbenchmark/models/doctr_reco_predictor/__init__.py: DEFAULT_EVAL_BSIZE
  // = 1. Train is our extension: train.py --batch_size default 64.
  info.default_batch = {64, 1};
  // 3.9 GFLOP per crop forward (about 12 with the backward): train at 8 keeps
  // a CPU step near a second or two on 2 cores.
  info.cpu_batch = BatchSizes{8, 1};
  info.smoke_batch = {2, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<DoctrRecoWorkload>(opt);
  };
  return info;
}

}  // namespace

void AddDoctrModels(std::vector<ModelInfo>& out) {
  out.push_back(DetInfo());
  out.push_back(RecoInfo());
}

}  // namespace torchgauge::models
