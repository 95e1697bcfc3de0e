#include "models/other/pyhpc_isoneutral_mixing.h"

#include <torch/torch.h>

#include "models/other/pyhpc_equation_of_state.h"  // PyhpcGridShape: both pyhpc kernels share TorchBench's grid

namespace torchgauge::models {

using torch::indexing::None;
using torch::indexing::Slice;

const std::vector<std::string> kIsoneutralArgumentNames = {
    "maskT", "maskU", "maskV", "maskW", "dxt",  "dxu",  "dyt",  "dyu",   "dzt",   "dzw",   "cost",  "cosu",
    "salt",  "temp",  "zt",    "K_iso", "K_11", "K_22", "K_33", "Ai_ez", "Ai_nz", "Ai_bx", "Ai_by",
};

const std::vector<std::string> kIsoneutralOutputNames = {"K_11", "K_22", "K_33", "Ai_ez", "Ai_nz", "Ai_bx", "Ai_by"};

namespace {

// Linearised equation of state of the kernel: d(rho)/dT and d(rho)/dS.
torch::Tensor DrhoDT(const torch::Tensor& temp, const torch::Tensor& p) {
  constexpr double kRho0 = 1024.0, kZ0 = 0.0, kTheta0 = 283.0 - 273.15, kGrav = 9.81;
  constexpr double kBetaT = 1.67e-4, kBetaTs = 1e-5, kGammas = 1.1e-8;
  auto zz = -p - kZ0;
  auto thetas = temp - kTheta0;
  return -(kBetaTs * thetas + kBetaT * (1.0 - kGammas * kGrav * zz * kRho0)) * kRho0;
}

torch::Tensor DrhoDS(const torch::Tensor& temp) {
  constexpr double kBetaS = 0.78e-3, kRho0 = 1024.0;
  return kBetaS * kRho0 * torch::ones_like(temp);
}

// Smoothly switches off isoneutral mixing where the isopycnal slope exceeds
// iso_slopec, over a width iso_dslope.
torch::Tensor Taper(const torch::Tensor& slope) {
  constexpr double kIsoSlopec = 1e-3, kIsoDslope = 1e-3;
  return 0.5 * (1.0 + torch::tanh((-torch::abs(slope) + kIsoSlopec) / kIsoDslope));
}

// Python's a[lo:hi] with a possibly negative hi, for the staggered offsets.
Slice S(int64_t lo, int64_t hi) { return Slice(lo, hi); }

}  // namespace

torch::Tensor IsoneutralMixingImpl::forward(std::map<std::string, torch::Tensor>& f) {
  for (const auto& name : kIsoneutralArgumentNames) {
    TORCH_CHECK(f.count(name) == 1, "isoneutral mixing: missing argument ", name);
  }
  const auto &maskT = f["maskT"], &maskU = f["maskU"], &maskV = f["maskV"], &maskW = f["maskW"];
  const auto &dxt = f["dxt"], &dxu = f["dxu"], &dyt = f["dyt"], &dyu = f["dyu"];
  const auto &dzt = f["dzt"], &dzw = f["dzw"], &cost = f["cost"], &cosu = f["cosu"];
  const auto &salt = f["salt"], &temp = f["temp"], &zt = f["zt"], &K_iso = f["K_iso"];
  auto &K_11 = f["K_11"], &K_22 = f["K_22"], &K_33 = f["K_33"];
  auto &Ai_ez = f["Ai_ez"], &Ai_nz = f["Ai_nz"], &Ai_bx = f["Ai_bx"], &Ai_by = f["Ai_by"];
  TORCH_CHECK(K_11.dim() == 3 && salt.dim() == 4 && Ai_ez.dim() == 5, "isoneutral mixing: unexpected ranks");
  TORCH_CHECK(K_11.size(0) > 4 && K_11.size(1) > 4 && K_11.size(2) > 1,
              "isoneutral mixing needs a grid of at least 5 x 5 x 2 cells, got ", K_11.sizes());

  constexpr double kEpsln = 1e-20;
  constexpr double kIsoSteep = 50.0;
  constexpr int64_t kTau = 0;  // the time level the kernel reads
  const int64_t nz = K_11.size(2);
  const auto all = Slice();
  const auto device = K_11.device();
  // The reference builds these one-element bounds anew, as float32 tensors,
  // every time it clamps; on a GPU that is a small host-to-device copy per
  // use, which we keep so the measured traffic matches.
  auto zero = [&] { return torch::tensor({0.0}, torch::TensorOptions(device).dtype(torch::kFloat)); };
  auto steep = [&] { return torch::tensor({kIsoSteep}, torch::TensorOptions(device).dtype(torch::kFloat)); };

  auto dTdx = torch::zeros_like(K_11);
  auto dSdx = torch::zeros_like(K_11);
  auto dTdy = torch::zeros_like(K_11);
  auto dSdy = torch::zeros_like(K_11);
  auto dTdz = torch::zeros_like(K_11);
  auto dSdz = torch::zeros_like(K_11);

  auto T = [&](std::initializer_list<at::indexing::TensorIndex> idx) {
    std::vector<at::indexing::TensorIndex> v(idx);
    v.emplace_back(kTau);
    return temp.index(v);
  };
  auto Sal = [&](std::initializer_list<at::indexing::TensorIndex> idx) {
    std::vector<at::indexing::TensorIndex> v(idx);
    v.emplace_back(kTau);
    return salt.index(v);
  };

  // Density derivatives at T-cell centres.
  auto drdT = maskT * DrhoDT(T({all, all, all}), torch::abs(zt));
  auto drdS = maskT * DrhoDS(T({all, all, all}));

  // Tracer gradients on the top, east and north faces of the T cells.
  dTdz.index_put_({all, all, S(0, -1)}, maskW.index({all, all, S(0, -1)}) *
                                            (T({all, all, Slice(1, None)}) - T({all, all, S(0, -1)})) /
                                            dzw.index({None, None, S(0, -1)}));
  dSdz.index_put_({all, all, S(0, -1)}, maskW.index({all, all, S(0, -1)}) *
                                            (Sal({all, all, Slice(1, None)}) - Sal({all, all, S(0, -1)})) /
                                            dzw.index({None, None, S(0, -1)}));
  dTdx.index_put_({S(0, -1), all, all}, maskU.index({S(0, -1), all, all}) *
                                            (T({Slice(1, None), all, all}) - T({S(0, -1), all, all})) /
                                            (dxu.index({S(0, -1), None, None}) * cost.index({None, all, None})));
  dSdx.index_put_({S(0, -1), all, all}, maskU.index({S(0, -1), all, all}) *
                                            (Sal({Slice(1, None), all, all}) - Sal({S(0, -1), all, all})) /
                                            (dxu.index({S(0, -1), None, None}) * cost.index({None, all, None})));
  dTdy.index_put_({all, S(0, -1), all}, maskV.index({all, S(0, -1), all}) *
                                            (T({all, Slice(1, None), all}) - T({all, S(0, -1), all})) /
                                            dyu.index({None, S(0, -1), None}));
  dSdy.index_put_({all, S(0, -1), all}, maskV.index({all, S(0, -1), all}) *
                                            (Sal({all, Slice(1, None), all}) - Sal({all, S(0, -1), all})) /
                                            dyu.index({None, S(0, -1), None}));

  // East faces: slopes Ai_ez and diffusivity K_11. Each face averages the
  // two adjacent T cells (ip) and the cells above/below (kr).
  auto diffloc = torch::zeros_like(K_11);
  diffloc.index_put_(
      {S(1, -2), S(2, -2), Slice(1, None)},
      0.25 * (K_iso.index({S(1, -2), S(2, -2), Slice(1, None)}) + K_iso.index({S(1, -2), S(2, -2), S(0, -1)}) +
              K_iso.index({S(2, -1), S(2, -2), Slice(1, None)}) + K_iso.index({S(2, -1), S(2, -2), S(0, -1)})));
  diffloc.index_put_({S(1, -2), S(2, -2), 0},
                     0.5 * (K_iso.index({S(1, -2), S(2, -2), 0}) + K_iso.index({S(2, -1), S(2, -2), 0})));
  auto sumz = torch::zeros_like(K_11).index({S(1, -2), S(2, -2)});
  for (int64_t kr = 0; kr < 2; ++kr) {
    const int64_t ki = kr == 1 ? 0 : 1;
    const int64_t su = kr == 1 ? nz : nz - 1;
    for (int64_t ip = 0; ip < 2; ++ip) {
      const auto xs = S(1 + ip, -2 + ip);
      auto drodxe = drdT.index({xs, S(2, -2), Slice(ki, None)}) * dTdx.index({S(1, -2), S(2, -2), Slice(ki, None)}) +
                    drdS.index({xs, S(2, -2), Slice(ki, None)}) * dSdx.index({S(1, -2), S(2, -2), Slice(ki, None)});
      auto drodze = drdT.index({xs, S(2, -2), Slice(ki, None)}) * dTdz.index({xs, S(2, -2), Slice(None, su)}) +
                    drdS.index({xs, S(2, -2), Slice(ki, None)}) * dSdz.index({xs, S(2, -2), Slice(None, su)});
      auto sxe = -drodxe / (torch::minimum(drodze, zero()) - kEpsln);
      auto taper = Taper(sxe);
      sumz.index({all, all, Slice(ki, None)})
          .add_(dzw.index({None, None, Slice(None, su)}) * maskU.index({S(1, -2), S(2, -2), Slice(ki, None)}) *
                torch::maximum(steep(), diffloc.index({S(1, -2), S(2, -2), Slice(ki, None)}) * taper));
      Ai_ez.index_put_({S(1, -2), S(2, -2), Slice(ki, None), ip, kr},
                       taper * sxe * maskU.index({S(1, -2), S(2, -2), Slice(ki, None)}));
    }
  }
  K_11.index_put_({S(1, -2), S(2, -2), all}, sumz / (4.0 * dzt.index({None, None, all})));

  // North faces: slopes Ai_nz and diffusivity K_22 (the same with x and y swapped).
  diffloc.index_put_({torch::indexing::Ellipsis}, 0);
  diffloc.index_put_(
      {S(2, -2), S(1, -2), Slice(1, None)},
      0.25 * (K_iso.index({S(2, -2), S(1, -2), Slice(1, None)}) + K_iso.index({S(2, -2), S(1, -2), S(0, -1)}) +
              K_iso.index({S(2, -2), S(2, -1), Slice(1, None)}) + K_iso.index({S(2, -2), S(2, -1), S(0, -1)})));
  diffloc.index_put_({S(2, -2), S(1, -2), 0},
                     0.5 * (K_iso.index({S(2, -2), S(1, -2), 0}) + K_iso.index({S(2, -2), S(2, -1), 0})));
  sumz = torch::zeros_like(K_11).index({S(2, -2), S(1, -2)});
  for (int64_t kr = 0; kr < 2; ++kr) {
    const int64_t ki = kr == 1 ? 0 : 1;
    const int64_t su = kr == 1 ? nz : nz - 1;
    for (int64_t jp = 0; jp < 2; ++jp) {
      const auto ys = S(1 + jp, -2 + jp);
      auto drodyn = drdT.index({S(2, -2), ys, Slice(ki, None)}) * dTdy.index({S(2, -2), S(1, -2), Slice(ki, None)}) +
                    drdS.index({S(2, -2), ys, Slice(ki, None)}) * dSdy.index({S(2, -2), S(1, -2), Slice(ki, None)});
      auto drodzn = drdT.index({S(2, -2), ys, Slice(ki, None)}) * dTdz.index({S(2, -2), ys, Slice(None, su)}) +
                    drdS.index({S(2, -2), ys, Slice(ki, None)}) * dSdz.index({S(2, -2), ys, Slice(None, su)});
      auto syn = -drodyn / (torch::minimum(zero(), drodzn) - kEpsln);
      auto taper = Taper(syn);
      sumz.index({all, all, Slice(ki, None)})
          .add_(dzw.index({None, None, Slice(None, su)}) * maskV.index({S(2, -2), S(1, -2), Slice(ki, None)}) *
                torch::maximum(steep(), diffloc.index({S(2, -2), S(1, -2), Slice(ki, None)}) * taper));
      Ai_nz.index_put_({S(2, -2), S(1, -2), Slice(ki, None), jp, kr},
                       taper * syn * maskV.index({S(2, -2), S(1, -2), Slice(ki, None)}));
    }
  }
  K_22.index_put_({S(2, -2), S(1, -2), all}, sumz / (4.0 * dzt.index({None, None, all})));

  // Top faces: slopes Ai_bx, Ai_by and the vertical diffusivity K_33, which
  // gathers the squared slopes of both horizontal directions.
  auto sumx = torch::zeros_like(K_11).index({S(2, -2), S(2, -2), S(0, -1)});
  auto sumy = torch::zeros_like(K_11).index({S(2, -2), S(2, -2), S(0, -1)});
  for (int64_t kr = 0; kr < 2; ++kr) {
    const int64_t sl = kr == 1 ? 1 : 0;
    const int64_t su = kr == 1 ? nz : nz - 1;
    const auto zs = Slice(sl, su);
    auto drodzb = drdT.index({S(2, -2), S(2, -2), zs}) * dTdz.index({S(2, -2), S(2, -2), S(0, -1)}) +
                  drdS.index({S(2, -2), S(2, -2), zs}) * dSdz.index({S(2, -2), S(2, -2), S(0, -1)});
    for (int64_t ip = 0; ip < 2; ++ip) {
      const auto xs = S(1 + ip, -3 + ip);
      auto drodxb = drdT.index({S(2, -2), S(2, -2), zs}) * dTdx.index({xs, S(2, -2), zs}) +
                    drdS.index({S(2, -2), S(2, -2), zs}) * dSdx.index({xs, S(2, -2), zs});
      auto sxb = -drodxb / (torch::minimum(zero(), drodzb) - kEpsln);
      auto taper = Taper(sxb);
      sumx.add_(dxu.index({xs, None, None}) * K_iso.index({S(2, -2), S(2, -2), S(0, -1)}) * taper * sxb.pow(2) *
                maskW.index({S(2, -2), S(2, -2), S(0, -1)}));
      Ai_bx.index_put_({S(2, -2), S(2, -2), S(0, -1), ip, kr},
                       taper * sxb * maskW.index({S(2, -2), S(2, -2), S(0, -1)}));
    }
    for (int64_t jp = 0; jp < 2; ++jp) {
      const auto ys = S(1 + jp, -3 + jp);
      auto facty = cosu.index({ys}) * dyu.index({ys});
      auto drodyb = drdT.index({S(2, -2), S(2, -2), zs}) * dTdy.index({S(2, -2), ys, zs}) +
                    drdS.index({S(2, -2), S(2, -2), zs}) * dSdy.index({S(2, -2), ys, zs});
      auto syb = -drodyb / (torch::minimum(zero(), drodzb) - kEpsln);
      auto taper = Taper(syb);
      sumy.add_(facty.index({None, all, None}) * K_iso.index({S(2, -2), S(2, -2), S(0, -1)}) * taper * syb.pow(2) *
                maskW.index({S(2, -2), S(2, -2), S(0, -1)}));
      Ai_by.index_put_({S(2, -2), S(2, -2), S(0, -1), jp, kr},
                       taper * syb * maskW.index({S(2, -2), S(2, -2), S(0, -1)}));
    }
  }
  K_33.index_put_({S(2, -2), S(2, -2), S(0, -1)},
                  sumx / (4 * dxt.index({S(2, -2), None, None})) +
                      sumy / (4 * dyt.index({None, S(2, -2), None}) * cost.index({None, S(2, -2), None})));
  K_33.index_put_({S(2, -2), S(2, -2), -1}, 0.0);
  return K_33;
}

std::map<std::string, torch::Tensor> MakeIsoneutralInputs(int64_t size, torch::Device device) {
  const auto shape = PyhpcGridShape(size);
  const int64_t nx = shape[0], ny = shape[1], nz = shape[2];
  auto f64 = torch::TensorOptions(device).dtype(torch::kDouble);
  std::map<std::string, torch::Tensor> in;
  // Drawn in TorchBench's order (its NumPy stream cannot be reproduced here;
  // the collector seeds torch's generators instead).
  for (const char* m : {"maskT", "maskU", "maskV", "maskW"}) in[m] = (torch::rand(shape, f64) < 0.8).to(torch::kDouble);
  for (const char* n : {"dxt", "dxu"}) in[n] = torch::randn({nx}, f64);
  for (const char* n : {"dyt", "dyu"}) in[n] = torch::randn({ny}, f64);
  for (const char* n : {"dzt", "dzw", "zt"}) in[n] = torch::randn({nz}, f64);
  for (const char* n : {"cost", "cosu"}) in[n] = torch::randn({ny}, f64);
  // TorchBench also draws a K_iso_steep array that the kernel never reads
  // (it uses the constant 50); we do not allocate it.
  for (const char* n : {"K_iso", "K_11", "K_22", "K_33"}) in[n] = torch::randn(shape, f64);
  for (const char* n : {"salt", "temp"}) in[n] = torch::randn({nx, ny, nz, 3}, f64);
  for (const char* n : {"Ai_ez", "Ai_nz", "Ai_bx", "Ai_by"}) in[n] = torch::zeros({nx, ny, nz, 2, 2}, f64);
  return in;
}

namespace {

class IsoneutralMixingWorkload : public Workload {
 public:
  explicit IsoneutralMixingWorkload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.mode == Mode::kEval, "pyhpc_isoneutral_mixing is eval-only");
    net_->to(opt.device);
    inputs_ = MakeIsoneutralInputs(opt.batch_size, opt.device);
    samples_per_step_ = opt.batch_size;
  }
  torch::nn::Module& net() override { return *net_; }
  // Updates K_11, K_22, K_33 and Ai_* in inputs() in place, as the reference
  // does; returns K_33. Parity tests read all seven arrays from inputs().
  torch::Tensor Forward() override { return net_->forward(inputs_); }
  torch::Tensor TrainStep() override { TORCH_CHECK(false, "pyhpc_isoneutral_mixing has no train mode"); }

