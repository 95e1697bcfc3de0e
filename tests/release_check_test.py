#!/usr/bin/env python3
"""tools/release_check.py's rules, without torch: a run's value is the
median of its per-process medians, a tool's spread is the ratio between the
interleaved halves of its processes, a change counts beyond that spread (at
least --min-spread), and the two tools disagree only where one sees a change
and the other's ratio goes the other way. Also: which runs the Python timer
covers (python_eager_timing.supports), and that a history collected on
every core is refused."""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import release_check as rc  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


check(rc.halves_spread([10, 20, 10, 20]) == 2.0, "halves: 1st/3rd against 2nd/4th")
check(rc.halves_spread([10]) is None, "halves of one process")
check(rc.direction(1.2, 1.1) == "slower" and rc.direction(0.8, 1.1) == "faster" and rc.direction(1.05, 1.1) == "same",
      "direction against the spread")

A, B = "2.14.1", "2.15.0"
slow_both = ("resnet18", "eval", 1, 1, "eager")
opposite = ("hf_bert", "train", 1, 1, "eager")
quiet = ("alexnet", "eval", 2, 1, "eager")
tg = {A: {slow_both: [10, 11, 10, 11], opposite: [10, 10, 10, 10], quiet: [10, 10]},
      B: {slow_both: [15, 16, 15, 16], opposite: [15, 15, 15, 15], quiet: [10.1, 10.1]}}
py = {A: {slow_both: [20, 20], opposite: [20, 20], quiet: [20, 21]},
      B: {slow_both: [20.2, 20.2], opposite: [18, 18], quiet: [20.0, 20.0]}}
rows = {r["model"]: r for r in rc.compare(tg, py, [slow_both, opposite, quiet], [A, B],
                                          {slow_both: 1.1, opposite: 1.1, quiet: 1.1}, 1.02)}
r = rows["resnet18"]
check(abs(r["tg_ratio"] - 15.5 / 10.5) < 1e-9, f"TorchGauge ratio of the process medians' medians: {r['tg_ratio']}")
check(r["tg_verdict"] == "slower" and r["py_verdict"] == "same" and r["agree"],
      "a change one tool sees and the other's ratio shares in direction (inside its spread) agrees")
r = rows["hf_bert"]
check(r["tg_verdict"] == "slower" and r["py_verdict"] == "faster" and not r["agree"], "opposite changes disagree")
r = rows["alexnet"]
check(abs(r["py_spread"] - 21 / 20) < 1e-9 and r["py_verdict"] == "same" and r["agree"],
      f"both inside their spreads agree; Python's spread from its rounds: {r['py_spread']}")
text = rc.markdown(list(rows.values()))
check("3 comparisons, 1 where one tool saw a change" in text and "| **no** |" in text, "the table counts disagreements")

check(rc.TIMING.supports("resnet18", "train", "torchscript"), "torchvision models in every backend")
check(rc.TIMING.supports("hf_bert", "eval", "torchscript") and not rc.TIMING.supports("hf_bert", "train", "torchscript"),
      "a traced transformers forward in eval only")
check(not rc.TIMING.supports("hf_t5", "eval", "torchscript"), "no traced encoder-decoder")
check(not rc.TIMING.supports("dlrm", "eval", "eager"), "no reference, no Python timing")

with tempfile.TemporaryDirectory() as d:
    runs = os.path.join(d, A, "cpu-x86_64-2c-1t", "runs")
    os.makedirs(runs)

    def write(name, threads, status="ok"):
        with open(os.path.join(runs, name), "w", encoding="utf-8") as f:
            json.dump({"status": status, "backend": "eager", "precision": "default", "mode": "eval", "batch_size": 2,
                       "model": {"id": name.split(".")[0]}, "settings": {"threads": threads},
                       "timing": {"median_ms": 5.0, "process_medians_ms": [4.0, 6.0]}}, f)

    write("alexnet.eval.eager.default.json", 1)
    write("vgg16.eval.eager.default.json", 1, status="failed")
    got = rc.load_runs(d, A)
    check(got == {("alexnet", "eval", 2, 1, "eager"): [4.0, 6.0]}, f"ok runs keyed with their process medians: {got}")
    write("resnet18.eval.eager.default.json", 0)
    try:
        rc.load_runs(d, A)
        failures.append("a run on every core (threads 0) was accepted")
    except SystemExit as e:
        check("settings.threads 0" in str(e) and "resnet18" in str(e), f"the refusal names the file: {e}")

print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
