#!/usr/bin/env python3
"""Checks a peak-RSS change between torch releases outside TorchGauge, and
names the libraries it comes from.

For each release, builds tools/libtorch_rss.cc (a small LibTorch program,
linked as the collector is) against that release's torch, and runs it and
Python's own torch process (the same net and steps) in alternating order,
round by round (A B C, C B A, ...). Each process reports its peak RSS
(VmHWM) and the resident size of each mapped file (/proc/self/smaps).
Prints a Markdown table per process kind: the peak per release (median of
the rounds) and every mapping whose resident size moved by --min-mib or
more between two releases (or named by --show); then, for each library the
C++ process mapped under some releases only, which of that release's wheel
libraries list it as NEEDED (readelf -d).

Usage:
  libtorch_rss.py --releases 2.13.0 2.14.1 2.15.0 [--python V=PATH ...] \
      [--rounds 2] [--min-mib 1] [--show LIB ...] [--work DIR] [--json out.json]

A release's Python defaults to the bootstrap's venv of `--torch V`
(~/.cache/torchgauge/venv-release-V); the pin's is another venv, so name it
with --python. Each build is kept in --work (default
~/.cache/torchgauge/libtorch-rss) and reused while the source is unchanged.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "libtorch_rss.cc")
CACHE = os.environ.get("TORCHGAUGE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "torchgauge"))
KINDS = ("C++", "Python")


def inside_python():
    """Python's side: the net of libtorch_rss.cc, the same steps, the same report."""
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).eval()
    x = torch.randn(2, 3, 64, 64)
    checksum = 0.0
    with torch.inference_mode():
        for _ in range(3):
            checksum += net(x).sum().item()
    files, name = {}, "[anon]"
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == "Rss:":
                files[name] = files.get(name, 0) + int(fields[1])
            elif fields and "-" in fields[0] and not fields[0].endswith(":"):
                path = line.split(None, 5)[5].strip() if len(fields) > 5 else ""
                base = path.rsplit("/", 1)[-1]
                so = base.find(".so")  # as libtorch_rss.cc: libfoo.so.13 is libfoo.so
                name = (base[: so + 3] if so >= 0 else base) if path else "[anon]"
    out = {"torch": torch.__version__, "checksum": checksum, "files_kib": files}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmHWM", "RssAnon", "RssFile"):
                out[f"{key}_kib"] = int(line.split()[1])
    print(json.dumps(out))


