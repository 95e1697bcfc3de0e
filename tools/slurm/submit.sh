#!/usr/bin/env bash
# Submits a TorchGauge night to Slurm: the shard array (nightly.sbatch) and
# the merge job that depends on it with afterany (merge.sbatch). Prints the
# two job ids. Every parameter of the two scripts comes from the environment
# (see their headers) and is passed on with --export=ALL.
#
# Usage: BUILD_ID=... [SHARDS=N] tools/slurm/submit.sh [sbatch option...]
#   SHARDS   number of shards, i.e. array tasks                 (default: 12)
#   sbatch options given here apply to both jobs (e.g. --partition=gpu,
#   --account=..., or --gres=none on a machine without GPUs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${BUILD_ID:?submit.sh: set BUILD_ID, e.g. BUILD_ID=2.11.0-20261123}"
shards="${SHARDS:-12}"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: SHARDS='$shards' is not a positive count" >&2; exit 2; }
export TORCHGAUGE_HOME="${TORCHGAUGE_HOME:-$(cd "$here/../.." && pwd)}"
array=$(sbatch --parsable --export=ALL --array="0-$((shards - 1))" "$@" "$here/nightly.sbatch")
array="${array%%;*}"  # --parsable prints "id[;cluster]"
merge=$(SHARD_COUNT="$shards" sbatch --parsable --export=ALL --dependency="afterany:$array" "$@" "$here/merge.sbatch")
merge="${merge%%;*}"
echo "shards: job array $array (0-$((shards - 1))); merge: job $merge (afterany:$array)"
