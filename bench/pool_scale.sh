#!/bin/bash
# 1,000 warm members (issue 25 item 1): one pool of the default
# `brig spec --sandbox --ephemeral` config (process `sleep`), filled in
# STEPS steps of STEP members: the rate of each step (members/s) with the
# load average; then the host memory per idle member: MemAvailable before
# and after (caches dropped before each reading: `echo 3 >
# /proc/sys/vm/drop_caches`, which disturbs whatever else the machine
# runs), and the components (Slab, SUnreclaim, PageTables, KernelStack,
# VmallocUsed, AnonPages, Percpu), the PSS of the waiting inits, keys per
# member (/proc/key-users); then drain and an immediate refill of STEP
# (the kernel still frees the drained network namespaces meanwhile).
# See bench/pool_common.sh for the private mount namespace and tmpfs.
#
# Usage: bench/pool_scale.sh   (BRIG=PATH, STEPS=10, STEP=100)
# Writes bench/results/pool_scale.txt.
NAME=pool_scale
# shellcheck source=bench/pool_common.sh
source "$(dirname "$0")/pool_common.sh"
STEPS="${STEPS:-10}"
STEP="${STEP:-100}"
OUT="$RESULTS/pool_scale.txt"

meminfo() { awk -v k="$1" '$1 == k ":" { print $2 }' /proc/meminfo; }
FIELDS=(MemAvailable AnonPages Slab SUnreclaim KernelStack PageTables VmallocUsed Percpu)
snapshot() {
	local f
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
	for f in "${FIELDS[@]}"; do printf '%s ' "$(meminfo "$f")"; done
	awk '{ n += $2 } END { printf "%d\n", n }' /proc/key-users
}
# pss_sum POOL: PSS (KiB) of every member's init, summed
pss_sum() {
	local id pid n=0 v
	for id in $("${B[@]}" list -q); do
		pid="$(jq -r .pid "$STATE_ROOT/$id/state.json" 2>/dev/null)" || continue
		v="$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null)" || continue
		n=$((n + ${v:-0}))
	done
	echo "$n"
}

{
	note "pool_scale: $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), brig $BRIG"
	note "state root $STATE_ROOT ($(stat -f -c %T "$STATE_ROOT" 2>/dev/null || stat -f -c %T "$WORK")), registry /run/brig-userns ($(stat -f -c %T /run/brig-userns))"
	read -r -a before <<<"$(snapshot)"
	note "before: load $(loads)"
	total=0
	for s in $(seq "$STEPS"); do
		total=$((total + STEP))
		l0="$(load)"
		t="$("$TIMER" "${B[@]}" pool fill p --bundle "$BUNDLE" --size "$total")" ||
			die "fill to $total failed: $(tail -n3 "$WORK"/*.err 2>/dev/null)"
		printf 'fill %4d -> %4d: %7.1f ms, %6.1f members/s  (load %s -> %s)\n' \
			$((total - STEP)) "$total" "$(ms "$t")" \
			"$(awk -v t="$t" -v n="$STEP" 'BEGIN { printf "%.1f", n / (t / 1e6) }')" "$l0" "$(load)"
		echo "$t" >>"$WORK/fill-us"
	done
	awk -v n="$total" '{ s += $1 } END { printf "fill of %d: %.2f s, %.1f members/s overall\n", n, s / 1e6, n / (s / 1e6) }' "$WORK/fill-us"
	[ "$("${B[@]}" pool status p --format json | jq .counts.available)" -eq "$total" ] ||
		die "the pool does not hold $total available members"
	read -r -a after <<<"$(snapshot)"
	note "after: load $(loads)"
	printf '%-14s %12s %12s %14s\n' field before after "per member"
	for i in "${!FIELDS[@]}"; do
		printf '%-14s %9s KiB %9s KiB %10.1f KiB\n' "${FIELDS[$i]}" "${before[$i]}" "${after[$i]}" \
			"$(awk -v a="${before[$i]}" -v b="${after[$i]}" -v n="$total" 'BEGIN { print (b - a) / n }')"
	done
	printf '%-14s %12s %12s %14s\n' keys "${before[${#FIELDS[@]}]}" "${after[${#FIELDS[@]}]}" \
		"$(awk -v a="${before[${#FIELDS[@]}]}" -v b="${after[${#FIELDS[@]}]}" -v n="$total" 'BEGIN { printf "%.2f", (b - a) / n }')"
	avail_drop="$(awk -v a="${before[0]}" -v b="${after[0]}" -v n="$total" 'BEGIN { printf "%.1f", (a - b) / n }')"
	echo "host memory per idle member (MemAvailable drop / $total): $avail_drop KiB ($(awk -v v="$avail_drop" 'BEGIN { printf "%.2f", v / 1024 }') MiB; target <= 1 MiB)"
	echo "PSS of the waiting inits: $(awk -v v="$(pss_sum)" -v n="$total" 'BEGIN { printf "%.1f", v / n }') KiB per member"
	t="$("$TIMER" "${B[@]}" pool drain p)"
	echo "drain of $total: $(ms "$t") ms (load $(load))"
	t="$("$TIMER" "${B[@]}" pool fill p --bundle "$BUNDLE" --size "$STEP")" || die "refill failed"
	printf 'refill of %d right after the drain: %.1f ms, %.1f members/s (load %s)\n' "$STEP" \
		"$(ms "$t")" "$(awk -v t="$t" -v n="$STEP" 'BEGIN { printf "%.1f", n / (t / 1e6) }')" "$(load)"
	"${B[@]}" pool drain p >/dev/null
	note "end: load $(loads)"
} 2>&1 | tee "$OUT"
