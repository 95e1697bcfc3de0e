#!/usr/bin/env python3
"""Writes the fixture results tree for the compare golden test (deterministic, no RNG).

Two builds of one CPU platform with one change of every kind:
resnet50 eval +12% time and +20% RSS (regression), hf_bert train -15% (improvement),
alexnet unchanged, squeezenet1_1 over the threshold but noisy, dlrm ok -> error,
vgg16 disappears, mobilenet_v3_large appears, tiny_probe has 3 samples (too few to tell).
"""
import json, math, os, statistics, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
PLATFORM = "cpu-x86_64-2c"
BASE, NEW = "2.11.0-20261121", "2.11.0-20261122"

def manifest(build, started, torch):
    return {"schema_version": 1, "kind": "torchgauge.manifest", "build_id": build, "platform_id": PLATFORM,
            "collector": {"version": "0.1.0", "git_sha": "abc123def456"},
            "libtorch": {"version": torch, "cuda_runtime": None, "cudnn": None, "cuda_available": False},
            "device": {"vendor": "CPU", "name": "AMD EPYC 9454", "driver": None},
            "cpu": {"model": "AMD EPYC 9454 48-Core Processor", "logical_cores": 2},
            "host": {"hostname": "bench-01", "os": "Ubuntu 24.04"},
            "started_at": started, "finished_at": started, "suite": {"name": "smoke"}}

def samples(median, cov, n=10, phase=0.0):
    return [round(median * (1 + cov * math.sin(1.7 * i + phase)), 6) for i in range(n)]

def run(build, model, mode, precision, s, status="ok", reason=None, rss=None, domain="vision", batch=8):
    r = {"schema_version": 1, "kind": "torchgauge.run", "build_id": build, "platform_id": PLATFORM,
         "model": {"id": model, "paper_name": model, "domain": domain, "task": "t", "reference": "r"},
         "mode": mode, "backend": "eager", "precision": precision, "batch_size": batch, "device": "cpu",
         "status": status, "reason": reason, "started_at": "2026-11-22T01:00:00Z"}
    if s is not None:
        q = statistics.quantiles(s, n=4, method="inclusive")
        mean = statistics.fmean(s)
        r["timing"] = {"samples_ms": s, "median_ms": statistics.median(s), "min_ms": min(s), "max_ms": max(s),
                       "mean_ms": mean, "stdev_ms": statistics.stdev(s) if len(s) > 1 else 0,
                       "iqr_ms": q[2] - q[0], "cov": (statistics.stdev(s) / mean) if len(s) > 1 else 0,
                       "warmup_iterations": 3, "repetitions": len(s), "clock": "steady_clock",
                       "samples_per_step": batch, "throughput_per_s": batch * 1000 / statistics.median(s)}
    if rss is not None:
        r["memory"] = {"cpu_peak_rss_bytes": rss}
    return r

def write(build, runs):
    d = os.path.join(ROOT, build, PLATFORM)
    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
    for r in runs:
        name = f'{r["model"]["id"]}.{r["mode"]}.{r["backend"]}.{r["precision"]}.json'
        with open(os.path.join(d, "runs", name), "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")

MiB = 1 << 20
base = [run(BASE, "resnet50", "eval", "fp32", samples(100, 0.02), rss=200 * MiB),
        run(BASE, "hf_bert", "train", "fp32", samples(300, 0.02, phase=1), rss=900 * MiB, domain="nlp"),
        run(BASE, "alexnet", "eval", "fp32", samples(20, 0.02, phase=2), rss=150 * MiB),
        run(BASE, "squeezenet1_1", "eval", "default", samples(10, 0.25, phase=3)),
        run(BASE, "dlrm", "train", "fp32", samples(50, 0.02), domain="recommendation"),
        run(BASE, "vgg16", "eval", "fp32", samples(400, 0.02)),
        run(BASE, "tiny_probe", "eval", "fp32", samples(1, 0.01, n=3), domain="test")]
new = [run(NEW, "resnet50", "eval", "fp32", samples(112, 0.02, phase=0.5), rss=240 * MiB),
       run(NEW, "hf_bert", "train", "fp32", samples(255, 0.02, phase=1.5), rss=900 * MiB, domain="nlp"),
       run(NEW, "alexnet", "eval", "fp32", samples(20.2, 0.02, phase=2.5), rss=151 * MiB),
       run(NEW, "squeezenet1_1", "eval", "default", samples(11, 0.25, phase=3.3)),
       run(NEW, "dlrm", "train", "fp32", None, status="error",
           reason="RuntimeError: index | out of range <script>alert(1)</script>\nat embedding_bag", domain="recommendation"),
       run(NEW, "mobilenet_v3_large", "eval", "fp32", samples(15, 0.02)),
       run(NEW, "tiny_probe", "eval", "fp32", samples(2, 0.01, n=3), domain="test")]
write(BASE, base)
write(NEW, new)
for build, started, torch in [(BASE, "2026-11-21T01:00:00Z", "2.11.0.dev20261121+cpu"),
                              (NEW, "2026-11-22T01:00:00Z", "2.11.0.dev20261122+cpu")]:
    with open(os.path.join(ROOT, build, PLATFORM, "manifest.json"), "w") as f:
        json.dump(manifest(build, started, torch), f, indent=1)
        f.write("\n")
