#!/bin/bash
# Many clients (issue 25 item 2): C = 1, 2, 4, 8 client loops of claim ->
# `exec /bin/true` -> release, each for DURATION seconds, against one pool
# of SIZE members of the default `brig spec --sandbox --ephemeral` config
# (process `sleep`); every step timed by bench/timer.c (posix_spawn, no
# fork of the shell in the interval). Per C: cycles/s and its ratio to
# C=1, failed cycles (any step that exited non-zero), claim/exec/release
# p50 and p99, the pool's size and logged failures at the end, the load
# average. Targets: zero failed cycles; 2 clients >= 1.6x one; claim p99 <
# 10 ms with 8. See bench/pool_common.sh for the private mount namespace
# and tmpfs.
#
# Usage: bench/pool_clients.sh   (BRIG=PATH, SIZE=200, DURATION=60,
#   CLIENTS="1 2 4 8")
# Writes bench/results/pool_clients.txt.
NAME=pool_clients
# shellcheck source=bench/pool_common.sh
source "$(dirname "$0")/pool_common.sh"
SIZE="${SIZE:-200}"
DURATION="${DURATION:-60}"
CLIENTS="${CLIENTS:-1 2 4 8}"
OUT="$RESULTS/pool_clients.txt"

# loop POOL DIR END: cycles until the epoch second END
client_loop() {
	local pool="$1" dir="$2" end="$3" n=0
	mkdir -p "$dir"
	while [ "${EPOCHSECONDS}" -lt "$end" ]; do
		cycle "$pool" "$dir" || echo "$n" >>"$dir/failed-cycles"
		n=$((n + 1))
	done
	echo "$n" >"$dir/cycles"
}

{
	note "pool_clients: $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), brig $BRIG"
	note "pool of $SIZE, $DURATION s per client count, state root and registry on tmpfs"
	t="$("$TIMER" "${B[@]}" pool fill p --bundle "$BUNDLE" --size "$SIZE")" || die "fill failed"
	note "fill of $SIZE: $(ms "$t") ms (load $(load))"
	printf '%7s %9s %7s %7s %9s %9s %9s %9s %9s %9s %6s %8s %s\n' clients cycles/s "x C=1" failed \
		claim-p50 claim-p99 exec-p50 exec-p99 rel-p50 rel-p99 pool failures "load (start -> end)"
	base=""
	for c in $CLIENTS; do
		sleep 5
		l0="$(loads)"
		end=$((EPOCHSECONDS + DURATION))
		start_us="${EPOCHREALTIME/./}"
		pids=()
		for k in $(seq "$c"); do
			client_loop p "$WORK/c$c/$k" "$end" &
			pids+=("$!")
		done
		wait "${pids[@]}"
		el_us=$(( ${EPOCHREALTIME/./} - start_us ))
		d="$WORK/c$c"
		cat "$d"/*/claim >"$d/claim" 2>/dev/null || : >"$d/claim"
		cat "$d"/*/exec >"$d/exec" 2>/dev/null || : >"$d/exec"
		cat "$d"/*/release >"$d/release" 2>/dev/null || : >"$d/release"
		cycles="$(cat "$d"/*/cycles | paste -sd+ | bc)"
		failed="$(cat "$d"/*/failed-cycles 2>/dev/null | wc -l || true)"
		rate="$(awk -v n="$cycles" -v f="$failed" -v t="$el_us" 'BEGIN { printf "%.1f", (n - f) / (t / 1e6) }')"
		[ -n "$base" ] || base="$rate"
		status="$("${B[@]}" pool status p --format json)"
		printf '%7s %9s %7s %7s %9s %9s %9s %9s %9s %9s %6s %8s %s -> %s\n' "$c" "$rate" \
			"$(awk -v a="$rate" -v b="$base" 'BEGIN { printf "%.2f", a / b }')" "$failed/$cycles" \
			"$(ms "$(pctl "$d/claim" 50)")" "$(ms "$(pctl "$d/claim" 99)")" \
			"$(ms "$(pctl "$d/exec" 50)")" "$(ms "$(pctl "$d/exec" 99)")" \
			"$(ms "$(pctl "$d/release" 50)")" "$(ms "$(pctl "$d/release" 99)")" \
			"$(jq .counts.available <<<"$status")" "$(jq .failures.count <<<"$status")" "$l0" "$(loads)"
		if [ "$failed" -gt 0 ]; then
			note "failures with $c clients (first lines):"
			cat "$d"/*/failed "$d"/*/err 2>/dev/null | head -n 5 | sed 's/^/#   /'
		fi
	done
	note "times in ms; cycles/s counts only cycles without a failed step"
} 2>&1 | tee "$OUT"
