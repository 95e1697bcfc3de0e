#!/usr/bin/env bash
# The independent check of the generation metrics (issue 38): TPOT of
# llama_3_2_1b measured by TorchGauge (torchgauge-collect run, the result's
# generation) and by a Python loop over transformers' LlamaForCausalLM with
# its key-value cache (tests/llama_tpot_reference.py), at the same
# configuration, threads, prompt and output lengths, one after the other on
# this machine. Prints both and their ratio; the acceptance is agreement
# within 10 % (a bench: it prints the verdict and asserts no time).
# Configuration: the published Llama-3.2-1B (16 layers, hidden 2048, vocab
# 128256; about 5 GB of fp32 weights each side), batch 1, a 32-token prompt
# and 16 decode steps, 3 timed generations after one untimed, 2 threads.
# TORCHGAUGE_BENCH_THREADS and TORCHGAUGE_BENCH_SMOKE=1 (the smoke suite's
# reduced configuration: per-token Python overhead then dominates) change it.
# Usage: llama_tpot_bench.sh COLLECTOR PYTHON SOURCE_DIR WORK_DIR
set -euo pipefail
collect="$1"
python="$2"
src="$3"
work="$4"
threads="${TORCHGAUGE_BENCH_THREADS:-2}"
prompt=32
steps=16
generations=3
suite=full
ref_smoke=()
config="Llama-3.2-1B (published configuration)"
if [ "${TORCHGAUGE_BENCH_SMOKE:-0}" = 1 ]; then
  config="smoke configuration (2 layers, hidden 256, vocab 1024)"
  ref_smoke=(--smoke)
  suite=smoke
fi
rm -rf "$work"
mkdir -p "$work"
echo "llama_tpot_bench: $config, batch 1, prompt $prompt, $steps decode steps, $generations generations, $threads thread(s)"
uptime

# TorchGauge: the eval run's timing pass kept to one step (it is not what is
# compared), then the generation measurement.
"$collect" run --suite "$suite" --model '^llama_3_2_1b$' --mode eval --backend eager --precision fp32 --batch-size 1 \
  --warmup 0 --repeat 1 --profile-iterations 0 --no-probe --no-summary --threads "$threads" \
  --prompt-tokens "$prompt" --decode-steps "$steps" --generations "$generations" \
  --out "$work/results" --build-id bench --platform-id cpu --device cpu >"$work/collect.log" 2>&1 || {
  tail -30 "$work/collect.log"
  exit 1
}
result="$work/results/bench/cpu/runs/llama_3_2_1b.eval.eager.fp32.json"
ours=$("$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
g = r.get("generation")
if r["status"] != "ok" or not g:
    sys.exit("no generation: %s %s" % (r["status"], r.get("generation_reason") or r.get("reason")))
print(json.dumps({"ttft_ms": g["ttft_ms"], "tpot_median_ms": g["tpot_median_ms"], "tpot_p90_ms": g["tpot_p90_ms"],
                  "samples": len(g["tpot_samples_ms"])}))' "$result")
echo "TorchGauge: $ours"
uptime

theirs=$(OMP_NUM_THREADS="$threads" "$python" "$src/tests/llama_tpot_reference.py" --threads "$threads" \
  --prompt-tokens "$prompt" --decode-steps "$steps" --generations "$generations" "${ref_smoke[@]}")
echo "Python (transformers): $theirs"
uptime

"$python" - "$ours" "$theirs" <<'PY'
import json, sys
ours, theirs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for key in ("tpot_median_ms", "tpot_p90_ms", "ttft_ms"):
    print(f"{key:15s} TorchGauge {ours[key]:10.3f}  Python {theirs[key]:10.3f}  ratio {ours[key] / theirs[key]:.3f}")
ratio = ours["tpot_median_ms"] / theirs["tpot_median_ms"]
print(f"TPOT median: TorchGauge / Python = {ratio:.3f}: {'within' if abs(ratio - 1) <= 0.10 else 'NOT within'} 10 %")
PY
