#!/bin/bash
# Exec latency: `exec ID /bin/true` into a running container (its process
# is `sleep`), brig, runc and crun alternately; the wall time of the exec
# command, which waits for /bin/true to exit.
#
# Usage: bench/exec.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   (N= and QUICK=1 in the environment work too; default N=100)
# Writes bench/results/exec.csv, exec-summary.csv and exec.png.
set -euo pipefail
NAME="exec"
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 100 10)"
t=""

note "exec latency: N=$ITERS, \`exec ID /bin/true\` into a running busybox container"
versions
host_line
for rt in "${RUNTIMES[@]}"; do
	make_bundle "$rt" "$WORK/bundle-$rt" "$rt-exec" '.process.args = ["/bin/sleep", "2147483647"]'
	rt_cmd "$rt" run -d --bundle "$WORK/bundle-$rt" x </dev/null >/dev/null 2>>"$WORK/err" ||
		die "$rt: cannot start the container: $(tail -n3 "$WORK/err")"
done
for i in 1 2 3; do
	for rt in "${RUNTIMES[@]}"; do timed t rt_cmd "$rt" exec x /bin/true || true; done
done
for i in $(seq "$ITERS"); do
	for rt in "${RUNTIMES[@]}"; do
		if timed t rt_cmd "$rt" exec x /bin/true; then record "$rt" exec "$i" "$t" us
		else fail "$rt" exec; fi
	done
done
summary_row exec "exec /bin/true (median)" ms 1000
summary_row exec "exec /bin/true (min)" ms 1000 min
print_summary
plot_summary "exec /bin/true into a running container (N=$ITERS)" "ms"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
