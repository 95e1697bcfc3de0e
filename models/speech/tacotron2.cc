#include "models/speech/tacotron2.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

constexpr int64_t kSymbols = 148, kEmbed = 512, kMels = 80, kPrenet = 256, kRnn = 1024, kAttention = 128;
constexpr int64_t kLocationFilters = 32, kLocationKernel = 31, kPostnet = 512;
constexpr double kPrenetDropout = 0.5, kConvDropout = 0.5, kRnnDropout = 0.1;
constexpr double kLr = 1e-3, kWeightDecay = 1e-6;
constexpr int64_t kMaxText = 160, kMaxFrames = 800, kSmokeText = 16, kSmokeFrames = 40;

double Gain(const std::string& name) {
  if (name == "tanh") return 5.0 / 3.0;
  if (name == "relu") return std::sqrt(2.0);
  return 1.0;  // linear, sigmoid
}

// layers.py LinearNorm / ConvNorm: Xavier-uniform weights with the gain.
struct LinearNormImpl : nn::Module {
  LinearNormImpl(int64_t in, int64_t out, bool bias = true, const std::string& gain = "linear")
      : linear_layer(register_module("linear_layer", nn::Linear(nn::LinearOptions(in, out).bias(bias)))) {
    torch::NoGradGuard g;
    nn::init::xavier_uniform_(linear_layer->weight, Gain(gain));
  }
  torch::Tensor forward(const torch::Tensor& x) { return linear_layer(x); }
  nn::Linear linear_layer;
};
TORCH_MODULE(LinearNorm);

struct ConvNormImpl : nn::Module {
  ConvNormImpl(int64_t in, int64_t out, int64_t k, bool bias = true, const std::string& gain = "linear")
      : conv(register_module("conv", nn::Conv1d(nn::Conv1dOptions(in, out, k).padding((k - 1) / 2).bias(bias)))) {
    torch::NoGradGuard g;
    nn::init::xavier_uniform_(conv->weight, Gain(gain));
  }
  torch::Tensor forward(const torch::Tensor& x) { return conv(x); }
  nn::Conv1d conv;
};
TORCH_MODULE(ConvNorm);

struct PrenetImpl : nn::Module {
  PrenetImpl() : layers(register_module("layers", nn::ModuleList())) {
    layers->push_back(LinearNorm(kMels, kPrenet, false));
    layers->push_back(LinearNorm(kPrenet, kPrenet, false));
  }
  torch::Tensor forward(torch::Tensor x) {
    // Dropout stays on in eval (training=True in the original).
    for (const auto& l : *layers)
      x = torch::dropout(torch::relu(l->as<LinearNorm>()->forward(x)), kPrenetDropout, true);
    return x;
  }
  nn::ModuleList layers;
};
TORCH_MODULE(Prenet);

nn::Sequential ConvBn(int64_t in, int64_t out, const std::string& gain) {
  return nn::Sequential(ConvNorm(in, out, 5, true, gain), nn::BatchNorm1d(out));
}

struct PostnetImpl : nn::Module {
  PostnetImpl() : convolutions(register_module("convolutions", nn::ModuleList())) {
    const int64_t dims[] = {kMels, kPostnet, kPostnet, kPostnet, kPostnet, kMels};
    for (int i = 0; i < 5; ++i) convolutions->push_back(ConvBn(dims[i], dims[i + 1], i < 4 ? "tanh" : "linear"));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (size_t i = 0; i < convolutions->size(); ++i) {
      x = convolutions[i]->as<nn::Sequential>()->forward(x);
      if (i + 1 < convolutions->size()) x = torch::tanh(x);
      x = torch::dropout(x, kConvDropout, is_training());
    }
    return x;
  }
  nn::ModuleList convolutions;
};
TORCH_MODULE(Postnet);

struct EncoderImpl : nn::Module {
  EncoderImpl()
      : convolutions(register_module("convolutions", nn::ModuleList())),
        lstm(register_module("lstm",
                             nn::LSTM(nn::LSTMOptions(kEmbed, kEmbed / 2).batch_first(true).bidirectional(true)))) {
    for (int i = 0; i < 3; ++i) convolutions->push_back(ConvBn(kEmbed, kEmbed, "relu"));
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& lengths) {
    for (const auto& c : *convolutions) {
      x = torch::dropout(torch::relu(c->as<nn::Sequential>()->forward(x)), kConvDropout, is_training());
    }
    auto packed =
        nn::utils::rnn::pack_padded_sequence(x.transpose(1, 2), lengths.to(torch::kCPU), /*batch_first=*/true);
    auto out = std::get<0>(lstm->forward_with_packed_input(packed));
    return std::get<0>(nn::utils::rnn::pad_packed_sequence(out, /*batch_first=*/true));
  }
  nn::ModuleList convolutions;
  nn::LSTM lstm;
};
TORCH_MODULE(Encoder);

