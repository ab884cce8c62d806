#!/bin/bash
# Where the CPU of a `run` goes (issue #15): `perf record -g` over N `run`s
# of /bin/true in the busybox bundle, per runtime, one runtime after the
# other (A B C, then the next round C B A, each round N/2 runs), then per
# runtime:
#   - the split between kernel and user space, and by command name;
#   - the top symbols by their own samples ("self");
#   - the top kernel entry points and functions with what they call
#     ("children"): which syscalls and faults cost most.
# Only the runtime's processes and the container's are counted (the bash
# loop that starts them, perf itself and the crun wrapper's setns+exec are
# left out by command name). Samples come from the cpu-clock software event
# (these VMs have no PMU): a profile, not a measurement; the shares are what
# carries over to other machines, not the milliseconds.
#
# Usage: bench/perf.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   (N= and QUICK=1 work; default N=40)
# Writes bench/results/perf-RT.txt per runtime.
set -euo pipefail
NAME=perf
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
ITERS="$(iterations 40 10)"
FREQ="${PERF_FREQ:-4000}"

note "perf: N=$ITERS runs per runtime, perf record -g -F $FREQ (cpu-clock)"
versions
host_line
for rt in "${RUNTIMES[@]}"; do make_bundle "$rt" "$WORK/bundle-$rt" "$rt-perf"; done

# record RT ROUND COUNT: append COUNT runs of RT to its perf data.
record() {
	local rt="$1" round="$2" count="$3"
	perf record -q -g -F "$FREQ" -o "$WORK/perf-$rt-$round.data" -- \
		bash -c 'for i in $(seq "$1"); do "$2" --root "$3" run --bundle "$4" "p$5-$i" </dev/null >/dev/null 2>&1 || exit 1; done' \
		_ "$count" "${BIN[$rt]}" "$WORK/root-$rt" "$WORK/bundle-$rt" "$round" 2>>"$WORK/err" ||
		{ note "$rt: a run failed: $(tail -n2 "$WORK/err")"; recover "$rt"; }
}

half=$(((ITERS + 1) / 2))
for rt in "${RUNTIMES[@]}"; do rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" warm </dev/null >/dev/null 2>&1 || true; done
ORDER=("${RUNTIMES[@]}")
for rt in "${ORDER[@]}"; do record "$rt" 1 "$half"; done
for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do record "${ORDER[$i]}" 2 "$((ITERS - half))"; done

# Reports go through head: no pipefail from here on (SIGPIPE).
set +o pipefail
# report DATA COMMS ARGS...: perf report of DATA, only the commands COMMS.
report() {
	local d="$1" c="$2"
	shift 2
	perf report -q -i "$d" --stdio --comms "$c" "$@" 2>/dev/null
}
for rt in "${RUNTIMES[@]}"; do
	out="$RESULTS/perf-$rt.txt"
	# The commands to keep: everything but the loop, perf and the wrapper.
	comms="$(for round in 1 2; do
		perf report -q -i "$WORK/perf-$rt-$round.data" --stdio --sort comm --no-children -g none 2>/dev/null
	done | awk 'NF >= 2 { $1 = ""; sub(/^ +/, ""); sub(/ +$/, ""); print }' |
		grep -vxE 'bash|seq|perf|perf-exec|crun-v1' | sort -u | paste -sd, -)"
	{
		echo "# perf record -g -F $FREQ of $ITERS runs of /bin/true: ${BIN[$rt]}"
		echo "# commands counted: $comms"
		for round in 1 2; do
			d="$WORK/perf-$rt-$round.data"
			echo
			echo "## round $round: samples by command (all commands)"
			perf report -q -i "$d" --stdio --sort comm --no-children -g none 2>/dev/null | grep . | head -n 12
			echo
			echo "## round $round: CPU per run of the counted commands (samples / frequency / runs)"
			perf script -i "$d" -F comm 2>/dev/null | awk -v keep="$comms" -v f="$FREQ" -v n="$([ "$round" = 1 ] && echo "$half" || echo "$((ITERS - half))")" '
				BEGIN { split(keep, k, ","); for (i in k) want[k[i]] = 1 }
				{ sub(/^ +/, ""); sub(/ +$/, "") } ($0 in want) { c++ }
				END { printf "%.2f ms (%d samples)\n", c / f / n * 1000, c }'
			echo
			echo "## round $round: kernel / user (counted commands)"
			# (--sort dso alone drops the kernel's samples under --comms in perf 6.1.)
			report "$d" "$comms" --sort dso,sym --no-children -g none |
				awk '{ p = $1; sub(/%/, "", p); if ($2 == "[kernel.kallsyms]") k += p; else u += p }
					END { printf "kernel %.1f%%  user %.1f%%\n", k, u }'
			echo
			echo "## round $round: top symbols, self"
			report "$d" "$comms" --sort dso,sym --no-children -g none | head -n 30
			echo
			echo "## round $round: top kernel functions with their callees (children)"
			report "$d" "$comms" --sort sym --children -g none | grep -F '[k]' | head -n 40
		done
	} >"$out"
	note "$rt: $out: $(sed -n '/round 1: CPU/{n;p;q}' "$out"), $(sed -n '/round 1: kernel/{n;p;q}' "$out") (round 2: $(sed -n '/round 2: CPU/{n;p;q}' "$out"))"
done
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
