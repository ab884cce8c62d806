#!/bin/bash
# bench/cp.sh: `brig cp` (issue #24 item 4) against what one does without
# it, in one run, on the same running container (a tmpfs at /data):
#   ref_nsenter  tar on the host | nsenter -m -r into the init | busybox tar
#                (and back): the bare stream, no joining of cgroups, no checks
#   ref_exec     tar on the host | brig exec -i ID tar x (and back): what a
#                user of the runtime does today
#   brig_cp      brig cp SRC ID:/data (and ID:/data/... DST)
# for one 16 MiB file and a tree of 1000 files of 4 KiB, in and out, and an
# empty file (the fixed cost: fork, setns, cgroup join, the handshake).
# Prints p50 ms, MiB/s and brig_cp / ref ratios; writes results/cp.csv.
# Env: BRIG=path (default the build tree's), N=iterations (default 15).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BRIG="${BRIG:-$HERE/../runtime/brig}"
N="${N:-15}"
RESULTS="${RESULTS:-$HERE/results}"
[ "$(id -u)" -eq 0 ] || { echo "cp.sh: run as root" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "cp.sh: needs busybox-static" >&2; exit 1; }
WORK="$(mktemp -d /tmp/brig-bench-cp.XXXXXX)"
ROOT="$WORK/root"
# the host's sources and destinations on tmpfs, as the container's /data:
# the copy is measured, not the disk (other work on the machine journals)
SHM="$(mktemp -d /dev/shm/brig-bench-cp.XXXXXX)"
cleanup() {
	"$BRIG" --root "$ROOT" delete -f c >/dev/null 2>&1 || true
	for d in /sys/fs/cgroup/*/brig-bench-cp /sys/fs/cgroup/brig-bench-cp; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$WORK" "$SHM"
}
trap cleanup EXIT

mkdir -p "$WORK/b/rootfs/bin" "$WORK/b/rootfs/proc" "$WORK/b/rootfs/dev" "$WORK/b/rootfs/data" \
	"$WORK/b/rootfs/tmp"
cp /bin/busybox "$WORK/b/rootfs/bin/busybox"
for a in sh sleep tar rm mkdir cat; do ln -s busybox "$WORK/b/rootfs/bin/$a"; done
(cd "$WORK/b" && "$BRIG" spec && jq '.root.readonly = false | .process.terminal = false
	| .process.args = ["sleep", "100000"] | .linux.cgroupsPath = "/brig-bench-cp/c"
	| .mounts += [{destination: "/data", type: "tmpfs", source: "tmpfs",
		options: ["size=512m"]}]' config.json >c && mv c config.json)
"$BRIG" --root "$ROOT" run -d --bundle "$WORK/b" c </dev/null >/dev/null 2>&1
PID="$("$BRIG" --root "$ROOT" state c | jq -r .pid)"

# the sources on the host, and the containers' copies to read back
mkdir -p "$SHM/src/tree" "$SHM/out"
head -c $((16 << 20)) /dev/urandom >"$SHM/src/big"
: >"$SHM/src/empty"
for i in $(seq 1000); do head -c 4096 /dev/urandom >"$SHM/src/tree/f$i"; done
mkdir -p "$WORK/b/rootfs/data" # (the tmpfs is over it inside)
"$BRIG" --root "$ROOT" cp "$SHM/src/big" c:/data/big
"$BRIG" --root "$ROOT" cp "$SHM/src/tree" c:/data/tree

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m}'; }
now() { date +%s%N; }
ns() { nsenter -t "$PID" -m -r -- /bin/busybox "$@"; }
bx() { "$BRIG" --root "$ROOT" exec -i c /bin/busybox "$@"; }
bcp() { "$BRIG" --root "$ROOT" cp "$@"; }

# one way of doing CASE: the shell command, timed N times (alternating
# with the others, so drift hits them alike)
run_case() {
	local case="$1" method="$2" t0
	shift 2
	rm -rf "$SHM/out"/*
	t0=$(now)
	"$@" >/dev/null
	echo $(( ($(now) - t0) / 1000 )) >>"$WORK/t.$case.$method"
}
in_file_ns() { tar -C "$SHM/src" -cf - big | ns tar -C /data -xf -; }
in_file_ex() { tar -C "$SHM/src" -cf - big | bx tar -C /data -xf -; }
in_file_cp() { bcp "$SHM/src/big" c:/data/big; }
out_file_ns() { ns tar -C /data -cf - big | tar -C "$SHM/out" -xf -; }
out_file_ex() { bx tar -C /data -cf - big </dev/null | tar -C "$SHM/out" -xf -; }
out_file_cp() { bcp c:/data/big "$SHM/out/big"; }
in_tree_ns() { tar -C "$SHM/src" -cf - tree | ns tar -C /data -xf -; }
in_tree_ex() { tar -C "$SHM/src" -cf - tree | bx tar -C /data -xf -; }
in_tree_cp() { bcp "$SHM/src/tree" c:/data; }
out_tree_ns() { ns tar -C /data -cf - tree | tar -C "$SHM/out" -xf -; }
out_tree_ex() { bx tar -C /data -cf - tree </dev/null | tar -C "$SHM/out" -xf -; }
out_tree_cp() { bcp c:/data/tree "$SHM/out"; }
empty_ns() { tar -C "$SHM/src" -cf - empty | ns tar -C /data -xf -; }
empty_ex() { tar -C "$SHM/src" -cf - empty | bx tar -C /data -xf -; }
empty_cp() { bcp "$SHM/src/empty" c:/data/empty; }

CASES="in_file out_file in_tree out_tree empty"
for i in $(seq "$N"); do
	for c in $CASES; do
		for m in ns ex cp; do run_case "$c" "$m" "${c}_$m"; done
	done
done

mkdir -p "$RESULTS"
{
	echo "case,method,p50_ms,mib_s"
	for c in $CASES; do
		case "$c" in
		*file) mib=16 ;;
		*tree) mib=3.90625 ;;
		*) mib=0 ;;
		esac
		for m in ns ex cp; do
			us="$(median <"$WORK/t.$c.$m")"
			awk -v c="$c" -v m="$m" -v us="$us" -v mib="$mib" 'BEGIN {
				name = m == "ns" ? "ref_nsenter" : m == "ex" ? "ref_exec" : "brig_cp"
				printf "%s,%s,%.2f,%.0f\n", c, name, us / 1000, mib ? mib / (us / 1e6) : 0 }'
		done
	done
} >"$RESULTS/cp.csv"
column -s, -t "$RESULTS/cp.csv"
echo "N=$N, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk -F, 'NR > 1 { t[$1 "," $2] = $3 } END {
	n = split("in_file out_file in_tree out_tree empty", cs, " ")
	for (i = 1; i <= n; i++) {
		c = cs[i]
		printf "%-9s brig_cp/ref_nsenter %.2fx   brig_cp/ref_exec %.2fx\n", c,
			t[c ",brig_cp"] / t[c ",ref_nsenter"], t[c ",brig_cp"] / t[c ",ref_exec"]
	} }' "$RESULTS/cp.csv"
