#!/usr/bin/env python3
"""Kernel times from an Nsight Compute CSV log (ncu --csv --log-file F
--metrics gpu__time_duration.sum), as tools/gpu_verify.sh writes it for
test_gpu_phases: the time per kernel name, most first, and the total of
every launch. Lines that are not CSV rows (ncu's ==PROF== messages) are
skipped; a duration in a unit this script does not know is an error, never
a guess."""
import argparse
import collections
import csv
import sys

METRIC = "gpu__time_duration.sum"
TO_MS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3}


def kernel_times(lines):
    """(ms per kernel name, launches) from the log's lines."""
    rows = csv.DictReader(line for line in lines if line.startswith('"'))
    by = collections.defaultdict(float)
    launches = 0
    for r in rows:
        if r.get("Metric Name") != METRIC:
            continue
        unit = r["Metric Unit"]
        if unit not in TO_MS:
            raise ValueError(f"kernel {r['Kernel Name']!r}: unknown duration unit {unit!r}")
        by[r["Kernel Name"]] += float(r["Metric Value"].replace(",", "")) * TO_MS[unit]
        launches += 1
    return dict(by), launches


def report(by, launches, width=70):
    lines = [f"{ms:10.3f} ms  {name[:width]}" for name, ms in sorted(by.items(), key=lambda kv: -kv[1])]
    lines.append(f"{sum(by.values()):10.3f} ms  total of {launches} kernel launches")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("csv", help="ncu's --log-file written with --csv")
    a = p.parse_args()
    try:
        with open(a.csv, encoding="utf-8", errors="replace") as f:
            by, launches = kernel_times(f)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"ncu_kernels: {a.csv}: {e}")
    if not launches:
        sys.exit(f"ncu_kernels: {a.csv}: no {METRIC} rows")
    print(report(by, launches))


if __name__ == "__main__":
    main()
