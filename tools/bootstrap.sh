#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (or a GPU machine that
# already has torch): Debian packages, the cached Python environment and the
# CMake configuration. Sourced by ./gauge; safe to run again at any time.
#
# Environment:
#   TORCHGAUGE_CACHE   cache directory for the venv (default ~/.cache/torchgauge)
#   TORCHGAUGE_BUILD   build directory (default ./build)
#   TORCHGAUGE_PYTHON  use this python (must import torch) instead of the venv
set -euo pipefail

TG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$TG_ROOT/tools/cores.sh"
TG_CACHE="${TORCHGAUGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/torchgauge}"
TG_BUILD="${TORCHGAUGE_BUILD:-$TG_ROOT/build}"
TG_REQ="$TG_ROOT/tools/requirements.txt"

tg_log() { printf '[bootstrap] %s\n' "$*" >&2; }

tg_apt_packages=(
  build-essential cmake ninja-build ccache git pkg-config
  nlohmann-json3-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libkainjow-mustache-dev
  libcli11-dev doctest-dev chromium python3-venv
  slurmctld slurmd slurm-client
  hipcc
  clang libclang-rt-dev llvm
  poppler-utils texlive-latex-base  # the paper kit: pdfinfo, pdftoppm and pdflatex check it (reporter_paper_kit_test)
  libzip-dev libssl-dev unzip  # the paper kit's zip and SHA-256 (reporter); unzip -t checks the zip in its test
  libsimdjson-dev  # ReadJsonFile's parser (core/io/json_io.cc)
  libjemalloc-dev  # the reporter's allocator (reporter/CMakeLists.txt): a cold render ~22% faster
  libpython3.11  # libpython3.11.so.1.0: torchvision's _C.so (roi_align, nms) needs its symbols (models/vision/detection/torchvision_ops.cc)
)

tg_install_debian() {
  local missing=()
  for p in "${tg_apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return; fi
  tg_log "installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# Picks the Python that provides LibTorch. On a GPU machine whose python3
# already has torch, that torch is used. Otherwise a venv built from the
# pinned requirements lives in the cache, keyed by the torch pin.
tg_python() {
  if [ -n "${TORCHGAUGE_PYTHON:-}" ]; then echo "$TORCHGAUGE_PYTHON"; return; fi
  if command -v nvidia-smi >/dev/null 2>&1 && python3 -c 'import torch' >/dev/null 2>&1; then
    tg_log "GPU machine with torch in $(command -v python3): using it"
    command -v python3; return
  fi
  # The venv's path is keyed by the torch pin alone: every compile line names
  # torch's include directories, so a path that changed with any test-only
  # package would miss the whole compiler cache. Other requirement changes
  # are installed into the same venv; .complete holds the file's hash.
  local hash torch_key venv
  hash=$(sha256sum "$TG_REQ" | cut -c1-16)
  torch_key=$(grep -E '^torch==' "$TG_REQ" | sha256sum | cut -c1-16)
  venv="$TG_CACHE/venv-torch-$torch_key"
  if [ "$(cat "$venv/.complete" 2>/dev/null)" != "$hash" ]; then
    if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
      tg_log "building Python environment $venv (torch 2.11.0 and test packages; several minutes the first time)"
      rm -rf "$venv"
      mkdir -p "$TG_CACHE"
      local base_py=python3
      command -v python3.11 >/dev/null 2>&1 && base_py=python3.11
      "$base_py" -m venv "$venv" >&2
    else
      tg_log "updating Python environment $venv: tools/requirements.txt changed"
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$TG_REQ" >&2
    echo "$hash" > "$venv/.complete.tmp" && mv "$venv/.complete.tmp" "$venv/.complete"
  fi
  echo "$venv/bin/python"
}

tg_configure() {
  local py="$1" prefix
  prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  if [ ! -f "$TG_BUILD/build.ninja" ] || ! grep -q "TORCHGAUGE_PYTHON:FILEPATH=$py\$" "$TG_BUILD/CMakeCache.txt" 2>/dev/null; then
    tg_log "configuring $TG_BUILD"
    # Another Python means another LibTorch: the cache's found paths
    # (Torch_DIR, the libraries) would keep pointing at the old one.
    if [ -f "$TG_BUILD/CMakeCache.txt" ] && ! grep -q "TORCHGAUGE_PYTHON:FILEPATH=$py\$" "$TG_BUILD/CMakeCache.txt"; then
      rm -f "$TG_BUILD/CMakeCache.txt"
    fi
    # The project's warnings are errors in every ./gauge build (smoke and
    # test share build/, so they share the flag; CI runs ./gauge test).
    # TORCHGAUGE_WERROR=OFF shows them without stopping the build, for a
    # compiler newer than the one the build is verified clean with.
    local werror="${TORCHGAUGE_WERROR:-ON}"
    cmake -S "$TG_ROOT" -B "$TG_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCHGAUGE_WERROR="$werror" \
      -DCMAKE_PREFIX_PATH="$prefix" -DTORCHGAUGE_PYTHON="$py" \
      -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc >&2
  fi
}

# Builds the given targets, or everything (tests included) without any.
tg_build() {
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$TG_BUILD" -j"$(tg_cores)" "${targets[@]}" >&2
}

tg_bootstrap() {
  tg_install_debian
  TG_PY=$(tg_python)
  export TG_PY
  tg_configure "$TG_PY"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  tg_bootstrap
  tg_log "ready: python $TG_PY, build directory $TG_BUILD"
fi
