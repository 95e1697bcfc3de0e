#!/usr/bin/env bash
# Makes .device/ (git-ignored) for a lent GPU machine, which has LibTorch,
# nvcc, CUPTI and ncu but none of the Debian packages and no registry:
#   .device/deps/include   nlohmann/json, CLI11 and doctest headers (header-only)
#   .device/deps/cmake     doctest's test-discovery scripts
#   .device/wheels         jsonschema and the packages it needs that the
#                          machine's image lacks (schema validation in tests)
# Run it here (where the Debian packages and PyPI are), then pass
# carry [".device"] to the device tool and run tools/gpu_verify.sh there.
# Usage: device_bundle.sh [--no-wheels] [DEST]   (DEST: default .device;
# --no-wheels: headers and scripts only, no download, for the rehearsal)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wheels=1
if [ "${1:-}" = --no-wheels ]; then wheels=0; shift; fi
dest="${1:-$root/.device}"
rm -rf "$dest"
mkdir -p "$dest/deps/include" "$dest/deps/cmake" "$dest/wheels"
for h in nlohmann CLI doctest; do
  [ -d "/usr/include/$h" ] || { echo "device_bundle: /usr/include/$h missing (run ./gauge build first)" >&2; exit 2; }
  cp -r "/usr/include/$h" "$dest/deps/include/"
done
cp /usr/lib/cmake/doctest/doctest.cmake /usr/lib/cmake/doctest/doctestAddTests.cmake "$dest/deps/cmake/"
# The machine's python3 is CPython 3.12 on x86-64 (device README); versions
# as in tools/requirements.txt and the venv it builds.
if [ "$wheels" = 1 ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$dest/wheels" jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
fi
du -sh "$dest" | sed 's/^/device_bundle: /'
