#!/bin/bash
# Lifecycle benchmark: brig against runc in the same run, alternating
# A B A B so both see the same machine state.
#
#   lifecycle  create + start + wait for exit + delete of /bin/true
#   run        `run` of /bin/true (create and start in one command; it
#              waits for the exit and deletes the container)
#   peak RSS   of the runtime process for `create` and for `run`
#              (/usr/bin/time -f %M, KiB; includes children it waited for)
#
# Usage: bench/lifecycle.sh [-n N] [--brig PATH] [--runc PATH] [--crun PATH] [--no-netns]
#   -n N        containers per runtime and scenario (default 100)
#   --brig P    brig binary (default $BRIG, else ./runtime/brig of the tree)
#   --runc P    reference runtime (default /usr/sbin/runc)
#   --crun P    also measure crun through P (bench/run.sh passes its
#               wrapper that runs crun in a mount namespace without
#               cgroup2; $CRUN_NOTE is printed); its bundle says 1.0.2
#   --no-netns  leave out the network namespace (default: new netns)
#   --rss N     runs measured for peak RSS (default 10)
#
# Runs as root. Everything is private: its own --root per runtime, bundles
# under a fresh /tmp/brig-bench.* directory and cgroups under /brig-bench;
# all of it is removed at the end, also on failure or ^C.
# Writes bench/results/lifecycle-<time>.csv (every sample) and
# lifecycle-<time>-summary.csv ($OUT_NAME.csv and $OUT_NAME-summary.csv
# when OUT_NAME is set, as bench/run.sh does), and prints a table.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
SRCDIR="$(cd "$HERE/.." && pwd)"
N=100
RSS_RUNS=10
BRIG="${BRIG:-}"
RUNC="${RUNC:-/usr/sbin/runc}"
CRUN="" # only with --crun: plain crun refuses this host's hybrid cgroups
NETNS=1
RESULTS="${RESULTS:-$HERE/results}"

while [ $# -gt 0 ]; do
	case "$1" in
	-n) N="$2"; shift 2 ;;
	--brig) BRIG="$2"; shift 2 ;;
	--runc) RUNC="$2"; shift 2 ;;
	--crun) CRUN="$2"; shift 2 ;;
	--no-netns) NETNS=0; shift ;;
	--rss) RSS_RUNS="$2"; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "lifecycle.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

