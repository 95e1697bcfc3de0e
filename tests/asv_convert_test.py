#!/usr/bin/env python3
"""tools/asv_convert.py end to end (ctest label integration): a small fixture tree from
torchgauge-gen-fixtures is converted, `asv publish` (asv 0.6.6) renders it, and asv's own output
is checked against the fixture files:
  - one benchmark per (model, mode, backend, precision), one machine per platform, one commit per
    build, the commits in build order with the builds' start dates;
  - every run's point in asv's per-machine graph equals its median step time in seconds, and every
    run that is not ok has no value (null or left out);
  - bad input is refused with the file named, and nothing is left at --out.

usage: asv_convert_test.py GEN_FIXTURES_EXE CONVERTER WORK_DIR
"""

import datetime
import glob
import json
import os
import shutil
import subprocess
import sys

BUILDS, MODELS, CONFIGS = 4, 6, 8


def check(cond, message):
    if not cond:
        print("FAIL:", message)
        sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("command failed:", cmd, "\n", r.stdout, r.stderr)
        sys.exit(1)
    return r


def fixture_runs(results):
    """{(platform, build): {benchmark: expected seconds or None}} and build starts."""
    runs, starts = {}, {}
    for mpath in glob.glob(os.path.join(results, "*", "*", "manifest.json")):
        m = json.load(open(mpath))
        b = m["build_id"]
        starts[b] = min(starts.get(b, m["started_at"]), m["started_at"])
        table = runs.setdefault((m["platform_id"], b), {})
        for rpath in glob.glob(os.path.join(os.path.dirname(mpath), "runs", "*.json")):
            r = json.load(open(rpath))
            name = f"{r['model']['id']}.{r['mode']}_{r['backend']}_{r['precision']}"
            table[name] = r["timing"]["median_ms"] / 1000.0 if r["status"] == "ok" else None
    return runs, starts


def graphs_by_machine(html):
    """{(machine, benchmark): {revision: value}} from asv's per-machine graph files."""
    out = {}
    for path in glob.glob(os.path.join(html, "graphs", "branch-main", "**", "*.json"), recursive=True):
        parts = os.path.relpath(path, html).split(os.sep)
        if parts[-1] == "summary.json":  # asv's summary list of that machine, not a benchmark
            continue
        machine = [p[len("machine-"):] for p in parts if p.startswith("machine-")]
        check(len(machine) == 1, f"no machine in graph path {path}")
        name = parts[-1][: -len(".json")]
        check((machine[0], name) not in out, f"two graphs for {machine[0]} {name}")
        out[(machine[0], name)] = {rev: v for rev, v in json.load(open(path))}
    return out


def check_publish(conv, runs, starts):
    index = json.load(open(os.path.join(conv, "html", "index.json")))
    names = {n for table in runs.values() for n in table}
    check(len(names) == MODELS * CONFIGS, f"fixture has {len(names)} benchmarks")
    check(set(index["benchmarks"]) == names, f"asv benchmarks {sorted(index['benchmarks'])[:5]}...")
    check(sorted(index["machines"]) == sorted({p for p, _ in runs}), f"asv machines {sorted(index['machines'])}")
    revs = index["revision_to_hash"]
    check(len(revs) == BUILDS, f"asv has {len(revs)} commits, expected {BUILDS}")
    order = sorted(starts, key=lambda b: (starts[b], b))
    for i, build in enumerate(order):
        t = datetime.datetime.fromisoformat(starts[build].replace("Z", "+00:00"))
        check(index["revision_to_date"][str(i)] == int(t.timestamp()) * 1000,
              f"commit {i} date {index['revision_to_date'][str(i)]} is not build {build}'s start {starts[build]}")
    rev_of_build = {b: i for i, b in enumerate(order)}
    graphs = graphs_by_machine(os.path.join(conv, "html"))
    checked = failed = 0
    for (platform, build), table in runs.items():
        rev = rev_of_build[build]
        for name, expected in table.items():
            got = graphs.get((platform, name), {}).get(rev)
            if expected is None:
                check(got is None, f"{platform} {build} {name}: failed run shows {got}")
                failed += 1
            else:
                check(got is not None and abs(got - expected) <= 1e-12 * expected,
                      f"{platform} {build} {name}: asv shows {got}, the fixture's median is {expected} s")
                checked += 1
    check(failed > 0, "the fixture has no failed run: the null path is not exercised")
    print(f"asv publish: {len(names)} benchmarks, {len(index['machines'])} machines, {len(revs)} commits; "
          f"{checked} values equal the fixture's medians, {failed} failed runs without a value")


def check_refusals(converter, work, results):
    bad = os.path.join(work, "bad")
    shutil.copytree(results, bad)
    victim = sorted(glob.glob(os.path.join(bad, "*", "*", "runs", "*.json")))[0]
    with open(victim, "w") as f:
        f.write("{not json")
    out = os.path.join(work, "bad_out")
    r = subprocess.run([sys.executable, converter, "--results", bad, "--out", out], capture_output=True, text=True)
    check(r.returncode == 2 and victim in r.stderr, f"corrupt run file: exit {r.returncode}, stderr {r.stderr!r}")
    check(not os.path.exists(out) and not glob.glob(out + ".partial-*"), "a failed conversion left output")
    with open(victim, "w") as f:
        json.dump({"schema_version": 1, "model": {"id": "m"}, "mode": "eval", "backend": "eager",
                   "precision": "fp32", "status": "ok", "timing": {}}, f)
    r = subprocess.run([sys.executable, converter, "--results", bad, "--out", out], capture_output=True, text=True)
    check(r.returncode == 2 and victim in r.stderr and "timing.median_ms" in r.stderr,
          f"run without a median: exit {r.returncode}, stderr {r.stderr!r}")
    print("refusals name the file and field:", r.stderr.strip())


def main():
    gen, converter, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    results, conv = os.path.join(work, "results"), os.path.join(work, "asv")
    run([gen, "--out", results, "--builds", str(BUILDS), "--models", str(MODELS), "--configs", str(CONFIGS)])
    run([sys.executable, converter, "--results", results, "--out", conv])
    run([sys.executable, "-m", "asv", "--config", os.path.join(conv, "asv.conf.json"), "publish"])
    runs, starts = fixture_runs(results)
    check_publish(conv, runs, starts)
    check_refusals(converter, work, results)
    shutil.rmtree(work)
    print("PASS")


if __name__ == "__main__":
    main()
