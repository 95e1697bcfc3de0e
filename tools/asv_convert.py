#!/usr/bin/env python3
"""Convert a TorchGauge results tree into an airspeed velocity (asv) project.

Input layout (core/contract/layout.h):
    <results>/<build-id>/<platform-id>/manifest.json
    <results>/<build-id>/<platform-id>/runs/<model>.<mode>.<backend>.<precision>.json

Output (what `asv publish` 0.6.6 reads; `asv --config <out>/asv.conf.json publish`):
    <out>/asv.conf.json          repo "repo.git", branch "main", results "results", html "html"
    <out>/repo.git/              a bare git repository, one empty commit per build
    <out>/results/benchmarks.json
    <out>/results/<platform-id>/machine.json
    <out>/results/<platform-id>/<commit[:8]>-torchgauge.json

Mapping:
  - one asv benchmark per (model, configuration): "<model>.<mode>_<backend>_<precision>". The run
    file name already makes (model, mode, backend, precision) unique per platform and build, so the
    batch size is not part of the name; it is recorded in the benchmark's description when it is the
    same everywhere, and listed otherwise.
  - one asv machine per platform id;
  - one commit per build. `asv publish` asks git for the commits' order (rev-list), dates and
    branches, so a real repository is needed: the converter writes one with `git fast-import`, an
    empty commit per build in TorchGauge's build order (oldest start first, then id; a build's start
    is the earliest started_at of its manifests), message = build id, author and committer date =
    the build's start. The hashes are therefore deterministic for a given history.
  - value: the run's median step time in seconds (timing.median_ms / 1000); a run whose status is not
    "ok" (no timing) is recorded as a failed result (null), as asv records a failed benchmark.

Every run file is read once; the per-(build, platform) work runs in parallel (--jobs).
Errors name the file (and field) and exit with status 2; nothing is left at --out on error.
"""

import argparse
import datetime
import json
import multiprocessing
import os
import shutil
import subprocess
import sys

ENV_NAME = "torchgauge"
BRANCH = "main"
BENCH_VERSION = "1"
RESULT_COLUMNS = ["result", "params", "version", "started_at", "duration"]
AUTHOR = "TorchGauge asv_convert <asv-convert@torchgauge.invalid>"


class ConvertError(Exception):
    """Bad input: the message names the file (and the field)."""


def load_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except OSError as e:
        raise ConvertError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise ConvertError(f"{path}: not valid JSON: {e}") from None


def field(doc, path, dotted, kind):
    """doc[a][b]... for dotted 'a.b', checked to be of `kind`."""
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ConvertError(f"{path}: field '{dotted}': missing")
        value = value[part]
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConvertError(f"{path}: field '{dotted}': expected {kind.__name__}, got {type(value).__name__}")
    return value


def epoch_ms(path, dotted, text):
    try:
        t = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ConvertError(f"{path}: field '{dotted}': not an ISO 8601 date-time: {text!r}") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp() * 1000)


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------- the tree


def visible_dirs(path):
    try:
        names = sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError as e:
        raise ConvertError(f"{path}: cannot list: {e.strerror}") from None
    return [n for n in names if os.path.isdir(os.path.join(path, n))]


def machine_params(manifest, platform):
    """asv's per-result params (they select the graph) and machine.json's fields."""
    cpu = manifest.get("cpu") or {}
    host = manifest.get("host") or {}
    device = manifest.get("device") or {}
    return {
        "machine": platform,
        "cpu": str(cpu.get("model", "")),
        "num_cpu": str(cpu.get("logical_cores", "")),
        "os": " ".join(str(host[k]) for k in ("os", "kernel") if host.get(k)),
        "device": str(device.get("name", "")),
    }


def scan(results):
    """Builds in TorchGauge's order: [(start, build_id, [(platform, dir, params)])]."""
    if not os.path.isdir(results):
        raise ConvertError(f"{results}: not a directory")
    builds = []
    for build in visible_dirs(results):
        platforms, start = [], None
        for platform in visible_dirs(os.path.join(results, build)):
            pdir = os.path.join(results, build, platform)
            mpath = os.path.join(pdir, "manifest.json")
            manifest = load_json(mpath)
            if field(manifest, mpath, "build_id", str) != build:
                raise ConvertError(f"{mpath}: field 'build_id': {manifest['build_id']!r} is not its directory {build!r}")
            if field(manifest, mpath, "platform_id", str) != platform:
                raise ConvertError(f"{mpath}: field 'platform_id': {manifest['platform_id']!r} is not its directory {platform!r}")
            started = field(manifest, mpath, "started_at", str)
            epoch_ms(mpath, "started_at", started)
            start = started if start is None or started < start else start
            platforms.append((platform, pdir, machine_params(manifest, platform)))
        if platforms:
            builds.append((start, build, platforms))
    if not builds:
        raise ConvertError(f"{results}: no builds (expected <build-id>/<platform-id>/manifest.json)")
    builds.sort()
    return builds


# ---------------------------------------------------------------- git


def make_repo(repo, builds):
    """A bare repository with one empty commit per build, oldest first; returns {build_id: hash}."""
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch", BRANCH, repo], check=True, env=env)
    stream = []
    for i, (start, build, _) in enumerate(builds):
        seconds = epoch_ms(build, "started_at", start) // 1000
        message = build.encode()
        stream.append(f"commit refs/heads/{BRANCH}\nmark :{i + 1}\n".encode())
        stream.append(f"author {AUTHOR} {seconds} +0000\ncommitter {AUTHOR} {seconds} +0000\n".encode())
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
        if i:
            stream.append(f"from :{i}\n".encode())
        stream.append(b"\n")
    marks = os.path.join(repo, "torchgauge-marks")
    subprocess.run(["git", "fast-import", "--quiet", f"--export-marks={marks}"], input=b"".join(stream),
                   cwd=repo, check=True, env=env)
    hashes = {}
    with open(marks) as f:
        for line in f:
            mark, sha = line.split()
            hashes[builds[int(mark[1:]) - 1][1]] = sha
    os.remove(marks)
    return hashes


