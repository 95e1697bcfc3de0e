#!/usr/bin/env python3
"""`torchgauge-report export-v3` against the HUD's own uploader (ctest label integration).

A fixture tree from torchgauge-gen-fixtures is exported and test-infra's
upload_benchmark_results.py (vendored in tests/data/hud with its commit and licence) is run on the
file in its --dry-run mode, as the reusable workflow upload_benchmark_results.yml runs it, with
boto3 replaced by a stub that fails on any use, so nothing can reach the network:
  - without ids the records carry none, and the uploader's --metadata ids make the S3 path;
  - ids from the export's options, or from GitHub Actions' environment, win over --metadata's
    (the uploader merges {**metadata, **record});
  - every record as the uploader merges it loads into the v3 table: its keys are columns of the
    vendored schema.sql, every column without a DEFAULT (but the replicator's _meta) is there,
    and every value has its column's type (UInt, String, Float32, Array, named Tuple, Map);
  - the fields the HUD's pages read: runners[0].name the device word, runners[0].type the device
    model, benchmark.dtype a HUD dtype word, head_branch and repo from the options.

usage: hud_upload_test.py REPORT_EXE GEN_FIXTURES_EXE HUD_DATA_DIR WORK_DIR
"""

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys

SHA = "0123456789abcdef0123456789abcdef01234567"
HUD_DTYPES = {"float32", "float16", "bfloat16", "amp", "notset"}
DEVICE_WORDS = {"cuda", "rocm", "cpu"}


def check(cond, message):
    if not cond:
        print("FAIL:", message)
        sys.exit(1)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("command failed:", cmd, "\n", r.stdout, r.stderr)
        sys.exit(1)
    return r


def clean_env(**extra):
    """This process's environment without GitHub Actions' variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(extra)
    return env


def write_boto3_stub(work):
    """A boto3 that the dry run must never touch: any use raises."""
    stub = os.path.join(work, "stub")
    os.makedirs(stub, exist_ok=True)
    with open(os.path.join(stub, "boto3.py"), "w") as f:
        f.write("def _refuse(*a, **k):\n    raise RuntimeError('boto3 used in a dry run')\n")
        f.write("resource = client = _refuse\n")
    return stub


def metadata(workflow_id, job_id):
    """The uploader's --metadata, as test-infra's gather_metadata.py writes it."""
    return {"timestamp": 1767225600, "schema_version": "v3", "name": "torchgauge-nightly",
            "repo": "pytorch/pytorch", "head_branch": "main", "head_sha": SHA,
            "workflow_id": workflow_id, "run_attempt": 1, "job_id": job_id}


def upload_dry_run(uploader, stub, results_dir, meta):
    """The uploader's log (stderr: Python logging) of a dry run over `results_dir`."""
    env = clean_env(PYTHONPATH=stub)
    r = run([sys.executable, uploader, "--benchmark-results-dir", results_dir, "--metadata",
             json.dumps(meta), "--runners", "[]", "--dependencies", "{}", "--dry-run"], env=env)
    return r.stdout + r.stderr


def export(report, results, out_dir, args=(), env=None):
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "torchgauge-v3.json")
    run([report, "export-v3", "--results", results, "--out", out, *args], env=env or clean_env())
    return out


# --- the v3 table's columns, from the vendored schema.sql ---------------------------------------

def tokens(sql):
    sql = re.sub(r"--[^\n]*", "", sql)
    return re.findall(r"`[^`]*`|'[^']*'|[A-Za-z_][A-Za-z0-9_]*|[(),]", sql)


def parse_type(toks, i):
    """(type, next index); a type is ("UInt64",) or ("Array", t) or ("Tuple", [(name, t)]) or
    ("Map", k, v)."""
    name = toks[i]
    if name in ("Array", "Map", "Tuple"):
        assert toks[i + 1] == "(", toks[i:i + 3]
        i += 2
        members = []
        while toks[i] != ")":
            if name == "Tuple" and toks[i + 1] not in ("(", ",", ")"):
                member = toks[i].strip("`")
                t, i = parse_type(toks, i + 1)
                members.append((member, t))
            else:
                t, i = parse_type(toks, i)
                members.append(t)
            if toks[i] == ",":
                i += 1
        i += 1
        if name == "Array":
            return ("Array", members[0]), i
        if name == "Map":
            return ("Map", members[0], members[1]), i
        return ("Tuple", members), i
    return (name,), i + 1


