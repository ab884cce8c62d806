# shellcheck shell=bash
# Shared code of the benchmarks in bench/ (sourced, not run).
#
# A script sets NAME (its benchmark's name) and sources this file, which:
#   - parses -n N / --brig / --runc / --crun and QUICK=1 / N= / BRIG= from
#     the environment (N=iterations, QUICK=1 few iterations for a smoke run);
#   - makes the private work directory $WORK (mktemp under /tmp) holding
#     the bundles and the --root directories of every runtime, and the cgroup
#     parent /brig-bench/$TAG; an EXIT trap force-deletes every container in
#     those roots, kills the helpers it started, removes the cgroups and
#     $WORK, also on failure and on ^C;
#   - starts crun's private mount namespace (crun refuses the hybrid cgroup
#     layout of this host, so it runs in a mount namespace with a tmpfs over
#     /sys/fs/cgroup/unified, i.e. it sees cgroup v1 only) and builds
#     $WORK/crun-v1, a static wrapper that enters it and execs crun (crun
#     still writes its "0::" cgroup's files into that tmpfs and cannot
#     rmdir them, hence its generous size; the tmpfs dies with the holder);
#   - offers timing, CSV, median and gnuplot helpers.
# Runtimes are listed in RUNTIMES (brig runc crun; crun only when found).

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRCDIR="$(cd "$HERE/.." && pwd)"
RESULTS="${RESULTS:-$HERE/results}"
BRIG="${BRIG:-}"
RUNC="${RUNC:-/usr/sbin/runc}"
CRUN="${CRUN-/usr/bin/crun}"
QUICK="${QUICK:-0}"
ITER="${N:-}"
OLD="${OLD:-}"

while [ $# -gt 0 ]; do
	case "$1" in
	-n) ITER="$2"; shift 2 ;;
	--brig) BRIG="$2"; shift 2 ;;
	--runc) RUNC="$2"; shift 2 ;;
	--crun) CRUN="$2"; shift 2 ;;
	--no-crun) CRUN=""; shift ;;
	--old) OLD="$2"; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$NAME: unknown argument $1" >&2; exit 2 ;;
	esac
done

die() { echo "$NAME: $*" >&2; exit 1; }
note() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || die "run as root (containers need it)"
if [ -z "$BRIG" ]; then
	for b in /tmp/build-bench/runtime/brig "$SRCDIR/runtime/brig" "$SRCDIR/build/runtime/brig"; do
		[ -x "$b" ] && BRIG="$b" && break
	done
fi
[ -n "$BRIG" ] && [ -x "$BRIG" ] || die "brig not found: pass --brig PATH or BRIG=PATH"
[ -x "$RUNC" ] || die "$RUNC not found (apt-get install runc)"
command -v jq >/dev/null || die "jq not found"
command -v gcc >/dev/null || die "gcc not found"

# iterations DEFAULT QUICK_DEFAULT: the sample count for this benchmark.
iterations() {
	if [ -n "$ITER" ]; then echo "$ITER"
	elif [ "$QUICK" = 1 ]; then echo "$2"
	else echo "$1"; fi
}

# The work dir (bundles and every runtime's --root) on a tmpfs, where the
# runtimes keep their state on real hosts (/run): on a disk filesystem
# every state file and directory a command creates costs an inode
# allocation (ext4's scan past recently deleted inodes was a fifth of all
# kernel samples of a `run` here, see README "Where the CPU goes"). /run
# when it is a tmpfs, else /dev/shm, else /tmp; BENCH_TMP=DIR chooses.
bench_tmp() {
	local d
	[ -z "${BENCH_TMP:-}" ] || { echo "$BENCH_TMP"; return; }
	for d in /run /dev/shm; do
		[ "$(stat -f -c %T "$d" 2>/dev/null)" = tmpfs ] || continue
		[[ ",$(findmnt -no OPTIONS -T "$d" | tail -n1)," != *,noexec,* ]] || continue
		echo "$d"
		return
	done
	echo /tmp
}
WORK="$(mktemp -d "$(bench_tmp)/brig-bench.XXXXXX")"
chmod 0755 "$WORK"
TAG="$(basename "$WORK")"
TAG="${TAG#brig-bench.}"
CG_PARENT="brig-bench/$TAG"
RUNTIMES=(brig runc)
declare -A BIN=([brig]="$BRIG" [runc]="$RUNC")
# --old PATH (or OLD=): a second brig, runtime "old", measured in the same
# rounds (a build before a change: the summary's brig/old is the ratio).
if [ -n "$OLD" ]; then
	[ -x "$OLD" ] || die "--old $OLD: not an executable"
	RUNTIMES=(brig old runc)
	BIN[old]="$OLD"
