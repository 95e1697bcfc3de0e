#!/usr/bin/env python3
"""Writes tests/data/shard/full_plan.tsv: the full suite's run plan on one
device, in the collector's plan order, with each run's measured duration_s
from a collected build of that plan (the --cost-from input that core/shard's
balance tests partition).

    shard_plan_fixture.py COLLECTOR PLATFORM_DIR [--device cpu] > full_plan.tsv

COLLECTOR is a built torchgauge-collect: `run --suite full --dry-run` gives
the plan and its order, `list --json` which modes each model supports.
PLATFORM_DIR is a collected (or merged) build of that plan:
<results>/<build>/<platform>, with runs/*.json. A planned run the build lacks
is an error, and so is a run the plan does not have: the fixture is one
build of one plan, or nothing.
"""
import argparse
import json
import pathlib
import subprocess
import sys


def plan_of(collector, device):
    out = subprocess.run([collector, "run", "--suite", "full", "--device", device, "--dry-run",
                          "--out", "/nonexistent-dry-run"],
                         check=True, capture_output=True, text=True).stdout
    plan = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[4].startswith("bs=") and fields[5].startswith("device="):
            plan.append(tuple(fields[:4]))
    if not plan:
        sys.exit(f"{collector} run --suite full --dry-run printed no plan")
    return plan


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("collector")
    p.add_argument("platform_dir", type=pathlib.Path)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()

    models = json.loads(subprocess.run([a.collector, "list", "--json"], check=True, capture_output=True,
                                       text=True).stdout)
    modes = {m["id"]: {"train": m["supports_train"], "eval": m["supports_eval"]} for m in models}
    manifest = json.loads((a.platform_dir / "manifest.json").read_text())

    runs = {}
    for path in sorted((a.platform_dir / "runs").glob("*.json")):
        r = json.loads(path.read_text())
        key = (r["model"]["id"], r["mode"], r["backend"], r["precision"])
        if r.get("duration_s") is None:
            sys.exit(f"{path}: field 'duration_s' is null: the fixture needs every run's duration")
        runs[key] = (r["duration_s"], r["status"])

    plan = plan_of(a.collector, a.device)
    missing = [k for k in plan if k not in runs]
    extra = sorted(set(runs) - set(plan))
    if missing or extra:
        sys.exit(f"{a.platform_dir}: the build is not the plan: {len(missing)} planned runs missing "
                 f"(first: {missing[:3]}), {len(extra)} runs not planned (first: {extra[:3]})")

    s = manifest.get("suite", {})
    host = manifest.get("host", {}).get("hostname", "?")
    print("# The full suite's run plan on device " + a.device + " (collector/suites/full.json), in the collector's")
    print("# plan order, with each run's measured duration_s from one collected build of that plan. Written by")
    print("# tools/shard_plan_fixture.py from `torchgauge-collect run --suite full --dry-run`, `list --json` (supported:")
    print("# the model has the mode) and the build " + manifest.get("build_id", "?") + "/" +
          manifest.get("platform_id", "?") + " on host " + host + ",")
    print(f"# collected {manifest.get('started_at', '?')} to {manifest.get('finished_at', '?')} with warmup "
          f"{s.get('warmup')}, repeat {s.get('repeat')}, profile_iterations {s.get('profile_iterations')}, "
          f"threads {s.get('threads')}.")
    print("# model\tmode\tbackend\tprecision\tsupported\tduration_s\tstatus")
    for key in plan:
        model, mode, backend, precision = key
        duration, status = runs[key]
        supported = 1 if modes.get(model, {}).get(mode) else 0
        print(f"{model}\t{mode}\t{backend}\t{precision}\t{supported}\t{duration:.3f}\t{status}")


if __name__ == "__main__":
    main()
