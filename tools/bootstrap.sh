#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (or a GPU machine that
# already has torch): Debian packages, the cached Python environment and the
# CMake configuration. Sourced by ./gauge; safe to run again at any time.
#
# The LibTorch under test is a choice; each choice has its own cached
# environment and its own build directory, so moving between versions never
# rebuilds another version's tree:
#   (none)               the pin, tools/torch_pin.txt                 build/
#   TORCHGAUGE_TORCH=X   torch X from PyPI (./gauge ... --torch X)    build/torch-X
#   TORCHGAUGE_PYTHON=P  the torch that Python P has                  build/python-<hash>
#   TORCHGAUGE_LIBTORCH=D  a LibTorch C++ distribution (the unpacked zip;
#                        ./gauge ... --libtorch D). No Python: the inductor
#                        backend is recorded unsupported.        build/libtorch-<hash>
# The tests' reference stack (torchvision, transformers, timm, jsonschema,
# vl-convert) is tools/requirements.txt's environment whatever the LibTorch
# under test: weights cross by file, so it need not match the build under
# test. It pins its own torch; where that is the pin's version, the pin is
# tested in the same venv (one torch to install), else in the pin's own
# release venv.
#
# Environment:
#   TORCHGAUGE_CACHE   cache directory for the venvs (default ~/.cache/torchgauge)
#   TORCHGAUGE_BUILD   build directory (default: by the choice above)
#   TORCHGAUGE_BUILD_TYPE  CMake build type (default Release). CI's check of
#                      the oldest release builds with None (no optimisation):
#                      it proves the build and a collection, not the speed.
#   TORCHGAUGE_CXX     C++ compiler (default clang++ where installed, as the
#                      bootstrap does; else CMake's). clang instantiates the
#                      precompiled header's templates once
#                      (-fpch-instantiate-templates, which CMake adds), while
#                      g++ redoes them in every file: against 2.14.1's
#                      <torch/torch.h> an empty file takes 13.9 s with g++ and
#                      3.3 s with clang 14, alexnet.cc at -O3 21.6 s and 7.2 s
#                      (measured 2026-11-29). The manifest records it
#                      (collector.compiler).
#   TORCHGAUGE_MODEL_FAMILIES  regexes (;-separated) of the model family files
#                      to build, paths under models/ (default: every family;
#                      models/CMakeLists.txt). The oldest-release check uses it.
#   TORCHGAUGE_TORCH, TORCHGAUGE_PYTHON, TORCHGAUGE_LIBTORCH: the choice above
set -euo pipefail

TG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$TG_ROOT/tools/cores.sh"
TG_CACHE="${TORCHGAUGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/torchgauge}"
TG_REQ="$TG_ROOT/tools/requirements.txt"
TG_REF_TORCH="$(sed -n 's/^torch==//p' "$TG_REQ")"
TG_PIN="$(grep -v '^#' "$TG_ROOT/tools/torch_pin.txt" | head -1)"
# The oldest supported release: CI's second build (tools/oldest_release_check.sh).
TG_OLDEST="$(grep -v '^#' "$TG_ROOT/tools/torch_releases.txt" | head -1)"

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
  valgrind zlib1g-dev  # the counted measurement (collector/counted.h): Callgrind, its client requests; gzip'd profiles
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

# The choice of LibTorch under test, validated: prints one of
# "pin", "torch X", "python P" or "libtorch D".
tg_choice() {
  local n=0
  [ -n "${TORCHGAUGE_TORCH:-}" ] && n=$((n + 1))
  [ -n "${TORCHGAUGE_PYTHON:-}" ] && n=$((n + 1))
  [ -n "${TORCHGAUGE_LIBTORCH:-}" ] && n=$((n + 1))
  if [ "$n" -gt 1 ]; then
    tg_log "choose one LibTorch under test: TORCHGAUGE_TORCH (--torch), TORCHGAUGE_PYTHON or TORCHGAUGE_LIBTORCH (--libtorch)"
    return 2
  fi
  if [ -n "${TORCHGAUGE_TORCH:-}" ]; then
    if ! [[ "$TORCHGAUGE_TORCH" =~ ^[0-9]+\.[0-9]+\.[0-9]+([.a-z0-9+]*)$ ]]; then
      tg_log "--torch '$TORCHGAUGE_TORCH': not a torch release (for example 2.14.1)"
      return 2
    fi
    [ "$TORCHGAUGE_TORCH" = "$TG_PIN" ] && echo "pin" || echo "torch $TORCHGAUGE_TORCH"
  elif [ -n "${TORCHGAUGE_PYTHON:-}" ]; then
    echo "python $TORCHGAUGE_PYTHON"
  elif [ -n "${TORCHGAUGE_LIBTORCH:-}" ]; then
    if [ ! -f "$TORCHGAUGE_LIBTORCH/share/cmake/Torch/TorchConfig.cmake" ]; then
      tg_log "--libtorch '$TORCHGAUGE_LIBTORCH': no share/cmake/Torch/TorchConfig.cmake there (expected an unpacked LibTorch zip)"
      return 2
    fi
    echo "libtorch $(cd "$TORCHGAUGE_LIBTORCH" && pwd)"
  else
    echo "pin"
  fi
}