# ---------------------------------------------------------------- runs


def read_run(path):
    """(benchmark name, seconds or None, started ms or None, duration s or None, batch, description)."""
    run = load_json(path)
    if not isinstance(run, dict):
        raise ConvertError(f"{path}: expected a JSON object")
    model = field(run, path, "model.id", str)
    mode, backend, precision = (field(run, path, k, str) for k in ("mode", "backend", "precision"))
    status = field(run, path, "status", str)
    value = None
    if status == "ok":
        median = field(run, path, "timing.median_ms", float)
        if median < 0:
            raise ConvertError(f"{path}: field 'timing.median_ms': negative ({median})")
        value = median / 1000.0
    started = run.get("started_at")
    started_ms = epoch_ms(path, "started_at", started) if isinstance(started, str) else None
    duration = run.get("duration_s")
    duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None
    batch = run.get("batch_size")
    return f"{model}.{mode}_{backend}_{precision}", value, started_ms, duration, batch, (model, mode, backend, precision)


def convert_platform(job):
    """Reads one (build, platform)'s runs and writes its asv results file; returns what benchmarks.json needs."""
    pdir, out_dir, commit, date_ms, params = job
    runs_dir = os.path.join(pdir, "runs")
    try:
        names = sorted(n for n in os.listdir(runs_dir) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        names = []
    except OSError as e:
        raise ConvertError(f"{runs_dir}: cannot list: {e.strerror}") from None
    results, seen = {}, {}
    for n in names:
        path = os.path.join(runs_dir, n)
        name, value, started, duration, batch, key = read_run(path)
        if name in results:
            raise ConvertError(f"{path}: a second run of {name} in {runs_dir}")
        results[name] = [None if value is None else [value], [], BENCH_VERSION, started, duration]
        seen[name] = (key, batch)
    os.makedirs(out_dir, exist_ok=True)
    write_json(os.path.join(out_dir, f"{commit[:8]}-{ENV_NAME}.json"), {
        "commit_hash": commit, "env_name": ENV_NAME, "date": date_ms, "params": params, "python": "",
        "requirements": {}, "env_vars": {}, "result_columns": RESULT_COLUMNS, "results": results,
        "durations": {}, "version": 2})
    return seen


def benchmark_entry(name, key, batches):
    model, mode, backend, precision = key
    sizes = ", ".join(str(b) for b in sorted(batches, key=str))
    return {"name": name, "type": "time", "unit": "seconds", "params": [], "param_names": [],
            "version": BENCH_VERSION,
            "code": (f"TorchGauge median step time: model {model}, mode {mode}, backend {backend}, "
                     f"precision {precision}, batch size {sizes}")}


# ---------------------------------------------------------------- main


def convert(results, out, jobs):
    builds = scan(results)
    os.makedirs(os.path.join(out, "results"))
    hashes = make_repo(os.path.join(out, "repo.git"), builds)
    work, machines = [], {}
    for start, build, platforms in builds:
        date_ms = epoch_ms(build, "started_at", start)
        for platform, pdir, params in platforms:
            work.append((pdir, os.path.join(out, "results", platform), hashes[build], date_ms, params))
            machines[platform] = params  # the newest build's description wins
    benchmarks = {}
    with multiprocessing.Pool(jobs) as pool:
        for seen in pool.imap_unordered(convert_platform, work, chunksize=4):
            for name, (key, batch) in seen.items():
                benchmarks.setdefault(name, (key, set()))[1].add(batch)
    for platform, params in machines.items():
        write_json(os.path.join(out, "results", platform, "machine.json"),
                   dict(params, arch="", ram="", version=1))
    entries = {name: benchmark_entry(name, key, b) for name, (key, b) in sorted(benchmarks.items())}
    write_json(os.path.join(out, "results", "benchmarks.json"), dict(entries, version=2))
    write_json(os.path.join(out, "asv.conf.json"), {
        "version": 1, "project": "TorchGauge", "project_url": "#", "repo": "repo.git", "dvcs": "git",
        "branches": [BRANCH], "environment_type": "existing", "results_dir": "results", "html_dir": "html",
        "show_commit_url": "#"})
    return len(builds), len(machines), len(entries), len(work)


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Convert a TorchGauge results tree into an asv project that `asv publish` accepts: "
                    "one benchmark per (model, mode, backend, precision), one machine per platform, one "
                    "commit per build (in a generated git repository), value = median step time in seconds.",
        epilog="Then: asv --config OUT/asv.conf.json publish   (writes OUT/html)")
    p.add_argument("--results", required=True, help="TorchGauge results tree (<build>/<platform>/manifest.json, runs/)")
    p.add_argument("--out", required=True, help="directory to write (must not exist, unless --force)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel readers (default: CPUs)")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    out = os.path.abspath(args.out)
    if os.path.lexists(out) and not args.force:
        p.error(f"--out {out} exists (use --force to replace it)")
    partial = f"{out}.partial-{os.getpid()}"
    try:
        counts = convert(args.results, partial, args.jobs)
    except (ConvertError, subprocess.CalledProcessError, OSError) as e:
        shutil.rmtree(partial, ignore_errors=True)
        print(f"asv_convert: error: {e}", file=sys.stderr)
        return 2
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.rename(partial, out)
    print("asv_convert: %d builds (commits), %d platforms (machines), %d benchmarks, %d results files -> %s"
          % (counts + (out,)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
