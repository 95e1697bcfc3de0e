#!/usr/bin/env python3
"""tools/libtorch_rss.py's tables: the peak per release is the median of the
rounds, a mapping is listed when it moved by --min-mib or was asked for, a
library resident under some releases only is named with who needs it, and
the spread is the largest between rounds of one release."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("libtorch_rss", sys.argv[1])
rss = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rss)


def run(peak, files):
    return {"VmHWM_kib": peak * 1024, "RssAnon_kib": 100 * 1024, "RssFile_kib": (peak - 100) * 1024,
            "files_kib": {n: mib * 1024 for n, mib in files.items()}}


releases = ["2.14.1", "2.15.0"]
runs = {
    "2.14.1": [run(400, {"libnvJitLink.so": 31, "libc10.so": 1.0, "[heap]": 70}),
               run(402, {"libnvJitLink.so": 31, "libc10.so": 1.0, "[heap]": 70})],
    "2.15.0": [run(386, {"libc10.so": 1.2, "[heap]": 75, "libnew.so": 0.0}),
               run(387, {"libc10.so": 1.2, "[heap]": 75, "libnew.so": 0.0})],
}
table = rss.table("C++", releases, runs, 1.0, ["libc10.so"])
failures = []
for want in ("| peak RSS (MiB) | 401.0 | 386.5 |", "| `libnvJitLink.so` | 31.0 | 0.0 |", "| `[heap]` | 70.0 | 75.0 |",
             "| `libc10.so` | 1.0 | 1.2 |", "Largest spread of the peak between rounds of one release: 2.0 MiB."):
    if want not in table:
        failures.append(f"table lacks {want!r}")
if "libc10.so" in rss.table("C++", releases, runs, 1.0, []):
    failures.append("a mapping that moved by 0.2 MiB was listed without --show")
moved = rss.moved_libraries(releases, runs)
if moved != ["libnvJitLink.so"]:
    failures.append(f"moved libraries {moved}, want only libnvJitLink.so (libnew.so is never resident)")
why = rss.why_loaded(releases, runs, moved, {"2.14.1": {"libnvJitLink.so": ["libcusparse.so.12"]}, "2.15.0": {}})
want = "| `libnvJitLink.so` | 31.0 MiB; needed by libcusparse.so.12 | not resident; needed by nothing in the wheels |"
if want not in why:
    failures.append(f"why_loaded lacks {want!r}:\n{why}")
if "mapped the same libraries" not in rss.why_loaded(releases, runs, [], {}):
    failures.append("no moved library gives no sentence")
print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