tg_short_hash() { printf '%s' "$1" | sha256sum | cut -c1-8; }

# The build directory of a choice (TORCHGAUGE_BUILD overrides).
tg_build_dir() {
  local choice="$1"
  if [ -n "${TORCHGAUGE_BUILD:-}" ]; then echo "$TORCHGAUGE_BUILD"; return; fi
  case "$choice" in
    pin) echo "$TG_ROOT/build" ;;
    "torch "*) echo "$TG_ROOT/build/torch-${choice#torch }" ;;
    "python "*) echo "$TG_ROOT/build/python-$(tg_short_hash "${choice#python }")" ;;
    "libtorch "*) echo "$TG_ROOT/build/libtorch-$(tg_short_hash "${choice#libtorch }")" ;;
  esac
}

# A new, empty venv at $1 (anything there before is removed), from
# python3.11 where the machine has it.
tg_new_venv() {
  rm -rf "$1"
  mkdir -p "$TG_CACHE"
  local base_py=python3
  command -v python3.11 >/dev/null 2>&1 && base_py=python3.11
  "$base_py" -m venv "$1" >&2
}

# A venv holding one PyPI torch release (and the torchvision of the same
# release, when PyPI has one, for the detection models' operators), keyed by
# the version. Nothing else: the reference stack stays pinned.
tg_release_python() {
  local version="$1" venv="$TG_CACHE/venv-release-$1"
  local minor tv
  minor=$(echo "$version" | cut -d. -f2)
  tv="0.$((minor + 15)).*"
  # One maker at a time per release (./gauge test fetches the oldest
  # release's venv in the background while oldest_release_test may want it).
  mkdir -p "$TG_CACHE"
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.complete" ]; then
    tg_log "building $venv: torch $version from PyPI (several minutes the first time)"
    tg_new_venv "$venv"
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check "torch==$version" numpy >&2; then
      tg_log "pip could not install torch==$version"
      return 1
    fi
    # torchvision pins the torch it was built with: only the matching
    # release resolves. Without one the detection models are unsupported.
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check "torch==$version" "torchvision==$tv" >&2 2>/dev/null; then
      tg_log "no torchvision $tv for torch $version on PyPI: vision_maskrcnn will be recorded unsupported"
    fi
    echo "$version" > "$venv/.complete.tmp" && mv "$venv/.complete.tmp" "$venv/.complete"
  fi
  echo "$venv/bin/python"
}

# The tools' and references' Python: the pinned venv, or TORCHGAUGE_PYTHON's.
# On a GPU machine whose python3 already has torch, that torch is used.
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
      tg_log "building Python environment $venv (torch $TG_REF_TORCH and test packages; several minutes the first time)"
      tg_new_venv "$venv"
    else
      tg_log "updating Python environment $venv: tools/requirements.txt changed"
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$TG_REQ" >&2
    echo "$hash" > "$venv/.complete.tmp" && mv "$venv/.complete.tmp" "$venv/.complete"
  fi
  echo "$venv/bin/python"
}

