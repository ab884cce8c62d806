#!/bin/bash
# Machine-independent figures (issue #15): syscalls and CPU time per
# command of each runtime, beside the wall times of the other benchmarks.
#   run        `run` of /bin/true in the busybox bundle;
#   lifecycle  create + start + (the container's /bin/true) + delete.
# Syscalls: `strace -f -c` of each runtime command and everything it
# starts (the container's process included: /bin/true makes the same few
# calls under every runtime). The lifecycle's create is traced in the
# background until its container exits, start and delete on their own, and
# the three totals are added; the harness itself is never traced. brig's
# create and run re-execute themselves from a detached read-only mount of
# the binary, or a sealed memfd copy where that is not possible
# (runtime/lib/process/selfexe.c, issues #11 and #15): the re-exec and the second
# start of the binary are counted, as they are part of every
# create/run/exec.
# CPU: `perf stat -e task-clock` (inherited by every descendant, also the
# container's process, which has exited before perf reads), without strace.
# The lifecycle's CPU is taken over bench/timer.c --lifecycle; timer's own
# share (three posix_spawns and the pidfd wait: timer running three static
# no-ops, minus three no-ops) is subtracted.
# crun runs through its setns+exec wrapper (see lib.sh): the wrapper's
# calls and CPU (wrapper exec'ing a static no-op, minus that no-op) are
# subtracted once per crun command.
# Every runtime is measured alternately (A B C, then C B A) in each round.
# --old PATH adds a second brig (runtime "old", e.g. a build of the tree
# before a change) to the same rounds, so before and after come from one
# run: the summary then has a brig/old column.
#
# What holds across machines: the syscall counts (same kernel, config and
# host cgroup layout), and the CPU ratios between runtimes measured in one
# run. What does not: absolute CPU and wall times (they scale with the
# machine, its load and its hypervisor).
#
# Usage: bench/syscalls.sh [-n N] [--brig P] [--old P] [--runc P] [--crun P|--no-crun]
#   (N= and QUICK=1 work; default N=10)
# Writes bench/results/syscalls.csv, syscalls-summary.csv and, per runtime,
# syscalls-run-RT.txt: the strace -c table (calls per syscall) of one `run`.
set -euo pipefail
NAME=syscalls
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || die "strace not found (apt-get install strace)"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
ITERS="$(iterations 10 3)"
t=""

gcc -static -O2 -o "$WORK/nop" "$HERE/nop.c" || die "cannot build nop"

