#!/bin/bash
# The floor: bench/floor.c does only clone(2) into the bundle's namespaces
# (pid, network, ipc, uts, mount, cgroup) + a private bind mount of the
# rootfs + pivot_root + exec of /bin/true + wait: the physical limit of
# starting a container on this machine. Measured alternately with brig's
# `run` and brig's create + start + wait + delete lifecycle of the same
# /bin/true in the same busybox rootfs, with and without a new network
# namespace; reports brig/floor.
#
# The floor is one process; a create + start + delete lifecycle is three
# runtime processes whatever the runtime does. So the "bound" column times
# the floor followed by two spawns of a static no-op program (bench/nop.c):
# what a runtime that did nothing at all in start and delete, and only the
# floor's work in create, would cost. brig/bound is the share of the
# lifecycle that is brig's own doing.
#
# --ladder (issue 25): where `brig run`'s time goes. floor.c's options add
# brig's steps one at a time (the re-exec, the cgroup directories, the
# mounts, the state directory), each rung measured in the same rounds as
# `brig run` and brig installed on a read-only mount (no re-exec), A B C
# ... with the order reversed every other round; see floor_ladder.sh.
#
# Usage: bench/floor.sh [--ladder] [-n N] [--brig P]   (N= and QUICK=1 work; default 100)
# Writes bench/results/floor.csv, floor-summary.csv and floor.png
# (--ladder: floor-ladder.csv and floor-ladder-summary.csv).
set -euo pipefail
if [ "${1:-}" = --ladder ]; then shift; exec "$(dirname "$0")/floor_ladder.sh" "$@"; fi
NAME=floor
CRUN=""
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 100 10)"
RUNTIMES=(brig floor bound)
gcc -static -O2 -o "$WORK/floor" "$HERE/floor.c" || die "cannot build floor"
gcc -static -O2 -o "$WORK/nop" "$HERE/nop.c" || die "cannot build nop"
BIN[floor]="$WORK/floor"

note "floor: N=$ITERS; floor = clone(pid,net,ipc,uts,mnt,cgroup ns) + bind rootfs + pivot_root + exec /bin/true + wait (static C, bench/floor.c)"
note "bound (lifecycle rows): the floor + two spawns of a static no-op program, the least three runtime processes can cost"
versions
host_line
make_bundle brig "$WORK/bundle-net" brig-floor
make_bundle brig "$WORK/bundle-nonet" brig-floor-nonet '.linux.namespaces -= [{"type": "network"}]'
"$WORK/floor" "$BRIG_ROOTFS_CACHE" /bin/true || die "floor does not run /bin/true"

for i in $(seq -2 "$ITERS"); do # three warm-up rounds (i <= 0)
	for v in net nonet; do
		sfx=""; fl=()
		[ "$v" = net ] || { sfx="-nonet"; fl=(--no-netns); }
		for sc in run lifecycle; do
			if timed t "$WORK/floor" "${fl[@]}" "$BRIG_ROOTFS_CACHE" /bin/true; then
				[ "$i" -le 0 ] || record floor "$sc$sfx" "$i" "$t" us
			else fail floor "$sc$sfx"; fi
		done
		if timed t "$WORK/floor" "${fl[@]}" "$BRIG_ROOTFS_CACHE" /bin/true -- "$WORK/nop" -- "$WORK/nop"; then
			[ "$i" -le 0 ] || record bound "lifecycle$sfx" "$i" "$t" us
		else fail bound "lifecycle$sfx"; fi
		if timed t rt_cmd brig run --bundle "$WORK/bundle-$v" "r$i$v"; then
			[ "$i" -le 0 ] || record brig "run$sfx" "$i" "$t" us
		else fail brig "run$sfx"; recover brig; fi
		if read -r t _ < <(lifecycle_us brig "$WORK/bundle-$v" "l$i$v") && [ -n "$t" ]; then
			[ "$i" -le 0 ] || record brig "lifecycle$sfx" "$i" "$t" us
		else fail brig "lifecycle$sfx"; recover brig; fi
	done
done

summary_row lifecycle "lifecycle vs floor (median)" ms 1000
summary_row run "run vs floor (median)" ms 1000
summary_row lifecycle-nonet "lifecycle vs floor - no netns (median)" ms 1000
summary_row run-nonet "run vs floor - no netns (median)" ms 1000
summary_row lifecycle "lifecycle vs floor (min)" ms 1000 min
summary_row run "run vs floor (min)" ms 1000 min
print_summary
r="$(ratio "$(stat_of brig lifecycle)" "$(stat_of floor lifecycle)")"
rb="$(ratio "$(stat_of bound lifecycle)" "$(stat_of floor lifecycle)")"
note "target: brig lifecycle within 1.5x of the floor: $(awk -v r="$r" 'BEGIN { print (r != "NA" && r <= 1.5) ? "met" : "NOT met" }') ($r)"
note "bound: the floor + two no-op spawns is ${rb}x the floor, the closest a lifecycle of three processes can come; brig/bound $(ratio "$(stat_of brig lifecycle)" "$(stat_of bound lifecycle)")"
plot_summary "brig against the floor (clone + pivot_root + exec), N=$ITERS" "ms"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
