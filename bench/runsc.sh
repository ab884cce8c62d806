#!/bin/bash
# brig against gVisor (issue 25 item 5): runsc (Debian's package, the
# ptrace platform: no KVM on these VMs; --network=none, as the bench's
# containers have no network beyond their own loopback) as a fourth
# runtime beside runc and crun, every scenario in one run, the runtimes
# in rotation (A B C D, then B C D A, ...):
#   run        `run` of /bin/true, wall time (timer.c)
#   run-cpu    the same under `perf stat -e task-clock`: the CPU of the
#              runtime and every descendant (runsc's sandbox and gofer,
#              brig's init, the container's process); run-peak, its peak
#              RSS by /usr/bin/time (the runtime and the children it waited for)
#   exec       `exec ID /bin/true` into a running `sleep` container
#   getpid     ns per getpid(2) inside the container (getpid_loop.c)
#   stat       ns per stat(2) of /bin/busybox inside it (stat_loop.c)
#   idle-pss   what a running `sleep` container costs the host: the PSS
#              summed over every process in its memory cgroup (runsc: the
#              sandbox, the gofer and the ptrace stubs; the others: the
#              container's process), idle-rss the RSS, idle-hwm the peak
#              RSS (VmHWM) of each summed, idle-cg-max the cgroup's
#              memory.max_usage_in_bytes
# Before measuring, runsc must really run a container (left out, saying
# why, otherwise).
#
# Usage: bench/runsc.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   (N=, QUICK=1; RUNSC=PATH, default /usr/bin/runsc; LOOPS=calls per
#   loop sample, default 100000; default N=30)
# Writes bench/results/runsc.csv and runsc-summary.csv.
set -euo pipefail
NAME=runsc
RUNSC="${RUNSC:-/usr/bin/runsc}"
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 30 5)"
LOOPS="${LOOPS:-100000}"
LOOP_N="${LOOP_N:-5}"
declare -A DETACH=([brig]=-d [runc]=-d [crun]=-d [runsc]=--detach)
t=""
# runsc chowns the stdio it is given to its sandbox's user (nobody): every
# command here gets a null device node of this run's own, never the
# host's /dev/null (whose owner is checked again at the end)
NUL="$WORK/null"
mknod -m 0666 "$NUL" c 1 3
export TIMER_NULL="$NUL"
DEVNULL_OWNER="$(stat -c %u:%g /dev/null)"

versions
if [ -x "$RUNSC" ]; then
	BIN["runsc"]="$RUNSC"
	RT_ARGS[runsc]="--platform=ptrace --network=none"
	make_bundle runsc "$WORK/bundle-runsc-check" runsc-check \
		'.process.args = ["/bin/sh", "-c", "test -x /bin/busybox && echo runsc-ok"] | .ociVersion = "1.0.2"'
	if [ "$(rt_cmd runsc run --bundle "$WORK/bundle-runsc-check" runsc-check <"$NUL" 2>>"$WORK/err")" = runsc-ok ]; then
		RUNTIMES+=(runsc)
		note "runsc: $RUNSC ($("$RUNSC" --version 2>&1 | head -n1)), flags ${RT_ARGS[runsc]}, ociVersion 1.0.2; checked: it ran a container"
	else
		note "runsc does not run containers here, left out: $(tail -n2 "$WORK/err")"
		unset 'BIN[runsc]'
	fi
else
	note "runsc not found at $RUNSC (apt-get install runsc), left out"
fi
note "runsc: N=$ITERS, loops $LOOP_N x $LOOPS calls, runtimes ${RUNTIMES[*]} in rotation"
host_line

cp -a "$BRIG_ROOTFS_CACHE" "$WORK/rootfs-rs"
gcc -static -O2 -o "$WORK/rootfs-rs/getpid_loop" "$HERE/getpid_loop.c" || die "cannot build getpid_loop"
gcc -static -O2 -o "$WORK/rootfs-rs/stat_loop" "$HERE/stat_loop.c" || die "cannot build stat_loop"
# bundle RT NAME ARGS_JSON: $WORK/NAME-RT with its own cgroup RT-NAME
bundle() {
	local extra=".process.args = $3"
	[ "$1" != runsc ] || extra="$extra | .ociVersion = \"1.0.2\""
	make_bundle "$1" "$WORK/$2-$1" "$1-$2" "$extra" "$WORK/rootfs-rs"
}
for rt in "${RUNTIMES[@]}"; do
	bundle "$rt" true '["/bin/true"]'
	bundle "$rt" idle '["/bin/sleep", "2147483647"]'
	bundle "$rt" getpid "[\"/getpid_loop\", \"$LOOPS\"]"
	bundle "$rt" stat "[\"/stat_loop\", \"$LOOPS\", \"/bin/busybox\"]"
