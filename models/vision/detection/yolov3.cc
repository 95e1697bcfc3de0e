#include "models/vision/detection/yolov3.h"

#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

namespace torchgauge::models {
namespace {

using torch::indexing::Ellipsis;
using torch::indexing::None;
using torch::indexing::Slice;

// yolo_train.py hyp: giou, cls (x nc / 80 = 1 for COCO's 80 classes), obj
// gains, BCE positive weights and the anchor-match IoU threshold.
constexpr double kGiouGain = 3.54, kClsGain = 37.4, kObjGain = 64.3, kClsPw = 1.0, kObjPw = 1.0, kIouT = 0.20;
// The burn-in at ni = 0 (every TorchBench train() is epoch 0, batch 0):
// np.interp(0, [0, n_burn], [0.1 or 0.0, lr0]), momentum 0.9, weight decay 0,
// giou ratio gr 0.
constexpr double kBiasLr = 0.1, kWeightLr = 0.0, kMomentum = 0.9, kGr = 0.0;
constexpr double kEmaDecay = 0.9999, kEmaRamp = 2000.0;          // torch_utils.ModelEMA
constexpr int64_t kTrainSize = 416, kEvalH = 384, kEvalW = 512;  // --img 416; torch.rand(B, 3, 384, 512)
constexpr int64_t kClasses = 80;

// ------------------------------------------------------------------ cfg text

void Conv(std::ostringstream& s, int64_t filters, int64_t size, int64_t stride = 1, bool bn = true) {
  s << "[convolutional]\n";
  if (bn) s << "batch_normalize=1\n";
  s << "filters=" << filters << "\nsize=" << size << "\nstride=" << stride
    << "\npad=1\nactivation=" << (bn ? "leaky" : "linear") << "\n\n";
}

// Darknet-53: a stride-2 conv, then `blocks` residual units (1x1 half width,
// 3x3 full width, shortcut from=-3).
void Stage(std::ostringstream& s, int64_t width, int blocks) {
  Conv(s, width, 3, 2);
  for (int i = 0; i < blocks; ++i) {
    Conv(s, width / 2, 1);
    Conv(s, width, 3);
    s << "[shortcut]\nfrom=-3\nactivation=linear\n\n";
  }
}

void Yolo(std::ostringstream& s, const char* mask, int64_t classes) {
  s << "[yolo]\nmask=" << mask
    << "\nanchors=10,13,16,30,33,23,30,61,62,45,59,119,116,90,156,198,373,326\nclasses=" << classes
    << "\nnum=9\njitter=.3\nignore_thresh=.7\ntruth_thresh=1\nrandom=1\n\n";
}

// Six convs alternating 1x1 `w` and 3x3 `2w` (the SPP block and one more 1x1
// after the third in the P5 head), the linear 1x1 detection conv
// (3 x (5 + classes) filters, no BN) and the yolo layer.
void Head(std::ostringstream& s, int64_t w, const char* mask, int64_t classes, bool spp) {
  Conv(s, w, 1);
  Conv(s, 2 * w, 3);
  Conv(s, w, 1);
  if (spp) {  // ### SPP ###: max-pools 5, 9, 13 of the same input, concatenated with it
    s << "[maxpool]\nstride=1\nsize=5\n\n[route]\nlayers=-2\n\n[maxpool]\nstride=1\nsize=9\n\n"
      << "[route]\nlayers=-4\n\n[maxpool]\nstride=1\nsize=13\n\n[route]\nlayers=-1,-3,-5,-6\n\n";
    Conv(s, w, 1);
  }
  Conv(s, 2 * w, 3);
  Conv(s, w, 1);
  Conv(s, 2 * w, 3);
  Conv(s, 3 * (classes + 5), 1, 1, /*bn=*/false);
  Yolo(s, mask, classes);
}

// ------------------------------------------------------------------ parsing

struct Block {
  std::string type;
  std::map<std::string, std::string> kv;
  int64_t Int(const std::string& k, int64_t def = -1) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::stoll(it->second);
  }
  std::vector<int64_t> Ints(const std::string& k) const {
    std::vector<int64_t> v;
    std::stringstream ss(kv.at(k));
    for (std::string tok; std::getline(ss, tok, ',');) {
      if (tok.find_first_not_of(" \t") != std::string::npos) v.push_back(std::stoll(tok));
    }
    return v;
  }
};

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// parse_config.parse_model_cfg: "[type]" opens a block, "key=value" lines fill it.
std::vector<Block> ParseCfg(const std::string& text) {
  std::vector<Block> blocks;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    if (line.front() == '[') {
      blocks.push_back({Trim(line.substr(1, line.size() - 2)), {}});
      continue;
    }
    const auto eq = line.find('=');
    TORCH_CHECK(eq != std::string::npos && !blocks.empty(), "yolov3 cfg: bad line '", line, "'");
    blocks.back().kv[Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return blocks;
}

// ------------------------------------------------------------------ network

// yolo_models.YOLOLayer: anchors in grid units, the raw prediction reshaped to
// (B, anchors, ny, nx, 5 + classes), and in eval the decoded boxes.
struct YoloLayerImpl : torch::nn::Module {
  YoloLayerImpl(const std::vector<std::pair<int64_t, int64_t>>& anchors, int64_t classes, int64_t stride_)
      : na(static_cast<int64_t>(anchors.size())), no(classes + 5), stride(stride_) {
    auto vec = torch::empty({na, 2});
    for (int64_t i = 0; i < na; ++i) {
      vec[i][0] = static_cast<double>(anchors[i].first);
      vec[i][1] = static_cast<double>(anchors[i].second);
    }
    vec = vec / static_cast<double>(stride);
    anchor_vec = register_buffer("anchor_vec", vec);
    anchor_wh = register_buffer("anchor_wh", vec.view({1, na, 1, 1, 2}).clone());
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t bs = x.size(0), ny = x.size(2), nx = x.size(3);
    auto p = x.view({bs, na, no, ny, nx}).permute({0, 1, 3, 4, 2}).contiguous();
    if (is_training()) return p;
    auto yx = torch::meshgrid({torch::arange(ny, p.device()), torch::arange(nx, p.device())}, "ij");
    auto grid = torch::stack({yx[1], yx[0]}, 2).view({1, 1, ny, nx, 2}).to(p.scalar_type());
    auto io = p.clone();
    io.index_put_({Ellipsis, Slice(None, 2)}, torch::sigmoid(io.index({Ellipsis, Slice(None, 2)})) + grid);
    io.index_put_({Ellipsis, Slice(2, 4)}, torch::exp(io.index({Ellipsis, Slice(2, 4)})) * anchor_wh);
    io.index({Ellipsis, Slice(None, 4)}).mul_(static_cast<double>(stride));
    io.index({Ellipsis, Slice(4, None)}).sigmoid_();
    return io.view({bs, -1, no});
  }

  int64_t na, no, stride;
  torch::Tensor anchor_vec, anchor_wh;
};
TORCH_MODULE(YoloLayer);

enum class Kind { kConv, kPool, kUpsample, kRoute, kShortcut, kYolo };

torch::nn::Sequential ConvBlock(const Block& b, int64_t in) {
  const bool bn = b.Int("batch_normalize", 0) != 0;
  const int64_t k = b.Int("size"), filters = b.Int("filters");
  torch::nn::Sequential seq;
  seq->push_back("Conv2d", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, filters, k)
                                                 .stride(b.Int("stride"))
                                                 .padding(b.Int("pad") != 0 ? k / 2 : 0)
                                                 .bias(!bn)));
  if (bn) {
    seq->push_back("BatchNorm2d",
                   torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(filters).momentum(0.03).eps(1e-4)));
  }
  if (b.kv.at("activation") == "leaky") {
    seq->push_back("activation", torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.1).inplace(true)));
  }
  return seq;
}

