#!/usr/bin/env python3
"""Checks a release history (./gauge history) outside TorchGauge: every run
of the history whose model has a Python reference (tools/
python_eager_timing.py) is timed again in Python's own torch under each
release, with the same model, batch size, mode, thread count and backend
(eager; torchscript as torch.jit.trace; inductor as torch.compile), in
alternating processes (round by round: A B C, C B A, ...). Writes a Markdown
table of both tools' release-to-release ratios side by side, beside each
tool's same-release spread:

- TorchGauge's spread: the ratio between two collections of one release
  (--spread BUILD=OTHER_BUILD: the same release collected twice, as two
  build ids), run by run; or, with --spread-from-processes, between the two
  interleaved halves of each release's own worker processes (a history's
  rounds: 1, 3, 5 against 2, 4), the largest over the releases;
- Python's spread: the same halves of its rounds (with two rounds, the
  ratio between them), the largest over the releases.

Each tool's value for a release is the median of its per-process medians
(the rounds), the unit the comparison's rank test reads; a run collected
in one process falls back to its median over samples.

A change counts for a tool when its ratio leaves [1/s, s] for that run's
spread s (at least --min-spread). Where either tool sees a change, the other
must agree in direction; the table marks every disagreement.

Usage:
  release_check.py --results results-history --releases 2.13.0 2.14.1 2.15.0 \
      (--spread 2.15.0=2.15.0-again | --spread-from-processes) [--rounds 2] [--repeat 15] [--warmup 3] \
      [--python V=PATH ...] [--extra-site DIR] [--out check.md] [--json check.json]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIMER = os.path.join(HERE, "python_eager_timing.py")
BACKENDS = ("eager", "torchscript", "inductor")
sys.path.insert(0, HERE)
import python_eager_timing as TIMING  # noqa: E402  (the timer's own rule of what it covers)
CACHE = os.environ.get("TORCHGAUGE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "torchgauge"))


def has_reference(key):
    """Whether the Python timer covers this run (python_eager_timing.supports)."""
    model, mode, _, _, backend = key
    return TIMING.supports(model, mode, backend)


def load_runs(results, build):
    """{(model, mode, batch, threads, backend): [per-process medians]} of the build's ok runs."""
    out = {}
    for path in glob.glob(os.path.join(results, build, "*", "runs", "*.json")):
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        if r.get("status") != "ok" or r.get("backend") not in BACKENDS or r.get("precision") != "default":
            continue
        threads = (r.get("settings") or {}).get("threads") or 0
        if threads <= 0:
            raise SystemExit(f"{path}: the run used every core (settings.threads 0); collect with --threads N")
        key = (r["model"]["id"], r["mode"], r["batch_size"], threads, r["backend"])
        out[key] = r["timing"].get("process_medians_ms") or [r["timing"]["median_ms"]]
    if not out:
        raise SystemExit(f"{results}/{build}: no ok run (is the build id the release?)")
    return out


def time_in_python(python, key, a):
    model, mode, batch, threads, backend = key
    cmd = [python, TIMER, "--model", model, "--mode", mode, "--batch", str(batch), "--threads", str(threads),
           "--backend", backend, "--warmup", str(a.warmup), "--repeat", str(a.repeat)]
    for site in a.extra_site:
        cmd += ["--extra-site", site]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"python timing failed for {key} with {python}:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]


def halves_spread(medians):
    """The ratio (>= 1) between the medians of the two interleaved halves of
    one release's processes (the 1st, 3rd, ... against the 2nd, 4th, ...);
    None with a single process."""
    if len(medians) < 2:
        return None
    odd, even = statistics.median(medians[0::2]), statistics.median(medians[1::2])
    return max(odd, even) / min(odd, even)


def direction(ratio, spread):
    if ratio > spread:
        return "slower"
    if ratio < 1 / spread:
        return "faster"
    return "same"


def fmt(x):
    return "—" if x is None else f"{x:.3f}"