struct LocationLayerImpl : nn::Module {
  LocationLayerImpl()
      : location_conv(register_module("location_conv", ConvNorm(2, kLocationFilters, kLocationKernel, false))),
        location_dense(register_module("location_dense", LinearNorm(kLocationFilters, kAttention, false, "tanh"))) {}
  torch::Tensor forward(const torch::Tensor& w) { return location_dense(location_conv(w).transpose(1, 2)); }
  ConvNorm location_conv;
  LinearNorm location_dense;
};
TORCH_MODULE(LocationLayer);

// Location-sensitive attention (Chorowski et al. 2015) as in model.py.
struct AttentionImpl : nn::Module {
  AttentionImpl()
      : query_layer(register_module("query_layer", LinearNorm(kRnn, kAttention, false, "tanh"))),
        memory_layer(register_module("memory_layer", LinearNorm(kEmbed, kAttention, false, "tanh"))),
        v(register_module("v", LinearNorm(kAttention, 1, false))),
        location_layer(register_module("location_layer", LocationLayer())) {}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const torch::Tensor& memory,
                                                  const torch::Tensor& processed_memory,
                                                  const torch::Tensor& weights_cat, const torch::Tensor& mask) {
    auto energies =
        v(torch::tanh(query_layer(query.unsqueeze(1)) + location_layer(weights_cat) + processed_memory)).squeeze(-1);
    energies = energies.masked_fill(mask, -std::numeric_limits<double>::infinity());
    auto weights = torch::softmax(energies, 1);
    return {torch::bmm(weights.unsqueeze(1), memory).squeeze(1), weights};
  }
  LinearNorm query_layer, memory_layer, v;
  LocationLayer location_layer;
};
TORCH_MODULE(Attention);

struct DecoderOutputs {
  torch::Tensor mel, gate, alignments;
};

struct DecoderImpl : nn::Module {
  DecoderImpl()
      : prenet(register_module("prenet", Prenet())),
        attention_rnn(register_module("attention_rnn", nn::LSTMCell(kPrenet + kEmbed, kRnn))),
        attention_layer(register_module("attention_layer", Attention())),
        decoder_rnn(register_module("decoder_rnn", nn::LSTMCell(kRnn + kEmbed, kRnn))),
        linear_projection(register_module("linear_projection", LinearNorm(kRnn + kEmbed, kMels))),
        gate_layer(register_module("gate_layer", LinearNorm(kRnn + kEmbed, 1, true, "sigmoid"))) {}

  // Teacher-forced decoding of mels (batch x 80 x frames).
  DecoderOutputs forward(const torch::Tensor& memory, const torch::Tensor& mels, const torch::Tensor& memory_lengths) {
    const int64_t b = memory.size(0), t_in = memory.size(1), frames = mels.size(2);
    auto go = torch::zeros({1, b, kMels}, memory.options());
    auto inputs = prenet->forward(torch::cat({go, mels.permute({2, 0, 1})}, 0));
    auto mask = torch::arange(t_in, memory_lengths.options()).unsqueeze(0) >= memory_lengths.unsqueeze(1);
    auto zeros = [&](int64_t n) { return torch::zeros({b, n}, memory.options()); };
    auto ah = zeros(kRnn), ac = zeros(kRnn), dh = zeros(kRnn), dc = zeros(kRnn);
    auto w = zeros(t_in), wcum = zeros(t_in), ctx = zeros(kEmbed);
    auto processed = attention_layer->memory_layer(memory);
    std::vector<torch::Tensor> mel_out, gate_out, align;
    for (int64_t step = 0; step < frames; ++step) {
      std::tie(ah, ac) = attention_rnn(torch::cat({inputs[step], ctx}, -1), std::make_tuple(ah, ac));
      ah = torch::dropout(ah, kRnnDropout, is_training());
      auto cat = torch::cat({w.unsqueeze(1), wcum.unsqueeze(1)}, 1);
      std::tie(ctx, w) = attention_layer(ah, memory, processed, cat, mask);
      wcum = wcum + w;
      std::tie(dh, dc) = decoder_rnn(torch::cat({ah, ctx}, -1), std::make_tuple(dh, dc));
      dh = torch::dropout(dh, kRnnDropout, is_training());
      auto hc = torch::cat({dh, ctx}, 1);
      mel_out.push_back(linear_projection(hc));
      gate_out.push_back(gate_layer(hc).squeeze(1));
      align.push_back(w);
    }
    return {torch::stack(mel_out).permute({1, 2, 0}), torch::stack(gate_out).transpose(0, 1),
            torch::stack(align).transpose(0, 1)};
  }

  Prenet prenet;
  nn::LSTMCell attention_rnn;
  Attention attention_layer;
  nn::LSTMCell decoder_rnn;
  LinearNorm linear_projection, gate_layer;
};
TORCH_MODULE(Decoder);

struct Tacotron2Outputs {
  torch::Tensor mel, mel_postnet, gate;
};