using Runner = std::function<torch::Tensor(const torch::Tensor&)>;

struct DarknetImpl : torch::nn::Module {
  explicit DarknetImpl(const std::string& cfg) : module_list(register_module("module_list", torch::nn::ModuleList())) {
    auto blocks = ParseCfg(cfg);
    TORCH_CHECK(!blocks.empty() && blocks.front().type == "net", "yolov3 cfg: no [net] block");
    blocks.erase(blocks.begin());  // darknet's own training settings, unused
    std::vector<int64_t> channels = {3};
    for (size_t i = 0; i < blocks.size(); ++i) {
      channels.push_back(AddLayer(blocks[i], static_cast<int64_t>(i), channels));
    }
    keep_.assign(blocks.size(), false);
    for (const auto& src : sources_) {
      for (int64_t s : src) keep_[s] = true;
    }
  }

  // Adds layer i and returns its output channels.
  int64_t AddLayer(const Block& b, int64_t i, const std::vector<int64_t>& channels) {
    std::vector<int64_t> src;
    int64_t filters = channels.back();
    if (b.type == "convolutional") {
      auto seq = ConvBlock(b, channels.back());
      filters = b.Int("filters");
      Push(Kind::kConv, seq, [seq](const torch::Tensor& x) mutable { return seq->forward(x); });
    } else if (b.type == "maxpool") {
      const int64_t k = b.Int("size");
      torch::nn::MaxPool2d pool(torch::nn::MaxPool2dOptions(k).stride(b.Int("stride")).padding((k - 1) / 2));
      Push(Kind::kPool, pool, [pool](const torch::Tensor& x) mutable { return pool->forward(x); });
    } else if (b.type == "upsample") {
      torch::nn::Upsample up(torch::nn::UpsampleOptions()
                                 .scale_factor(std::vector<double>{double(b.Int("stride")), double(b.Int("stride"))})
                                 .mode(torch::kNearest));
      Push(Kind::kUpsample, up, [up](const torch::Tensor& x) mutable { return up->forward(x); });
    } else if (b.type == "route" || b.type == "shortcut") {
      const bool route = b.type == "route";
      for (int64_t l : b.Ints(route ? "layers" : "from")) src.push_back(l >= 0 ? l : i + l);
      if (route) {
        filters = 0;
        for (int64_t s : src) filters += channels[s + 1];
      }
      torch::nn::Identity placeholder;  // FeatureConcat / WeightedFeatureFusion: no parameters
      Push(route ? Kind::kRoute : Kind::kShortcut, placeholder, nullptr);
    } else {
      TORCH_CHECK(b.type == "yolo", "yolov3 cfg: unsupported block [", b.type, "]");
      AddYolo(b, i);
    }
    sources_.push_back(src);
    return filters;
  }

