#!/usr/bin/env python3
"""tools/aoti_compile.py's failure line (the run's recorded reason) names what
failed: for Inductor's own exceptions, built here from torch._inductor.exc,
the operator that could not be lowered or the C++ compiler's first error."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import aoti_compile  # noqa: E402
from torch._inductor.exc import CppCompileError, LoweringException  # noqa: E402


def check(got, want):
    if got != want:
        sys.exit(f"aoti_failure_line_test: got\n  {got!r}\nwant\n  {want!r}")


def main():
    prefix = aoti_compile.FAILURE_PREFIX
    # A message whose first line says it all: nothing added.
    check(aoti_compile.failure_line(RuntimeError("DynamicOutputShapeException: aten._ctc_loss.Tensor\nmore")),
          prefix + "RuntimeError: DynamicOutputShapeException: aten._ctc_loss.Tensor")
    # Inductor's lowering failure: an empty AssertionError, then the operator.
    lowering = LoweringException(AssertionError(), "aten.avg_pool2d_backward.default", ["grad", "self"], {})
    check(aoti_compile.failure_line(lowering),
          prefix + "LoweringException: AssertionError: (target: aten.avg_pool2d_backward.default)")
    # The generated C++ does not compile: warnings first, then the error.
    output = ("/tmp/c.cpp:884:5: warning: dereferencing type-punned pointer [-Wstrict-aliasing]\n"
              "/tmp/c.cpp:912:9: error: 'tmp3' was not declared in this scope\n"
              "/tmp/c.cpp:913:9: error: second error\n")
    check(aoti_compile.failure_line(CppCompileError(["g++", "-Werror=x", "/tmp/c.cpp"], output)),
          prefix + "CppCompileError: C++ compile error (c.cpp:912:9: error: 'tmp3' was not declared in this scope)")
    # No message at all.
    check(aoti_compile.failure_line(KeyError()), prefix + "KeyError: ")
    print("aoti_failure_line_test: 4 cases passed")


if __name__ == "__main__":
    main()