# Configures $TG_BUILD for the tools' Python $1, the LibTorch under test's
# Python $2 (empty for a C++ distribution) and its CMake prefix $3.
tg_configure() {
  local py="$1" torch_py="$2" prefix="$3"
  local build_type="${TORCHGAUGE_BUILD_TYPE:-Release}"
  local stamp="$TG_BUILD/.torchgauge-choice" want="$py|$torch_py|$prefix"
  [ "$build_type" = Release ] || want="$want|$build_type"
  local families="${TORCHGAUGE_MODEL_FAMILIES:-}"
  [ -z "$families" ] || want="$want|families=$families"
  # A unity build (cmake/unity.cmake): on a fresh clone it compiles in about
  # half the time. TORCHGAUGE_UNITY=OFF compiles file by file.
  local unity="${TORCHGAUGE_UNITY:-ON}"
  want="$want|unity=$unity"
  local cxx=() compiler="${TORCHGAUGE_CXX:-$(command -v clang++ || true)}"
  if [ -n "$compiler" ]; then
    cxx=(-DCMAKE_CXX_COMPILER="$compiler")
    want="$want|$compiler"
  fi
  if [ ! -f "$TG_BUILD/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    tg_log "configuring $TG_BUILD"
    # Another LibTorch in the same directory (TORCHGAUGE_BUILD given twice):
    # the cache's found paths (Torch_DIR, the libraries) would keep pointing
    # at the old one.
    if [ -f "$TG_BUILD/CMakeCache.txt" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
      rm -f "$TG_BUILD/CMakeCache.txt"
    fi
    # The project's warnings are errors in every ./gauge build (smoke and
    # test share build/, so they share the flag; CI runs ./gauge test).
    # TORCHGAUGE_WERROR=OFF shows them without stopping the build, for a
    # compiler newer than the one the build is verified clean with.
    local werror="${TORCHGAUGE_WERROR:-ON}"
    cmake -S "$TG_ROOT" -B "$TG_BUILD" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DTORCHGAUGE_WERROR="$werror" "${cxx[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" -DTORCHGAUGE_PYTHON="$py" -DTORCHGAUGE_TORCH_PYTHON="$torch_py" \
      -DTORCHGAUGE_MODEL_FAMILIES="$families" -DCMAKE_UNITY_BUILD="$unity" -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
      -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc >&2
    echo "$want" > "$stamp"
  fi
}

# Builds the given targets, or everything (tests included) without any.
tg_build() {
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$TG_BUILD" -j"$(tg_cores)" "${targets[@]}" >&2
}

# Sets TG_PY (tools), TG_TORCH_PY (LibTorch under test; empty for a C++
# distribution), TG_BUILD, and configures it.
tg_bootstrap() {
  local choice prefix
  choice=$(tg_choice)
  TG_BUILD=$(tg_build_dir "$choice")
  tg_install_debian
  TG_PY=$(tg_python)
  case "$choice" in
    # The pin runs in the reference venv when that venv has the pin's torch
    # (or on a GPU machine's own Python, which tg_python chose).
    pin)
      if [ "$TG_PIN" = "$TG_REF_TORCH" ] || [ "${TG_PY#"$TG_CACHE"/}" = "$TG_PY" ]; then
        TG_TORCH_PY="$TG_PY"
      else
        TG_TORCH_PY=$(tg_release_python "$TG_PIN")
      fi ;;
    "python "*) TG_TORCH_PY="$TG_PY" ;;
    "torch "*) TG_TORCH_PY=$(tg_release_python "${choice#torch }") ;;
    "libtorch "*) TG_TORCH_PY="" ;;
  esac
  if [ -n "$TG_TORCH_PY" ]; then
    prefix=$("$TG_TORCH_PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  else
    prefix="${choice#libtorch }"
  fi
  export TG_PY TG_TORCH_PY TG_BUILD
  tg_log "LibTorch under test: ${choice} (build directory $TG_BUILD)"
  tg_configure "$TG_PY" "$TG_TORCH_PY" "$prefix"
  # build/torch-<pin> names the pin's tree too, so that a path template
  # such as bisect's --collector build/torch-{rev}/collector/torchgauge-collect
  # holds for every release.
  if [ "$choice" = pin ] && [ -z "${TORCHGAUGE_BUILD:-}" ] && [ ! -e "$TG_BUILD/torch-$TG_PIN" ]; then
    ln -s . "$TG_BUILD/torch-$TG_PIN"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  tg_bootstrap
  tg_log "ready: python $TG_PY, build directory $TG_BUILD"
fi