  template <typename Holder>
  void Push(Kind kind, Holder holder, Runner run) {
    module_list->push_back(holder);
    kinds_.push_back(kind);
    runners_.push_back(std::move(run));
  }

  void AddYolo(const Block& b, int64_t i) {
    static const int64_t kStrides[] = {32, 16, 8};  // P5, P4, P3 (create_modules)
    const auto a = b.Ints("anchors");
    std::vector<std::pair<int64_t, int64_t>> anchors;
    for (int64_t m : b.Ints("mask")) anchors.emplace_back(a[2 * m], a[2 * m + 1]);
    YoloLayer layer(anchors, b.Int("classes"), kStrides[yolo_.size()]);
    // The "smart bias" init of the conv feeding the layer (create_modules).
    auto& conv = module_list[i - 1]->as<torch::nn::SequentialImpl>()->ptr(0)->as<torch::nn::Conv2dImpl>()->bias;
    {
      torch::NoGradGuard g;
      auto bias = conv.view({layer->na, -1});
      bias.index({Slice(), 4}).add_(-4.5);
      bias.index({Slice(), Slice(5, None)}).add_(std::log(0.6 / (double(b.Int("classes")) - 0.99)));
    }
    yolo_.push_back(layer.ptr());
    Push(Kind::kYolo, layer, nullptr);
  }