def compare(tg, py, keys, releases, tg_spread, min_spread):
    """One row per run and release pair: both tools' new/old ratios (medians
    of the per-process medians), each tool's spread (at least min_spread),
    each tool's direction, and whether they agree."""
    rows = []
    for k in keys:
        py_spread = max(halves_spread(py[v][k]) for v in releases)
        for prev, new in zip(releases, releases[1:]):
            tg_ratio = statistics.median(tg[new][k]) / statistics.median(tg[prev][k])
            py_ratio = statistics.median(py[new][k]) / statistics.median(py[prev][k])
            s_tg = max(min_spread, tg_spread.get(k, min_spread))
            s_py = max(min_spread, py_spread)
            d_tg, d_py = direction(tg_ratio, s_tg), direction(py_ratio, s_py)
            # Where either tool sees a change beyond its spread, the other's
            # ratio must lie on the same side of 1.
            agree = (d_tg == "same" and d_py == "same") or (tg_ratio > 1) == (py_ratio > 1)
            rows.append({"model": k[0], "mode": k[1], "batch": k[2], "threads": k[3], "backend": k[4],
                         "pair": f"{prev}..{new}",
                         "tg_ratio": tg_ratio, "tg_spread": tg_spread.get(k), "tg_verdict": d_tg,
                         "py_ratio": py_ratio, "py_spread": py_spread, "py_verdict": d_py, "agree": agree})
    return rows


def markdown(rows):
    lines = ["| model | mode | backend | batch | releases | TorchGauge new/old | its spread | Python new/old | its spread "
             "| agree |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['mode']} | {r['backend']} | {r['batch']} | {r['pair']} "
                     f"| {fmt(r['tg_ratio'])} ({r['tg_verdict']}) "
                     f"| {fmt(r['tg_spread'])} | {fmt(r['py_ratio'])} ({r['py_verdict']}) | {fmt(r['py_spread'])} "
                     f"| {'yes' if r['agree'] else '**no**'} |")
    disagreements = sum(1 for r in rows if not r["agree"])
    lines.append("")
    lines.append(f"{len(rows)} comparisons, {disagreements} where one tool saw a change beyond its spread "
                 "and the other's ratio went the other way.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--releases", nargs="+", required=True)
    ap.add_argument("--spread", action="append", default=[], help="BUILD=OTHER: a second collection of a release")
    ap.add_argument("--spread-from-processes", action="store_true",
                    help="TorchGauge's spread from each release's interleaved halves of its processes (rounds)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--python", action="append", default=[], help="RELEASE=PATH (default: the bootstrap's venv)")
    ap.add_argument("--extra-site", action="append", default=[])
    ap.add_argument("--min-spread", type=float, default=1.02)
    ap.add_argument("--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    if len(a.releases) < 2 or a.rounds < 2:
        ap.error("give at least two releases and two rounds (the rounds measure Python's spread)")
    pythons = {v: os.path.join(CACHE, f"venv-release-{v}", "bin", "python") for v in a.releases}
    for item in a.python:
        v, _, path = item.partition("=")
        pythons[v] = path
    for v, p in pythons.items():
        if not os.access(p, os.X_OK):
            raise SystemExit(f"no Python for torch {v}: {p} (./gauge build --torch {v} makes it, or --python {v}=PATH)")

    tg = {v: load_runs(a.results, v) for v in a.releases}
    keys = sorted(k for k in set.intersection(*(set(t) for t in tg.values())) if has_reference(k))
    if not a.spread and not a.spread_from_processes:
        ap.error("give TorchGauge's spread: --spread BUILD=OTHER or --spread-from-processes")
    tg_spread = {}
    for item in a.spread:
        build, _, other = item.partition("=")
        one, two = load_runs(a.results, build), load_runs(a.results, other)
        for k in keys:
            if k in one and k in two:
                m1, m2 = statistics.median(one[k]), statistics.median(two[k])
                tg_spread[k] = max(tg_spread.get(k, 1.0), max(m1, m2) / min(m1, m2))
    if a.spread_from_processes:
        for k in keys:
            halves = [halves_spread(tg[v][k]) for v in a.releases]
            if None in halves:
                raise SystemExit(f"--spread-from-processes: {k[0]} {k[1]} was collected in one process under some release")
            tg_spread[k] = max(tg_spread.get(k, 1.0), max(halves))

    py = {v: {k: [] for k in keys} for v in a.releases}
    total = len(keys) * len(a.releases) * a.rounds
    done = 0
    for k in keys:
        for r in range(a.rounds):
            # A B C, then C B A: a drift within the rounds lands on every release.
            for v in (a.releases if r % 2 == 0 else a.releases[::-1]):
                py[v][k].append(time_in_python(pythons[v], k, a))
                done += 1
                print(f"[release_check] {done}/{total} {k[0]} {k[1]} {k[4]} torch {v} round {r + 1}: "
                      f"{py[v][k][-1]:.2f} ms", file=sys.stderr)

    rows = compare(tg, py, keys, a.releases, tg_spread, a.min_spread)
    text = markdown(rows)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "python_medians": {v: {"|".join(map(str, k)): m for k, m in d.items()}
                                                         for v, d in py.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
