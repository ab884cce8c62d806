# shellcheck shell=bash
# Shared by the pool scale benchmarks (issue 25): pool_scale.sh,
# pool_clients.sh, soak.sh (sourced, not run).
#
# - Runs as root, in a private mount namespace of its own (the script
#   re-executes itself under `unshare -m`), where /run/brig-userns (the
#   run.brig.userns=auto registry) is a tmpfs and brig hands out ranges
#   from a range of its own (--userns-range, below the default one), so
#   the bench neither shares the host's registry nor any uid with other
#   containers. State root and bundle are on a tmpfs too: a host with
#   systemd has /run (brig's default root and the registry) on tmpfs; on a
#   disk /run every member costs ~9 inode allocations, and ext4's scan
#   past recently deleted inodes was the largest cost of a fill here (see
#   docs/sandbox.md "What fill makes"). BENCH_DISK=1 keeps the host's
#   registry and default range (to measure that case).
# - The bundle: `brig spec --sandbox --ephemeral` with the busybox rootfs
#   of the tests, process `sleep`, cgroupsPath /brig-bench/TAG/m (each
#   member appends its id).
# - $B: brig with the bench's --root (and --userns-range); $WORK; $TIMER
#   (bench/timer.c); load(): the 1-minute load average; cleanup on exit
#   (every pool drained, every container deleted, cgroups removed).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRCDIR="$(cd "$HERE/.." && pwd)"
RESULTS="${RESULTS:-$HERE/results}"
BRIG="${BRIG:-}"
[ "$(id -u)" -eq 0 ] || { echo "$NAME: run as root" >&2; exit 1; }
if [ -z "$BRIG" ]; then
	for b in /tmp/build-bench/runtime/brig "$SRCDIR/runtime/brig" "$SRCDIR/build/runtime/brig"; do
		[ -x "$b" ] && BRIG="$b" && break
	done
fi
[ -n "$BRIG" ] && [ -x "$BRIG" ] || { echo "$NAME: brig not found: BRIG=PATH" >&2; exit 1; }
export BRIG

if [ -z "${POOL_BENCH_NS:-}" ] && [ "${BENCH_DISK:-0}" != 1 ]; then
	export POOL_BENCH_NS=1
	exec unshare -m --propagation private "$0" "$@"
fi
USERNS_RANGE=()
if [ "${BENCH_DISK:-0}" != 1 ]; then
	mount -t tmpfs -o mode=0700,size=64m brig-bench-registry /run/brig-userns
	# 4096 ranges from 0x60000000: below the default (0x70010000...)
	USERNS_RANGE=(--userns-range 1610612736:4096)
fi

note() { echo "# $*"; }
die() { echo "$NAME: $*" >&2; exit 1; }
load() { cut -d' ' -f1 /proc/loadavg; }
loads() { cut -d' ' -f1-3 /proc/loadavg; }

WORK="$(mktemp -d /dev/shm/brig-poolbench.XXXXXX)"
[ "$(stat -f -c %T "$WORK")" = tmpfs ] || die "$WORK is not on a tmpfs"
[ "${BENCH_DISK:-0}" != 1 ] || { rmdir "$WORK"; WORK="$(mktemp -d /tmp/brig-poolbench.XXXXXX)"; }
chmod 0755 "$WORK"
TAG="${WORK##*.}"
STATE_ROOT="$WORK/root"
B=("$BRIG" --root "$STATE_ROOT" "${USERNS_RANGE[@]}")
CG_PARENT="brig-bench/$TAG"

cleanup() {
	local p id
	set +e
	trap - EXIT INT TERM
	for p in $(ls "$STATE_ROOT/@pools" 2>/dev/null); do "${B[@]}" pool drain "$p" >/dev/null 2>&1; done
	for id in $("${B[@]}" list -q 2>/dev/null); do "${B[@]}" delete --force "$id" >/dev/null 2>&1; done
	for d in /sys/fs/cgroup/*/"$CG_PARENT" /sys/fs/cgroup/unified/"$CG_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rmdir /sys/fs/cgroup/*/brig-bench /sys/fs/cgroup/unified/brig-bench 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TIMER="$WORK/timer"
gcc -O2 -o "$TIMER" "$HERE/timer.c" || die "cannot build bench/timer.c"

# The bundle
export BRIG_ROOTFS_CACHE="$WORK/rootfs"
# shellcheck source=../tests/integration/helpers.bash
source "$SRCDIR/tests/integration/helpers.bash"
build_rootfs_template >/dev/null || die "cannot build the busybox rootfs"
set -euo pipefail
BUNDLE="$WORK/bundle"
mkdir -p "$BUNDLE"
ln -s "$BRIG_ROOTFS_CACHE" "$BUNDLE/rootfs"
"$BRIG" spec --bundle "$BUNDLE" --sandbox --ephemeral
jq --arg cg "/$CG_PARENT/m" '.process.args = ["sleep", "1000000"] | .linux.cgroupsPath = $cg' \
	"$BUNDLE/config.json" >"$BUNDLE/config.json.new"
mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
mkdir -p "$RESULTS"

# pctl FILE P: the P-th percentile (nearest rank) of the numbers in FILE.
pctl() { sort -g "$1" | awk -v p="$2" '{ v[++n] = $1 } END { if (!n) { print "NA"; exit } i = int(p / 100 * n + 0.999999); if (i < 1) i = 1; print v[i] }'; }
# ms US: microseconds as milliseconds
ms() { awk -v v="$1" 'BEGIN { if (v == "NA") print v; else printf "%.2f", v / 1000 }'; }

# cycle POOL OUTDIR: one claim -> exec /bin/true -> release, each step
# timed by timer.c; appends microseconds to OUTDIR/{claim,exec,release}
# and returns 1 (and appends to OUTDIR/failed) when a step failed.
cycle() {
	local pool="$1" out="$2" t id rc=0
	: >"$out/id"
	if ! t="$("$TIMER" --out "$out/id" "${B[@]}" pool claim "$pool" 2>>"$out/err")"; then
		echo "claim" >>"$out/failed"
		return 1
	fi
	echo "$t" >>"$out/claim"
	echo "${EPOCHREALTIME/./} $t" >>"$out/claim.ts"
	id="$(head -n1 "$out/id")"
	if t="$("$TIMER" "${B[@]}" exec "$id" /bin/true 2>>"$out/err")"; then
		echo "$t" >>"$out/exec"
	else
		echo "exec $id" >>"$out/failed"
		rc=1
	fi
	if t="$("$TIMER" "${B[@]}" pool release "$id" 2>>"$out/err")"; then
		echo "$t" >>"$out/release"
	else
		echo "release $id" >>"$out/failed"
		rc=1
	fi
	return $rc
}
