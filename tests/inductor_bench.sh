#!/usr/bin/env bash
# Every model (the ci suite: smoke sizes) through the inductor backend, train
# and eval, in two worker processes each with the paired pass: prints, per
# model and mode, the outcome, the check against eager (the eval output, or
# the train loss and gradients) and its error, the paired speedup with the
# processes' range, and the compile latency; then the failures grouped by
# cause. Compiles take 12-70 s each on 2 cores, so this runs for about an
# hour there (bench label). The package cache starts empty.
# Usage: inductor_bench.sh COLLECTOR PYTHON WORK_DIR [collector run options]
set -euo pipefail
collect="$1"
python="$2"
work="$3"
shift 3
source "$(dirname "$0")/../tools/cores.sh"
rm -rf "$work"
mkdir -p "$work"
export TORCHGAUGE_CACHE="$work/cache"
start=$(date +%s)
"$collect" run --suite ci --backend inductor --warmup 1 --repeat 5 --processes 2 --pairing interleaved \
  --timeout 1200 --no-summary --out "$work/results" "$@" >"$work/collect.log" 2>&1 || {
  tail -30 "$work/collect.log"
  echo "inductor_bench: the collection failed" >&2
  exit 1
}
echo "collection: $(( $(date +%s) - start )) s on $(tg_cores) CPUs"
"$python" - "$work/results" <<'PY'
import collections, glob, json, sys

rows, causes = [], collections.Counter()
for path in sorted(glob.glob(f"{sys.argv[1]}/*/*/runs/*.inductor.*.json")):
    r = json.load(open(path))
    model = r["model"]["id"] if isinstance(r["model"], dict) else r["model"]
    c, p = r.get("compile") or {}, r.get("paired") or {}
    latency = sum(c.get(k) or 0 for k in ("trace_ms", "convert_ms", "compile_ms", "load_ms")) / 1e3
    why = (r.get("reason") or r.get("error") or "").strip()
    if r["status"] != "ok":
        lines = [l for l in why.splitlines() if l.strip()]
        causes[lines[-1][:110] if lines else r["status"]] += 1
    speed = f'{p["speedup"]:.2f}x' if p.get("speedup") else "-"
    if p.get("speedup_low") is not None:
        speed += f' [{p["speedup_low"]:.2f}, {p["speedup_high"]:.2f}]'
    check = f'{c["check"]} {c["check_error"]:.1e}' if c.get("check") and c.get("check_error") is not None else "-"
    if c.get("check_reference_error") is not None:
        check += f' (float32 eager {c["check_reference_error"]:.1e})'
    rows.append((model, r["mode"], r["status"], check, speed, f"{latency:.1f}" if latency else "-",
                 why.splitlines()[-1][:90] if why and r["status"] != "ok" else ""))
print("| model | mode | outcome | check vs eager (error) | speedup [processes] | compile latency (s) | why not ok |")
print("|---|---|---|---|--:|--:|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")
counts = collections.Counter((m, s) for _, m, s, *_ in rows)
print()
for (mode, status), n in sorted(counts.items()):
    print(f"{mode} {status}: {n}")
print()
print("failures by cause:")
for cause, n in causes.most_common():
    print(f"  {n:3d}  {cause}")
PY
