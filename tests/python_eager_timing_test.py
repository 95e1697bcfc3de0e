#!/usr/bin/env python3
"""tools/python_eager_timing.py, the outside timer of the release checks,
runs each kind of model it builds: torchvision classifiers (eval, and a
train step with squeezenet1_1's class-index targets) and transformers
models (an encoder's traced forward, the encoder-decoder's eval); it prints the JSON release_check.py reads, and it refuses
what it does not time (a traced encoder-decoder) with the reason.
Usage: python_eager_timing_test.py PYTHON TOOLS_DIR (PYTHON: with torch,
torchvision and transformers)."""
import json
import math
import os
import subprocess
import sys

python, tools = sys.argv[1], sys.argv[2]
tool = os.path.join(tools, "python_eager_timing.py")
failures = []


def run(model, mode, backend="eager"):
    cmd = [python, tool, "--model", model, "--mode", mode, "--batch", "1", "--threads", "1", "--backend", backend,
           "--warmup", "0", "--repeat", "2"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


for model, mode, backend in [("resnet18", "eval", "eager"), ("squeezenet1_1", "train", "eager"),
                             ("hf_distil_bert", "eval", "torchscript"), ("hf_t5", "eval", "eager")]:
    what = f"{model} {mode} {backend}"
    rc, out, err = run(model, mode, backend)
    if rc != 0:
        failures.append(f"{what}: exit {rc}: {err.strip().splitlines()[-1:] if err.strip() else ''}")
        continue
    j = json.loads(out)
    want = {"model": model, "mode": mode, "batch": 1, "threads": 1, "backend": backend}
    for k, v in want.items():
        if j.get(k) != v:
            failures.append(f"{what}: {k} is {j.get(k)!r}, want {v!r}")
    s = j.get("samples_ms", [])
    if len(s) != 2 or not all(x > 0 for x in s) or not math.isclose(j.get("median_ms", 0), (s[0] + s[1]) / 2):
        failures.append(f"{what}: samples {s}, median {j.get('median_ms')}")
    if not j.get("torch"):
        failures.append(f"{what}: no torch version")
    print(f"ok   {what}: {s[0]:.1f}, {s[1]:.1f} ms")

rc, out, err = run("hf_t5", "eval", "torchscript")
if rc == 0 or "torchscript eval of hf_t5 is not timed here" not in err:
    failures.append(f"a traced hf_t5 was not refused with its reason: exit {rc}, {err.strip()[-200:]}")
rc, out, err = run("dlrm", "eval")
if rc == 0 or "no Python reference for model 'dlrm'" not in err:
    failures.append(f"a model without a reference was not refused by name: exit {rc}, {err.strip()[-200:]}")
for f in failures:
    print("FAIL", f)
print("python_eager_timing_test:", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
