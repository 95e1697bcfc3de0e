#!/usr/bin/env python3
"""tools/unity_groups.py keeps apart two files that declare one name, a file
that declares a name another takes from its header or shadows with a local
k-constant, and the file that implements doctest; it puts files with no name
in common together, at most --batch to a unit; and the real model families'
units, from the repository, hold no name twice."""
import pathlib
import subprocess
import sys
import tempfile

FILES = {
    "inc/common.h": "#pragma once\nint MakeNorm(int dim, double eps);\n",
    "a.cc": "namespace {\nconstexpr double kLr = 1e-3;\nint Helper(int x) { return x; }\n}  // namespace\n",
    "b.cc": "namespace {\nconstexpr double kLr = 2e-4, kBeta = 0.5;\n}  // namespace\n",
    "c.cc": '#include "inc/common.h"\nint UsesNorm() { return MakeNorm(4, 1e-5); }\n',
    "d.cc": "namespace {\nint MakeNorm(int dim) { return dim; }\n}  // namespace\n",
    "e.cc": "int Shadowing() {\n  constexpr double kBeta = 0.9;\n  return 0;\n}\n",
    "f.cc": "#define DOCTEST_CONFIG_IMPLEMENT\n#include <doctest/doctest.h>\n",
    "g.cc": "namespace fs = std::filesystem;\nstruct Gee {};\n",
    "h.cc": "namespace fs = std::filesystem;\nstruct Aitch {};\n",
}


def units(script, root, batch):
    lines = "".join(f"t\t{root / name}\n" for name in sorted(FILES) if name.endswith(".cc"))
    (root / "in.txt").write_text(lines)
    subprocess.run([sys.executable, script, "--in", str(root / "in.txt"), "--out", str(root / "out.txt"),
                    "--batch", str(batch), "--root", str(root)], check=True)
    by_group = {}
    for line in (root / "out.txt").read_text().splitlines():
        _, group, path = line.split("\t")
        by_group.setdefault(group, set()).add(pathlib.Path(path).name)
    return list(by_group.values())


def together(groups, x, y):
    return any(x in g and y in g for g in groups)


def main():
    script = sys.argv[1]
    failed = []

    def check(ok, what):
        if not ok:
            failed.append(what)
            print("FAIL:", what)

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "inc").mkdir()
        for name, text in FILES.items():
            (root / name).write_text(text)
        groups = units(script, root, 8)
        print("units:", sorted(sorted(g) for g in groups))
        check(not together(groups, "a.cc", "b.cc"), "a.cc and b.cc both declare kLr")
        check(not together(groups, "c.cc", "d.cc"), "d.cc declares MakeNorm, which c.cc takes from its header")
        check(not together(groups, "b.cc", "e.cc"), "e.cc's local kBeta shadows b.cc's")
        check(not any("f.cc" in g for g in groups), "f.cc implements doctest and compiles alone")
        check(together(groups, "g.cc", "h.cc"), "g.cc and h.cc share only an identical alias")
        check(together(groups, "a.cc", "c.cc"), "a.cc and c.cc have no name in common")
        check(all(len(g) <= 2 for g in units(script, root, 2)), "--batch 2: at most two files a unit")

    # The repository's own model families: no unit declares a name twice.
    repo = pathlib.Path(script).resolve().parent.parent
    sys.path.insert(0, str(repo / "tools"))
    import unity_groups

    sources = sorted(str(p) for p in (repo / "models").rglob("*.cc") if not p.name.endswith("_test.cc"))
    for unit in unity_groups.group(sources, 8, repo):
        for i, a in enumerate(unit):
            for b in unit[i + 1:]:
                both = unity_groups.clash(unity_groups.declared_names(pathlib.Path(a).read_text()),
                                          unity_groups.declared_names(pathlib.Path(b).read_text()))
                check(not both, f"{sorted(both)} declared by {a} and {b} in one unit")
    print(f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