  // Darknet.forward_once: one output per yolo layer, raw in train mode,
  // decoded (B x anchors*ny*nx x (5 + classes)) in eval mode.
  std::vector<torch::Tensor> forward(torch::Tensor x) {
    std::vector<torch::Tensor> out(kinds_.size()), yolo;
    size_t y = 0;
    for (size_t i = 0; i < kinds_.size(); ++i) {
      const auto& src = sources_[i];
      switch (kinds_[i]) {
        case Kind::kRoute: {
          std::vector<torch::Tensor> parts;
          for (int64_t s : src) parts.push_back(out[s]);
          x = parts.size() > 1 ? torch::cat(parts, 1) : parts[0];
          break;
        }
        case Kind::kShortcut:
          x = x + out[src[0]];
          break;
        case Kind::kYolo:
          yolo.push_back(yolo_[y++]->forward(x));
          break;
        default:
          x = runners_[i](x);
      }
      if (keep_[i]) out[i] = x;
    }
    return yolo;
  }

  torch::nn::ModuleList module_list;
  std::vector<std::shared_ptr<YoloLayerImpl>> yolo_;

 private:
  std::vector<Kind> kinds_;
  std::vector<Runner> runners_;
  std::vector<std::vector<int64_t>> sources_;
  std::vector<bool> keep_;
};
TORCH_MODULE(Darknet);

// ------------------------------------------------------------------ loss

torch::Tensor WhIou(const torch::Tensor& wh1, const torch::Tensor& wh2) {  // utils.wh_iou: (n, m)
  auto a = wh1.unsqueeze(1), b = wh2.unsqueeze(0);
  auto inter = torch::min(a, b).prod(2);
  return inter / (a.prod(2) + b.prod(2) - inter);
}

// utils.bbox_iou(box1 (4 x n), box2 (n x 4), x1y1x2y2=False, GIoU=True).
torch::Tensor Giou(const torch::Tensor& box1, const torch::Tensor& box2_rows) {
  auto box2 = box2_rows.t();
  auto b1x1 = box1[0] - box1[2] / 2, b1x2 = box1[0] + box1[2] / 2;
  auto b1y1 = box1[1] - box1[3] / 2, b1y2 = box1[1] + box1[3] / 2;
  auto b2x1 = box2[0] - box2[2] / 2, b2x2 = box2[0] + box2[2] / 2;
  auto b2y1 = box2[1] - box2[3] / 2, b2y2 = box2[1] + box2[3] / 2;
  auto inter = (torch::min(b1x2, b2x2) - torch::max(b1x1, b2x1)).clamp_min(0) *
               (torch::min(b1y2, b2y2) - torch::max(b1y1, b2y1)).clamp_min(0);
  auto w1 = b1x2 - b1x1, h1 = b1y2 - b1y1, w2 = b2x2 - b2x1, h2 = b2y2 - b2y1;
  auto uni = (w1 * h1 + 1e-16) + w2 * h2 - inter;
  auto iou = inter / uni;
  auto cw = torch::max(b1x2, b2x2) - torch::min(b1x1, b2x1);
  auto ch = torch::max(b1y2, b2y2) - torch::min(b1y1, b2y1);
  auto c_area = cw * ch + 1e-16;
  return iou - (c_area - uni) / c_area;
}

struct LayerTargets {
  torch::Tensor tcls, tbox, b, a, gj, gi, anch;
};