die() { echo "lifecycle.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (containers need it)"
if [ -z "$BRIG" ]; then
	for b in "$SRCDIR/runtime/brig" "$SRCDIR/build/runtime/brig"; do
		[ -x "$b" ] && BRIG="$b" && break
	done
fi
[ -n "$BRIG" ] && [ -x "$BRIG" ] || die "brig not found: pass --brig PATH or BRIG=PATH"
[ -x "$RUNC" ] || die "$RUNC not found (apt-get install runc)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
command -v jq >/dev/null || die "jq not found"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "-n needs a positive number"

WORK="$(mktemp -d /tmp/brig-bench.XXXXXX)"
TAG="$(basename "$WORK")"
CG_PARENT="brig-bench"
# The shared parent /brig-bench in each hierarchy: removed at the end where
# this run made it and it is empty (another run may still be using it).
bench_parents() { ls -d /sys/fs/cgroup/*/brig-bench /sys/fs/cgroup/brig-bench 2>/dev/null || true; }
PARENTS_BEFORE=" $(bench_parents | tr '\n' ' ') "
RUNTIMES=(brig runc)
declare -A BIN=([brig]="$BRIG" [runc]="$RUNC")
if [ -n "${CRUN:-}" ]; then
	RUNTIMES+=(crun)
	BIN[crun]="$CRUN"
fi

cleanup() {
	local rt id d
	set +e
	for rt in "${RUNTIMES[@]}"; do
		[ -d "$WORK/root-$rt" ] || continue
		for id in $("${BIN[$rt]}" --root "$WORK/root-$rt" list -q 2>/dev/null); do
			"${BIN[$rt]}" --root "$WORK/root-$rt" delete --force "$id" >/dev/null 2>&1
		done
	done
	for d in /sys/fs/cgroup/*/"$CG_PARENT"/"$TAG"-* /sys/fs/cgroup/"$CG_PARENT"/"$TAG"-*; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	for d in $(bench_parents); do
		[[ "$PARENTS_BEFORE" == *" $d "* ]] || rmdir "$d" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The busybox rootfs and config.json come from the test harness, so the
# benchmark runs exactly the bundle the tests run.
export BRIG_ROOTFS_CACHE="$WORK/rootfs"
# shellcheck source=../tests/integration/helpers.bash
source "$SRCDIR/tests/integration/helpers.bash"
build_rootfs_template >/dev/null
for rt in "${RUNTIMES[@]}"; do
	mkdir -p "$WORK/bundle-$rt" "$WORK/root-$rt"
	write_default_config "$WORK/bundle-$rt" x
	filter='.root.path = $rootfs | .process.args = ["/bin/true"] | .linux.cgroupsPath = $cg'
	[ "$NETNS" -eq 1 ] || filter="$filter"' | .linux.namespaces -= [{"type": "network"}]'
	[ "$rt" != crun ] || filter="$filter"' | .ociVersion = "1.0.2"' # crun 1.8 rejects 1.3.0
	jq --arg rootfs "$BRIG_ROOTFS_CACHE" --arg cg "/$CG_PARENT/$TAG-$rt" "$filter" \
		"$WORK/bundle-$rt/config.json" >"$WORK/bundle-$rt/config.json.new"
	mv "$WORK/bundle-$rt/config.json.new" "$WORK/bundle-$rt/config.json"
done

# The timing: bench/timer.c spawns each runtime command with posix_spawn
# (no fork of this shell inside the measured interval) and waits for the
# container's exit on a pidfd.
gcc -O2 -o "$WORK/timer" "$HERE/timer.c" || die "cannot build bench/timer.c"

# One measured container with runtime $1; prints the total microseconds,
# then those of create, start, the wait for the exit, and delete.
one_lifecycle() {
	"$WORK/timer" --lifecycle "${BIN[$1]}" "$WORK/root-$1" "$WORK/bundle-$1" "c$2" "$WORK/$1.pid" \
		2>>"$WORK/$1.err"
}

one_run() {
	"$WORK/timer" "${BIN[$1]}" --root "$WORK/root-$1" run --bundle "$WORK/bundle-$1" "r$2" \
		2>>"$WORK/$1.err"
}

# Peak RSS (KiB) of one `create` (then cleaned up) or one `run`.
rss_create() {
	local rt="$1" bin="${BIN[$1]}" root="$WORK/root-$1" id="m$2"
	/usr/bin/time -o "$WORK/time.out" -f %M \
		"$bin" --root "$root" create --bundle "$WORK/bundle-$rt" "$id" \
		</dev/null >/dev/null 2>>"$WORK/$rt.err" || return 1
	"$bin" --root "$root" delete --force "$id" 2>>"$WORK/$rt.err" || return 1
	tail -n1 "$WORK/time.out"
}

rss_run() {
	local rt="$1" bin="${BIN[$1]}" root="$WORK/root-$1" id="n$2"
	/usr/bin/time -o "$WORK/time.out" -f %M \
		"$bin" --root "$root" run --bundle "$WORK/bundle-$rt" "$id" \
		</dev/null >/dev/null 2>>"$WORK/$rt.err" || return 1
	tail -n1 "$WORK/time.out"
}

recover() {
	local rt="$1" id
	for id in $("${BIN[$rt]}" --root "$WORK/root-$rt" list -q 2>/dev/null); do
		"${BIN[$rt]}" --root "$WORK/root-$rt" delete --force "$id" >/dev/null 2>&1 || true
	done
}

mkdir -p "$RESULTS"
STAMP="$(date -u +%Y%m%d-%H%M%S)"
CSV="$RESULTS/${OUT_NAME:-lifecycle-$STAMP}.csv"
SUMMARY="$RESULTS/${OUT_NAME:-lifecycle-$STAMP}-summary.csv"
echo "runtime,scenario,iteration,value,unit" >"$CSV"
declare -A FAILS=()

# sample RUNTIME SCENARIO I FUNCTION UNIT: one measurement into the CSV.
# FUNCTION prints the value; for lifecycle also the per-step values.
sample() {
	local rt="$1" scenario="$2" i="$3" fn="$4" unit="$5" out v step
	if out="$("$fn" "$rt" "$i")" && [ -n "$out" ]; then
		read -r -a v <<<"$out"
		echo "$rt,$scenario,$i,${v[0]},$unit" >>"$CSV"
		if [ "${#v[@]}" -eq 5 ]; then
			for step in 1 2 3 4; do
				echo "$rt,$scenario.${STEPS[$step]},$i,${v[$step]},$unit" >>"$CSV"
			done
		fi
	else
		FAILS[$rt,$scenario]=$(( ${FAILS[$rt,$scenario]:-0} + 1 ))
		recover "$rt"
	fi
}
STEPS=(total create start wait delete)

netns_note="new network namespace"
[ "$NETNS" -eq 1 ] || netns_note="no network namespace"
echo "# brig lifecycle benchmark: N=$N, /bin/true in a busybox bundle, $netns_note"
echo "# brig: $BRIG ($("$BRIG" --version | head -n1))"
echo "# runc: $RUNC ($("$RUNC" --version | head -n1))"
[ -z "${CRUN:-}" ] || echo "# crun: $CRUN${CRUN_NOTE:+ -- $CRUN_NOTE}"
echo "# host: $(uname -r), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Warm up page cache and both binaries.
for i in 1 2 3; do
	for rt in "${RUNTIMES[@]}"; do
		one_lifecycle "$rt" "w$i" >/dev/null || recover "$rt"
		one_run "$rt" "w$i" >/dev/null || recover "$rt"
	done
done

for i in $(seq "$N"); do
	for rt in "${RUNTIMES[@]}"; do
		sample "$rt" lifecycle "$i" one_lifecycle us
	done
	for rt in "${RUNTIMES[@]}"; do
		sample "$rt" run "$i" one_run us
	done
done
for i in $(seq "$RSS_RUNS"); do
	for rt in "${RUNTIMES[@]}"; do
		sample "$rt" rss_create "$i" rss_create KiB
		sample "$rt" rss_run "$i" rss_run KiB
	done
done

# stat_of RUNTIME SCENARIO median|min|max: over the CSV's samples (mawk has
# no sort, so sort(1) orders them).
stat_of() {
	awk -F, -v rt="$1" -v sc="$2" '$1 == rt && $2 == sc { print $4 }' "$CSV" | sort -n |
		awk -v what="$3" '
		{ v[++n] = $1 }
		END {
			if (n == 0) { print "NA"; exit }
			if (what == "max") { printf "%.0f\n", v[n]; exit }
			if (what == "min") { printf "%.0f\n", v[1]; exit }
			printf "%.0f\n", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}'
}

echo "scenario,metric,brig,runc,ratio_brig_runc,brig_failures,runc_failures${CRUN:+,crun,ratio_brig_crun,crun_failures}" >"$SUMMARY"
printf '\n%-22s %12s %12s %10s %s' "benchmark" "brig" "runc" "brig/runc" "failures (brig/runc)"
[ -z "${CRUN:-}" ] || printf ' %12s %10s %s' "crun" "brig/crun" "failures (crun)"
echo
row() {
	local scenario="$1" metric="$2" label="$3" unit="$4" scale="$5" b r ratio
	b="$(stat_of brig "$scenario" "$metric")"
	r="$(stat_of runc "$scenario" "$metric")"
	ratio="$(awk -v b="$b" -v r="$r" 'BEGIN { if (b == "NA" || r == "NA" || r == 0) print "NA"; else printf "%.3f", b / r }')"
	local c crun_csv="" crun_txt=""
	if [ -n "${CRUN:-}" ]; then
		c="$(stat_of crun "$scenario" "$metric")"
		crun_csv=",$c,$(awk -v b="$b" -v c="$c" 'BEGIN { if (b == "NA" || c == "NA" || c == 0) print "NA"; else printf "%.3f", b / c }'),${FAILS[crun,$scenario]:-0}"
		crun_txt="$(printf ' %12s %10s %s' "$(awk -v v="$c" -v s="$scale" -v u="$unit" 'BEGIN { if (v == "NA") print v; else printf "%.2f %s", v / s, u }')" "$(echo "$crun_csv" | cut -d, -f3)" "${FAILS[crun,$scenario]:-0}")"
	fi
	echo "$scenario,$metric,$b,$r,$ratio,${FAILS[brig,$scenario]:-0},${FAILS[runc,$scenario]:-0}$crun_csv" >>"$SUMMARY"
	printf '%-22s %12s %12s %10s %s%s\n' "$label" \
		"$(awk -v v="$b" -v s="$scale" -v u="$unit" 'BEGIN { if (v == "NA") print v; else printf "%.2f %s", v / s, u }')" \
		"$(awk -v v="$r" -v s="$scale" -v u="$unit" 'BEGIN { if (v == "NA") print v; else printf "%.2f %s", v / s, u }')" \
		"$ratio" "${FAILS[brig,$scenario]:-0}/${FAILS[runc,$scenario]:-0}" "$crun_txt"
}
row lifecycle median "lifecycle (median)" ms 1000
row lifecycle min "lifecycle (min)" ms 1000
row lifecycle.create median "  create (median)" ms 1000
row lifecycle.start median "  start (median)" ms 1000
row lifecycle.wait median "  wait exit (median)" ms 1000
row lifecycle.delete median "  delete (median)" ms 1000
row run median "run (median)" ms 1000
row run min "run (min)" ms 1000
row rss_create median "create peak RSS (med)" MiB 1024
row rss_create max "create peak RSS (max)" MiB 1024
row rss_run median "run peak RSS (med)" MiB 1024
row rss_run max "run peak RSS (max)" MiB 1024
echo
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# samples: $CSV"
echo "# summary: $SUMMARY"
for rt in "${RUNTIMES[@]}"; do
	if [ -s "$WORK/$rt.err" ]; then
		echo "# $rt stderr (first lines):"
		head -n5 "$WORK/$rt.err" | sed 's/^/#   /'
	fi
done