fi
HOLDER_PID=""
declare -a EXTRA_PIDS=()
# The shared parent /brig-bench in each hierarchy: removed at the end where
# this run made it and it is empty (another run may still be using it).
bench_parents() { ls -d /sys/fs/cgroup/*/brig-bench /sys/fs/cgroup/brig-bench 2>/dev/null || true; }
PARENTS_BEFORE=" $(bench_parents | tr '\n' ' ') "

cleanup() {
	local rt id d root
	set +e
	trap - EXIT INT TERM
	for root in "$WORK"/root-*; do
		[ -d "$root" ] || continue
		rt="${root##*/root-}"
		rt="${rt%%-*}"
		[ -n "${BIN[$rt]:-}" ] || continue
		for id in $("${BIN[$rt]}" --root "$root" list --quiet 2>/dev/null); do
			"${BIN[$rt]}" --root "$root" delete --force "$id" >/dev/null 2>&1
		done
	done
	for pid in "${EXTRA_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	[ -n "$HOLDER_PID" ] && kill "$HOLDER_PID" 2>/dev/null && wait "$HOLDER_PID" 2>/dev/null
	for d in /sys/fs/cgroup/*/"$CG_PARENT" /sys/fs/cgroup/unified/"$CG_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	for d in $(bench_parents); do
		[[ "$PARENTS_BEFORE" == *" $d "* ]] || rmdir "$d" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# crun's private mount namespace: a sleeping holder process owns it.
CRUN_NOTE=""
if [ -n "$CRUN" ] && [ -x "$CRUN" ]; then
	unshare -m --propagation private sh -c \
		'mount -t tmpfs -o size=64m,mode=0755 brig-bench-no-cgroup2 /sys/fs/cgroup/unified && exec sleep 2147483647' \
		</dev/null >/dev/null 2>"$WORK/holder.err" &
	HOLDER_PID=$!
	for _ in $(seq 100); do
		grep -q ' /sys/fs/cgroup/unified .* tmpfs ' "/proc/$HOLDER_PID/mountinfo" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ' /sys/fs/cgroup/unified .* tmpfs ' "/proc/$HOLDER_PID/mountinfo" 2>/dev/null ||
		die "cannot set up crun's mount namespace: $(cat "$WORK/holder.err")"
	gcc -static -O2 -DNS_PATH="\"/proc/$HOLDER_PID/ns/mnt\"" -DPROG="\"$CRUN\"" \
		-o "$WORK/crun-v1" "$HERE/nsexec.c" || die "cannot build the crun wrapper"
	RUNTIMES+=(crun)
	BIN[crun]="$WORK/crun-v1"
	CRUN_NOTE="crun $("$CRUN" --version | head -n1 | awk '{print $3}') runs via $WORK/crun-v1 (setns into a private mount namespace with a tmpfs over /sys/fs/cgroup/unified, so crun sees cgroup v1 only; it refuses the hybrid layout) and with ociVersion 1.0.2 (crun 1.8 rejects 1.3.0)"
fi

gcc -O2 -o "$WORK/timer" "$HERE/timer.c" || die "cannot build bench/timer.c"

# The busybox rootfs and config.json come from the test harness.
export BRIG_ROOTFS_CACHE="$WORK/rootfs"
# shellcheck source=../tests/integration/helpers.bash
source "$SRCDIR/tests/integration/helpers.bash"
build_rootfs_template >/dev/null || die "cannot build the busybox rootfs"
set -euo pipefail

# make_bundle RT DIR CGNAME [JQ_FILTER [ROOTFS]]: a bundle for runtime RT
# running /bin/true with cgroupsPath /brig-bench/$TAG/CGNAME.
make_bundle() {
	local rt="$1" dir="$2" cg="$3" extra="${4:-.}" rootfs="${5:-$BRIG_ROOTFS_CACHE}" f
	mkdir -p "$dir"
	write_default_config "$dir" x
	f='.root.path = $rootfs | .process.args = ["/bin/true"] | .linux.cgroupsPath = $cg'
	[ "$rt" = crun ] && f="$f"' | .ociVersion = "1.0.2"'
	jq --arg rootfs "$rootfs" --arg cg "/$CG_PARENT/$cg" "$f | $extra" \
		"$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
}

# rt_cmd RT ARGS...: the runtime with its private --root (and the global
# flags in RT_ARGS[RT], e.g. runsc's platform; word-split).
declare -A RT_ARGS=()
# shellcheck disable=SC2086
rt_cmd() { local rt="$1"; shift; "${BIN[$rt]}" --root "$WORK/root-$rt" ${RT_ARGS[$rt]:-} "$@"; }

# recover RT: force-delete every container RT still has.
recover() {
	local rt="$1" id
	for id in $(rt_cmd "$rt" list --quiet 2>/dev/null); do
		rt_cmd "$rt" delete --force "$id" >/dev/null 2>&1 || true
	done
}

# now_us VAR: microseconds into VAR without a fork.
now_us() { printf -v "$1" '%s' "${EPOCHREALTIME/./}"; }

# timed VAR CMD...: run CMD through bench/timer.c (stdin /dev/null, stdout
# dropped, stderr to $WORK/err), spawned without a fork of this shell, and
# put its wall time in microseconds into VAR; returns 1 when CMD failed.
# CMD may be `rt_cmd RT ARGS...`; `CMD1 -- CMD2 ...` times a sequence.
timed() {
	local __v="$1" __out __rc=0
	shift
	# shellcheck disable=SC2086
	[ "$1" != rt_cmd ] || set -- "${BIN[$2]}" --root "$WORK/root-$2" ${RT_ARGS[$2]:-} "${@:3}"
	__out="$("$WORK/timer" "$@" 2>>"$WORK/err")" || __rc=$?
	printf -v "$__v" '%s' "$__out"
	return $__rc
}

# lifecycle_us RT BUNDLE ID: create + start + wait for the exit + delete,
# timed by bench/timer.c; prints the microseconds of the whole lifecycle,
# then of create, start, the wait and delete.
lifecycle_us() {
	"$WORK/timer" --lifecycle "${BIN[$1]}" "$WORK/root-$1" "$2" "$3" "$WORK/$1.pid" 2>>"$WORK/$1.err"
}

mkdir -p "$RESULTS"
CSV="$RESULTS/$NAME.csv"
SUMMARY="$RESULTS/$NAME-summary.csv"
[ "$NAME" = run ] || echo "runtime,scenario,iteration,value,unit" >"$CSV"
declare -A FAILS=()

# record RT SCENARIO I VALUE UNIT
record() { echo "$1,$2,$3,$4,$5" >>"$CSV"; }
# fail RT SCENARIO: count a failed sample.
fail() { FAILS[$1,$2]=$(( ${FAILS[$1,$2]:-0} + 1 )); }

# stat_of RT SCENARIO [median|min|max|count]: over the CSV's samples.
stat_of() {
	awk -F, -v rt="$1" -v sc="$2" '$1 == rt && $2 == sc { print $4 }' "$CSV" | sort -g |
		awk -v what="${3:-median}" '
		{ v[++n] = $1 }
		END {
			if (what == "count") { print n + 0; exit }
			if (n == 0) { print "NA"; exit }
			if (what == "max") { print v[n]; exit }
			if (what == "min") { print v[1]; exit }
			m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			printf "%.6g\n", m
		}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.3f", a / b }'; }
scaled() { awk -v v="$1" -v s="$2" 'BEGIN { if (v == "NA") print v; else printf "%.2f", v / s }'; }

# The summary: one row per scenario with the median of each runtime (in
# UNIT after dividing by SCALE) and brig's ratios to the others.
SUMMARY_STARTED=0
summary_header() {
	local rt
	{
		printf 'benchmark,scenario,unit'
		for rt in "${RUNTIMES[@]}"; do printf ',%s' "$rt"; done
		for rt in "${RUNTIMES[@]}"; do [ "$rt" = brig ] || printf ',brig/%s' "$rt"; done
		printf ',failures\n'
	} >"$SUMMARY"
	SUMMARY_STARTED=1
}

# summary_row SCENARIO LABEL UNIT SCALE [METRIC]: a row of the summary
# (file and printed table) from the CSV samples of SCENARIO.
summary_row() {
	local sc="$1" label="$2" unit="$3" scale="$4" metric="${5:-median}" rt line fails=""
	declare -A val=()
	[ "$SUMMARY_STARTED" = 1 ] || summary_header
	line="$NAME,$label,$unit"
	for rt in "${RUNTIMES[@]}"; do
		val[$rt]="$(stat_of "$rt" "$sc" "$metric")"
		line="$line,$(scaled "${val[$rt]}" "$scale")"
		fails="$fails${fails:+/}${FAILS[$rt,$sc]:-0}"
	done
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = brig ] || line="$line,$(ratio "${val[brig]}" "${val[$rt]}")"
	done
	echo "$line,$fails" >>"$SUMMARY"
}

# print_summary: the summary CSV as an aligned table.
print_summary() { column -t -s, "$SUMMARY"; }

# plot_summary TITLE YLABEL [ROWS]: a clustered bar chart ($RESULTS/$NAME.png)
# of the runtimes' medians per scenario from the summary CSV; ROWS (a grep
# pattern) keeps only the scenarios that match.
plot_summary() {
	local csv="$SUMMARY"
	command -v gnuplot >/dev/null || { note "gnuplot not found: no plot"; return 0; }
	if [ -n "${3:-}" ]; then
		csv="$WORK/plot.csv"
		grep -e '^benchmark' -e "$3" "$SUMMARY" >"$csv"
	fi
	"$HERE/plot.sh" "$csv" "$RESULTS/$NAME.png" "$1" "$2" 2 4 "${#RUNTIMES[@]}" 2>>"$WORK/gnuplot.err" ||
		note "gnuplot failed: $(head -n3 "$WORK/gnuplot.err")"
}

# host_line: the machine and its load, for the output.
host_line() {
	note "host: $(uname -r), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	note "work dir and state roots: $WORK ($(stat -f -c %T "$WORK"))"
}

versions() {
	note "brig: $BRIG ($("$BRIG" --version | head -n1))"
	note "runc: $RUNC ($("$RUNC" --version | head -n1))"
	[ -z "$CRUN_NOTE" ] || note "$CRUN_NOTE"
}

# crun must really run containers through its wrapper before it is
# measured; without that it is left out (and the output says so).
if [ -n "${BIN[crun]:-}" ]; then
	make_bundle crun "$WORK/bundle-crun-check" crun-check \
		'.process.args = ["/bin/sh", "-c", "test -x /bin/busybox && echo crun-ok"]'
	if [ "$(rt_cmd crun run --bundle "$WORK/bundle-crun-check" crun-check </dev/null 2>>"$WORK/err")" = crun-ok ]; then
		CRUN_NOTE="$CRUN_NOTE; checked: it ran a container"
	else
		note "crun does not run containers through its wrapper, left out: $(tail -n2 "$WORK/err")"
		recover crun
		RUNTIMES=(brig runc)
		unset 'BIN[crun]'
		CRUN_NOTE=""
	fi
fi
