"""An independent reference for `torchgauge-collect probe` on the CPU: NumPy's
matmul and a NumPy triad at the same sizes, best of k after warm-up, printed
as GFLOP/s and GB/s for a side-by-side check (issue 13 asks that LibTorch's
attainable matmul be at least 80 % of NumPy's).

NumPy cannot fuse a = b + s*c, so its triad is two passes over memory
(a = s*c, then a += b): five array traversals where the fused kernel makes
three. Both figures are printed: the STREAM-counted one (3 arrays, as the
probe counts) and the traffic NumPy actually moved (5 arrays).

Usage: probe_reference.py [--n 2048] [--elements N] [--repeats 5] [--warmup 2]
(--elements defaults to 4x the last-level cache, as the probe's does.)"""
import argparse
import glob
import os
import time

import numpy as np


def last_level_cache_bytes():
    best_level, best = -1, None
    for index in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            kind = open(os.path.join(index, "type")).read().strip()
            level = int(open(os.path.join(index, "level")).read().strip())
            size = open(os.path.join(index, "size")).read().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(size[-1], 1)
        value = int(size.rstrip("KMG")) * scale
        if level > best_level:
            best_level, best = level, value
    return best


def best_seconds(fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        took = time.perf_counter() - t0
        best = took if best is None else min(best, took)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--elements", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.n, args.n), dtype=np.float32)
    b = rng.standard_normal((args.n, args.n), dtype=np.float32)
    c = np.empty_like(a)
    s = best_seconds(lambda: np.matmul(a, b, out=c), args.warmup, args.repeats)
    gflops = 2.0 * args.n**3 / s / 1e9
    print(f"numpy {np.__version__} matmul fp32 n={args.n}: {gflops:.1f} GFLOP/s (best of {args.repeats}: {s * 1e3:.3f} ms)")

    llc = last_level_cache_bytes()
    elements = args.elements or 4 * (llc or 32 * 1024**2) // 4
    x = np.empty(elements, dtype=np.float32)
    y = rng.random(elements, dtype=np.float32)
    z = rng.random(elements, dtype=np.float32)

    def triad():
        np.multiply(z, 3.0, out=x)
        np.add(x, y, out=x)

    s = best_seconds(triad, args.warmup, args.repeats)
    stream_bytes = 3 * elements * 4
    print(f"numpy triad {elements} floats/array (LLC {llc} bytes): {stream_bytes / s / 1e9:.1f} GB/s STREAM-counted "
          f"(3 arrays), {5 * elements * 4 / s / 1e9:.1f} GB/s actually moved (2 passes, 5 arrays) "
          f"(best of {args.repeats}: {s * 1e3:.3f} ms)")


if __name__ == "__main__":
    main()
