#!/bin/bash
# Throughput and scaling.
#
#  parallel-N   N containers (N = 10, 100) created and started at once
#               (N background `create && start` of /bin/true); the wall
#               time until every command returned, as containers per
#               second. Then every container must exist, all are deleted
#               (not timed) and nothing may be left: no container in the
#               --root, no cgroup directory. Repeated R times, brig, runc
#               and crun alternately.
#  existing-K   the time of one sequential lifecycle (create + start + wait
#               for exit + delete of /bin/true) while K idle containers
#               (`sleep`) of the same runtime exist, K = 0, 10, 50, 100;
#               the target is a flat curve (100 vs 10 within 1.3x).
#
# Usage: bench/throughput.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   -n / N= is the number of lifecycles per level (default 20); QUICK=1
#   makes it 3 and one parallel repetition.
# Writes bench/results/throughput.csv, throughput-summary.csv and .png.
set -euo pipefail
NAME=throughput
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 20 3)"
REPS=2
[ "$QUICK" != 1 ] || REPS=1
LEVELS=(0 10 50 100)

note "throughput: parallel create+start of 10 and 100 containers ($REPS repetitions), lifecycle time with 0/10/50/100 idle containers ($ITERS per level)"
versions
host_line

# Bundles: one per container so each has its own cgroup.
for rt in "${RUNTIMES[@]}"; do
	for i in $(seq 100); do
		make_bundle "$rt" "$WORK/par-$rt/$i" "$rt-p$i"
	done
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-life"
done

# leftovers RT: containers still listed plus cgroup directories of RT.
leftovers() {
	local rt="$1" n
	n=$(rt_cmd "$rt" list -q 2>/dev/null | wc -l)
	n=$((n + $(find /sys/fs/cgroup/*/"$CG_PARENT" -mindepth 1 -maxdepth 1 -type d -name "$rt-p*" 2>/dev/null | wc -l)))
	echo "$n"
}

# parallel RT N REP: prints "wall_us failures leftovers"
parallel() {
	local rt="$1" n="$2" rep="$3" i t0 t1 fails=0 pids=() id
	now_us t0
	for i in $(seq "$n"); do
		{ rt_cmd "$rt" create --bundle "$WORK/par-$rt/$i" "p$rep-$i" </dev/null >/dev/null &&
			rt_cmd "$rt" start "p$rep-$i"; } 2>>"$WORK/$rt.par.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || fails=$((fails + 1)); done
	now_us t1
	# Every container must be there, then all go.
	[ "$(rt_cmd "$rt" list -q | grep -c "^p$rep-")" -eq "$n" ] || fails=$((fails + n - $(rt_cmd "$rt" list -q | grep -c "^p$rep-")))
	for id in $(rt_cmd "$rt" list -q); do
		rt_cmd "$rt" delete --force "$id" >/dev/null 2>>"$WORK/$rt.par.err" || true
	done
	echo "$((t1 - t0)) $fails $(leftovers "$rt")"
}

for n in 10 100; do
	for rep in $(seq "$REPS"); do
		for rt in "${RUNTIMES[@]}"; do
			read -r us f left <<<"$(parallel "$rt" "$n" "$rep")"
			record "$rt" "parallel-$n" "$rep" "$(awk -v n="$n" -v us="$us" 'BEGIN { printf "%.2f", n * 1e6 / us }')" containers/s
			record "$rt" "parallel-$n-failures" "$rep" "$f" count
			record "$rt" "parallel-$n-leftovers" "$rep" "$left" count
			[ "$f" = 0 ] || FAILS[$rt,parallel-$n]=$(( ${FAILS[$rt,parallel-$n]:-0} + f ))
			[ "$left" = 0 ] || note "$rt: $left leftovers after parallel-$n"
			recover "$rt"
		done
	done
done

# Idle containers: `sleep` with their own cgroups (the par-* bundles with
# another command).
for rt in "${RUNTIMES[@]}"; do
	for i in $(seq 100); do
		jq '.process.args = ["/bin/sleep", "2147483647"]' "$WORK/par-$rt/$i/config.json" >"$WORK/par-$rt/$i/c.json"
		mv "$WORK/par-$rt/$i/c.json" "$WORK/par-$rt/$i/config.json"
	done
done
have=0
for level in "${LEVELS[@]}"; do
	for rt in "${RUNTIMES[@]}"; do
		for i in $(seq $((have + 1)) "$level"); do
			rt_cmd "$rt" run -d --bundle "$WORK/par-$rt/$i" "idle$i" </dev/null >/dev/null 2>>"$WORK/$rt.err" ||
				die "$rt: cannot start idle container $i: $(tail -n2 "$WORK/$rt.err")"
		done
	done
	have="$level"
	for i in $(seq "$ITERS"); do
		for rt in "${RUNTIMES[@]}"; do
			if read -r v _ < <(lifecycle_us "$rt" "$WORK/bundle-$rt" "l$level-$i") && [ -n "$v" ]; then record "$rt" "existing-$level" "$i" "$v" us
			else fail "$rt" "existing-$level"; rt_cmd "$rt" delete --force "l$level-$i" >/dev/null 2>&1 || true; fi
		done
	done
done

summary_row parallel-10 "parallel 10: containers/s (median)" 1/s 1
summary_row parallel-100 "parallel 100: containers/s (median)" 1/s 1
summary_row parallel-100-leftovers "parallel 100: leftovers (max)" count 1 max
for level in "${LEVELS[@]}"; do
	summary_row "existing-$level" "lifecycle with $level existing (median)" ms 1000
done
print_summary
for rt in "${RUNTIMES[@]}"; do
	a="$(stat_of "$rt" existing-10)"; b="$(stat_of "$rt" existing-100)"
	note "$rt: lifecycle time with 100 vs 10 existing containers: $(ratio "$b" "$a")x (target for brig: <= 1.3)"
done
# The plot: lifecycle time against existing containers.
plot_summary "lifecycle of /bin/true while 0/10/50/100 idle containers exist (parallel 10/100: see the CSV)" "ms" existing
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
