#!/usr/bin/env python3
"""Groups a target's sources into unity units whose files declare no name twice.

A unity build compiles several .cc files as one translation unit, so two files
of a unit must not both define a file-local name (an anonymous namespace's
`kLr`, `MakeLayerNorm`, `EncoderImpl`, ...): the model families and their
parity tests share many. This script reads each file's declarations at column
0 (types, TORCH_MODULE holders, constants, functions, variables, macros,
aliases), a conservative reading, and what the file takes from elsewhere: the
names its project headers declare (#include "...", followed), and its
indented k-constants (which -Wshadow reports when a neighbour declares the
name at namespace scope). Two files may share a unit when neither declares a
name that the other declares or takes. Units are filled first-fit, in path
order, up to --batch files each: a file's unit only changes when the file
itself or one before it changes.

Input (--in): lines `target<TAB>source path`. Output (--out): lines
`target<TAB>group<TAB>source path` for every source in a unit of two or more;
a source with no partner compiles alone (it is not listed), and so does
the file that implements doctest (DOCTEST_CONFIG_IMPLEMENT), which must
include doctest.h before any other file does.
cmake/unity.cmake runs it at configure time and sets UNITY_GROUP from it.
"""
import argparse
import collections
import pathlib
import re
import sys

_TYPE = re.compile(r"^(?:template\s*<.*>\s*)?(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)")
_HOLDER = re.compile(r"^TORCH_MODULE\((\w+)\)")
_MACRO = re.compile(r"^#\s*define\s+(\w+)")
_ALIAS = re.compile(r"^(?:using|namespace)\s+(\w+)\s*=\s*(.*?);")
# `const std::vector<int64_t> kVocab = {`, `constexpr double kLr = 2e-4, kBeta1 = 0.5;`
_CONST = re.compile(r"^(?:static\s+|inline\s+)*(?:constexpr|const)\s+[\w:<>,\s\*&]+?[\s\*&](\w+)\s*(?:=|\{|\[|;)")
_MORE = re.compile(r",\s*(\w+)\s*=")
# `torch::Tensor Foo(`, `static int64_t* Bar(`; not `Impl::forward(` (a member).
_FUNC = re.compile(r"^(?:[\w:<>,]+[\s\*&]+)+(\w+)\s*\(")
# `std::mutex g_mu;`, `Foo g_registry{...}`
_VAR = re.compile(r"^(?:static\s+|thread_local\s+)*[\w:<>]+[\s\*&]+(\w+)\s*(?:=|;|\{)")
_SKIP = ("return", "else", "case", "default", "public", "private", "protected", "template", "namespace", "using")


_ALIASED = "\t= "  # name, _ALIASED, what it names: no identifier holds it


def clash(a, b):
    """The names of `a` and `b` that cannot share a unit: any in both, but an
    alias both declare to the same thing; an alias declared to two things, or
    beside a name that is not an alias, is one."""
    def split(names):
        plain, aliases = set(), {}
        for n in names:
            if _ALIASED in n:
                name, target = n.split(_ALIASED, 1)
                aliases[name] = target
            else:
                plain.add(n)
        return plain, aliases

    (pa, aa), (pb, ab) = split(a), split(b)
    out = pa & pb
    out |= {n for n in aa.keys() & ab.keys() if aa[n] != ab[n]}
    out |= (aa.keys() & pb) | (ab.keys() & pa)
    return out


def declared_names(text):
    """The names a file declares at column 0, aliases with their target."""
    names = set()
    for line in text.split("\n"):
        if not line or line[0] in " \t}/*{)":
            continue
        if line.startswith("#") and not _MACRO.match(line):
            continue
        m = _ALIAS.match(line)
        if m:
            # The same alias to the same thing may be declared twice.
            names.add(m.group(1) + _ALIASED + m.group(2).replace(" ", ""))
            continue
        if line.split()[0].rstrip(":;") in _SKIP:
            continue
        for pattern in (_MACRO, _HOLDER, _TYPE, _CONST, _FUNC, _VAR):
            m = pattern.match(line)
            if m:
                names.add(m.group(1))
                if pattern is _CONST:
                    names.update(_MORE.findall(line))
                break
    return names


_INCLUDE = re.compile(r'^#\s*include\s+"([^"]+)"', re.M)
_LOCAL_CONST = re.compile(r"^\s+(?:static\s+)?(?:constexpr|const)\s+[\w:<>,\s\*&]+?[\s\*&](k[A-Z]\w*)\s*(?:=|\{|\[|;)")


def taken_names(text, root, read, seen=None):
    """What a file takes from elsewhere: its project headers' names, followed
    through their includes, and its indented k-constants."""
    seen = set() if seen is None else seen
    names = set()
    for line in text.split("\n"):
        m = _LOCAL_CONST.match(line)
        if m:
            names.add(m.group(1))
            names.update(n for n in _MORE.findall(line) if n.startswith("k"))
    for header in _INCLUDE.findall(text):
        path = root / header
        if header in seen or not path.is_file():
            continue
        seen.add(header)
        header_text = read(path)
        names |= declared_names(header_text) | taken_names(header_text, root, read, seen)
    return names


def group(paths, batch, root, read=lambda p: pathlib.Path(p).read_text(errors="replace")):
    """First-fit units of at most `batch` files, none declaring a name that
    another of its unit declares or takes."""
    units = []  # [(files, declared, taken)]
    for path in sorted(paths):
        text = read(path)
        if "DOCTEST_CONFIG_IMPLEMENT" in text:
            continue  # doctest's implementation: before any other doctest include
        own, uses = declared_names(text), taken_names(text, root, read)
        for files, declared, taken in units:
            if len(files) < batch and not clash(own, declared | taken) and not clash(uses, declared):
                files.append(path)
                declared |= own
                taken |= uses
                break
        else:
            units.append(([path], set(own), set(uses)))
    return [files for files, _, _ in units]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in", dest="inp", required=True, help="lines: target<TAB>source")
    parser.add_argument("--out", required=True, help="lines: target<TAB>group<TAB>source")
    parser.add_argument("--batch", type=int, default=8, help="files per unit at most (default 8)")
    parser.add_argument("--root", required=True, help="the folder that project #includes are relative to")
    args = parser.parse_args(argv)
    if args.batch < 2:
        parser.error("--batch must be at least 2")
    by_target = collections.defaultdict(list)
    for n, line in enumerate(pathlib.Path(args.inp).read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            sys.exit(f"{args.inp}:{n}: expected target<TAB>source, got {line!r}")
        by_target[parts[0]].append(parts[1])
    out = []
    for target, sources in sorted(by_target.items()):
        for i, files in enumerate(group(sources, args.batch, pathlib.Path(args.root))):
            if len(files) > 1:
                out += [f"{target}\t{target}_{i}\t{f}" for f in files]
    tmp = pathlib.Path(args.out + ".tmp")
    tmp.write_text("".join(line + "\n" for line in out))
    tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
