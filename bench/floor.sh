#!/bin/bash
# The floor: bench/floor.c does only clone(2) into the bundle's namespaces
# (pid, network, ipc, uts, mount, cgroup) + a private bind mount of the
# rootfs + pivot_root + exec of /bin/true + wait: the physical limit of
# starting a container on this machine. Measured alternately with brig's
# `run` and brig's create + start + wait + delete lifecycle of the same
# /bin/true in the same busybox rootfs, with and without a new network
# namespace; reports brig/floor.
#
# Usage: bench/floor.sh [-n N] [--brig P]   (N= and QUICK=1 work; default 100)
# Writes bench/results/floor.csv, floor-summary.csv and floor.png.
set -euo pipefail
NAME=floor
CRUN=""
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 100 10)"
RUNTIMES=(brig floor)
gcc -static -O2 -o "$WORK/floor" "$HERE/floor.c" || die "cannot build floor"
BIN[floor]="$WORK/floor"

note "floor: N=$ITERS; floor = clone(pid,net,ipc,uts,mnt,cgroup ns) + bind rootfs + pivot_root + exec /bin/true + wait (static C, bench/floor.c)"
versions
host_line
make_bundle brig "$WORK/bundle-net" brig-floor
make_bundle brig "$WORK/bundle-nonet" brig-floor-nonet '.linux.namespaces -= [{"type": "network"}]'
"$WORK/floor" "$BRIG_ROOTFS_CACHE" /bin/true || die "floor does not run /bin/true"

brig_lifecycle() { # BUNDLE ID: prints microseconds
	local t0 t1 pid
	now_us t0
	rt_cmd brig create --bundle "$1" --pid-file "$WORK/brig.pid" "$2" </dev/null >/dev/null 2>>"$WORK/err" || return 1
	rt_cmd brig start "$2" 2>>"$WORK/err" || return 1
	read -r pid <"$WORK/brig.pid" || [ -n "$pid" ]
	wait_exit "$pid"
	rt_cmd brig delete "$2" 2>>"$WORK/err" || return 1
	now_us t1
	echo $((t1 - t0))
}

for i in $(seq -2 "$ITERS"); do # three warm-up rounds (i <= 0)
	for v in net nonet; do
		sfx=""; fl=()
		[ "$v" = net ] || { sfx="-nonet"; fl=(--no-netns); }
		for sc in run lifecycle; do
			if timed t "$WORK/floor" "${fl[@]}" "$BRIG_ROOTFS_CACHE" /bin/true; then
				[ "$i" -le 0 ] || record floor "$sc$sfx" "$i" "$t" us
			else fail floor "$sc$sfx"; fi
		done
		if timed t rt_cmd brig run --bundle "$WORK/bundle-$v" "r$i$v"; then
			[ "$i" -le 0 ] || record brig "run$sfx" "$i" "$t" us
		else fail brig "run$sfx"; recover brig; fi
		if t="$(brig_lifecycle "$WORK/bundle-$v" "l$i$v")"; then
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
note "target: brig lifecycle within 1.5x of the floor: $(awk -v r="$r" 'BEGIN { print (r != "NA" && r <= 1.5) ? "met" : "NOT met" }') ($r)"
plot_summary "brig against the floor (clone + pivot_root + exec), N=$ITERS" "ms"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
