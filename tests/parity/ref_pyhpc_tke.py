"""NumPy reference for pyhpc_turbulent_kinetic_energy (Veros integrate_tke).

pyhpc-benchmarks has no PyPI package, so this script re-states the kernel's
equations with NumPy, evaluates them on the inputs the C++ test saved
(--inputs, a dict written by torch::pickle_save) and writes the expected
arrays in parity_common's file layout, the per-array results under "outputs"
(tke and dtke after the step, tke_surf_corr).

The tridiagonal solve is the kernel's own algorithm (elimination without
pivoting). Independently of that transcription the script checks each water
column's solution against the system it solves: the residual |A x - d| of
the assembled tridiagonal matrices, relative to |A| |x| + |d|, must be at
rounding level, or the script fails.
"""
import argparse
import sys

import numpy as np
import torch.jit._pickle  # noqa: F401  (restore_type_tag, for torch::pickle_save files)
import torch

TAU, TAUP1, TAUM1 = 0, 1, 2
DT_TRACER = DT_TKE = 1.0
AB_EPS, ALPHA_TKE, C_EPS, K_H_TKE = 0.1, 1.0, 0.7, 2000.0

I = slice(2, -2)  # interior of a horizontal axis


def thomas(lower, diag, upper, rhs):
    """Solves tridiagonal systems along the last axis by forward elimination
    and back substitution (no pivoting)."""
    diag, rhs = diag.copy(), rhs.copy()
    n = diag.shape[-1]
    for k in range(1, n):
        m = lower[..., k] / diag[..., k - 1]
        diag[..., k] = diag[..., k] - m * upper[..., k - 1]
        rhs[..., k] = rhs[..., k] - m * rhs[..., k - 1]
    x = np.empty_like(rhs)
    x[..., n - 1] = rhs[..., n - 1] / diag[..., n - 1]
    for k in range(n - 2, -1, -1):
        x[..., k] = (rhs[..., k] - upper[..., k] * x[..., k + 1]) / diag[..., k]
    return x


