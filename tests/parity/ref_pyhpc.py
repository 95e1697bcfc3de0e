"""NumPy references for the pyhpc kernels (pyhpc_equation_of_state, pyhpc_isoneutral_mixing).

The kernels have no PyPI package, so this script evaluates the same equations
with NumPy on the inputs the C++ test saved (--inputs, a dict written by
torch::pickle_save) and writes the expected arrays in parity_common's file
layout, with the per-array results under "outputs".

For the equation of state it also checks the closed form against its
definition, independently of any transcription: gsw_dHdT is the CT-derivative
of the dynamic enthalpy, h_dyn(SA, CT, p) = 1e4 * integral_0^p v(SA, CT, p') dp'
(p in dbar, 1 dbar = 1e4 Pa), with v the GSW 48-term specific volume. The
derivative is taken by complex-step differentiation (exact to rounding) and
the integral by Gauss-Legendre quadrature; a disagreement fails the script.
"""
import argparse
import sys

import numpy as np
import torch.jit._pickle  # noqa: F401  (restore_type_tag, for torch::pickle_save files)
import torch

# GSW 48-term specific volume coefficients v01..v48 (TEOS-10, gsw_specvol).
V = [None] + [
    9.998420897506056e+2, 2.839940833161907e0, -3.147759265588511e-2, 1.181805545074306e-3,
    -6.698001071123802e0, -2.986498947203215e-2, 2.327859407479162e-4, -3.988822378968490e-2,
    5.095422573880500e-4, -1.426984671633621e-5, 1.645039373682922e-7, -2.233269627352527e-2,
    -3.436090079851880e-4, 3.726050720345733e-6, -1.806789763745328e-4, 6.876837219536232e-7,
    -3.087032500374211e-7, -1.988366587925593e-8, -1.061519070296458e-11, 1.550932729220080e-10,
    1.0e0, 2.775927747785646e-3, -2.349607444135925e-5, 1.119513357486743e-6,
    6.743689325042773e-10, -7.521448093615448e-3, -2.764306979894411e-5, 1.262937315098546e-7,
    9.527875081696435e-10, -1.811147201949891e-11, -3.303308871386421e-5, 3.801564588876298e-7,
    -7.672876869259043e-9, -4.634182341116144e-11, 2.681097235569143e-12, 5.419326551148740e-6,
    -2.742185394906099e-5, -3.212746477974189e-7, 3.191413910561627e-9, -1.931012931541776e-12,
    -1.105097577149576e-7, 6.211426728363857e-10, -1.119011592875110e-10, -1.941660213148725e-11,
    -1.864826425365600e-14, 1.119522344879478e-14, -1.200507748551599e-15, 6.057902487546866e-17,
]


