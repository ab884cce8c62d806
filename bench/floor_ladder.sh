#!/bin/bash
# Where `brig run` of /bin/true goes beyond the floor (issue 25 item 4): a
# ladder of floor.c variants, each adding one of brig's steps as plain
# system calls, measured in one run with `brig run` (A B C ..., the order
# reversed every other round so that no rung always follows another):
#   floor     clone(pid,net,ipc,uts,mnt,cgroup) + bind + pivot_root + exec + wait
#   selfexe   + the re-exec from a detached read-only mount of the binary
#   cg        + a cgroup directory in each hierarchy brig uses for this
#               config (CG_SKIP: mount point names left out, default none:
#               all ten of a hybrid host), devices allowlist, join, rmdir
#   mounts    + /proc, /dev and its nodes, devpts, shm, mqueue, /sys, the
#               masked and read-only paths of the config
#   state     + a state directory (config copy, made, state.json by rename)
#   brig      `brig run`
#   brig-ro   `brig run` of a copy of the same binary on a read-only bind
#             mount (the operator's option: no re-exec, docs/security.md)
#   cg-cut    not cumulative: the `cg` rung without the hierarchies in
#             CG_CUT (default cpuset,systemd), its delta against `cg`: what
#             leaving them out saves
# The rungs are cumulative; a rung's delta is its cost on this machine.
#
#   old       with --old PATH: `brig run` of that brig (a before, in the same rounds)
# Usage: bench/floor.sh --ladder [-n N] [--brig P] [--old P]   (N=, QUICK=1; default 100)
# Writes bench/results/floor-ladder.csv and floor-ladder-summary.csv.
set -euo pipefail
NAME=floor-ladder
CRUN=""
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 100 10)"
t=""
CG_N="${CG_N:-16}"
CG_SKIP="${CG_SKIP:-}"
CG_CUT="${CG_CUT:-cpuset,systemd}"
RUNGS=(floor selfexe cg mounts state brig brig-ro cg-cut)
# --old PATH: that brig's `run` too (before/after in the same rounds)
[ -z "$OLD" ] || { RUNGS+=(old); mkdir -p "$WORK/root-old"; }
gcc -static -O2 -o "$WORK/floor" "$HERE/floor.c" || die "cannot build floor"
mkdir -p "$WORK/state-floor" "$WORK/ro"
cp "$BRIG" "$WORK/ro/brig"
mount --bind -o ro "$WORK/ro/brig" "$WORK/ro/brig"
mount -o remount,bind,ro "$WORK/ro/brig"
trap 'umount "$WORK/ro/brig" 2>/dev/null; cleanup' EXIT
BIN["brig-ro"]="$WORK/ro/brig"
mkdir -p "$WORK/root-brig-ro"

note "floor ladder: N=$ITERS, cumulative rungs ${RUNGS[*]}; cgroup hierarchies left out: ${CG_SKIP:-none}"
versions
host_line
make_bundle brig "$WORK/bundle" ladder
args() {
	local fl=()
	case "$1" in
	floor) ;;
	selfexe) fl=(--selfexe) ;;
	cg) fl=(--selfexe --cgroups "$CG_N:$CG_PARENT/floor${CG_SKIP:+:$CG_SKIP}") ;;
	mounts) fl=(--selfexe --cgroups "$CG_N:$CG_PARENT/floor${CG_SKIP:+:$CG_SKIP}" --mounts) ;;
	cg-cut) fl=(--selfexe --cgroups "$CG_N:$CG_PARENT/floor:$CG_CUT${CG_SKIP:+,$CG_SKIP}") ;;
	state) fl=(--selfexe --cgroups "$CG_N:$CG_PARENT/floor${CG_SKIP:+:$CG_SKIP}" --mounts
		--state "$WORK/state-floor:$WORK/bundle/config.json") ;;
	esac
	echo "${fl[@]}"
}
for r in floor selfexe cg mounts state cg-cut; do
	read -ra fl <<<"$(args "$r")"
	"$WORK/floor" "${fl[@]}" "$BRIG_ROOTFS_CACHE" /bin/true || die "floor rung $r does not run /bin/true"
done
for i in $(seq -2 "$ITERS"); do # three warm-up rounds (i <= 0)
	order=("${RUNGS[@]}")
	if [ $((i % 2)) -ne 0 ]; then order=(); for r in "${RUNGS[@]}"; do order=("$r" "${order[@]}"); done; fi
	for r in "${order[@]}"; do
		case "$r" in
		brig|brig-ro|old) cmd=(rt_cmd "$r" run --bundle "$WORK/bundle" "r$i") ;;
		*) read -ra fl <<<"$(args "$r")"; cmd=("$WORK/floor" "${fl[@]}" "$BRIG_ROOTFS_CACHE" /bin/true) ;;
		esac
		if timed t "${cmd[@]}"; then
			[ "$i" -le 0 ] || record "$r" run "$i" "$t" us
		else
			fail "$r" run
			case "$r" in brig|brig-ro|old) recover "$r" ;; esac
		fi
	done
done

{
	echo "rung,median_ms,min_ms,x_floor,delta_ms,failures"
	prev=""
	f="$(stat_of floor run)"
	for r in "${RUNGS[@]}"; do
		m="$(stat_of "$r" run)"
		d=""
		[ -z "$prev" ] || d="$(awk -v a="$m" -v b="$prev" 'BEGIN { printf "%.2f", (a - b) / 1000 }')"
		[ "$r" != cg-cut ] || d="$(awk -v a="$m" -v b="$(stat_of cg run)" 'BEGIN { printf "%.2f", (a - b) / 1000 }')"
		[ "$r" != brig-ro ] && [ "$r" != old ] || d="$(awk -v a="$m" -v b="$(stat_of brig run)" 'BEGIN { printf "%.2f", (a - b) / 1000 }')"
		echo "$r,$(scaled "$m" 1000),$(scaled "$(stat_of "$r" run min)" 1000),$(ratio "$m" "$f"),$d,${FAILS[$r,run]:-0}"
		prev="$m"
	done
} >"$SUMMARY"
print_summary
note "delta: each rung against the one above (brig-ro, old: against brig; cg-cut: against cg)"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
