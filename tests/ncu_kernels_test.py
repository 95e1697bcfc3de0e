#!/usr/bin/env python3
"""tools/ncu_kernels.py: durations in every unit ncu prints are summed per
kernel name in ms, ==PROF== lines and other metrics are skipped, and an
unknown unit is refused with the kernel's name."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("ncu_kernels", sys.argv[1])
ncu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ncu)

header = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' \
         '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'


def row(i, kernel, metric, unit, value):
    return f'"{i}","7","torchgauge-collect","127.0.0.1","{kernel}","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0",' \
           f'"Command line profiler metrics","{metric}","{unit}","{value}"\n'


log = ["==PROF== Connected to process 7\n", header,
       row(0, "sm90_xmma_gemm_f32f32", "gpu__time_duration.sum", "nsecond", "1,500,000"),
       row(1, "sm90_xmma_gemm_f32f32", "gpu__time_duration.sum", "usecond", "500"),
       row(2, "vectorized_elementwise_kernel", "gpu__time_duration.sum", "msecond", "0.25"),
       row(3, "vectorized_elementwise_kernel", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "12.5"),
       "==PROF== Disconnected from process 7\n"]
failures = []
by, launches = ncu.kernel_times(log)
if launches != 3:
    failures.append(f"launches {launches}, want 3 (the throughput row is another metric)")
if abs(by.get("sm90_xmma_gemm_f32f32", 0) - 2.0) > 1e-9:
    failures.append(f"gemm {by.get('sm90_xmma_gemm_f32f32')} ms, want 1.5 + 0.5 = 2.0")
if abs(by.get("vectorized_elementwise_kernel", 0) - 0.25) > 1e-9:
    failures.append(f"elementwise {by.get('vectorized_elementwise_kernel')} ms, want 0.25")
text = ncu.report(by, launches)
if "2.250 ms  total of 3 kernel launches" not in text or text.index("sm90") > text.index("vectorized"):
    failures.append(f"report:\n{text}")
try:
    ncu.kernel_times([header, row(0, "k", "gpu__time_duration.sum", "cycle", "10")])
    failures.append("an unknown unit was accepted")
except ValueError as e:
    if "'k'" not in str(e) or "'cycle'" not in str(e):
        failures.append(f"the unknown unit's error does not name the kernel and unit: {e}")
for f in failures:
    print("FAIL", f)
print("ncu_kernels_test:", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
