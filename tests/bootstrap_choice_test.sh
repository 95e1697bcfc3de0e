#!/usr/bin/env bash
# tools/bootstrap.sh's choice of the LibTorch under test and the build
# directory each choice gets (nothing is installed or built: only the
# functions that decide are called).
#   bootstrap_choice_test.sh SOURCE_DIR
set -uo pipefail
src=$1
fails=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    echo "FAIL $1: expected '$2', got '$3'"
    fails=$((fails + 1))
  else
    echo "ok   $1"
  fi
}
# Runs the bootstrap's functions in a clean environment with the given
# variables; prints stdout, and "rc=N" when they fail.
decide() {
  env -u TORCHGAUGE_TORCH -u TORCHGAUGE_PYTHON -u TORCHGAUGE_LIBTORCH -u TORCHGAUGE_BUILD "$@" \
    bash -c 'source "$0/tools/bootstrap.sh" && c=$(tg_choice) && echo "$c|$(tg_build_dir "$c")" || echo "rc=$?"' \
    "$src" 2>/dev/null
}
pin=$(grep -v '^#' "$src/tools/torch_pin.txt" | head -1)

check "no choice is the pin, in build/" "pin|$src/build" "$(decide)"
check "--torch of the pin is the pin" "pin|$src/build" "$(decide TORCHGAUGE_TORCH="$pin")"
check "--torch X gets build/torch-X" "torch 2.9.0|$src/build/torch-2.9.0" "$(decide TORCHGAUGE_TORCH=2.9.0)"
check "TORCHGAUGE_BUILD wins" "torch 2.15.0|/tmp/elsewhere" "$(decide TORCHGAUGE_TORCH=2.15.0 TORCHGAUGE_BUILD=/tmp/elsewhere)"
py_dir=$(decide TORCHGAUGE_PYTHON=/opt/py/bin/python)
check "a Python gets build/python-<hash>" "python /opt/py/bin/python" "${py_dir%%|*}"
case "${py_dir#*|}" in
  "$src"/build/python-????????) check "the Python's tree is named by a hash" 1 1 ;;
  *) check "the Python's tree is named by a hash" "$src/build/python-<8 hex>" "${py_dir#*|}" ;;
esac
check "two choices at once are refused" "rc=2" "$(decide TORCHGAUGE_TORCH=2.13.0 TORCHGAUGE_PYTHON=/usr/bin/python3)"
check "a version that is not a release is refused" "rc=2" "$(decide TORCHGAUGE_TORCH='2.13; rm -rf /')"
check "a LibTorch folder without TorchConfig.cmake is refused" "rc=2" "$(decide TORCHGAUGE_LIBTORCH=/nonexistent)"
fake=$(mktemp -d)
mkdir -p "$fake/share/cmake/Torch" && touch "$fake/share/cmake/Torch/TorchConfig.cmake"
lt=$(decide TORCHGAUGE_LIBTORCH="$fake")
check "a LibTorch distribution is its own choice" "libtorch $fake" "${lt%%|*}"
case "${lt#*|}" in
  "$src"/build/libtorch-????????) check "the distribution's tree is named by a hash" 1 1 ;;
  *) check "the distribution's tree is named by a hash" "$src/build/libtorch-<8 hex>" "${lt#*|}" ;;
esac
rm -rf "$fake"
# An unknown command is refused before anything is installed.
out=$(bash "$src/gauge" frobnicate --torch 2.13.0 2>&1)
check "./gauge refuses an unknown command, naming its commands" "unknown command 'frobnicate' (smoke | test | bench | build | collector | history)" "$out"
echo "$fails failed"
[ "$fails" -eq 0 ]
