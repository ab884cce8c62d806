#!/bin/bash
# brig's benchmark suite, in one command: brig against runc and crun (and
# against the floor), each benchmark alternating the runtimes A B A B.
#
#   sudo bench/run.sh [--brig PATH] [--runc PATH] [--crun PATH|--no-crun]
#   QUICK=1 sudo bench/run.sh      a fast smoke run (few iterations)
#   N=50 sudo bench/run.sh         iterations per benchmark
#
# Benchmarks (each is also a script of its own in bench/):
#   lifecycle.sh   create+start+wait+delete and run of /bin/true, with and
#                  without a new network namespace
#   exec.sh        exec latency into a running container
#   rss.sh         peak RSS of the runtime process for create and run
#   memlimit.sh    smallest memory limit under which run still works
#   throughput.sh  parallel create+start of 10/100 containers; lifecycle
#                  time with 0/10/50/100 existing containers
#   seccomp.sh     getpid loop under no/hardened/300-rule profiles; filter
#                  compile cost on create
#   floor.sh       brig against a minimal clone+pivot_root+exec program
#   runsc.sh       brig, runc, crun and gVisor's runsc (ptrace platform):
#                  run, exec, getpid and stat loops, idle memory
# crun refuses this host's hybrid cgroup layout, so it runs in a private
# mount namespace with a tmpfs over /sys/fs/cgroup/unified (cgroup v1
# only); see lib.sh. Everything runs under private --root directories in a
# mktemp directory and private cgroups, removed at exit, also on ^C.
# Results: bench/results/NAME.csv (samples), NAME-summary.csv, NAME.png,
# and summary.csv / targets.csv for the whole run.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "run.sh: run as root" >&2; exit 1; }

# Tools the suite needs (Debian packages).
missing=()
[ -x /usr/sbin/runc ] || missing+=(runc)
[ -x /usr/bin/crun ] || missing+=(crun)
[ -x /usr/bin/runsc ] || missing+=(runsc)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
[ -x /usr/bin/time ] || missing+=(time)
if [ "${#missing[@]}" -gt 0 ]; then
	echo "# installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >/dev/null ||
		echo "# apt-get install ${missing[*]} failed; carrying on without them" >&2
fi

NAME=run
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
export BRIG RUNC QUICK
[ -z "$ITER" ] || export N="$ITER"
CRUN_ARGS=(--no-crun)
[ -z "$CRUN" ] || CRUN_ARGS=(--crun "$CRUN")
STARTED="$(date -u '+%Y-%m-%d %H:%M UTC')"
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "# brig benchmark suite, $STARTED$([ "$QUICK" = 1 ] && echo ', QUICK=1 (smoke run, few iterations)')"
versions
host_line

for b in lifecycle lifecycle-nonetns exec rss memlimit throughput seccomp floor runsc; do
	echo
	echo "######## $b"
	flags=()
	[ "$b" != lifecycle-nonetns ] || flags=(--no-netns)
	"$HERE/${b%-nonetns}.sh" --brig "$BRIG" --runc "$RUNC" "${CRUN_ARGS[@]}" "${flags[@]}" || echo "# $b failed"
done

# The whole run's summary: the medians and ratios of every benchmark.
{
	echo "benchmark,scenario,unit,brig,runc,crun,floor,brig/runc,brig/crun,brig/floor"
	for b in lifecycle lifecycle-nonetns exec rss memlimit throughput seccomp; do
		f="$RESULTS/$b-summary.csv"
		[ -s "$f" ] || continue
		awk -F, -v OFS=, 'NR > 1 { print $1, $2, $3, $4, $5, $6, "NA", $7, $8, "NA" }' "$f"
	done
	f="$RESULTS/floor-summary.csv"
	# floor-summary: brig, floor, bound (floor + two no-op spawns), brig/floor, brig/bound
	[ ! -s "$f" ] || awk -F, -v OFS=, 'NR > 1 { print $1, $2, $3, $4, "NA", "NA", $5, "NA", "NA", $7 }' "$f"
} >"$RESULTS/summary.csv"