def schema_columns(path):
    """{column: (type, has_default)} of the CREATE TABLE in `path`."""
    toks = tokens(open(path).read())
    i = toks.index("(") + 1
    cols = {}
    while toks[i] != ")":
        col = toks[i].strip("`")
        t, i = parse_type(toks, i + 1)
        has_default = toks[i] == "DEFAULT"
        if has_default:
            i += 2
        cols[col] = (t, has_default)
        if toks[i] == ",":
            i += 1
    check(len(cols) >= 15 and "metric" in cols and "runners" in cols, f"schema.sql parsed: {list(cols)}")
    return cols


def type_problems(v, t, where):
    kind = t[0]
    if kind.startswith("UInt"):
        bits = int(kind[4:])
        ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**bits
        return [] if ok else [f"{where}: {v!r} is not {kind}"]
    if kind.startswith("Float"):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        return [] if ok else [f"{where}: {v!r} is not {kind}"]
    if kind == "String":
        return [] if isinstance(v, str) else [f"{where}: {v!r} is not a String"]
    if kind == "Array":
        if not isinstance(v, list):
            return [f"{where}: not an Array"]
        return [p for n, x in enumerate(v) for p in type_problems(x, t[1], f"{where}[{n}]")]
    if kind == "Map":
        if not isinstance(v, dict):
            return [f"{where}: not a Map"]
        return [p for k, x in v.items() for p in type_problems(k, t[1], f"{where} key") +
                type_problems(x, t[2], f"{where}[{k}]")]
    if kind == "Tuple":
        if not isinstance(v, dict):
            return [f"{where}: not a named Tuple"]
        members = dict(t[1])
        out = [f"{where}.{k}: no such member" for k in v if k not in members]
        return out + [p for k, x in v.items() if k in members for p in type_problems(x, members[k], f"{where}.{k}")]
    return [f"{where}: unknown type {t}"]


def record_problems(rec, cols):
    out = [f"{k}: not a column" for k in rec if k not in cols]
    out += [f"{c}: missing (no DEFAULT)" for c, (t, d) in cols.items() if not d and c != "_meta" and c not in rec]
    out += [p for k, v in rec.items() if k in cols for p in type_problems(v, cols[k][0], k)]
    return out


# --- the checks ---------------------------------------------------------------------------------

