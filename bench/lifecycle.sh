#!/bin/bash
# Lifecycle: create + start + wait for the exit + delete of /bin/true in a
# busybox bundle, per step, and `run` of the same (create and start in one
# command; it waits for the exit and deletes the container); brig, runc
# and crun alternately, sequentially. Timed by bench/timer.c (posix_spawn,
# the exit waited for on a pidfd).
#
# Usage: bench/lifecycle.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun] [--no-netns]
#   (N= and QUICK=1 in the environment work too; default N=100)
#   --no-netns  leave out the network namespace (default: a new one)
# Writes bench/results/lifecycle.csv, lifecycle-summary.csv and
# lifecycle.png (lifecycle-nonetns.* with --no-netns).
set -euo pipefail
NETNS=1
args=()
for a in "$@"; do
	if [ "$a" = --no-netns ]; then NETNS=0; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
NAME=lifecycle
[ "$NETNS" = 1 ] || NAME=lifecycle-nonetns
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 100 10)"
t=""

filter='.'
netns_note="new network namespace"
if [ "$NETNS" = 0 ]; then
	filter='.linux.namespaces -= [{"type": "network"}]'
	netns_note="no network namespace"
fi
note "lifecycle: N=$ITERS, /bin/true in a busybox bundle, $netns_note"
versions
host_line
for rt in "${RUNTIMES[@]}"; do
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-lc" "$filter"
done

# lifecycle RT ID I: one lifecycle; records the total and every step.
lifecycle() {
	local v k names=(lifecycle lifecycle.create lifecycle.start lifecycle.wait lifecycle.delete)
	read -r -a v < <(lifecycle_us "$1" "$WORK/bundle-$1" "$2") || true
	[ "${#v[@]}" -eq 5 ] || return 1
	for k in 0 1 2 3 4; do record "$1" "${names[$k]}" "$3" "${v[$k]}" us; done
}

for i in -2 -1 0; do # warm-up: page cache, binaries
	for rt in "${RUNTIMES[@]}"; do
		lifecycle_us "$rt" "$WORK/bundle-$rt" "w$i" >/dev/null || recover "$rt"
		timed t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "v$i" || recover "$rt"
	done
done
for i in $(seq "$ITERS"); do
	for rt in "${RUNTIMES[@]}"; do
		lifecycle "$rt" "c$i" "$i" || { fail "$rt" lifecycle; recover "$rt"; }
	done
	for rt in "${RUNTIMES[@]}"; do
		if timed t rt_cmd "$rt" run --bundle "$WORK/bundle-$rt" "r$i"; then record "$rt" run "$i" "$t" us
		else fail "$rt" run; recover "$rt"; fi
	done
done

summary_row lifecycle "lifecycle (median)" ms 1000
summary_row lifecycle "lifecycle (min)" ms 1000 min
for step in create start wait delete; do
	summary_row "lifecycle.$step" "  $step (median)" ms 1000
done
summary_row run "run (median)" ms 1000
summary_row run "run (min)" ms 1000 min
print_summary
plot_summary "lifecycle of /bin/true ($netns_note), N=$ITERS" "ms"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
