#!/bin/bash
# The smallest memory limit under which `run` of /bin/true still works:
# linux.resources.memory.limit bisected between 16 KiB and 16 MiB (8 KiB
# steps) for brig, runc and crun in lockstep (A B A B per step). A limit
# "works" when two runs in a row exit 0. On this host memory is cgroup v1:
# the limit is memory.limit_in_bytes, which charges the user and kernel
# memory (page tables, slab for the new mount/pid/net namespaces) of the
# tasks in the cgroup from the moment the runtime moves the container's
# init there, i.e. the runtime's own code in the container before execve
# counts, the runtime's parent process does not.
#
# Usage: bench/memlimit.sh [--brig P] [--runc P] [--crun P|--no-crun]
# Writes bench/results/memlimit.csv, memlimit-summary.csv and memlimit.png.
set -euo pipefail
NAME=memlimit
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
LO_KIB=16
HI_KIB=16384
STEP_KIB=8

note "smallest memory limit for \`run\` of /bin/true: bisect ${LO_KIB}k..${HI_KIB}k, ${STEP_KIB}k steps, cgroup v1 memory controller"
versions
host_line

N_PROBE=0
# probe RT KIB: 0 when two runs under a KIB limit exit 0.
probe() {
	local rt="$1" kib="$2" k ok=0 rc
	N_PROBE=$((N_PROBE + 1))
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-mem" ".linux.resources.memory.limit = $((kib * 1024))"
	for k in 1 2; do
		rc=0
		rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "m$N_PROBE-$k" </dev/null >/dev/null 2>"$WORK/$rt.probe.err" || rc=$?
		if [ "$rc" != 0 ]; then
			ok=1
			{ echo "exit $rc:"; cat "$WORK/$rt.probe.err"; } >"$WORK/$rt.lastfail.err"
			echo "$kib" >"$WORK/$rt.lastfail.kib"
			recover "$rt"
			break
		fi
	done
	record "$rt" "probe" "$N_PROBE" "$kib" "KiB-$([ $ok = 0 ] && echo ok || echo fail)"
	return $ok
}

declare -A LO=() HI=() FOUND=()
for rt in "${RUNTIMES[@]}"; do
	LO[$rt]=$LO_KIB
	HI[$rt]=$HI_KIB
	if ! probe "$rt" "$HI_KIB"; then
		FOUND[$rt]=">$HI_KIB"
	elif probe "$rt" "$LO_KIB"; then
		FOUND[$rt]="<=$LO_KIB"
		record "$rt" min_limit 1 "$LO_KIB" KiB
	fi
done
# Invariant: HI works, LO fails.
while :; do
	busy=0
	for rt in "${RUNTIMES[@]}"; do
		[ -z "${FOUND[$rt]:-}" ] || continue
		if [ $((HI[$rt] - LO[$rt])) -le "$STEP_KIB" ]; then
			FOUND[$rt]="${HI[$rt]}"
			record "$rt" min_limit 1 "${HI[$rt]}" KiB
			continue
		fi
		busy=1
		mid=$(( (LO[$rt] + HI[$rt]) / 2 / STEP_KIB * STEP_KIB ))
		[ "$mid" -gt "${LO[$rt]}" ] || mid=$((LO[$rt] + STEP_KIB))
		if probe "$rt" "$mid"; then HI[$rt]=$mid; else LO[$rt]=$mid; fi
	done
	[ "$busy" = 1 ] || break
done
# Confirm the result once more (the bisection assumes monotony).
for rt in "${RUNTIMES[@]}"; do
	case "${FOUND[$rt]}" in '>'*|'<='*) continue ;; esac
	probe "$rt" "${FOUND[$rt]}" || note "$rt: ${FOUND[$rt]} KiB failed on the second check (noisy)"
done

# The limit must really be enforced: a shell that fills 3 MB must die.
HOG='x=$(yes | head -c 3000000); echo ${#x}'
for rt in "${RUNTIMES[@]}"; do
	case "${FOUND[$rt]}" in '>'*) continue ;; esac
	kib="${FOUND[$rt]#<=}"
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-mem" ".linux.resources.memory.limit = $((kib * 1024)) | .process.args = [\"/bin/sh\", \"-c\", \"$HOG\"]"
	if rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" hog </dev/null >"$WORK/hog.out" 2>>"$WORK/err"; then
		note "$rt: a 3 MB allocation survived a ${kib} KiB limit ($(cat "$WORK/hog.out")): limit NOT enforced"
		record "$rt" enforced 1 0 bool
	else
		note "$rt: a 3 MB allocation under ${kib} KiB fails: the limit is enforced"
		record "$rt" enforced 1 1 bool
	fi
	recover "$rt"
done

summary_row min_limit "smallest memory limit for run" KiB 1
print_summary
for rt in "${RUNTIMES[@]}"; do
	note "$rt: smallest working limit ${FOUND[$rt]} KiB"
	if [ -s "$WORK/$rt.lastfail.err" ]; then
		note "  $rt at $(cat "$WORK/$rt.lastfail.kib") KiB: $(head -c 300 "$WORK/$rt.lastfail.err" | tr '\n' ' ')"
	fi
	[ "$rt" = brig ] && case "${FOUND[$rt]}" in
		'<='*) note "  target: run with a 512 KiB limit: met" ;;
		'>'*) note "  target: run with a 512 KiB limit: NOT met" ;;
		*) [ "${FOUND[$rt]}" -le 512 ] && note "  target: run with a 512 KiB limit: met" ||
			note "  target: run with a 512 KiB limit: NOT met" ;;
	esac
done
plot_summary "smallest memory limit under which run of /bin/true works" "KiB"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