done
# rotated I: RUNTIMES starting at index I mod their count
rotated() {
	local n=${#RUNTIMES[@]} k
	for ((k = 0; k < n; k++)); do echo "${RUNTIMES[$(((k + $1) % n))]}"; done
}

# Idle memory, right after the start and 2 s later (3 samples, 1 s apart).
for rt in "${RUNTIMES[@]}"; do
	rt_cmd "$rt" run "${DETACH[$rt]}" --bundle "$WORK/idle-$rt" x <"$NUL" >"$NUL" 2>>"$WORK/err" ||
		die "$rt: cannot start the idle container: $(tail -n3 "$WORK/err")"
done
sleep 2
note "idle containers started; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for s in 1 2 3; do
	for rt in "${RUNTIMES[@]}"; do
		cg="/sys/fs/cgroup/memory/$CG_PARENT/$rt-idle"
		[ -d "$cg" ] || cg="/sys/fs/cgroup/$CG_PARENT/$rt-idle"
		pss=0 rss=0 hwm=0 n=0
		for pid in $(cat "$cg/cgroup.procs"); do
			read -r p r < <(awk '/^Pss:/ { p = $2 } /^Rss:/ { r = $2 } END { print p + 0, r + 0 }' \
				"/proc/$pid/smaps_rollup" 2>"$NUL" || echo 0 0)
			h="$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>"$NUL" || echo 0)"
			pss=$((pss + p)) rss=$((rss + r)) hwm=$((hwm + ${h:-0})) n=$((n + 1))
		done
		record "$rt" idle-pss "$s" "$pss" KiB
		record "$rt" idle-rss "$s" "$rss" KiB
		record "$rt" idle-hwm "$s" "$hwm" KiB
		record "$rt" idle-procs "$s" "$n" processes
		if [ -f "$cg/memory.max_usage_in_bytes" ]; then
			record "$rt" idle-cg-max "$s" "$(($(cat "$cg/memory.max_usage_in_bytes") / 1024))" KiB
		elif [ -f "$cg/memory.peak" ]; then
			record "$rt" idle-cg-max "$s" "$(($(cat "$cg/memory.peak") / 1024))" KiB
		fi
	done
	sleep 1
done

note "exec: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq -2 "$ITERS"); do
	for rt in $(rotated "$i"); do
		if timed t rt_cmd "$rt" exec x /bin/true; then [ "$i" -le 0 ] || record "$rt" exec "$i" "$t" us
		else fail "$rt" exec; fi
	done
done

note "run: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq -2 "$ITERS"); do
	for rt in $(rotated "$i"); do
		if timed t rt_cmd "$rt" run --bundle "$WORK/true-$rt" "r$i"; then
			[ "$i" -le 0 ] || record "$rt" run "$i" "$t" us
		else fail "$rt" run; recover "$rt"; fi
	done
done
for i in $(seq "$(( (ITERS + 2) / 3 ))"); do
	for rt in $(rotated "$i"); do
		# shellcheck disable=SC2086
		if perf stat -x, -e task-clock -o "$WORK/perf.out" -- "${BIN[$rt]}" --root "$WORK/root-$rt" \
			${RT_ARGS[$rt]:-} run --bundle "$WORK/true-$rt" "c$i" <"$NUL" >"$NUL" 2>>"$WORK/err"; then
			record "$rt" run-cpu "$i" "$(awk -F, '$3 == "task-clock" { print $1 }' "$WORK/perf.out")" ms
		else fail "$rt" run-cpu; recover "$rt"; fi
		# shellcheck disable=SC2086
		if /usr/bin/time -o "$WORK/time.out" -f %M "${BIN[$rt]}" --root "$WORK/root-$rt" \
			${RT_ARGS[$rt]:-} run --bundle "$WORK/true-$rt" "m$i" <"$NUL" >"$NUL" 2>>"$WORK/err"; then
			record "$rt" run-peak "$i" "$(tail -n1 "$WORK/time.out")" KiB
		else fail "$rt" run-peak; recover "$rt"; fi
	done
done

note "loops: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$LOOP_N"); do
	for w in getpid stat; do
		for rt in $(rotated "$i"); do
			if v="$(rt_cmd "$rt" run --bundle "$WORK/$w-$rt" "$w$i" <"$NUL" 2>>"$WORK/err")" && [ -n "$v" ]; then
				record "$rt" "$w" "$i" "$v" ns
			else fail "$rt" "$w"; recover "$rt"; fi
		done
	done
done

summary_row run "run /bin/true wall (median)" ms 1000
summary_row run "run /bin/true wall (min)" ms 1000 min
summary_row run-cpu "run /bin/true CPU of every process (median)" ms 1
summary_row run-peak "run /bin/true peak RSS (max)" MiB 1024 max
summary_row exec "exec /bin/true (median)" ms 1000
summary_row exec "exec /bin/true (min)" ms 1000 min
summary_row getpid "getpid(2) in the container (median)" ns 1
summary_row stat "stat(2) of /bin/busybox in the container (median)" ns 1
summary_row idle-pss "idle sleep container: PSS of its processes" MiB 1024
summary_row idle-rss "idle: RSS summed" MiB 1024
summary_row idle-hwm "idle: peak RSS (VmHWM) summed" MiB 1024
summary_row idle-cg-max "idle: the cgroup's peak usage" MiB 1024
summary_row idle-procs "idle: host processes in its cgroup" n 1
print_summary
[ "$(stat -c %u:%g /dev/null)" = "$DEVNULL_OWNER" ] ||
	note "WARNING: the owner of /dev/null changed during this run ($DEVNULL_OWNER -> $(stat -c %u:%g /dev/null))"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
