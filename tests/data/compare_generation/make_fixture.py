#!/usr/bin/env python3
"""Writes the results tree of the generation comparison test (deterministic, no RNG).

Three builds of one CPU platform, each with llama_3_2_1b's eval run carrying a generation
(5 generations of a 32-token prompt and 16 decode steps, as the smoke suite times it):
  base    the reference;
  rerun   the same build collected again: the same figures, the samples in another phase;
  slow    TPOT 20 % slower (every decode step), TTFT and the step time unchanged.
`compare --new rerun --base base` must flag nothing; `--new slow --base base` must flag TPOT
(and tokens per second, which the slower decode steps lower) as regressions.
"""
import json, math, os, statistics

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
PLATFORM = "cpu-x86_64-2c"
BUILDS = [("2.14.1-20261127", "2026-11-27T01:00:00Z", 0.0, 1.0),
          ("2.14.1-20261128", "2026-11-28T01:00:00Z", 0.9, 1.0),
          ("2.14.1-20261129", "2026-11-29T01:00:00Z", 0.4, 1.2)]
PROMPT, STEPS, GENERATIONS, BATCH = 32, 16, 5, 1


def manifest(build, started):
    return {"schema_version": 1, "kind": "torchgauge.manifest", "build_id": build, "platform_id": PLATFORM,
            "collector": {"version": "0.1.0", "git_sha": "abc123def456"},
            "libtorch": {"version": "2.14.1+cpu", "cuda_runtime": None, "cudnn": None, "cuda_available": False},
            "device": {"vendor": "CPU", "name": "AMD EPYC 9454", "driver": None},
            "cpu": {"model": "AMD EPYC 9454 48-Core Processor", "logical_cores": 2},
            "host": {"hostname": "bench-01", "os": "Debian 12"},
            "started_at": started, "finished_at": started, "suite": {"name": "smoke"}}


def samples(median, cov, n, phase):
    return [round(median * (1 + cov * math.sin(1.7 * i + phase)), 6) for i in range(n)]


def quantile(values, q):  # linear interpolation, as core::Quantile
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def generation(phase, tpot_scale):
    ttft = samples(6.0, 0.02, GENERATIONS, phase)
    tpot = samples(1.5 * tpot_scale, 0.03, GENERATIONS * STEPS, phase + 0.3)
    rates = [BATCH * (STEPS + 1) / ((ttft[g] + sum(tpot[g * STEPS:(g + 1) * STEPS])) / 1e3) for g in range(GENERATIONS)]
    return {"prompt_tokens": PROMPT, "decode_steps": STEPS, "output_tokens": STEPS + 1, "batch_size": BATCH,
            "warmup_generations": 1, "generations": GENERATIONS, "ttft_samples_ms": ttft, "tpot_samples_ms": tpot,
            "ttft_ms": quantile(ttft, 0.5), "tpot_median_ms": quantile(tpot, 0.5), "tpot_p90_ms": quantile(tpot, 0.9),
            "tokens_per_s": quantile(rates, 0.5), "kv_cache_bytes": 2 * 2 * 2 * (PROMPT + STEPS + 1) * 32 * 4}


def run(build, started, phase, tpot_scale):
    s = samples(8.0, 0.02, 3, phase)
    q = statistics.quantiles(s, n=4, method="inclusive")
    mean = statistics.fmean(s)
    return {"schema_version": 1, "kind": "torchgauge.run", "build_id": build, "platform_id": PLATFORM,
            "model": {"id": "llama_3_2_1b", "paper_name": "(not in the paper's list)", "domain": "nlp",
                      "task": "language modeling", "reference": "transformers.LlamaForCausalLM"},
            "mode": "eval", "backend": "eager", "precision": "default", "batch_size": BATCH, "device": "cpu",
            "status": "ok", "reason": None, "started_at": started,
            "settings": {"warmup": 1, "repeat": 3, "seed": 0, "timeout_s": 300, "profile_iterations": 1,
                         "smoke": True, "processes": 1, "threads": 0, "pairing": "interleaved",
                         "prompt_tokens": PROMPT, "decode_steps": STEPS, "generations": GENERATIONS},
            "timing": {"samples_ms": s, "median_ms": statistics.median(s), "min_ms": min(s), "max_ms": max(s),
                       "mean_ms": mean, "stdev_ms": statistics.stdev(s), "iqr_ms": q[2] - q[0],
                       "cov": statistics.stdev(s) / mean, "warmup_iterations": 1, "repetitions": len(s),
                       "clock": "steady_clock", "samples_per_step": BATCH,
                       "throughput_per_s": BATCH * 1000 / statistics.median(s)},
            "generation": generation(phase, tpot_scale)}


for build, started, phase, tpot_scale in BUILDS:
    d = os.path.join(ROOT, build, PLATFORM)
    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
    with open(os.path.join(d, "runs", "llama_3_2_1b.eval.eager.default.json"), "w") as f:
        json.dump(run(build, started, phase, tpot_scale), f, indent=1)
        f.write("\n")
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest(build, started), f, indent=1)
        f.write("\n")
