#!/usr/bin/env python3
"""How far estimated cycles track time on this machine (docs/counted.md).

Reads two collections of the same build: a counted one (--measure counted)
and a timed one pinned to the same kernels (--cpu-isa avx2 --threads 1),
matches their runs by model, mode, backend and precision, and prints for
each run the median step time, the median estimated cycles and the implied
clock (cycles per second), then Spearman's rank correlation of time against
cycles and of time against instructions over all matched runs.

Usage: counted_vs_time.py COUNTED_PLATFORM_DIR TIMED_PLATFORM_DIR [--json OUT]
"""
import argparse
import json
import pathlib
import statistics
import sys


def runs(platform_dir):
    out = {}
    for f in sorted((pathlib.Path(platform_dir) / "runs").glob("*.json")):
        r = json.loads(f.read_text())
        if r.get("status") == "ok":
            out[(r["model"]["id"], r["mode"], r["backend"], r["precision"])] = r
    return out


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("counted")
    ap.add_argument("timed")
    ap.add_argument("--json", help="write the matched rows and the correlations here")
    a = ap.parse_args(argv)
    counted, timed = runs(a.counted), runs(a.timed)
    rows = []
    for key in sorted(counted.keys() & timed.keys()):
        c, t = counted[key]["counted"], timed[key]["timing"]
        if not c or not t:
            continue
        cycles = statistics.median(s["est_cycles"] for s in c["steps"])
        instr = statistics.median(s["instructions"] for s in c["steps"])
        rows.append({"run": " ".join(key), "median_ms": t["median_ms"], "est_cycles": cycles, "instructions": instr,
                     "implied_ghz": cycles / (t["median_ms"] * 1e-3) / 1e9})
    if len(rows) < 3:
        sys.exit(f"only {len(rows)} runs are in both collections: nothing to correlate")
    print(f"{'run':55} {'median ms':>10} {'est cycles':>14} {'implied GHz':>11}")
    for r in rows:
        print(f"{r['run']:55} {r['median_ms']:10.3f} {r['est_cycles']:14.0f} {r['implied_ghz']:11.2f}")
    ms = [r["median_ms"] for r in rows]
    rho_c = spearman(ms, [r["est_cycles"] for r in rows])
    rho_i = spearman(ms, [r["instructions"] for r in rows])
    ghz = [r["implied_ghz"] for r in rows]
    print(f"\n{len(rows)} runs: Spearman rho(time, est_cycles) = {rho_c:.3f}, rho(time, instructions) = {rho_i:.3f}; "
          f"implied clock median {statistics.median(ghz):.2f} GHz (range {min(ghz):.2f} to {max(ghz):.2f})")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"rows": rows, "spearman_cycles": rho_c,
                                                     "spearman_instructions": rho_i}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
