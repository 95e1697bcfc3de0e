#!/bin/sh
# Test double for `torchgauge-collect bisect --command`: "installs" revision
# REV by writing a collector wrapper into DIR. Revisions at or after PLANTED
# (rNN numbering) carry a planted slowdown, as a bad commit would: SLOW (default
# 5.0) times each step's own time. JITTER (default 0) adds random noise to
# every revision's steps (run --jitter). BALLAST (MiB, default 0) is held by
# every revision *before* PLANTED (run --ballast-mib), so that PLANTED sheds
# it: a planted memory improvement, for bisect --improvement.
set -eu
rev="$1" dir="$2" collector="$3" planted="$4" planted_slow="${5:-5.0}" jitter="${6:-0}" ballast="${7:-0}"
mkdir -p "$dir"
n=$(echo "$rev" | tr -dc '0-9' | sed 's/^0*//'); n=${n:-0}
slow=0
if [ "$n" -ge "$planted" ]; then slow="$planted_slow" ballast=0; fi
cat > "$dir/collector" <<WRAP
#!/bin/sh
exec "$collector" "\$@" --threads 1 --slowdown $slow --jitter $jitter --ballast-mib $ballast
WRAP
chmod +x "$dir/collector"
