#include "models/other/pyhpc_turbulent_kinetic_energy.h"

#include <torch/torch.h>

#include "models/other/pyhpc_equation_of_state.h"  // PyhpcGridShape: the pyhpc kernels share TorchBench's grid

namespace torchgauge::models {

using torch::indexing::Ellipsis;
using torch::indexing::None;
using torch::indexing::Slice;

const std::vector<std::string> kTkeArgumentNames = {
    "u",
    "v",
    "w",
    "maskU",
    "maskV",
    "maskW",
    "dxt",
    "dxu",
    "dyt",
    "dyu",
    "dzt",
    "dzw",
    "cost",
    "cosu",
    "kbot",
    "kappaM",
    "mxl",
    "forc",
    "forc_tke_surface",
    "tke",
    "dtke",
};

namespace {

// The kernel's time levels and constants.
constexpr int64_t kTau = 0, kTaup1 = 1, kTaum1 = 2;
constexpr double kDtTracer = 1.0, kDtTke = 1.0;  // dt_tke = dt_mom = 1
constexpr double kAbEps = 0.1, kAlphaTke = 1.0, kCEps = 0.7, kKhTke = 2000.0;

Slice S(int64_t lo, int64_t hi) { return Slice(lo, hi); }
const Slice kAll = Slice();
const Slice kIn = Slice(2, -2);  // the computed interior of a horizontal axis

// The reference builds its clamp bounds as fresh one-element float32 tensors
// (torch.tensor([0.])) at each use; on a GPU each is a small host-to-device
// copy, which we keep so that the measured traffic matches.
torch::Tensor Bound(double value, torch::Device device) {
  return torch::tensor({value}, torch::TensorOptions(device).dtype(torch::kFloat));
}

// Thomas algorithm along the last axis (no pivoting, as the reference);
// overwrites b and d.
torch::Tensor SolveTridiagonal(const torch::Tensor& a, torch::Tensor& b, const torch::Tensor& c, torch::Tensor& d) {
  TORCH_CHECK(a.sizes() == b.sizes() && a.sizes() == c.sizes() && a.sizes() == d.sizes(),
              "pyhpc_turbulent_kinetic_energy: tridiagonal bands of different shapes");
  const int64_t n = a.size(-1);
  for (int64_t i = 1; i < n; ++i) {
    auto w = a.select(-1, i) / b.select(-1, i - 1);
    b.select(-1, i).add_(-w * c.select(-1, i - 1));
    d.select(-1, i).add_(-w * d.select(-1, i - 1));
  }
  auto out = torch::empty_like(a);
  out.select(-1, n - 1).copy_(d.select(-1, n - 1) / b.select(-1, n - 1));
  for (int64_t i = n - 2; i >= 0; --i) {
    out.select(-1, i).copy_((d.select(-1, i) - c.select(-1, i) * out.select(-1, i + 1)) / b.select(-1, i));
  }
  return out;
}

// The implicit vertical step: in a column whose bottom level is ks (ks < 0:
// land), levels below ks get identity rows, level ks the edge diagonal.
std::pair<torch::Tensor, torch::Tensor> SolveImplicit(const torch::Tensor& ks, const torch::Tensor& a,
                                                      const torch::Tensor& b, const torch::Tensor& c,
                                                      const torch::Tensor& d, const torch::Tensor& b_edge) {
  auto land = (ks >= 0).unsqueeze(-1);
  auto level = torch::arange(a.size(2), torch::TensorOptions(ks.device()).dtype(torch::kLong)).view({1, 1, -1});
  auto edge = land & (level == ks.unsqueeze(-1));
  auto water = land & (level >= ks.unsqueeze(-1));
  auto a_tri = water * a * torch::logical_not(edge);
  auto b_tri = torch::where(water, b, 1.0);
  b_tri = torch::where(edge, b_edge, b_tri);
  auto c_tri = water * c;
  auto d_tri = water * d;
  return {SolveTridiagonal(a_tri, b_tri, c_tri, d_tri), water};
}

// The superbee limiter's slope ratio, guarded against rj = 0.
torch::Tensor SlopeRatio(const torch::Tensor& rjp, const torch::Tensor& rj, const torch::Tensor& rjm,
                         const torch::Tensor& vel) {
  constexpr double kEps = 1e-20;
  return torch::where(vel > 0.0, rjm, rjp) / torch::where(torch::abs(rj) < kEps, kEps, rj);
}

torch::Tensor Superbee(const torch::Tensor& cr) {
  const auto dev = cr.device();
  return torch::maximum(Bound(0.0, dev),
                        torch::maximum(torch::minimum(Bound(1.0, dev), 2 * cr), torch::minimum(Bound(2.0, dev), cr)));
}

// The limited flux: the centred flux minus the upwind-weighted correction.
torch::Tensor LimitedFlux(const torch::Tensor& vel, const torch::Tensor& var_hi, const torch::Tensor& var_lo,
                          const torch::Tensor& ucfl, const torch::Tensor& cr, const torch::Tensor& rj) {
  return vel * (var_hi + var_lo) * 0.5 - torch::abs(vel) * ((1.0 - cr) + ucfl * cr) * rj * 0.5;
}

torch::Tensor PadZ(const torch::Tensor& arr) {
  auto shape = arr.sizes().vec();
  shape[2] += 2;
  auto out = torch::zeros(shape, arr.options());
  out.index_put_({kAll, kAll, S(1, -1)}, arr);
  return out;
}

// Advective fluxes of `var` through the east (axis 0), north (1) and top (2)
// faces, superbee-limited.
torch::Tensor AdvSuperbee(const torch::Tensor& vel_in, const torch::Tensor& var_in, const torch::Tensor& mask_in,
                          const torch::Tensor& dx_in, int axis, const torch::Tensor& cost, const torch::Tensor& cosu) {
  if (axis == 0) {
    const auto& vel = vel_in;
    const auto& var = var_in;
    const auto& mask = mask_in;
    auto dx = cost.index({None, kIn, None}) * dx_in.index({S(1, -2), None, None});
    auto v = vel.index({S(1, -2), kIn, kAll});
    auto ucfl = torch::abs(v * kDtTracer / dx);
    auto rjp =
        (var.index({Slice(3, None), kIn, kAll}) - var.index({S(2, -1), kIn, kAll})) * mask.index({S(2, -1), kIn, kAll});
    auto rj = (var.index({S(2, -1), kIn, kAll}) - var.index({S(1, -2), kIn, kAll})) * mask.index({S(1, -2), kIn, kAll});
    auto rjm = (var.index({S(1, -2), kIn, kAll}) - var.index({Slice(None, -3), kIn, kAll})) *
               mask.index({Slice(None, -3), kIn, kAll});
    auto cr = Superbee(SlopeRatio(rjp, rj, rjm, v));
    return LimitedFlux(v, var.index({S(2, -1), kIn, kAll}), var.index({S(1, -2), kIn, kAll}), ucfl, cr, rj);
  }
  if (axis == 1) {
    const auto& vel = vel_in;
    const auto& var = var_in;
    const auto& mask = mask_in;
    auto dx = (cost * dx_in).index({None, S(1, -2), None});
    auto velfac = cosu.index({None, S(1, -2), None});
    auto v = velfac * vel.index({kIn, S(1, -2), kAll});
    auto ucfl = torch::abs(v * kDtTracer / dx);
    auto rjp =
        (var.index({kIn, Slice(3, None), kAll}) - var.index({kIn, S(2, -1), kAll})) * mask.index({kIn, S(2, -1), kAll});
    auto rj = (var.index({kIn, S(2, -1), kAll}) - var.index({kIn, S(1, -2), kAll})) * mask.index({kIn, S(1, -2), kAll});
    auto rjm = (var.index({kIn, S(1, -2), kAll}) - var.index({kIn, Slice(None, -3), kAll})) *
               mask.index({kIn, Slice(None, -3), kAll});
    // The limiter's upwind choice looks at the unscaled velocity.
    auto cr = Superbee(SlopeRatio(rjp, rj, rjm, vel.index({kIn, S(1, -2), kAll})));
    return LimitedFlux(v, var.index({kIn, S(2, -1), kAll}), var.index({kIn, S(1, -2), kAll}), ucfl, cr, rj);
  }
  TORCH_CHECK(axis == 2, "pyhpc_turbulent_kinetic_energy: advection axis must be 0, 1 or 2");
  auto vel = PadZ(vel_in), var = PadZ(var_in), mask = PadZ(mask_in);
  auto dx = dx_in.index({None, None, Slice(None, -1)});
  auto v = vel.index({kIn, kIn, S(1, -2)});
  auto ucfl = torch::abs(v * kDtTracer / dx);
  auto rjp =
      (var.index({kIn, kIn, Slice(3, None)}) - var.index({kIn, kIn, S(2, -1)})) * mask.index({kIn, kIn, S(2, -1)});
  auto rj = (var.index({kIn, kIn, S(2, -1)}) - var.index({kIn, kIn, S(1, -2)})) * mask.index({kIn, kIn, S(1, -2)});
  auto rjm = (var.index({kIn, kIn, S(1, -2)}) - var.index({kIn, kIn, Slice(None, -3)})) *
             mask.index({kIn, kIn, Slice(None, -3)});
  auto cr = Superbee(SlopeRatio(rjp, rj, rjm, v));
  return LimitedFlux(v, var.index({kIn, kIn, S(2, -1)}), var.index({kIn, kIn, S(1, -2)}), ucfl, cr, rj);
}

}  // namespace

torch::Tensor TurbulentKineticEnergyImpl::forward(std::map<std::string, torch::Tensor>& f) {
  for (const auto& name : kTkeArgumentNames) {
    TORCH_CHECK(f.count(name) == 1, "pyhpc_turbulent_kinetic_energy: missing argument ", name);
  }
  const auto &u = f["u"], &v = f["v"], &w = f["w"];
  const auto &maskU = f["maskU"], &maskV = f["maskV"], &maskW = f["maskW"];
  const auto &dxt = f["dxt"], &dxu = f["dxu"], &dyt = f["dyt"], &dyu = f["dyu"], &dzt = f["dzt"], &dzw = f["dzw"];
  const auto &cost = f["cost"], &cosu = f["cosu"], &kbot = f["kbot"];
  const auto &kappaM = f["kappaM"], &mxl = f["mxl"], &forc = f["forc"], &forc_surface = f["forc_tke_surface"];
  auto &tke = f["tke"], &dtke = f["dtke"];
  TORCH_CHECK(maskU.dim() == 3 && tke.dim() == 4 && tke.size(3) == 3 && kbot.dim() == 2,
              "pyhpc_turbulent_kinetic_energy: unexpected ranks");
  TORCH_CHECK(maskU.size(0) > 4 && maskU.size(1) > 4 && maskU.size(2) > 1,
              "pyhpc_turbulent_kinetic_energy needs a grid of at least 5 x 5 x 2 cells, got ", maskU.sizes());
  const auto device = tke.device();

  auto flux_east = torch::zeros_like(maskU);
  auto flux_north = torch::zeros_like(maskU);
  auto flux_top = torch::zeros_like(maskU);
  auto tke_now = tke.index({kAll, kAll, kAll, kTau});
  auto sqrttke = torch::sqrt(torch::maximum(Bound(0.0, device), tke_now));

  // 1. Vertical mixing and dissipation, implicit in z.
  auto ks = kbot.index({kIn, kIn}) - 1;
  auto a_tri = torch::zeros_like(maskU.index({kIn, kIn}));
  auto b_tri = torch::zeros_like(a_tri);
  auto c_tri = torch::zeros_like(a_tri);
  auto d_tri = torch::zeros_like(a_tri);
  auto delta = torch::zeros_like(a_tri);
  const auto dzw_top = dzw.index({-1});
  delta.index_put_({kAll, kAll, Slice(None, -1)},
                   kDtTke / dzt.index({None, None, Slice(1, None)}) * kAlphaTke * 0.5 *
                       (kappaM.index({kIn, kIn, Slice(None, -1)}) + kappaM.index({kIn, kIn, Slice(1, None)})));
  a_tri.index_put_({kAll, kAll, S(1, -1)},
                   -delta.index({kAll, kAll, Slice(None, -2)}) / dzw.index({None, None, S(1, -1)}));
  a_tri.index_put_({kAll, kAll, -1}, -delta.index({kAll, kAll, -2}) / (0.5 * dzw_top));
  b_tri.index_put_({kAll, kAll, S(1, -1)},
                   1 +
                       (delta.index({kAll, kAll, S(1, -1)}) + delta.index({kAll, kAll, Slice(None, -2)})) /
                           dzw.index({None, None, S(1, -1)}) +
                       kDtTke * kCEps * sqrttke.index({kIn, kIn, S(1, -1)}) / mxl.index({kIn, kIn, S(1, -1)}));
  b_tri.index_put_({kAll, kAll, -1}, 1 + delta.index({kAll, kAll, -2}) / (0.5 * dzw_top) +
                                         kDtTke * kCEps / mxl.index({kIn, kIn, -1}) * sqrttke.index({kIn, kIn, -1}));
  auto b_tri_edge = 1 + delta / dzw.index({None, None, kAll}) +
                    kDtTke * kCEps / mxl.index({kIn, kIn, kAll}) * sqrttke.index({kIn, kIn, kAll});
  c_tri.index_put_({kAll, kAll, Slice(None, -1)},
                   -delta.index({kAll, kAll, Slice(None, -1)}) / dzw.index({None, None, Slice(None, -1)}));
  d_tri.index_put_({Ellipsis}, tke.index({kIn, kIn, kAll, kTau}) + kDtTke * forc.index({kIn, kIn, kAll}));
  d_tri.index({kAll, kAll, -1}).add_(kDtTke * forc_surface.index({kIn, kIn}) / (0.5 * dzw_top));

  auto [sol, water] = SolveImplicit(ks, a_tri, b_tri, c_tri, d_tri, b_tri_edge);
  tke.index_put_({kIn, kIn, kAll, kTaup1}, torch::where(water, sol, tke.index({kIn, kIn, kAll, kTaup1})));

  // 2. Add TKE where the surface density flux drains it from the top box.
  auto tke_surf_corr = torch::zeros({maskU.size(0), maskU.size(1)}, torch::TensorOptions(device).dtype(torch::kFloat));
  auto surface = tke.index({kIn, kIn, -1, kTaup1});
  tke_surf_corr.index_put_({kIn, kIn}, torch::where(surface < 0.0, -surface * 0.5 * dzw_top / kDtTke, 0.0));
  tke.index_put_({kIn, kIn, -1, kTaup1}, torch::maximum(Bound(0.0, device), tke.index({kIn, kIn, -1, kTaup1})));

  // 3. Lateral diffusion.
  flux_east.index_put_(
      {Slice(None, -1), kAll, kAll},
      kKhTke * (tke.index({Slice(1, None), kAll, kAll, kTau}) - tke.index({Slice(None, -1), kAll, kAll, kTau})) /
          (cost.index({None, kAll, None}) * dxu.index({Slice(None, -1), None, None})) *
          maskU.index({Slice(None, -1), kAll, kAll}));
  flux_east.index_put_({-1, kAll, kAll}, 0.0);
  flux_north.index_put_(
      {kAll, Slice(None, -1), kAll},
      kKhTke * (tke.index({kAll, Slice(1, None), kAll, kTau}) - tke.index({kAll, Slice(None, -1), kAll, kTau})) /
          dyu.index({None, Slice(None, -1), None}) * maskV.index({kAll, Slice(None, -1), kAll}) *
          cosu.index({None, Slice(None, -1), None}));
  flux_north.index_put_({kAll, -1, kAll}, 0.0);
  auto x_area = cost.index({None, kIn, None}) * dxt.index({kIn, None, None});
  auto y_area = cost.index({None, kIn, None}) * dyt.index({None, kIn, None});
  tke.index({kIn, kIn, kAll, kTaup1})
      .add_(kDtTke * maskW.index({kIn, kIn, kAll}) *
            ((flux_east.index({kIn, kIn, kAll}) - flux_east.index({S(1, -3), kIn, kAll})) / x_area +
             (flux_north.index({kIn, kIn, kAll}) - flux_north.index({kIn, S(1, -3), kAll})) / y_area));

  // 4. Advection (superbee), the fluxes on the W grid.
  auto maskUtr = torch::zeros_like(maskW);
  maskUtr.index_put_({Slice(None, -1)}, maskW.index({Slice(1, None)}) * maskW.index({Slice(None, -1)}));
  flux_east.zero_();
  flux_east.index_put_({S(1, -2), kIn, kAll},
                       AdvSuperbee(u.index({Ellipsis, kTau}), tke_now, maskUtr, dxt, 0, cost, cosu));
  auto maskVtr = torch::zeros_like(maskW);
  maskVtr.index_put_({kAll, Slice(None, -1)},
                     maskW.index({kAll, Slice(1, None)}) * maskW.index({kAll, Slice(None, -1)}));
  flux_north.zero_();
  flux_north.index_put_({kIn, S(1, -2), kAll},
                        AdvSuperbee(v.index({Ellipsis, kTau}), tke_now, maskVtr, dyt, 1, cost, cosu));
  auto maskWtr = torch::zeros_like(maskW);
  maskWtr.index_put_({kAll, kAll, Slice(None, -1)},
                     maskW.index({kAll, kAll, Slice(1, None)}) * maskW.index({kAll, kAll, Slice(None, -1)}));
  flux_top.zero_();
  flux_top.index_put_({kIn, kIn, Slice(None, -1)},
                      AdvSuperbee(w.index({Ellipsis, kTau}), tke_now, maskWtr, dzw, 2, cost, cosu));

  dtke.index_put_({kIn, kIn, kAll, kTau},
                  maskW.index({kIn, kIn, kAll}) *
                      (-(flux_east.index({kIn, kIn, kAll}) - flux_east.index({S(1, -3), kIn, kAll})) / x_area -
                       (flux_north.index({kIn, kIn, kAll}) - flux_north.index({kIn, S(1, -3), kAll})) / y_area));
  dtke.index({kAll, kAll, 0, kTau}).add_(-flux_top.index({kAll, kAll, 0}) / dzw.index({0}));
  dtke.index({kAll, kAll, S(1, -1), kTau})
      .add_(-(flux_top.index({kAll, kAll, S(1, -1)}) - flux_top.index({kAll, kAll, Slice(None, -2)})) /
            dzw.index({S(1, -1)}));
  dtke.index({kAll, kAll, -1, kTau})
      .add_(-(flux_top.index({kAll, kAll, -1}) - flux_top.index({kAll, kAll, -2})) / (0.5 * dzw_top));

  // 5. Adams-Bashforth time stepping.
  tke.index({kAll, kAll, kAll, kTaup1})
      .add_(kDtTracer * ((1.5 + kAbEps) * dtke.index({kAll, kAll, kAll, kTau}) -
                         (0.5 + kAbEps) * dtke.index({kAll, kAll, kAll, kTaum1})));

  f["tke_surf_corr"] = tke_surf_corr;
  return tke;
}

std::map<std::string, torch::Tensor> MakeTkeInputs(int64_t size, torch::Device device) {
  const auto shape = PyhpcGridShape(size);
  const int64_t nx = shape[0], ny = shape[1], nz = shape[2];
  auto f64 = torch::TensorOptions(device).dtype(torch::kDouble);
  std::map<std::string, torch::Tensor> in;
  // Drawn in TorchBench's order and distributions (its NumPy stream, seeded
  // with 17, cannot be reproduced here; the collector seeds torch's).
  for (const char* m : {"maskU", "maskV", "maskW"}) in[m] = (torch::rand(shape, f64) < 0.8).to(torch::kDouble);
  for (const char* n : {"dxt", "dxu"}) in[n] = torch::randn({nx}, f64);
  for (const char* n : {"dyt", "dyu"}) in[n] = torch::randn({ny}, f64);
  for (const char* n : {"dzt", "dzw"}) in[n] = torch::randn({nz}, f64);
  for (const char* n : {"cost", "cosu"}) in[n] = torch::randn({ny}, f64);
  in["kbot"] = torch::randint(0, nz, {nx, ny}, torch::TensorOptions(device).dtype(torch::kLong));
  in["forc_tke_surface"] = torch::randn({nx, ny}, f64);
  for (const char* n : {"kappaM", "mxl", "forc"}) in[n] = torch::randn(shape, f64);
  for (const char* n : {"u", "v", "w", "tke", "dtke"}) in[n] = torch::randn({nx, ny, nz, 3}, f64);
  return in;
}

namespace {

class TurbulentKineticEnergyWorkload : public Workload {
 public:
  explicit TurbulentKineticEnergyWorkload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.mode == Mode::kEval, "pyhpc_turbulent_kinetic_energy is eval-only");
    net_->to(opt.device);
    inputs_ = MakeTkeInputs(opt.batch_size, opt.device);
    samples_per_step_ = opt.batch_size;
  }
  torch::nn::Module& net() override { return *net_; }
  // Updates tke and dtke in inputs() in place, as the reference does (so
  // repeated steps integrate on, as TorchBench's repeated calls do), and
  // stores tke_surf_corr there too; returns tke.
  torch::Tensor Forward() override { return net_->forward(inputs_); }
  torch::Tensor TrainStep() override { TORCH_CHECK(false, "pyhpc_turbulent_kinetic_energy has no train mode"); }

 private:
  TurbulentKineticEnergy net_;
};

}  // namespace

void AddPyhpcTurbulentKineticEnergyModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "pyhpc_turbulent_kinetic_energy";
  info.paper_name = "pyhpc_turbulent_kinetic_energy";
  info.domain = Domain::kOther;
  info.task = "high-performance computing (ocean turbulent kinetic energy)";
  info.reference = "pyhpc-benchmarks turbulent_kinetic_energy (dionhaefner/pyhpc-benchmarks), from Veros integrate_tke";
  // torchbenchmark/models/pyhpc_turbulent_kinetic_energy/__init__.py:
  // DEFAULT_EVAL_BSIZE = 1048576 (2^20 from pyhpc-benchmarks' run.py sizes);
  // the train entry is never used (supports_train is false).
  info.default_batch = {1048576, 1048576};
  info.smoke_batch = {16384, 16384};
  info.supports_train = false;
  info.unsupported_reason = "pyhpc kernels have no trainable parameters; TorchBench defines eval only";
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<TurbulentKineticEnergyWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
