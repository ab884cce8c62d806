#!/bin/bash
# bench/ephemeral.sh: the cost of an ephemeral rootfs (run.brig.rootfs.ephemeral,
# issue #13): `brig create` + `delete` of the same bundle with a plain rootfs,
# the tmpfs layer and the disk layer, alternating in one run; median ms.
# Writes results/ephemeral.csv and prints ratios (layer / plain).
# Env: BRIG=path (default the build tree's), N=iterations (default 40).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BRIG="${BRIG:-$HERE/../runtime/brig}"
N="${N:-40}"
RESULTS="${RESULTS:-$HERE/results}"
[ "$(id -u)" -eq 0 ] || { echo "ephemeral.sh: run as root" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "ephemeral.sh: needs busybox-static" >&2; exit 1; }
WORK="$(mktemp -d /tmp/brig-bench-ephemeral.XXXXXX)"
ROOT="$WORK/root"
cleanup() {
	for id in $("$BRIG" --root "$ROOT" list -q 2>/dev/null); do
		"$BRIG" --root "$ROOT" delete -f "$id" >/dev/null 2>&1 || true
	done
	for d in /sys/fs/cgroup/*/brig-bench-ephemeral /sys/fs/cgroup/brig-bench-ephemeral; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/b/rootfs/bin" "$WORK/b/rootfs/proc" "$WORK/b/rootfs/dev"
cp /bin/busybox "$WORK/b/rootfs/bin/busybox"
ln -s busybox "$WORK/b/rootfs/bin/sh"
ln -s busybox "$WORK/b/rootfs/bin/sleep"
(cd "$WORK/b" && "$BRIG" spec && jq '.root.readonly = false | .process.terminal = false
	| .process.args = ["sleep", "0"] | .linux.cgroupsPath = "/brig-bench-ephemeral/c"' \
	config.json >c && mv c config.json)
cp "$WORK/b/config.json" "$WORK/plain.json"
jq '.annotations["run.brig.rootfs.ephemeral"] = "true"' "$WORK/plain.json" >"$WORK/tmpfs.json"
jq '.annotations["run.brig.rootfs.ephemeral.size"] = "disk"' "$WORK/tmpfs.json" >"$WORK/disk.json"

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m}'; }
ns() { date +%s%N; }

for kind in plain tmpfs disk; do : >"$WORK/create.$kind"; : >"$WORK/delete.$kind"; done
for i in $(seq "$N"); do
	for kind in plain tmpfs disk; do
		cp "$WORK/$kind.json" "$WORK/b/config.json"
		t0=$(ns)
		"$BRIG" --root "$ROOT" create --bundle "$WORK/b" c >/dev/null
		t1=$(ns)
		"$BRIG" --root "$ROOT" delete -f c
		t2=$(ns)
		echo "scale=3; ($t1 - $t0) / 1000000" | bc >>"$WORK/create.$kind"
		echo "scale=3; ($t2 - $t1) / 1000000" | bc >>"$WORK/delete.$kind"
	done
done

mkdir -p "$RESULTS"
{
	echo "metric,plain,tmpfs,disk,tmpfs_ratio,disk_ratio"
	for m in create delete; do
		p=$(median <"$WORK/$m.plain"); t=$(median <"$WORK/$m.tmpfs"); d=$(median <"$WORK/$m.disk")
		echo "${m}_ms,$p,$t,$d,$(echo "scale=3; $t / $p" | bc),$(echo "scale=3; $d / $p" | bc)"
	done
} | tee "$RESULTS/ephemeral.csv"