struct Tacotron2Impl : nn::Module {
  Tacotron2Impl()
      : embedding(register_module("embedding", nn::Embedding(kSymbols, kEmbed))),
        encoder(register_module("encoder", Encoder())),
        decoder(register_module("decoder", Decoder())),
        postnet(register_module("postnet", Postnet())) {
    torch::NoGradGuard g;
    const double val = std::sqrt(3.0) * std::sqrt(2.0 / (kSymbols + kEmbed));
    embedding->weight.uniform_(-val, val);
  }
  Tacotron2Outputs forward(const torch::Tensor& text, const torch::Tensor& text_lengths, const torch::Tensor& mels,
                           const torch::Tensor& output_lengths) {
    auto memory = encoder->forward(embedding(text).transpose(1, 2), text_lengths);
    auto d = decoder->forward(memory, mels, text_lengths);
    auto post = d.mel + postnet->forward(d.mel);
    // parse_output with mask_padding, through .data as the original.
    auto pad = torch::arange(mels.size(2), output_lengths.options()).unsqueeze(0) >= output_lengths.unsqueeze(1);
    d.mel.data().masked_fill_(pad.unsqueeze(1), 0.0);
    post.data().masked_fill_(pad.unsqueeze(1), 0.0);
    d.gate.data().masked_fill_(pad, 1e3);
    return {d.mel, post, d.gate};
  }
  nn::Embedding embedding;
  Encoder encoder;
  Decoder decoder;
  Postnet postnet;
};
TORCH_MODULE(Tacotron2);

class Tacotron2Workload : public Workload {
 public:
  explicit Tacotron2Workload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.batch_size >= 1, "tacotron2: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    const int64_t b = opt.batch_size;
    const int64_t max_text = opt.smoke ? kSmokeText : kMaxText, max_frames = opt.smoke ? kSmokeFrames : kMaxFrames;
    // Lengths fall linearly from the maximum to half of it, sorted
    // descending as TextMelCollate sorts them.
    auto text_lengths = torch::empty({b}, torch::kLong), output_lengths = torch::empty({b}, torch::kLong);
    for (int64_t i = 0; i < b; ++i) {
      text_lengths[i].fill_(max_text - (max_text / 2) * i / b);
      output_lengths[i].fill_(max_frames - (max_frames / 2) * i / b);
    }
    auto text = torch::randint(1, kSymbols, {b, max_text}, torch::kLong);
    auto mels = torch::randn({b, kMels, max_frames});
    auto gates = torch::zeros({b, max_frames});
    for (int64_t i = 0; i < b; ++i) {
      const int64_t tl = text_lengths[i].item<int64_t>(), ol = output_lengths[i].item<int64_t>();
      text[i].slice(0, tl).zero_();  // pad symbol 0
      mels[i].slice(1, ol).zero_();
      gates[i].slice(0, ol - 1).fill_(1.0);
    }
    inputs_["text"] = text.to(opt.device);
    inputs_["text_lengths"] = text_lengths.to(opt.device);
    inputs_["mels"] = mels.to(opt.device);
    inputs_["output_lengths"] = output_lengths.to(opt.device);
    inputs_["gates"] = gates.to(opt.device);
    samples_per_step_ = b;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(),
                                                        torch::optim::AdamOptions(kLr).weight_decay(kWeightDecay));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return Run().mel_postnet; }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "tacotron2: TrainStep on a workload built for eval");
    net_->zero_grad();
    auto out = Run();
    const auto& target = inputs_["mels"];
    auto loss = torch::mse_loss(out.mel, target) + torch::mse_loss(out.mel_postnet, target) +
                torch::binary_cross_entropy_with_logits(out.gate.reshape({-1, 1}), inputs_["gates"].reshape({-1, 1}));
    loss.backward();
    optimizer_->step();
    return loss.detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) {
      return std::string("Tacotron2Loss needs the decoder's mel and gate outputs besides the postnet mel");
    }
    // Eval too: the prenet's dropout stays on in eval, as in NVIDIA's
    // Tacotron 2, so the forward is random and a traced graph draws other
    // masks than the eager forward the backend checks it against.
    return std::string(
        "the prenet's dropout stays active in eval (as in NVIDIA's Tacotron 2), so the forward is random and a "
        "compiled forward cannot be checked against eager's");
  }

 private:
  Tacotron2Outputs Run() {
    return net_->forward(inputs_["text"], inputs_["text_lengths"], inputs_["mels"], inputs_["output_lengths"]);
  }

  Tacotron2 net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace

void AddTacotron2Models(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "tacotron2";
  info.paper_name = "tacotron2";
  info.domain = Domain::kSpeech;
  info.task = "synthesis";
  info.reference =
      "NVIDIA/tacotron2 (Shen et al. 2018) with TorchBench's hparams: teacher-forced, Tacotron2Loss, "
      "Adam(1e-3, wd 1e-6); synthetic text / mel batch";
  // torchbenchmark/models/tacotron2/__init__.py: DEFAULT_TRAIN_BSIZE =
  // DEFAULT_EVAL_BSIZE = 64 (hparams.py batch_size).
  info.default_batch = {64, 64};
  // 800 sequential decoder steps: seconds per utterance on two cores.
  info.cpu_batch = BatchSizes{2, 2};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<Tacotron2Workload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