def dhdt_closed_form(sa, ct, p):
    """gsw_dHdT, the published symbolic derivative (GSW), evaluated with NumPy."""
    v = V
    t1 = v[45] * ct
    t2 = 2.0 * t1
    t3 = v[46] * sa
    t4 = 0.5 * v[12]
    t5 = v[14] * ct
    t7 = ct * (v[13] + t5)
    t8 = 0.5 * t7
    t11 = sa * (v[15] + v[16] * ct)
    t12 = 0.5 * t11
    t13 = t4 + t8 + t12
    t15 = v[19] * ct
    t19 = v[17] + ct * (v[18] + t15) + v[20] * sa
    t20 = 1.0 / t19
    t24 = v[47] + v[48] * ct
    t25 = 0.5 * v[13]
    t26 = 1.0 * t5
    t27 = sa * v[16]
    t28 = 0.5 * t27
    t29 = t25 + t26 + t28
    t33 = t24 * t13
    t34 = t19 ** 2
    t35 = 1.0 / t34
    t37 = v[18] + 2.0 * t15
    t38 = t35 * t37
    t48 = ct * (v[44] + t1 + t3)
    t57 = v[40] * ct
    t59 = ct * (v[39] + t57)
    t64 = t13 ** 2
    t68 = t20 * t29
    t71 = t24 * t64
    t74 = v[4] * ct
    t76 = ct * (v[3] + t74)
    t79 = v[7] * ct
    t82 = np.sqrt(sa)
    t83 = v[11] * ct
    t85 = ct * (v[10] + t83)
    t92 = v[1] + ct * (v[2] + t76) + sa * (v[5] + ct * (v[6] + t79) + t82 * (v[8] + ct * (v[9] + t85)))
    t93 = v[48] * t92
    t105 = (v[2] + t76 + ct * (v[3] + 2.0 * t74)
            + sa * (v[6] + 2.0 * t79 + t82 * (v[9] + t85 + ct * (v[10] + 2.0 * t83))))
    t106 = t24 * t105
    t107 = v[44] + t2 + t3
    t110 = v[43] + t48
    t117 = t24 * t92
    t120 = 4.0 * t71 * t20 - t117 - 2.0 * t110 * t13
    t123 = (v[38] + t59 + ct * (v[39] + 2.0 * t57) + sa * v[42]
            + (4.0 * v[48] * t64 * t20 + 8.0 * t33 * t68 - 4.0 * t71 * t38 - t93 - t106
               - 2.0 * t107 * t13 - 2.0 * t110 * t29) * t20
            - t120 * t35 * t37)
    t128 = t19 * p
    t130 = p * (1.0 * v[12] + 1.0 * t7 + 1.0 * t11 + t128)
    t131 = 1.0 / t92
    t133 = 1.0 + t130 * t131
    t134 = np.log(t133)
    t143 = v[37] + ct * (v[38] + t59) + sa * (v[41] + v[42] * ct) + t120 * t20
    t152 = t37 * p
    t156 = t92 ** 2
    t165 = v[25] * ct
    t167 = ct * (v[24] + t165)
    t169 = ct * (v[23] + t167)
    t175 = v[30] * ct
    t177 = ct * (v[29] + t175)
    t179 = ct * (v[28] + t177)
    t185 = v[35] * ct
    t187 = ct * (v[34] + t185)
    t189 = ct * (v[33] + t187)
    t199 = t13 * t20
    t217 = 2.0 * t117 * t199 - t110 * t92
    t234 = (v[21] + ct * (v[22] + t169)
            + sa * (v[26] + ct * (v[27] + t179) + v[36] * sa + t82 * (v[31] + ct * (v[32] + t189)))
            + t217 * t20)
    t241 = t64 - t92 * t19
    t242 = np.sqrt(t241)
    t243 = 1.0 / t242
    t244 = t4 + t8 + t12 - t242
    t245 = 1.0 / t244
    t247 = t4 + t8 + t12 + t242 + t128
    t248 = 1.0 / t247
    t249 = t242 * t245 * t248
    t252 = 1.0 + 2.0 * t128 * t249
    t253 = np.log(t252)
    t254 = t243 * t253
    t259 = t234 * t19 - t143 * t13
    t264 = t259 * t20
    t272 = 2.0 * t13 * t29 - t105 * t19 - t92 * t37
    t282 = t128 * t242
    t283 = t244 ** 2
    t287 = t243 * t272 / 2.0
    t292 = t247 ** 2
    dt234 = (v[22] + t169 + ct * (v[23] + t167 + ct * (v[24] + 2.0 * t165))
             + sa * (v[27] + t179 + ct * (v[28] + t177 + ct * (v[29] + 2.0 * t175))
                     + t82 * (v[32] + t189 + ct * (v[33] + t187 + ct * (v[34] + 2.0 * t185))))
             + (2.0 * t93 * t199 + 2.0 * t106 * t199 + 2.0 * t117 * t68 - 2.0 * t117 * t13 * t35 * t37
                - t107 * t92 - t110 * t105) * t20
             - t217 * t35 * t37)
    return (
        0.1e5 * p * (v[44] + t2 + t3 - 2.0 * v[48] * t13 * t20 - 2.0 * t24 * t29 * t20 + 2.0 * t33 * t38
                     + 0.5 * v[48] * p) * t20
        - 0.1e5 * p * (v[43] + t48 - 2.0 * t33 * t20 + 0.5 * t24 * p) * t38
        + 0.5e4 * t123 * t20 * t134
        - 0.5e4 * t143 * t35 * t134 * t37
        + 0.5e4 * t143 * t20 * (p * (1.0 * v[13] + 2.0 * t5 + 1.0 * t27 + t152) * t131 - t130 / t156 * t105) / t133
        + 0.5e4 * (dt234 * t19 + t234 * t37 - t123 * t13 - t143 * t29) * t20 * t254
        - 0.5e4 * t259 * t35 * t254 * t37
        - 0.25e4 * t264 / t242 / t241 * t253 * t272
        + 0.5e4 * t264 * t243 * (2.0 * t152 * t249 + t128 * t243 * t245 * t248 * t272
                                 - 2.0 * t282 / t283 * t248 * (t25 + t26 + t28 - t287)
                                 - 2.0 * t282 * t245 / t292 * (t25 + t26 + t28 + t287 + t152)) / t252
    )