// utils.build_targets for one yolo layer (style None: no neighbour offsets).
LayerTargets BuildTargets(const torch::Tensor& pi, const torch::Tensor& targets, const torch::Tensor& anchors) {
  const int64_t nt = targets.size(0), na = anchors.size(0);
  auto gain = torch::ones({6}, targets.options());
  gain.index_put_({Slice(2, None)}, torch::tensor({pi.size(3), pi.size(2), pi.size(3), pi.size(2)}).to(gain.options()));
  auto at = torch::arange(na, targets.options().dtype(torch::kLong)).view({na, 1}).repeat({1, nt});
  auto t = targets * gain;
  auto j = WhIou(anchors, t.index({Slice(), Slice(4, 6)})) > kIouT;
  auto a = at.index({j});
  t = t.repeat({na, 1, 1}).index({j});
  auto bc = t.index({Slice(), Slice(None, 2)}).to(torch::kLong);
  auto gxy = t.index({Slice(), Slice(2, 4)}), gwh = t.index({Slice(), Slice(4, 6)});
  auto gij = gxy.to(torch::kLong);
  return {bc.select(1, 1),   torch::cat({gxy - gij, gwh}, 1), bc.select(1, 0), a, gij.select(1, 1), gij.select(1, 0),
          anchors.index({a})};
}

// utils.compute_loss (mean reductions, no focal loss, no label smoothing):
// returns lbox + lobj + lcls (shape [1]) and the four items.
torch::Tensor ComputeLoss(const std::vector<torch::Tensor>& p, const torch::Tensor& targets,
                          const std::vector<torch::Tensor>& anchors, torch::Tensor* items) {
  namespace F = torch::nn::functional;
  const auto opts = p[0].options();
  auto lcls = torch::zeros({1}, opts), lbox = torch::zeros({1}, opts), lobj = torch::zeros({1}, opts);
  auto bce_cls = F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(torch::full({1}, kClsPw, opts));
  auto bce_obj = F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(torch::full({1}, kObjPw, opts));
  for (size_t i = 0; i < p.size(); ++i) {
    const auto& pi = p[i];
    auto tg = BuildTargets(pi, targets, anchors[i]);
    auto tobj = torch::zeros_like(pi.index({Ellipsis, 0}));
    const int64_t nb = tg.b.size(0);
    if (nb) {
      auto ps = pi.index({tg.b, tg.a, tg.gj, tg.gi});
      auto pxy = ps.index({Slice(), Slice(None, 2)}).sigmoid();
      auto pwh = ps.index({Slice(), Slice(2, 4)}).exp().clamp_max(1e3) * tg.anch;
      auto giou = Giou(torch::cat({pxy, pwh}, 1).t(), tg.tbox);
      lbox = lbox + (1.0 - giou).mean();
      tobj.index_put_({tg.b, tg.a, tg.gj, tg.gi},
                      giou.detach().clamp_min(0).to(tobj.scalar_type()) * kGr + (1.0 - kGr));
      if (ps.size(1) - 5 > 1) {
        auto t = torch::full_like(ps.index({Slice(), Slice(5, None)}), 0.0);
        t.index_put_({torch::arange(nb, tg.tcls.options()), tg.tcls}, 1.0);
        lcls = lcls + F::binary_cross_entropy_with_logits(ps.index({Slice(), Slice(5, None)}), t, bce_cls);
      }
    }
    lobj = lobj + F::binary_cross_entropy_with_logits(pi.index({Ellipsis, 4}), tobj, bce_obj);
  }
  lbox = lbox * kGiouGain;
  lobj = lobj * kObjGain;
  lcls = lcls * kClsGain;
  auto loss = lbox + lobj + lcls;
  if (items) *items = torch::cat({lbox, lobj, lcls, loss}).detach();
  return loss;
}

// ------------------------------------------------------------------ NMS

torch::Tensor XywhToXyxy(const torch::Tensor& x) {
  auto xy = x.index({Slice(), Slice(None, 2)}), half = x.index({Slice(), Slice(2, 4)}) / 2;
  return torch::cat({xy - half, xy + half}, 1);
}