def torch_dir(python):
    out = subprocess.run([python, "-c", "import os, torch; print(os.path.dirname(torch.__file__))"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"libtorch_rss: {python} has no torch: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout.strip()


def build(version, python, work):
    """The C++ program against this release's torch (rebuilt when the source changes)."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    exe = os.path.join(work, f"libtorch_rss-{version}-{digest}")
    if os.path.exists(exe):
        return exe
    tdir = torch_dir(python)
    libs = [os.path.join(tdir, "lib")] + sorted(glob.glob(os.path.join(os.path.dirname(tdir), "nvidia", "*", "lib")))
    cmd = ["g++", "-std=c++20", "-O2", SOURCE, "-o", exe + ".tmp",
           "-I" + os.path.join(tdir, "include"), "-I" + os.path.join(tdir, "include", "torch", "csrc", "api", "include"),
           "-L" + os.path.join(tdir, "lib"), "-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10", "-Wl,--as-needed"]
    for d in libs:  # the wheel's own CUDA libraries, not the system toolkit's (as the collector links)
        cmd += ["-Wl,-rpath-link," + d, "-Wl,-rpath," + d]
    print(f"[libtorch_rss] building against torch {version} ({tdir})", file=sys.stderr)
    os.makedirs(work, exist_ok=True)
    subprocess.run(cmd, check=True)
    os.replace(exe + ".tmp", exe)
    return exe


def needed_by(python):
    """{library: [files of this torch's wheel stack that list it as NEEDED]} (readelf -d)."""
    tdir = torch_dir(python)
    files = glob.glob(os.path.join(tdir, "lib", "*.so*")) + glob.glob(os.path.join(os.path.dirname(tdir), "nvidia", "*", "lib", "*.so*"))
    out = {}
    for path in sorted(files):
        dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
        for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dyn):
            so = lib.find(".so")
            out.setdefault(lib[: so + 3] if so >= 0 else lib, []).append(os.path.basename(path))
    return out


def measure(kind, version, python, exe):
    cmd = [exe] if kind == "C++" else [python, os.path.abspath(__file__), "--inside"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"libtorch_rss: the {kind} process of torch {version} failed: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(kind, releases, runs, min_mib, show):
    """Markdown: the peak per release and every mapping that moved by min_mib or more."""
    mib = lambda kib: kib / 1024.0  # noqa: E731
    med = {v: {k: statistics.median(r[k] for r in runs[v]) for k in ("VmHWM_kib", "RssAnon_kib", "RssFile_kib")}
           for v in releases}
    names = sorted({n for v in releases for r in runs[v] for n in r["files_kib"]})
    files = {v: {n: statistics.median(r["files_kib"].get(n, 0) for r in runs[v]) for n in names} for v in releases}
    lines = [f"### {kind} process", "", "| | " + " | ".join(releases) + " |", "|---|" + "--:|" * len(releases)]
    for key, label in (("VmHWM_kib", "peak RSS (MiB)"), ("RssAnon_kib", "anonymous, at the end"), ("RssFile_kib", "file-backed, at the end")):
        lines.append(f"| {label} | " + " | ".join(f"{mib(med[v][key]):.1f}" for v in releases) + " |")
    for n in names:
        values = [files[v][n] for v in releases]
        if max(values) - min(values) >= min_mib * 1024 or n in show:
            lines.append(f"| `{n}` | " + " | ".join(f"{mib(x):.1f}" for x in values) + " |")
    spread = max(max(r["VmHWM_kib"] for r in runs[v]) - min(r["VmHWM_kib"] for r in runs[v]) for v in releases)
    lines += ["", f"Largest spread of the peak between rounds of one release: {mib(spread):.1f} MiB.", ""]
    return "\n".join(lines)


def moved_libraries(releases, runs):
    """Libraries resident in some releases' processes and not in others'."""
    mapped = {v: {n for r in runs[v] for n, kib in r["files_kib"].items() if kib > 0} for v in releases}
    return sorted(n for n in set.union(*mapped.values()) if n.endswith(".so") and not all(n in m for m in mapped.values()))


def why_loaded(releases, runs, moved, needs):
    """Markdown: for each moved library, its resident size and who needs it, per release."""
    if not moved:
        return "Every release's C++ process mapped the same libraries.\n"
    lines = ["### Libraries the C++ process mapped under some releases only", "",
             "| library | " + " | ".join(releases) + " |", "|---|" + "---|" * len(releases)]
    for n in moved:
        cells = []
        for v in releases:
            kib = statistics.median(r["files_kib"].get(n, 0) for r in runs[v])
            who = ", ".join(needs[v].get(n, [])) or "nothing in the wheels"
            cells.append((f"{kib / 1024:.1f} MiB" if kib else "not resident") + f"; needed by {who}")
        lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    if sys.argv[1:] == ["--inside"]:
        inside_python()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", nargs="+", required=True)
    ap.add_argument("--python", action="append", default=[], help="RELEASE=PATH (default: the bootstrap's venv)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--min-mib", type=float, default=1.0)
    ap.add_argument("--work", default=os.path.join(CACHE, "libtorch-rss"))
    ap.add_argument("--show", action="append", default=[], help="a mapping to list even where it did not move")
    ap.add_argument("--json")
    a = ap.parse_args()
    pythons = {v: os.path.join(CACHE, f"venv-release-{v}", "bin", "python") for v in a.releases}
    for spec in a.python:
        version, _, path = spec.partition("=")
        if version not in pythons:
            sys.exit(f"libtorch_rss: --python {spec}: {version} is not in --releases")
        pythons[version] = path
    for v, py in pythons.items():
        if not os.path.exists(py):
            sys.exit(f"libtorch_rss: no Python for torch {v} at {py} (./gauge collector --torch {v} makes it, or pass --python {v}=PATH)")
    exes = {v: build(v, pythons[v], a.work) for v in a.releases}
    runs = {k: {v: [] for v in a.releases} for k in KINDS}
    for r in range(a.rounds):
        order = a.releases if r % 2 == 0 else list(reversed(a.releases))
        for v in order:
            for kind in KINDS:
                runs[kind][v].append(measure(kind, v, pythons[v], exes[v]))
        print(f"[libtorch_rss] round {r + 1} of {a.rounds} done", file=sys.stderr)
    print("\n".join(table(k, a.releases, runs[k], a.min_mib, a.show) for k in KINDS))
    moved = moved_libraries(a.releases, runs["C++"])
    needs = {v: needed_by(pythons[v]) for v in a.releases} if moved else {}
    print(why_loaded(a.releases, runs["C++"], moved, needs))
    if a.json:
        with open(a.json + ".tmp", "w", encoding="utf-8") as f:
            json.dump(runs, f, indent=1)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
