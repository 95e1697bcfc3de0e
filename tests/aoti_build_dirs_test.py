#!/usr/bin/env python3
"""tools/aoti_compile.py's remove_build_dirs removes exactly the build
directories of the package it is given: a fake Inductor cache directory with
this package's build directory, another compile's, and the shared caches; a
package laid out as aoti_compile_and_package writes it. And none while
another compile holds the cache directory's lock."""
import os
import pathlib
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import aoti_compile  # noqa: E402


def touch(path, text="x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        cache = root / "torchinductor_user"
        mine, other = cache / "c3xbr", cache / "c5igd"
        touch(mine / "civsc.wrapper.cpp")
        touch(mine / "civsc.wrapper.so")
        touch(mine / "cd5f6.kernel.cpp")
        touch(mine / "civsc" / "weights.o")
        touch(other / "cabcd.wrapper.cpp")  # a concurrent compile's
        touch(cache / "precompiled_headers" / "c1234.h.gch")
        touch(cache / "aq" / "caqgq.cpp")
        touch(cache / "civsc.wrapper.cpp")  # a file, not a build directory
        package = root / "p.pt2"
        with zipfile.ZipFile(package, "w") as z:
            for name in ("civsc.wrapper.cpp", "cd5f6.kernel.cpp", "civsc.wrapper.so"):
                z.writestr(f"p.tmp/data/aotinductor/model/{name}", "x")
            z.writestr("p.tmp/archive_format", "pt2")

        # While another compile runs (its shared lock held), nothing goes:
        # the same graph compiled twice builds in the same directory.
        with aoti_compile.compiling(cache):
            if aoti_compile.remove_build_dirs_when_alone(package, cache) is not None or not mine.exists():
                sys.exit("aoti_build_dirs_test: removed a build directory while another compile ran")
        removed = aoti_compile.remove_build_dirs_when_alone(package, cache)
        if removed != [mine] or mine.exists():
            sys.exit(f"aoti_build_dirs_test: removed {removed}, want [{mine}]")
        left = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
        want = ["aq/caqgq.cpp", "c5igd/cabcd.wrapper.cpp", "civsc.wrapper.cpp", "precompiled_headers/c1234.h.gch",
                aoti_compile.LOCK_NAME]
        if left != want:
            sys.exit(f"aoti_build_dirs_test: left {left}, want {want}")
        # Again: nothing of this package is left, so nothing else goes.
        if aoti_compile.remove_build_dirs(package, cache):
            sys.exit("aoti_build_dirs_test: a second call removed something")
        # A cache directory that does not exist (no compile ran there yet).
        if aoti_compile.remove_build_dirs(package, root / "absent"):
            sys.exit("aoti_build_dirs_test: removed something from a missing directory")
    print("aoti_build_dirs_test: 4 cases passed")


if __name__ == "__main__":
    main()