def specvol48(sa, ct, p):
    """GSW 48-term specific volume v = N / D (works for complex ct)."""
    v = V
    rs = np.sqrt(sa)
    den = (v[1] + ct * (v[2] + ct * (v[3] + v[4] * ct))
           + sa * (v[5] + ct * (v[6] + v[7] * ct) + rs * (v[8] + ct * (v[9] + ct * (v[10] + v[11] * ct))))
           + p * (v[12] + ct * (v[13] + v[14] * ct) + sa * (v[15] + v[16] * ct)
                  + p * (v[17] + ct * (v[18] + v[19] * ct) + v[20] * sa)))
    num = (v[21] + ct * (v[22] + ct * (v[23] + ct * (v[24] + v[25] * ct)))
           + sa * (v[26] + ct * (v[27] + ct * (v[28] + ct * (v[29] + v[30] * ct))) + v[36] * sa
                   + rs * (v[31] + ct * (v[32] + ct * (v[33] + ct * (v[34] + v[35] * ct)))))
           + p * (v[37] + ct * (v[38] + ct * (v[39] + v[40] * ct)) + sa * (v[41] + v[42] * ct)
                  + p * (v[43] + ct * (v[44] + v[45] * ct + v[46] * sa) + p * (v[47] + v[48] * ct))))
    return num / den


def dhdt_from_definition(sa, ct, p, nodes=24):
    h = 1e-20
    x, w = np.polynomial.legendre.leggauss(nodes)
    total = np.zeros(np.broadcast(sa, ct, p).shape)
    for xk, wk in zip(x, w):
        pk = 0.5 * p * (xk + 1.0)
        dv_dct = np.imag(specvol48(sa, ct + 1j * h, pk)) / h
        total = total + wk * dv_dct
    return 1e4 * 0.5 * p * total


