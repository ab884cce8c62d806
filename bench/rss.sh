#!/bin/bash
# Peak memory of the runtime process: `/usr/bin/time -f %M` (maximum
# resident set size in KiB of the runtime process, including the children
# it waited for) for `create` (then deleted, not measured) and for `run` of
# /bin/true, brig, runc and crun alternately.
#
# Usage: bench/rss.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   (N= and QUICK=1 in the environment work too; default N=20)
# Writes bench/results/rss.csv, rss-summary.csv and rss.png.
set -euo pipefail
NAME=rss
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 20 3)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"

note "peak RSS: N=$ITERS, /usr/bin/time -f %M of create and of run (/bin/true)"
versions
host_line
for rt in "${RUNTIMES[@]}"; do make_bundle "$rt" "$WORK/bundle-$rt" "$rt-rss"; done

rss_of() { # RT COMMAND ID: prints KiB
	local rt="$1" cmd="$2" id="$3"
	/usr/bin/time -o "$WORK/time.out" -f %M "${BIN[$rt]}" --root "$WORK/root-$rt" \
		"$cmd" --bundle "$WORK/bundle-$rt" "$id" </dev/null >/dev/null 2>>"$WORK/err" || return 1
	tail -n1 "$WORK/time.out"
}
for i in $(seq "$ITERS"); do
	for rt in "${RUNTIMES[@]}"; do
		if v="$(rss_of "$rt" create "c$i")"; then record "$rt" create "$i" "$v" KiB
		else fail "$rt" create; fi
		recover "$rt"
		if v="$(rss_of "$rt" run "r$i")"; then record "$rt" run "$i" "$v" KiB
		else fail "$rt" run; recover "$rt"; fi
	done
done
summary_row create "create peak RSS (median)" MiB 1024
summary_row create "create peak RSS (max)" MiB 1024 max
summary_row run "run peak RSS (median)" MiB 1024
summary_row run "run peak RSS (max)" MiB 1024 max
print_summary
plot_summary "peak RSS of the runtime process (N=$ITERS)" "MiB"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