# get FILE ROWMATCH COLUMN: a value from a summary CSV.
get() { [ -s "$1" ] && awk -F, -v m="$2" -v c="$3" 'index($0, m) && NR > 1 { print $c; exit }' "$1" || echo NA; }
check() { awk -v v="$1" -v op="$2" -v lim="$3" 'BEGIN {
	if (v == "" || v == "NA") { print "n/a"; exit }
	ok = (op == "<=") ? (v <= lim) : (op == "<") ? (v < lim) : (op == "==") ? (v == lim) : 0
	print ok ? "met" : "NOT met" }'; }
{
	echo "target,value,limit,result"
	v="$(get "$RESULTS/lifecycle-summary.csv" "lifecycle (median)" 8)"; echo "lifecycle brig/crun,$v,<= 0.5,$(check "$v" "<=" 0.5)"
	v="$(get "$RESULTS/lifecycle-summary.csv" "lifecycle (median)" 7)"; echo "lifecycle brig/runc,$v,<= 0.25,$(check "$v" "<=" 0.25)"
	v="$(get "$RESULTS/floor-summary.csv" "lifecycle vs floor (median)" 7)"; echo "lifecycle brig/floor,$v,<= 1.5,$(check "$v" "<=" 1.5)"
	a="$(get "$RESULTS/floor-summary.csv" "lifecycle vs floor (median)" 5)"; b="$(get "$RESULTS/floor-summary.csv" "lifecycle vs floor (median)" 6)"
	v="$(ratio "$b" "$a")"; echo "(bound: floor + two no-op spawns)/floor,$v,<= 1.5,$(check "$v" "<=" 1.5) (no three-process lifecycle can beat it)"
	v="$(get "$RESULTS/rss-summary.csv" "create peak RSS (max)" 4)"; echo "create peak RSS MiB (max),$v,< 3,$(check "$v" "<" 3)"
	v="$(get "$RESULTS/rss-summary.csv" "run peak RSS (max)" 4)"; echo "run peak RSS MiB (max),$v,< 3,$(check "$v" "<" 3)"
	v="$(get "$RESULTS/memlimit-summary.csv" "smallest memory limit" 4)"; echo "run under a 512 KiB limit (smallest KiB),$v,<= 512,$(check "$v" "<=" 512)"
	f="$(get "$RESULTS/throughput-summary.csv" "parallel 100: containers" 9)"; echo "parallel 100 failures (brig/runc/crun),$f,0,$([ "${f%%/*}" = 0 ] && echo met || echo NOT met)"
	v="$(get "$RESULTS/throughput-summary.csv" "parallel 100: leftovers" 4)"; echo "parallel 100 leftovers (brig),$v,0,$(check "$v" "==" 0)"
	a="$(get "$RESULTS/throughput-summary.csv" "with 10 existing" 4)"; b="$(get "$RESULTS/throughput-summary.csv" "with 100 existing" 4)"
	v="$(ratio "$b" "$a")"; echo "lifecycle 100 vs 10 existing,$v,<= 1.3,$(check "$v" "<=" 1.3)"
	a="$(get "$RESULTS/seccomp-summary.csv" "getpid ns/call none" 4)"; b="$(get "$RESULTS/seccomp-summary.csv" "getpid ns/call hardened" 4)"
	v="$(ratio "$b" "$a")"; echo "getpid hardened/none,$v,< 1.05,$(check "$v" "<" 1.05)"
} >"$RESULTS/targets.csv"

echo
echo "######## summary ($STARTED; load average at the start $LOAD_START, at the end $(cut -d' ' -f1-3 /proc/loadavg))"
column -t -s, "$RESULTS/summary.csv"
echo
echo "######## issue 7 targets (brig)"
column -t -s, "$RESULTS/targets.csv"
echo
note "results: $RESULTS/*.csv, plots: $RESULTS/*.png"