torch::Tensor BoxIou(const torch::Tensor& box1, const torch::Tensor& box2) {  // (N, M), xyxy
  auto area = [](const torch::Tensor& b) {
    return (b.select(1, 2) - b.select(1, 0)) * (b.select(1, 3) - b.select(1, 1));
  };
  auto lt = torch::max(box1.index({Slice(), None, Slice(None, 2)}), box2.index({Slice(), Slice(None, 2)}));
  auto rb = torch::min(box1.index({Slice(), None, Slice(2, None)}), box2.index({Slice(), Slice(2, None)}));
  auto inter = (rb - lt).clamp_min(0).prod(2);
  return inter / (area(box1).unsqueeze(1) + area(box2) - inter);
}

// torchvision.ops.nms: greedy, by descending score; returns kept indices in
// that order.
torch::Tensor GreedyNms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_thres) {
  auto order = std::get<1>(scores.sort(0, /*descending=*/true));
  auto over = (BoxIou(boxes.index({order}), boxes.index({order})) > iou_thres).cpu();
  const int64_t n = order.size(0);
  auto acc = over.accessor<bool, 2>();
  std::vector<bool> removed(n, false);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < n; ++i) {
    if (removed[i]) continue;
    keep.push_back(i);
    for (int64_t j = i + 1; j < n; ++j) removed[j] = removed[j] || acc[i][j];
  }
  return order.index({torch::tensor(keep, torch::kLong).to(order.device())});
}

// One image of utils.non_max_suppression; rows (x1, y1, x2, y2, conf, class).
torch::Tensor NmsImage(torch::Tensor x, double conf_thres, double iou_thres) {
  constexpr double kMinWh = 2, kMaxWh = 4096;
  x = x.index({x.select(1, 4) > conf_thres});
  auto wh = x.index({Slice(), Slice(2, 4)});
  x = x.index({((wh > kMinWh) & (wh < kMaxWh)).all(1)});
  if (x.size(0) == 0) return x.new_empty({0, 6});
  x.index({Slice(), Slice(5, None)}).mul_(x.index({Slice(), Slice(4, 5)}));
  auto box = XywhToXyxy(x.index({Slice(), Slice(None, 4)}));
  auto [conf, j] = x.index({Slice(), Slice(5, None)}).max(1);
  x = torch::cat({box, conf.unsqueeze(1), j.to(x.scalar_type()).unsqueeze(1)}, 1).index({conf > conf_thres});
  const int64_t n = x.size(0);
  if (n == 0) return x;
  auto boxes = x.index({Slice(), Slice(None, 4)}).clone() + x.select(1, 5).view({-1, 1}) * kMaxWh;
  auto scores = x.select(1, 4);
  auto i = GreedyNms(boxes, scores, iou_thres);
  if (n > 1 && n < 3000) {  // merge: kept boxes become IoU-and-score weighted means
    auto weights = (BoxIou(boxes.index({i}), boxes) > iou_thres) * scores.unsqueeze(0);
    x.index_put_({i, Slice(None, 4)}, torch::mm(weights, x.index({Slice(), Slice(None, 4)})) / weights.sum(1, true));
  }
  return x.index({i});
}

// ------------------------------------------------------------------ workload

// Seeded COCO-like labels (image, class, x, y, w, h), normalised; see yolov3.h.
torch::Tensor SyntheticTargets(int64_t batch) {
  std::vector<torch::Tensor> rows;
  for (int64_t img = 0; img < batch; ++img) {
    const int64_t k = torch::randint(2, 13, {1}).item<int64_t>();
    auto cls = torch::randint(0, kClasses, {k}, torch::kDouble);
    auto wh = torch::exp(torch::empty({k, 2}, torch::kDouble).uniform_(std::log(0.02), std::log(0.6)));
    auto xy = wh / 2 + torch::rand({k, 2}, torch::kDouble) * (1 - wh);
    rows.push_back(torch::cat({torch::full({k, 1}, double(img), torch::kDouble), cls.unsqueeze(1), xy, wh}, 1));
  }
  return torch::cat(rows, 0).to(torch::kFloat);
}