def normwise(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def equation_of_state(inp):
    sa, ct, p = (inp[k] for k in ("s", "t", "p"))
    out = dhdt_closed_form(sa, ct, p)
    check = dhdt_from_definition(sa, ct, p)
    err = normwise(out, check)
    print(f"closed form vs quadrature of d(specvol)/dCT: normwise rel err {err:.3e}")
    if not err < 1e-8:
        sys.exit(f"gsw_dHdT closed form disagrees with its definition (rel err {err})")
    return {"dHdT": out}


def isoneutral_mixing(inp):
    maskT, maskU, maskV, maskW = (inp[k] for k in ("maskT", "maskU", "maskV", "maskW"))
    dxt, dxu, dyt, dyu, dzt, dzw = (inp[k] for k in ("dxt", "dxu", "dyt", "dyu", "dzt", "dzw"))
    cost, cosu, salt, temp, zt, K_iso = (inp[k] for k in ("cost", "cosu", "salt", "temp", "zt", "K_iso"))
    # Outputs start from the given arrays: cells outside the interior keep them.
    K_11, K_22, K_33 = (inp[k].copy() for k in ("K_11", "K_22", "K_33"))
    Ai_ez, Ai_nz, Ai_bx, Ai_by = (inp[k].copy() for k in ("Ai_ez", "Ai_nz", "Ai_bx", "Ai_by"))
    nz = K_11.shape[2]

    rho0, betaT, betaTs, gammas, grav, betaS = 1024.0, 1.67e-4, 1e-5, 1.1e-8, 9.81, 0.78e-3
    theta0 = 283.0 - 273.15
    epsln, k_steep = 1e-20, 50.0
    T = temp[..., 0]
    S = salt[..., 0]
    depth = np.abs(zt)

    # Linear equation of state: density derivatives at T-cell centres.
    drdT = maskT * (-(betaTs * (T - theta0) + betaT * (1 - gammas * grav * (-depth) * rho0)) * rho0)
    drdS = maskT * (betaS * rho0 * np.ones_like(T))

    def taper(s):
        return 0.5 * (1.0 + np.tanh((-np.abs(s) + 1e-3) / 1e-3))

    dTdx, dSdx, dTdy, dSdy, dTdz, dSdz = (np.zeros_like(K_11) for _ in range(6))
    dTdz[:, :, :-1] = maskW[:, :, :-1] * np.diff(T, axis=2) / dzw[:-1]
    dSdz[:, :, :-1] = maskW[:, :, :-1] * np.diff(S, axis=2) / dzw[:-1]
    dTdx[:-1] = maskU[:-1] * np.diff(T, axis=0) / (dxu[:-1, None, None] * cost[None, :, None])
    dSdx[:-1] = maskU[:-1] * np.diff(S, axis=0) / (dxu[:-1, None, None] * cost[None, :, None])
    dTdy[:, :-1] = maskV[:, :-1] * np.diff(T, axis=1) / dyu[None, :-1, None]
    dSdy[:, :-1] = maskV[:, :-1] * np.diff(S, axis=1) / dyu[None, :-1, None]

    # East faces.
    diffloc = np.zeros_like(K_11)
    diffloc[1:-2, 2:-2, 1:] = 0.25 * (K_iso[1:-2, 2:-2, 1:] + K_iso[1:-2, 2:-2, :-1]
                                      + K_iso[2:-1, 2:-2, 1:] + K_iso[2:-1, 2:-2, :-1])
    diffloc[1:-2, 2:-2, 0] = 0.5 * (K_iso[1:-2, 2:-2, 0] + K_iso[2:-1, 2:-2, 0])
    sumz = np.zeros_like(K_11[1:-2, 2:-2])
    for kr in range(2):
        ki, su = (0, nz) if kr == 1 else (1, nz - 1)
        for ip in range(2):
            xs = slice(1 + ip, -2 + ip)
            rx = drdT[xs, 2:-2, ki:] * dTdx[1:-2, 2:-2, ki:] + drdS[xs, 2:-2, ki:] * dSdx[1:-2, 2:-2, ki:]
            rz = drdT[xs, 2:-2, ki:] * dTdz[xs, 2:-2, :su] + drdS[xs, 2:-2, ki:] * dSdz[xs, 2:-2, :su]
            slope = -rx / (np.minimum(rz, 0.0) - epsln)
            tp = taper(slope)
            sumz[:, :, ki:] += dzw[:su] * maskU[1:-2, 2:-2, ki:] * np.maximum(k_steep, diffloc[1:-2, 2:-2, ki:] * tp)
            Ai_ez[1:-2, 2:-2, ki:, ip, kr] = tp * slope * maskU[1:-2, 2:-2, ki:]
    K_11[1:-2, 2:-2, :] = sumz / (4.0 * dzt)

    # North faces.
    diffloc[...] = 0
    diffloc[2:-2, 1:-2, 1:] = 0.25 * (K_iso[2:-2, 1:-2, 1:] + K_iso[2:-2, 1:-2, :-1]
                                      + K_iso[2:-2, 2:-1, 1:] + K_iso[2:-2, 2:-1, :-1])
    diffloc[2:-2, 1:-2, 0] = 0.5 * (K_iso[2:-2, 1:-2, 0] + K_iso[2:-2, 2:-1, 0])
    sumz = np.zeros_like(K_11[2:-2, 1:-2])
    for kr in range(2):
        ki, su = (0, nz) if kr == 1 else (1, nz - 1)
        for jp in range(2):
            ys = slice(1 + jp, -2 + jp)
            ry = drdT[2:-2, ys, ki:] * dTdy[2:-2, 1:-2, ki:] + drdS[2:-2, ys, ki:] * dSdy[2:-2, 1:-2, ki:]
            rz = drdT[2:-2, ys, ki:] * dTdz[2:-2, ys, :su] + drdS[2:-2, ys, ki:] * dSdz[2:-2, ys, :su]
            slope = -ry / (np.minimum(0.0, rz) - epsln)
            tp = taper(slope)
            sumz[:, :, ki:] += dzw[:su] * maskV[2:-2, 1:-2, ki:] * np.maximum(k_steep, diffloc[2:-2, 1:-2, ki:] * tp)
            Ai_nz[2:-2, 1:-2, ki:, jp, kr] = tp * slope * maskV[2:-2, 1:-2, ki:]
    K_22[2:-2, 1:-2, :] = sumz / (4.0 * dzt)

    # Top faces.
    sumx = np.zeros_like(K_11[2:-2, 2:-2, :-1])
    sumy = np.zeros_like(K_11[2:-2, 2:-2, :-1])
    for kr in range(2):
        zs = slice(1, nz) if kr == 1 else slice(0, nz - 1)
        rz = drdT[2:-2, 2:-2, zs] * dTdz[2:-2, 2:-2, :-1] + drdS[2:-2, 2:-2, zs] * dSdz[2:-2, 2:-2, :-1]
        for ip in range(2):
            xs = slice(1 + ip, -3 + ip)
            rx = drdT[2:-2, 2:-2, zs] * dTdx[xs, 2:-2, zs] + drdS[2:-2, 2:-2, zs] * dSdx[xs, 2:-2, zs]
            slope = -rx / (np.minimum(0.0, rz) - epsln)
            tp = taper(slope)
            sumx += dxu[xs, None, None] * K_iso[2:-2, 2:-2, :-1] * tp * slope ** 2 * maskW[2:-2, 2:-2, :-1]
            Ai_bx[2:-2, 2:-2, :-1, ip, kr] = tp * slope * maskW[2:-2, 2:-2, :-1]
        for jp in range(2):
            ys = slice(1 + jp, -3 + jp)
            ry = drdT[2:-2, 2:-2, zs] * dTdy[2:-2, ys, zs] + drdS[2:-2, 2:-2, zs] * dSdy[2:-2, ys, zs]
            slope = -ry / (np.minimum(0.0, rz) - epsln)
            tp = taper(slope)
            sumy += ((cosu[ys] * dyu[ys])[None, :, None] * K_iso[2:-2, 2:-2, :-1] * tp * slope ** 2
                     * maskW[2:-2, 2:-2, :-1])
            Ai_by[2:-2, 2:-2, :-1, jp, kr] = tp * slope * maskW[2:-2, 2:-2, :-1]
    K_33[2:-2, 2:-2, :-1] = (sumx / (4 * dxt[2:-2, None, None])
                             + sumy / (4 * dyt[None, 2:-2, None] * cost[None, 2:-2, None]))
    K_33[2:-2, 2:-2, -1] = 0.0
    return {"K_11": K_11, "K_22": K_22, "K_33": K_33, "Ai_ez": Ai_ez, "Ai_nz": Ai_nz, "Ai_bx": Ai_bx,
            "Ai_by": Ai_by}


KERNELS = {"pyhpc_equation_of_state": equation_of_state, "pyhpc_isoneutral_mixing": isoneutral_mixing}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, choices=sorted(KERNELS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--inputs", required=True, help="dict of input tensors saved by the C++ test")
    args = parser.parse_args()
    # torch::pickle_save tags container types with this helper; the file is
    # the test's own output, so allow just that global and stay weights_only.
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        loaded = torch.load(args.inputs)
    inputs = {k: v.numpy() for k, v in loaded.items()}
    for k, a in inputs.items():
        assert a.dtype == np.float64, f"{k}: expected float64 as in TorchBench, got {a.dtype}"
    outputs = {k: torch.from_numpy(np.ascontiguousarray(a)) for k, a in KERNELS[args.model](inputs).items()}
    # parity_common's layout, so parity::RunReference can read the file; the
    # kernels' results are under "outputs" (several arrays, no parameters).
    first = next(iter(outputs.values()))
    torch.save({"params": {}, "param_count": 0, "inputs": {}, "updated": {}, "output": first,
                "loss": torch.zeros(()), "outputs": outputs}, args.out)


if __name__ == "__main__":
    main()
