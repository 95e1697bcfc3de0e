#!/usr/bin/env python3
"""vl-convert helper for torchgauge-report.

One process renders a whole batch so vl-convert starts once:
  vl_render.py check                      exit 0 when vl-convert imports
  vl_render.py bundle OUT.js VL_VERSION   write the Vega + Vega-Lite + vega-embed bundle
  vl_render.py svg VL_VERSION < jobs      jobs: one "SPEC.vl.json<TAB>OUT.svg" per line
Each SVG is written to a temporary file and renamed, and skipped when the
existing file already has the same bytes (so unchanged figures keep their
mtime). An SVG is a static image (Markdown embeds it with its alt text), so
its marks carry no ARIA labels: they would more than double its size and no
reader reaches them through an <img>. Problems go to stderr as "error: PATH: message"; exit 1 if any.
"""
import json
import os
import sys
import tempfile


def write_if_changed(path, data):
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except OSError:
        pass
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv):
    try:
        import vl_convert as vlc
    except ImportError as e:
        print("error: vl-convert-python is not importable: %s" % e, file=sys.stderr)
        return 3
    if len(argv) < 2 or argv[1] == "check":
        print(vlc.__version__)
        return 0
    if argv[1] == "bundle":
        out, version = argv[2], argv[3]
        write_if_changed(out, vlc.javascript_bundle(vl_version=version).encode("utf-8"))
        return 0
    if argv[1] == "svg":
        version = argv[2]
        failed = 0
        for line in sys.stdin:
            line = line.rstrip("\n")
            if not line:
                continue
            spec_path, out = line.split("\t", 1)
            try:
                with open(spec_path, encoding="utf-8") as f:
                    spec = json.load(f)
                spec.setdefault("config", {})["aria"] = False
                svg = vlc.vegalite_to_svg(spec, vl_version=version)
                write_if_changed(out, svg.encode("utf-8"))
            except Exception as e:  # report and go on with the batch
                failed += 1
                print("error: %s: %s" % (spec_path, e), file=sys.stderr)
        return 1 if failed else 0
    print("usage: vl_render.py check | bundle OUT VERSION | svg VERSION < jobs", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