std::unique_ptr<torch::optim::SGD> MakeOptimizer(DarknetImpl& net) {
  std::vector<torch::Tensor> other, conv, bias;  // yolo_train.py pg0, pg1, pg2
  for (const auto& p : net.named_parameters()) {
    if (p.key().find(".bias") != std::string::npos) {
      bias.push_back(p.value());
    } else if (p.key().find("Conv2d.weight") != std::string::npos) {
      conv.push_back(p.value());
    } else {
      other.push_back(p.value());
    }
  }
  auto sgd = [](double lr) {
    return std::make_unique<torch::optim::SGDOptions>(
        torch::optim::SGDOptions(lr).momentum(kMomentum).nesterov(true).weight_decay(0.0));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(other, sgd(kWeightLr));
  groups.emplace_back(conv, sgd(kWeightLr));
  groups.emplace_back(bias, sgd(kBiasLr));
  return std::make_unique<torch::optim::SGD>(std::move(groups), *sgd(kWeightLr));
}

class YoloV3Workload : public Workload {
 public:
  explicit YoloV3Workload(const WorkloadOptions& opt) : net_(YoloV3SppCfg(kClasses)), batch_(opt.batch_size) {
    TORCH_CHECK(opt.batch_size >= 1, "yolov3: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      const int64_t side = opt.smoke ? 64 : kTrainSize;
      inputs_["images"] = torch::randint(0, 256, {batch_, 3, side, side}, torch::kUInt8).to(opt.device);
      inputs_["targets"] = SyntheticTargets(batch_).to(opt.device);
      optimizer_ = MakeOptimizer(*net_);
      ema_sources_ = EmaSources();
      for (const auto& t : ema_sources_) ema_.push_back(t.detach().clone());
    } else {
      inputs_["images"] =
          torch::rand({batch_, 3, opt.smoke ? 96 : kEvalH, opt.smoke ? 128 : kEvalW}, torch::TensorOptions(opt.device));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // Eval: the concatenated inference output. Train: the raw predictions,
  // each viewed (B, -1, 85), concatenated (split back by TrainStep).
  torch::Tensor Forward() override {
    auto x = inputs_["images"];
    if (x.scalar_type() == torch::kUInt8) x = x.to(net_->yolo_[0]->anchor_vec.scalar_type()) / 255.0;
    std::vector<torch::Tensor> flat;
    for (auto& o : net_->forward(x)) flat.push_back(o.view({x.size(0), -1, o.size(-1)}));
    return torch::cat(flat, 1);
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_, "yolov3: TrainStep needs a workload built in train mode");
    auto p = SplitPredictions(RunForward(), inputs_["images"].size(2), inputs_["images"].size(3));
    std::vector<torch::Tensor> anchors;
    for (auto& y : net_->yolo_) anchors.push_back(y->anchor_vec);
    torch::Tensor items;
    auto loss = ComputeLoss(p, inputs_["targets"], anchors, &items);
    if (!torch::isfinite(loss).all().item<bool>()) return loss.detach();  // the reference ends training here
    loss = loss * (static_cast<double>(batch_) / 64.0);
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    UpdateEma();
    // mloss = zeros(4) at the loop's start; mloss = (mloss * i + loss_items) / (i + 1) at i = 0.
    mloss_ = (torch::zeros({4}, items.options()) * 0 + items) / 1;
    return loss.detach();
  }

  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    c10::InferenceMode guard;
    YoloNonMaxSuppression(RunForward());
  }

  void CastTo(torch::ScalarType dtype) override {
    Workload::CastTo(dtype);
    for (auto& e : ema_) e = e.to(dtype);
  }

 private:
  // The model's floating state entries, taken once: Module::to() keeps the
  // same tensors (set_data), and a CastTo would turn the integer BatchNorm
  // counters into floating ones.
  std::vector<torch::Tensor> EmaSources() {
    std::vector<torch::Tensor> out;
    for (const auto& p : net_->named_parameters()) out.push_back(p.value());
    for (const auto& b : net_->named_buffers()) {
      if (b.value().is_floating_point()) out.push_back(b.value());
    }
    return out;
  }

  // ModelEMA.update: every floating state entry v = d * v + (1 - d) * model's.
  void UpdateEma() {
    torch::NoGradGuard g;
    ++ema_updates_;
    const double d = kEmaDecay * (1.0 - std::exp(-static_cast<double>(ema_updates_) / kEmaRamp));
    for (size_t i = 0; i < ema_.size(); ++i) {
      ema_[i].mul_(d);
      ema_[i].add_((1.0 - d) * ema_sources_[i].detach());
    }
  }

  std::vector<torch::Tensor> SplitPredictions(const torch::Tensor& flat, int64_t h, int64_t w) {
    std::vector<torch::Tensor> p;
    int64_t offset = 0;
    for (auto& y : net_->yolo_) {
      const int64_t ny = h / y->stride, nx = w / y->stride, n = y->na * ny * nx;
      p.push_back(flat.narrow(1, offset, n).view({flat.size(0), y->na, ny, nx, y->no}));
      offset += n;
    }
    return p;
  }

  Darknet net_;
  int64_t batch_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::vector<torch::Tensor> ema_, ema_sources_;
  int64_t ema_updates_ = 0;
  torch::Tensor mloss_;
};

}  // namespace

