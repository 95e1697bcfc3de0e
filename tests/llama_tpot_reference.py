"""The independent check of TorchGauge's generation metrics (tests/llama_tpot_bench.sh):
TPOT and TTFT of transformers' LlamaForCausalLM, timed by a plain Python loop over its
key-value cache, at the configuration and lengths the collector used.

The model is tests/parity/ref_llama.py's config_for(smoke): the published Llama-3.2-1B
configuration, or the smoke suite's reduced one, with random weights (N(0, 0.02), as the
C++ model draws them; a step's time does not depend on the values) and SDPA attention, as
the C++ model computes it. The loop is what TorchGauge's collector does
(collector/generation.cc): one untimed generation, then GENERATIONS timed ones, each a
prefill of a seeded random prompt (only the last position's logits, logits_to_keep=1) and
DECODE_STEPS greedy single-token steps over the cache, every step timed on its own with
time.perf_counter, under inference mode, at THREADS intra-op threads.

Usage: llama_tpot_reference.py --threads T --prompt-tokens P --decode-steps D
       --generations G [--smoke] [--steady-heap]
Prints one JSON line: ttft_ms (median), tpot_median_ms, tpot_p90_ms, samples.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity"))
from ref_llama import config_for  # noqa: E402
from transformers import DynamicCache, LlamaForCausalLM  # noqa: E402


def quantile(values, q):  # linear interpolation, as core::Quantile
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--prompt-tokens", type=int, required=True)
    ap.add_argument("--decode-steps", type=int, required=True)
    ap.add_argument("--generations", type=int, required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--steady-heap", action="store_true",
                    help="glibc's malloc thresholds as the collector's worker sets them (collector::SteadyHeap)")
    a = ap.parse_args()
    if a.steady_heap:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 1024 * 1024)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 2**31 - 1)  # M_TRIM_THRESHOLD
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    config = config_for(smoke=a.smoke)
    config._attn_implementation = "sdpa"
    model = LlamaForCausalLM(config).eval()
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, config.vocab_size, (1, a.prompt_tokens), generator=gen)
    ttft, tpot = [], []
    with torch.inference_mode():
        for g in range(1 + a.generations):
            t0 = time.perf_counter()
            out = model(input_ids=prompt, past_key_values=DynamicCache(), use_cache=True, logits_to_keep=1)
            token = out.logits[:, -1:].argmax(-1)
            first = (time.perf_counter() - t0) * 1e3
            cache, steps = out.past_key_values, []
            for _ in range(a.decode_steps):
                t0 = time.perf_counter()
                out = model(input_ids=token, past_key_values=cache, use_cache=True)
                token = out.logits[:, -1:].argmax(-1)
                steps.append((time.perf_counter() - t0) * 1e3)
                cache = out.past_key_values
            if g == 0:
                continue  # the untimed generation
            ttft.append(first)
            tpot.extend(steps)
    print(json.dumps({"ttft_ms": statistics.median(ttft), "tpot_median_ms": quantile(tpot, 0.5),
                      "tpot_p90_ms": quantile(tpot, 0.9), "samples": len(tpot),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