# calls_of FILE: the total of a strace -c table.
calls_of() { awk '$NF == "total" { print $4 }' "$1"; }
# strace_calls VAR CMD...: the syscalls of CMD and its descendants.
strace_calls() {
	local __v="$1"
	shift
	[ "$1" != rt_cmd ] || set -- "${BIN[$2]}" --root "$WORK/root-$2" "${@:3}"
	strace -f -c -o "$WORK/strace.out" -- "$@" </dev/null >/dev/null 2>>"$WORK/err" || return 1
	printf -v "$__v" '%s' "$(calls_of "$WORK/strace.out")"
}
# cpu_us VAR CMD...: the task-clock of CMD and its descendants in µs.
cpu_us() {
	local __v="$1"
	shift
	[ "$1" != rt_cmd ] || set -- "${BIN[$2]}" --root "$WORK/root-$2" "${@:3}"
	perf stat -x, -e task-clock -o "$WORK/perf.out" -- "$@" </dev/null >/dev/null 2>>"$WORK/err" || return 1
	printf -v "$__v" '%s' "$(awk -F, '$3 == "task-clock" { printf "%d", $1 * 1000 }' "$WORK/perf.out")"
}
# median CMD...: the median of N runs of a numeric-output function.
median_of() {
	local f="$1" i v vals=()
	shift
	for i in $(seq 15); do "$f" v "$@" || die "cannot measure $*"; vals+=("$v"); done
	printf '%s\n' "${vals[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# What is not the runtime's: the crun wrapper and timer's own share.
WRAP_CALLS=0 WRAP_CPU=0
if [ -n "${BIN[crun]:-}" ]; then
	HOLDER_NS="/proc/$HOLDER_PID/ns/mnt"
	gcc -static -O2 -DNS_PATH="\"$HOLDER_NS\"" -DPROG="\"$WORK/nop\"" \
		-o "$WORK/wrap-nop" "$HERE/nsexec.c" || die "cannot build the wrapper probe"
	WRAP_CALLS=$(( $(median_of strace_calls "$WORK/wrap-nop") - $(median_of strace_calls "$WORK/nop") ))
	WRAP_CPU=$(( $(median_of cpu_us "$WORK/wrap-nop") - $(median_of cpu_us "$WORK/nop") ))
fi
TIMER_CPU=$(( $(median_of cpu_us "$WORK/timer" "$WORK/nop" -- "$WORK/nop" -- "$WORK/nop") - 3 * $(median_of cpu_us "$WORK/nop") ))
[ "$TIMER_CPU" -ge 0 ] || TIMER_CPU=0

note "syscalls: N=$ITERS; strace -f -c (syscalls) and perf stat -e task-clock (CPU) per command"
note "subtracted: crun wrapper $WRAP_CALLS calls and $WRAP_CPU µs per crun command; timer's share of the lifecycle's CPU $TIMER_CPU µs"
versions
[ -z "$OLD" ] || note "old: $OLD ($("$OLD" --version | head -n1))"
host_line
for rt in "${RUNTIMES[@]}"; do make_bundle "$rt" "$WORK/bundle-$rt" "$rt-sc"; done

# state_is RT ID STATUS
state_is() { rt_cmd "$1" state "$2" 2>/dev/null | jq -e --arg s "$3" '.status == $s' >/dev/null; }

# lifecycle_calls VAR RT ID: create (traced in the background until its
# container exits) + start + delete.
lifecycle_calls() {
	local __v="$1" rt="$2" id="$3" bg c s d
	strace -f -c -o "$WORK/strace-create.out" -- "${BIN[$rt]}" --root "$WORK/root-$rt" \
		create --bundle "$WORK/bundle-$rt" "$id" </dev/null >/dev/null 2>>"$WORK/err" &
	bg=$!
	for _ in $(seq 400); do
		state_is "$rt" "$id" created && break
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.05
	done
	strace_calls s rt_cmd "$rt" start "$id" || { wait "$bg" || true; return 1; }
	wait "$bg" || return 1
	c="$(calls_of "$WORK/strace-create.out")"
	for _ in $(seq 400); do state_is "$rt" "$id" stopped && break; sleep 0.05; done
	strace_calls d rt_cmd "$rt" delete "$id" || return 1
	printf -v "$__v" '%s' "$((c + s + d))"
}

for i in -1 0 $(seq "$ITERS"); do # two warm-up rounds (i <= 0)
	if [ $((i % 2)) -eq 0 ]; then ORDER=("${RUNTIMES[@]}"); else
		ORDER=(); for rt in "${RUNTIMES[@]}"; do ORDER=("$rt" "${ORDER[@]}"); done; fi
	for rt in "${ORDER[@]}"; do
		w=0; [ "$rt" != crun ] || w=1
		if strace_calls t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "s$i"; then
			[ "$i" -le 0 ] || record "$rt" run-calls "$i" "$((t - w * WRAP_CALLS))" calls
			[ "$i" -ne 1 ] || cp "$WORK/strace.out" "$RESULTS/syscalls-run-$rt.txt"
		else fail "$rt" run-calls; recover "$rt"; fi
		if cpu_us t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "c$i"; then
			[ "$i" -le 0 ] || record "$rt" run-cpu "$i" "$((t - w * WRAP_CPU))" us
		else fail "$rt" run-cpu; recover "$rt"; fi
		if lifecycle_calls t "$rt" "l$i"; then
			[ "$i" -le 0 ] || record "$rt" lifecycle-calls "$i" "$((t - 3 * w * WRAP_CALLS))" calls
		else fail "$rt" lifecycle-calls; recover "$rt"; fi
		if cpu_us t "$WORK/timer" --lifecycle "${BIN[$rt]}" "$WORK/root-$rt" "$WORK/bundle-$rt" \
			"m$i" "$WORK/$rt.pid"; then
			[ "$i" -le 0 ] || record "$rt" lifecycle-cpu "$i" "$((t - TIMER_CPU - 3 * w * WRAP_CPU))" us
		else fail "$rt" lifecycle-cpu; recover "$rt"; fi
	done
done

summary_row run-calls "run /bin/true: syscalls" calls 1
summary_row run-cpu "run /bin/true: CPU" ms 1000
summary_row lifecycle-calls "create+start+delete: syscalls" calls 1
summary_row lifecycle-cpu "create+start+delete: CPU" ms 1000
print_summary
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