 private:
  IsoneutralMixing net_;
};

}  // namespace

void AddPyhpcIsoneutralMixingModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "pyhpc_isoneutral_mixing";
  // Table 1 prints "pyhpc_isonutral_mixing" (and section 2.1
  // "pyhpc_isonneutral_mixing"); both are typos of TorchBench's name.
  info.paper_name = "pyhpc_isoneutral_mixing";
  info.domain = Domain::kOther;
  info.task = "high-performance computing (ocean isoneutral mixing)";
  info.reference =
      "pyhpc-benchmarks isoneutral_mixing (dionhaefner/pyhpc-benchmarks), from Veros isoneutral_diffusion_pre";
  // torchbenchmark/models/pyhpc_isoneutral_mixing/__init__.py:
  // DEFAULT_EVAL_BSIZE = 1048576 (2^20 from pyhpc-benchmarks' run.py sizes).
  info.default_batch = {1048576, 1048576};
  // Smoke: a few ms per step on one core. At 2^16 we measured 12-38x more CPU
  // for 4x the cells: page faults on freshly mapped temporaries dominated.
  info.smoke_batch = {16384, 16384};
  info.supports_train = false;
  info.unsupported_reason = "pyhpc kernels have no trainable parameters; TorchBench defines eval only";
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<IsoneutralMixingWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
