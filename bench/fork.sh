#!/bin/bash
# bench/fork.sh: brig fork (issue 24 item 5), in one run, alternating:
#   fork4     `brig fork SRC f1 f2 f3 f4` of a running sandbox (spec --sandbox
#             --ephemeral: userns=auto, brig's pid 1, egress) with 16 MiB in
#             its layer (16 x 1 MiB); the forks are deleted untimed
#   create4   the reference: `brig create` of 4 containers of the same
#             config, started together (what fork4 does besides the copy)
#   fork1     `brig fork SRC f1` alone
#   fork4s    fork4 of a source with 1000 x 4 KiB files instead
# and the freeze window of each fork4 (SOURCE frozen, from --debug), and the
# CPU time of fork4 and create4 (user + system of the command and the
# workers it waited for; the new inits are not counted in either).
# Target (issue 24): fork4 <= 100 ms. Prints p50/p99 in ms, writes
# results/fork.csv. Env: BRIG=path (default the build tree's), N=iterations
# (default 20; QUICK=1: 5).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BRIG="${BRIG:-$HERE/../runtime/brig}"
if [ "${QUICK:-0}" = 1 ]; then N="${N:-5}"; else N="${N:-20}"; fi
RESULTS="${RESULTS:-$HERE/results}"
[ "$(id -u)" -eq 0 ] || { echo "fork.sh: run as root" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "fork.sh: needs busybox-static" >&2; exit 1; }
WORK="$(mktemp -d /tmp/brig-bench-fork.XXXXXX)"
ROOT="$WORK/root"
chmod 0755 "$WORK"
CG=brig-bench-fork
cleanup() {
	for id in $("$BRIG" --root "$ROOT" list -q 2>/dev/null); do
		"$BRIG" --root "$ROOT" delete -f "$id" >/dev/null 2>&1 || true
	done
	for d in /sys/fs/cgroup/*/$CG /sys/fs/cgroup/$CG; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
b() { "$BRIG" --root "$ROOT" "$@"; }

mkdir -p "$WORK/b/rootfs/bin" "$WORK/b/rootfs/proc" "$WORK/b/rootfs/dev" "$WORK/b/rootfs/tmp" \
	"$WORK/b/rootfs/home" "$WORK/b/rootfs/data"
cp /bin/busybox "$WORK/b/rootfs/bin/busybox"
for a in sh sleep head seq cat; do ln -s busybox "$WORK/b/rootfs/bin/$a"; done
b spec --sandbox --ephemeral --bundle "$WORK/b"
jq '.process.args = ["sleep", "1000000"] | .root.path = "'"$WORK"'/b/rootfs" | del(.linux.seccomp)' \
	"$WORK/b/config.json" >"$WORK/c" && mv "$WORK/c" "$WORK/b/config.json"
# bundle ID: a bundle of the config whose container has a cgroup of its own
bundle() {
	mkdir -p "$WORK/bundles/$1"
	jq '.linux.cgroupsPath = "/'$CG'/'"$1"'"' "$WORK/b/config.json" >"$WORK/bundles/$1/config.json"
	echo "$WORK/bundles/$1"
}
# the image owned as the sandbox's range sees it: its root can write /data
MAP="$(jq '.linux.uidMappings[0].hostID' "$WORK/b/config.json")"
chown -R "$MAP:$MAP" "$WORK/b/rootfs"

source_with() { # ID SCRIPT: a running source whose layer SCRIPT filled
	b create --bundle "$(bundle "$1")" "$1" </dev/null >/dev/null
	b start "$1"
	b exec "$1" sh -c "$2"
}
source_with big 'for i in $(seq 16); do head -c 1048576 /dev/urandom >/data/f$i; done'
source_with small 'for i in $(seq 1000); do head -c 4096 /dev/urandom >/data/f$i; done'

ms() { echo "scale=3; ($2 - $1) / 1000000" | bc; }
# CPU ms (user + system, the command and the children it waited for) from
# bash's `time` with this format: a figure the machine's load does not
# stretch, unlike the wall time
TIMEFORMAT='%3U %3S'
cpu() { awk '{ printf "%.1f\n", ($1 + $2) * 1000 }'; }
ns() { date +%s%N; }
drop() { for id in "$@"; do b delete -f "$id"; done; }
KINDS="fork4 create4 fork1 fork4s frozen fork4cpu create4cpu"
for k in $KINDS; do : >"$WORK/$k"; done
for i in $(seq "$N"); do
	t0=$(ns)
	{ time b --debug fork big f1 f2 f3 f4 2>"$WORK/dbg" >/dev/null; } 2>"$WORK/t"
	t1=$(ns)
	ms "$t0" "$t1" >>"$WORK/fork4"
	cpu <"$WORK/t" >>"$WORK/fork4cpu"
	sed -n 's/.*frozen \([0-9.]*\) ms.*/\1/p' "$WORK/dbg" >>"$WORK/frozen"
	drop f1 f2 f3 f4
	for c in c1 c2 c3 c4; do bundle "$c" >/dev/null; done
	t0=$(ns)
	{ time {
		for c in c1 c2 c3 c4; do b create --bundle "$WORK/bundles/$c" "$c" </dev/null >/dev/null & done
		wait
	}; } 2>"$WORK/t"
	t1=$(ns)
	ms "$t0" "$t1" >>"$WORK/create4"
	cpu <"$WORK/t" >>"$WORK/create4cpu"
	drop c1 c2 c3 c4
	t0=$(ns); b fork big f1; t1=$(ns)
	ms "$t0" "$t1" >>"$WORK/fork1"
	drop f1
	t0=$(ns); b fork small f1 f2 f3 f4; t1=$(ns)
	ms "$t0" "$t1" >>"$WORK/fork4s"
	drop f1 f2 f3 f4
done

pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int((NR-1)*p/100)+1; print a[i]}'; }
mkdir -p "$RESULTS"
{
	echo "scenario,p50_ms,p99_ms,n"
	for k in $KINDS; do
		echo "$k,$(pct 50 <"$WORK/$k"),$(pct 99 <"$WORK/$k"),$(wc -l <"$WORK/$k")"
	done
} | tee "$RESULTS/fork.csv"
p50="$(pct 50 <"$WORK/fork4")"
c50="$(pct 50 <"$WORK/create4")"
echo "# CPU: fork4 $(pct 50 <"$WORK/fork4cpu") ms, create4 $(pct 50 <"$WORK/create4cpu") ms (p50)"
echo "# fork4 p50 ${p50} ms (target <= 100 ms: $(echo "$p50 <= 100" | bc | sed 's/1/holds/;s/0/missed/')); $(echo "scale=2; $p50 / $c50" | bc)x create4 (${c50} ms); nproc $(nproc), load $(cut -d' ' -f1 /proc/loadavg)"
