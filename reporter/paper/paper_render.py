#!/usr/bin/env python3
"""PDF helper for `torchgauge-report paper` (the paper kit).

  paper_render.py check                 exit 0 when vl-convert imports
  paper_render.py pdf VL_VERSION < jobs jobs: a JSON list of
      {"spec": SPEC.vl.json, "out": OUT.pdf, "info": {"Title": ..., ...}}

vl-convert renders each Vega-Lite spec to PDF. Two things are then fixed so
that the same spec always gives the same bytes:
  * vl-convert (svg2pdf) writes the entries of a page's resource
    dictionaries (/XObject, /Font, ...) in hash order, which changes from run
    to run. Runs of "/name N 0 R" lines of one dictionary are sorted; a run
    keeps its length, so every byte offset, and the xref table, stay valid.
  * The document information dictionary is replaced, by an incremental
    update (a new object, xref section and trailer appended), with the
    kit's provenance and a fixed CreationDate (the build's start).
Each PDF is written to a temporary file and renamed. Problems go to stderr
as "error: PATH: message"; exit 1 if any.
"""
import json
import os
import re
import sys
import tempfile

_STREAM = re.compile(rb"(stream\r?\n.*?\r?\nendstream)", re.S)
_RUN = re.compile(rb"(?:\n( +)/[A-Za-z0-9_.+-]+ \d+ 0 R)(?:\n\1/[A-Za-z0-9_.+-]+ \d+ 0 R)+")
_TRAILER = re.compile(rb"trailer\s*<<(.*?)>>\s*startxref\s*(\d+)\s*%%EOF\s*$", re.S)


def sort_resource_runs(pdf):
    def fix(m):
        lines = m.group(0).split(b"\n")[1:]
        return b"".join(b"\n" + line for line in sorted(lines))
    parts = _STREAM.split(pdf)
    # Odd parts are streams (binary): left alone.
    return b"".join(p if i % 2 else _RUN.sub(fix, p) for i, p in enumerate(parts))


def pdf_text(s):
    """A PDF text string: UTF-16BE with a byte-order mark, in hex."""
    return b"<FEFF" + s.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def set_info(pdf, info):
    m = _TRAILER.search(pdf)
    if not m:
        raise ValueError("no classic trailer found (an xref stream?)")
    trailer, prev = m.group(1), int(m.group(2))
    size = int(re.search(rb"/Size (\d+)", trailer).group(1))
    root = re.search(rb"/Root (\d+ \d+ R)", trailer).group(1)
    entries = b"".join(b"/" + k.encode("ascii") + b" " + pdf_text(v) + b"\n"
                       for k, v in sorted(info.items()) if k != "CreationDate")
    if "CreationDate" in info:  # a date string: ASCII, "D:YYYYMMDDHHmmSSZ"
        entries += b"/CreationDate (" + info["CreationDate"].encode("ascii") + b")\n"
    if not pdf.endswith(b"\n"):
        pdf += b"\n"
    obj_offset = len(pdf)
    obj = b"%d 0 obj\n<<\n" % size + entries + b">>\nendobj\n"
    xref_offset = obj_offset + len(obj)
    xref = b"xref\n%d 1\n%010d 00000 n \n" % (size, obj_offset)
    tail = (b"trailer\n<<\n/Size %d\n/Root " % (size + 1) + root + b"\n/Info %d 0 R\n/Prev %d\n>>\n" % (size, prev) +
            b"startxref\n%d\n%%%%EOF\n" % xref_offset)
    return pdf + obj + xref + tail


def write_atomic(path, data):
    d = os.path.dirname(path) or "."
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
    if argv[1] != "pdf" or len(argv) < 3:
        print("usage: paper_render.py check | pdf VL_VERSION < jobs.json", file=sys.stderr)
        return 2
    failed = 0
    for job in json.load(sys.stdin):
        try:
            with open(job["spec"], encoding="utf-8") as f:
                spec = f.read()
            pdf = vlc.vegalite_to_pdf(spec, vl_version=argv[2])
            write_atomic(job["out"], set_info(sort_resource_runs(pdf), job.get("info", {})))
        except Exception as e:  # report and go on with the batch
            failed += 1
            print("error: %s: %s" % (job.get("spec"), e), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