def load_uploader(path, stub):
    sys.path.insert(0, stub)
    spec = importlib.util.spec_from_file_location("upload_benchmark_results", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_uploaded_path(log, results_dir, expected):
    check("Could not generate an S3 path" not in log, f"the uploader skipped the file:\n{log}")
    want = f"to s3://ossci-benchmarks/{expected}/torchgauge-v3.json"
    check(want in log, f"expected '{want}' in the uploader's log:\n{log}")


def check_hud_fields(records, manifests):
    for rec in records:
        runner = rec["runners"][0]
        check(runner["name"] in DEVICE_WORDS, f"runners[0].name {runner['name']!r} is not a device word")
        m = manifests[rec["benchmark"]["extra_info"]["platform_id"]]
        model = m["device"]["name"] if m["device"]["vendor"] != "CPU" else m["cpu"]["model"]
        check(runner["type"] == model, f"runners[0].type {runner['type']!r}, not the device model {model!r}")
        check(rec["benchmark"]["dtype"] in HUD_DTYPES, f"dtype {rec['benchmark']['dtype']!r}")
        check(rec["head_branch"] == "main" and rec["repo"] == "pytorch/pytorch", "repo and branch")
        check(rec["workflow_id"] == 1234 and rec["job_id"] == 5678 and rec["run_attempt"] == 2, "ids")


def main():
    report, gen, hud, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    uploader = os.path.join(hud, "upload_benchmark_results.py")
    stub = write_boto3_stub(work)
    cols = schema_columns(os.path.join(hud, "schema.sql"))
    results = os.path.join(work, "results")
    run([gen, "--out", results, "--builds", "1", "--models", "3", "--configs", "8", "--samples", "6"])

    # No ids known to the export: the uploader's --metadata supplies them.
    plain = os.path.join(work, "plain")
    export(report, results, plain)
    log = upload_dry_run(uploader, stub, plain, metadata(111, 222))
    check_uploaded_path(log, plain, "v3/pytorch/pytorch/111/222")

    # GitHub Actions' run id and attempt from the environment; the job id from --metadata.
    ci = os.path.join(work, "ci")
    export(report, results, ci, env=clean_env(GITHUB_RUN_ID="777", GITHUB_RUN_ATTEMPT="3"))
    recs = json.load(open(os.path.join(ci, "torchgauge-v3.json")))
    check(all(r["workflow_id"] == 777 and r["run_attempt"] == 3 and "job_id" not in r for r in recs), "env ids")
    check_uploaded_path(upload_dry_run(uploader, stub, ci, metadata(111, 222)), ci, "v3/pytorch/pytorch/777/222")

    # Everything from the options; they win over --metadata's.
    full = os.path.join(work, "full")
    out = export(report, results, full, ["--repo", "pytorch/pytorch", "--head-branch", "main", "--head-sha", SHA,
                                         "--workflow-id", "1234", "--run-attempt", "2", "--job-id", "5678"])
    log = upload_dry_run(uploader, stub, full, metadata(111, 222))
    check_uploaded_path(log, full, "v3/pytorch/pytorch/1234/5678")

    # A 0 or a word is refused, not written as an id (exit 2, no file).
    for args, env in ((["--workflow-id", "0"], clean_env()), ([], clean_env(GITHUB_RUN_ID="abc"))):
        bad = os.path.join(work, "bad", "v3.json")
        r = subprocess.run([report, "export-v3", "--results", results, "--out", bad, *args], env=env,
                           capture_output=True, text=True)
        check(r.returncode == 2 and not os.path.exists(bad), f"{args} {env.get('GITHUB_RUN_ID')}: exit {r.returncode}")

    # The records as the uploader merges them, against the table and the HUD's reads.
    mod = load_uploader(uploader, stub)
    merged = mod.process_benchmark_results(out, metadata(111, 222), [], {})
    check(len(merged) == len(json.load(open(out))) > 0, "the uploader kept every record")
    for rec in merged:
        problems = record_problems(rec, cols)
        check(not problems, f"{rec['model']['name']} {rec['metric']['name']}: {problems}")
    manifests = {}
    for root, _, files in os.walk(results):
        if "manifest.json" in files:
            m = json.load(open(os.path.join(root, "manifest.json")))
            manifests[m["platform_id"]] = m
    check_hud_fields(merged, manifests)

    # A generative run's records (TTFT, TPOT, tokens per second, KV cache) load too.
    gen_results = os.path.join(hud, os.pardir, "compare_generation", "results")
    gen_out = export(report, gen_results, os.path.join(work, "generation"), ["--workflow-id", "1", "--job-id", "2"])
    gen_merged = mod.process_benchmark_results(gen_out, metadata(111, 222), [], {})
    names = {r["metric"]["name"] for r in gen_merged}
    check({"ttft_ms", "tpot_ms", "tokens_per_second"} <= names, f"generation metrics: {names}")
    for rec in gen_merged:
        problems = record_problems(rec, cols)
        check(not problems and len(rec["metric"]["benchmark_values"]) == 1, f"{rec['metric']['name']}: {problems}")
    merged += gen_merged
    print(f"ok: {len(merged)} records pass the uploader's dry run and the v3 schema's {len(cols)} columns")


if __name__ == "__main__":
    main()