std::string YoloV3SppCfg(int64_t classes) {
  std::ostringstream s;
  s << "[net]\nbatch=64\nsubdivisions=16\nwidth=608\nheight=608\nchannels=3\n\n";
  Conv(s, 32, 3);
  Stage(s, 64, 1);
  Stage(s, 128, 2);
  Stage(s, 256, 8);                              // ends at layer 36 (routed into the P3 head)
  Stage(s, 512, 8);                              // ends at layer 61 (routed into the P4 head)
  Stage(s, 1024, 4);                             // ends at layer 74
  Head(s, 512, "6,7,8", classes, /*spp=*/true);  // layers 75-89
  s << "[route]\nlayers=-4\n\n";
  Conv(s, 256, 1);
  s << "[upsample]\nstride=2\n\n[route]\nlayers=-1,61\n\n";
  Head(s, 256, "3,4,5", classes, /*spp=*/false);  // layers 94-101
  s << "[route]\nlayers=-4\n\n";
  Conv(s, 128, 1);
  s << "[upsample]\nstride=2\n\n[route]\nlayers=-1,36\n\n";
  Head(s, 128, "0,1,2", classes, /*spp=*/false);  // layers 106-113
  return s.str();
}

torch::Tensor YoloNonMaxSuppression(const torch::Tensor& prediction, double conf_thres, double iou_thres) {
  std::vector<torch::Tensor> rows;
  for (int64_t xi = 0; xi < prediction.size(0); ++xi) {
    auto kept = NmsImage(prediction[xi], conf_thres, iou_thres);
    rows.push_back(torch::cat({torch::full({kept.size(0), 1}, double(xi), kept.options()), kept}, 1));
  }
  return torch::cat(rows, 0);
}

void AddYoloV3Models(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "yolov3";
  info.paper_name = "yolov3";
  info.domain = Domain::kVision;
  info.task = "object detection (TorchBench files it under COMPUTER_VISION.SEGMENTATION)";
  info.reference =
      "torchbenchmark/models/yolov3: ultralytics YOLOv3 Darknet from cfg/yolov3-spp.cfg (80 classes), compute_loss "
      "and the ni = 0 SGD step of yolo_train.py; eval at 384x512 with non_max_suppression";
  // torchbenchmark/models/yolov3/__init__.py: DEFAULT_TRAIN_BSIZE = 16,
  // DEFAULT_EVAL_BSIZE = 8.
  info.default_batch = {16, 8};
  // 66 GFLOP per 416x416 forward and 75 per 384x512: one image a step keeps
  // a CPU step near a few seconds on 2 cores (TorchBench skips CPU train).
  info.cpu_batch = BatchSizes{1, 1};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<YoloV3Workload>(opt);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
