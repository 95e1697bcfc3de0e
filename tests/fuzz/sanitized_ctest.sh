#!/usr/bin/env bash
# Runs the nested ctest of the sanitizer build (cmake/sanitize.cmake) with a
# 64 MiB stack. That build compiles the test files at -O0
# (tests/fuzz/clang_build.sh), where ASan's frames are several times their
# optimised size: json_io_test's 1,100-level document overflows the default
# 8 MiB in nlohmann's recursive dump (a SEGV, 2026-11-29). The limit is raised, never lowered.
#   sanitized_ctest.sh CTEST ARGS...
set -euo pipefail
want=65536
soft=$(ulimit -s)
if [ "$soft" != unlimited ] && [ "$soft" -lt "$want" ]; then
  if ! ulimit -s "$want" 2>/dev/null; then
    echo "sanitized_ctest.sh: cannot raise the stack limit to $want KiB (hard limit $(ulimit -Hs));" \
      "the -O0 sanitizer build's deepest tests need it" >&2
    exit 1
  fi
fi
exec "$@"