def residual_check(lower, diag, upper, rhs, x):
    """max over rows of |A x - d| / (|A| |x| + |d|), A assembled densely."""
    n = diag.shape[-1]
    ax = diag * x
    ax[..., 1:] += lower[..., 1:] * x[..., :-1]
    ax[..., :-1] += upper[..., :-1] * x[..., 1:]
    scale = np.abs(diag * x) + np.abs(rhs)
    scale[..., 1:] += np.abs(lower[..., 1:] * x[..., :-1])
    scale[..., :-1] += np.abs(upper[..., :-1] * x[..., 1:])
    # The dense form of one column, to make sure the band bookkeeping is right.
    col = tuple(s // 2 for s in diag.shape[:-1])
    dense = np.diag(diag[col]) + np.diag(lower[col][1:], -1) + np.diag(upper[col][:-1], 1)
    assert np.allclose(dense @ x[col], ax[col], rtol=1e-12, atol=0), "band assembly"
    assert n == dense.shape[0]
    return float(np.max(np.abs(ax - rhs) / np.maximum(scale, 1e-300)))


def superbee(r):
    return np.maximum(0.0, np.maximum(np.minimum(1.0, 2 * r), np.minimum(2.0, r)))


def limited_flux(vel, up, down, courant, r_slope, diff):
    """Centred flux minus the limited upwind correction."""
    cr = superbee(r_slope)
    return vel * 0.5 * (up + down) - 0.5 * np.abs(vel) * ((1.0 - cr) + courant * cr) * diff


def slope_ratio(diff_plus, diff, diff_minus, vel):
    return np.where(vel > 0.0, diff_minus, diff_plus) / np.where(np.abs(diff) < 1e-20, 1e-20, diff)


def advect_x(vel, q, mask, dxt, cost):
    # Faces i+1/2 for i = 1 .. nx-3, interior in y.
    d = (q[1:] - q[:-1]) * mask[:-1]  # d[i] = (q[i+1] - q[i]) * mask[i]
    dp, dc, dm = d[2:], d[1:-1], d[:-2]
    dp, dc, dm = dp[:, I], dc[:, I], dm[:, I]
    v = vel[1:-2, I]
    courant = np.abs(v * DT_TRACER / (cost[None, I, None] * dxt[1:-2, None, None]))
    return limited_flux(v, q[2:-1, I], q[1:-2, I], courant, slope_ratio(dp, dc, dm, v), dc)


def advect_y(vel, q, mask, dyt, cost, cosu):
    d = (q[:, 1:] - q[:, :-1]) * mask[:, :-1]
    dp, dc, dm = d[I, 2:], d[I, 1:-1], d[I, :-2]
    fac = cosu[None, 1:-2, None]
    v = vel[I, 1:-2]
    courant = np.abs(fac * v * DT_TRACER / (cost * dyt)[None, 1:-2, None])
    return limited_flux(fac * v, q[I, 2:-1], q[I, 1:-2], courant, slope_ratio(dp, dc, dm, v), dc)


def advect_z(vel, q, mask, dzw):
    # One ghost level below and above: zeros.
    pad = lambda a: np.concatenate([np.zeros_like(a[:, :, :1]), a, np.zeros_like(a[:, :, :1])], axis=2)
    vel, q, mask = pad(vel), pad(q), pad(mask)
    d = (q[:, :, 1:] - q[:, :, :-1]) * mask[:, :, :-1]
    dp, dc, dm = d[I, I, 2:], d[I, I, 1:-1], d[I, I, :-2]
    v = vel[I, I, 1:-2]
    courant = np.abs(v * DT_TRACER / dzw[None, None, :-1])
    return limited_flux(v, q[I, I, 2:-1], q[I, I, 1:-2], courant, slope_ratio(dp, dc, dm, v), dc)


def integrate_tke(a):
    u, v, w = a["u"], a["v"], a["w"]
    maskU, maskV, maskW = a["maskU"], a["maskV"], a["maskW"]
    dxt, dxu, dyt, dyu, dzt, dzw = (a[k] for k in ("dxt", "dxu", "dyt", "dyu", "dzt", "dzw"))
    cost, cosu, kbot = a["cost"], a["cosu"], a["kbot"]
    kappaM, mxl, forc, forc_surf = a["kappaM"], a["mxl"], a["forc"], a["forc_tke_surface"]
    tke, dtke = a["tke"].copy(), a["dtke"].copy()
    nx, ny, nz = maskU.shape

    tke0 = tke[..., TAU].copy()
    sq = np.sqrt(np.maximum(0.0, tke0))[I, I]
    m = mxl[I, I]

    # Vertical diffusivity between levels k and k+1 over the level spacing.
    delta = np.zeros((nx - 4, ny - 4, nz))
    delta[:, :, :-1] = DT_TKE / dzt[1:] * ALPHA_TKE * 0.5 * (kappaM[I, I, :-1] + kappaM[I, I, 1:])
    lower = np.zeros_like(delta)
    diag = np.zeros_like(delta)
    upper = np.zeros_like(delta)
    lower[:, :, 1:-1] = -delta[:, :, :-2] / dzw[1:-1]
    lower[:, :, -1] = -delta[:, :, -2] / (0.5 * dzw[-1])
    diag[:, :, 1:-1] = 1 + (delta[:, :, 1:-1] + delta[:, :, :-2]) / dzw[1:-1] + DT_TKE * C_EPS * sq[:, :, 1:-1] / m[:, :, 1:-1]
    diag[:, :, -1] = 1 + delta[:, :, -2] / (0.5 * dzw[-1]) + DT_TKE * C_EPS / m[:, :, -1] * sq[:, :, -1]
    diag_bottom = 1 + delta / dzw + DT_TKE * C_EPS / m * sq
    upper[:, :, :-1] = -delta[:, :, :-1] / dzw[:-1]
    rhs = tke0[I, I] + DT_TKE * forc[I, I]
    rhs[:, :, -1] += DT_TKE * forc_surf[I, I] / (0.5 * dzw[-1])

    # Columns: the bottom level ks = kbot - 1; above it water, below identity.
    ks = (kbot[I, I] - 1)[:, :, None]
    level = np.arange(nz)[None, None, :]
    water = (ks >= 0) & (level >= ks)
    bottom = (ks >= 0) & (level == ks)
    lower = np.where(water & ~bottom, lower, 0.0)
    diag = np.where(bottom, diag_bottom, np.where(water, diag, 1.0))
    upper = np.where(water, upper, 0.0)
    rhs = np.where(water, rhs, 0.0)
    x = thomas(lower, diag, upper, rhs)
    res = residual_check(lower, diag, upper, rhs, x)
    print(f"tridiagonal solve: max relative residual {res:.3e}")
    if not res < 1e-9:
        sys.exit(f"tridiagonal solve does not satisfy its system (relative residual {res})")
    new = tke[I, I, :, TAUP1]
    tke[I, I, :, TAUP1] = np.where(water, x, new)

    # Surface correction (float32 in the reference: torch.zeros without dtype).
    surf = tke[I, I, -1, TAUP1]
    corr = np.zeros((nx, ny), dtype=np.float32)
    corr[I, I] = np.where(surf < 0.0, -surf * 0.5 * dzw[-1] / DT_TKE, 0.0)
    tke[I, I, -1, TAUP1] = np.maximum(0.0, surf)

    # Lateral diffusion.
    fe = np.zeros((nx, ny, nz))
    fn = np.zeros((nx, ny, nz))
    fe[:-1] = K_H_TKE * np.diff(tke0, axis=0) / (cost[None, :, None] * dxu[:-1, None, None]) * maskU[:-1]
    fn[:, :-1] = K_H_TKE * np.diff(tke0, axis=1) / dyu[None, :-1, None] * maskV[:, :-1] * cosu[None, :-1, None]
    ax = cost[None, I, None] * dxt[I, None, None]
    ay = cost[None, I, None] * dyt[None, I, None]

    def divergence(east, north):
        return (east[I, I] - east[1:-3, I]) / ax + (north[I, I] - north[I, 1:-3]) / ay

    tke[I, I, :, TAUP1] += DT_TKE * maskW[I, I] * divergence(fe, fn)

    # Advection: masks of the faces between two wet W cells.
    mU = np.zeros_like(maskW)
    mU[:-1] = maskW[1:] * maskW[:-1]
    mV = np.zeros_like(maskW)
    mV[:, :-1] = maskW[:, 1:] * maskW[:, :-1]
    mW = np.zeros_like(maskW)
    mW[:, :, :-1] = maskW[:, :, 1:] * maskW[:, :, :-1]
    fe = np.zeros((nx, ny, nz))
    fn = np.zeros((nx, ny, nz))
    ft = np.zeros((nx, ny, nz))
    fe[1:-2, I] = advect_x(u[..., TAU], tke0, mU, dxt, cost)
    fn[I, 1:-2] = advect_y(v[..., TAU], tke0, mV, dyt, cost, cosu)
    ft[I, I, :-1] = advect_z(w[..., TAU], tke0, mW, dzw)

    dtke[I, I, :, TAU] = -maskW[I, I] * divergence(fe, fn)
    # Vertical flux divergence; the top box is half a level thick.
    below = np.concatenate([np.zeros_like(ft[:, :, :1]), ft[:, :, :-1]], axis=2)
    thickness = np.concatenate([dzw[:-1], [0.5 * dzw[-1]]])
    dtke[:, :, :, TAU] += -(ft - below) / thickness

    tke[..., TAUP1] += DT_TRACER * ((1.5 + AB_EPS) * dtke[..., TAU] - (0.5 + AB_EPS) * dtke[..., TAUM1])
    return {"tke": tke, "dtke": dtke, "tke_surf_corr": corr}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, choices=["pyhpc_turbulent_kinetic_energy"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--inputs", required=True, help="dict of input tensors saved by the C++ test")
    args = parser.parse_args()
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        loaded = torch.load(args.inputs)
    inputs = {k: t.numpy() for k, t in loaded.items()}
    for k, arr in inputs.items():
        want = np.int64 if k == "kbot" else np.float64
        assert arr.dtype == want, f"{k}: expected {want} as in TorchBench, got {arr.dtype}"
    outputs = {k: torch.from_numpy(np.ascontiguousarray(arr)) for k, arr in integrate_tke(inputs).items()}
    torch.save({"params": {}, "param_count": 0, "inputs": {}, "updated": {}, "output": outputs["tke"],
                "loss": torch.zeros(()), "outputs": outputs}, args.out)


if __name__ == "__main__":
    main()
