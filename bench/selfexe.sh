#!/bin/bash
# The cost of the sealed copy (issue #11 item 1): `create`, `run` and
# `exec` first copy the binary into a sealed memfd and re-execute from it.
# The brig under test against a brig without that (--old PATH),
# alternately, in one run:
#   run       `run` of /bin/true (create + start + wait + delete in one);
#   exec      `exec ID /bin/true` into a running container (`sleep`);
#   fixed     `create --help`: the copy and the re-exec and nothing else
#             (the old brig prints the usage at once), i.e. the fixed
#             cost per create/run/exec;
#   state     `state ID`, which must not pay (no copy).
# Timed by bench/timer.c like the other benchmarks.
#
# Usage: bench/selfexe.sh --old PATH [-n N] [--brig P]
#   (N= and QUICK=1 in the environment work too; default N=100)
# Writes bench/results/selfexe.csv and selfexe-summary.csv.
set -euo pipefail
OLD=""
args=()
while [ $# -gt 0 ]; do
	if [ "$1" = --old ]; then OLD="${2:-}"; shift 2; else args+=("$1"); shift; fi
done
set -- --no-crun ${args[@]+"${args[@]}"}
NAME=selfexe
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[ -n "$OLD" ] && [ -x "$OLD" ] || die "pass --old PATH: a brig without the sealed copy"
RUNTIMES=(brig old)
BIN[old]="$OLD"
ITERS="$(iterations 100 10)"
t=""

note "selfexe: N=$ITERS, brig $BRIG against old $OLD, alternately"
note "binary sizes: brig $(stat -c %s "$BRIG") bytes, old $(stat -c %s "$OLD") bytes"
host_line
for rt in "${RUNTIMES[@]}"; do
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-run"
	make_bundle "$rt" "$WORK/bundle-$rt-exec" "$rt-exec" '.process.args = ["/bin/sleep", "2147483647"]'
	rt_cmd "$rt" run -d --bundle "$WORK/bundle-$rt-exec" x </dev/null >/dev/null 2>>"$WORK/err" ||
		die "$rt: cannot start the container: $(tail -n3 "$WORK/err")"
done
for i in -2 -1 0; do # warm-up: page cache, binaries
	for rt in "${RUNTIMES[@]}"; do
		timed t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "w$i" || recover "$rt"
		timed t rt_cmd "$rt" exec x /bin/true || true
	done
done
for i in $(seq "$ITERS"); do
	# A B, then B A: the first cgroup.procs write after an idle spell waits
	# for an RCU grace period (several ms here), so a fixed order would
	# charge that wait to whichever runtime comes after the gap.
	if [ $((i % 2)) -eq 0 ]; then ORDER=(brig old); else ORDER=(old brig); fi
	for rt in "${ORDER[@]}"; do
		if timed t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "r$i"; then record "$rt" run "$i" "$t" us
		else fail "$rt" run; recover "$rt"; fi
	done
	for rt in "${ORDER[@]}"; do
		if timed t rt_cmd "$rt" exec x /bin/true; then record "$rt" exec "$i" "$t" us
		else fail "$rt" exec; fi
	done
	for rt in "${ORDER[@]}"; do
		if timed t rt_cmd "$rt" create --help; then record "$rt" fixed "$i" "$t" us
		else fail "$rt" fixed; fi
	done
	for rt in "${ORDER[@]}"; do
		if timed t rt_cmd "$rt" state x; then record "$rt" state "$i" "$t" us
		else fail "$rt" state; fi
	done
done

summary_row run "run /bin/true (median)" ms 1000
summary_row run "run /bin/true (min)" ms 1000 min
summary_row exec "exec /bin/true (median)" ms 1000
summary_row exec "exec /bin/true (min)" ms 1000 min
summary_row fixed "create --help (median)" ms 1000
summary_row fixed "create --help (min)" ms 1000 min
summary_row state "state (median)" ms 1000
print_summary
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
