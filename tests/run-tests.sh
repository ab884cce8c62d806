#!/bin/bash
# Run every brig test suite and print one summary. Called by `make check`
# (tests/Makefile.inc) with:
#   BRIG        the brig binary under test
#   UNIT_TESTS  the C unit test programs (TAP), relative to BUILDDIR
#   BUILDDIR    the build tree, SRCDIR the source tree
# Optional:
#   SUITE_TIMEOUT  seconds per suite (default 1200; vm 2700, conformance and
#                  engines 1800, cri 600); a hung suite fails
#   TESTS          only run suites whose name matches this regex
#                  (e.g. make check TESTS='lifecycle|errors')
#   BATS_JOBS      run up to this many bats files at once (default 1)
#   BRIG_CI=1      CI (.ci/run sets it): a skip of scope "local" in
#                  tests/skips.allowed (a tool or right CI provides) fails
#   BRIG_TEST_ENGINES=0, BRIG_TEST_CRI=0, BRIG_TEST_CONFORMANCE=0
#                  skip the engine (podman, containerd), the Kubernetes CRI
#                  (containerd's CRI plugin) or the OCI conformance suite
#                  (each prints one skip line saying so)
#
# Suites: unit test programs, tests/fuzz/run.sh, tests/vm/run.sh,
# tests/integration/*.bats (bats --tap), tests/engines/run.sh,
# tests/cri/run.sh, tests/conformance/run.sh. Each
# prints TAP. The LAST line of output is always "N passed, M failed, K skipped";
# the exit status is 1 when anything failed or a suite crashed or hung. A
# skip or TODO whose reason tests/skips.allowed does not list is a failure
# (its line is printed under "failed:"); a suite that prints "1..0 # skip
# REASON" counts as one skip (tests/tap-count.bash).
set -u

SRCDIR="${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}"
BUILDDIR="${BUILDDIR:-$SRCDIR}"
BRIG="${BRIG:-$BUILDDIR/runtime/brig}"
UNIT_TESTS="${UNIT_TESTS:-}"
SUITE_TIMEOUT="${SUITE_TIMEOUT:-1200}"
TESTS="${TESTS:-}"
BATS_JOBS="${BATS_JOBS:-1}"
export SRCDIR BUILDDIR BRIG

LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/brig-check.XXXXXX")"

# Every state root, bundle and cgroup the bats files make carries this tag
# (tests/integration/helpers.bash), so what a suite killed by its timeout
# leaves behind (its teardown never ran) can be found, and only that.
BRIG_TEST_TAG="run$$"
export BRIG_TEST_TAG
TEST_CG_PARENT=brig-test
test_cg_parents() {
	ls -d /sys/fs/cgroup/*/"$TEST_CG_PARENT" /sys/fs/cgroup/"$TEST_CG_PARENT" 2>/dev/null
}
cg_parents_before=" $(test_cg_parents | tr '\n' ' ') "

# sweep_test_leftovers: this run's containers (force-deleted), state roots,
# bundles and cgroups (their processes killed first); then the shared test
# cgroup parent where this run made it and nothing else is left in it.
sweep_test_leftovers() {
	local root id d rt="${RUNTIME:-$BRIG}" say=echo
	# Said on the output (a teardown that leaks must not go unnoticed),
	# except on exit, after the summary line that must come last.
	[ "${1:-}" != quiet ] || say=:
	for root in /tmp/brig-test-root."$BRIG_TEST_TAG"-*; do
		[ -d "$root" ] || continue
		$say "# swept: $root"
		for id in $("$rt" --root "$root" list -q 2>/dev/null); do
			"$rt" --root "$root" delete --force "$id" >/dev/null 2>&1
		done
		rm -rf "$root"
	done
	for d in /tmp/brig-test-*."$BRIG_TEST_TAG"-*; do
		[ -e "$d" ] && $say "# swept: $d" && rm -rf "$d"
	done
	for d in /sys/fs/cgroup/*/"$TEST_CG_PARENT"/brig-test-bundle."$BRIG_TEST_TAG"-* \
		/sys/fs/cgroup/"$TEST_CG_PARENT"/brig-test-bundle."$BRIG_TEST_TAG"-*; do
		[ -d "$d" ] || continue
		$say "# swept: $d"
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	for d in $(test_cg_parents); do
		[[ "$cg_parents_before" == *" $d "* ]] || rmdir "$d" 2>/dev/null
	done
	return 0
}
trap 'sweep_test_leftovers quiet; rm -rf "$LOGDIR"' EXIT

total_pass=0 total_fail=0 total_skip=0
summary=()
failures=()

# count_tap and the skip policy: a skip passes only with a reason listed in
# tests/skips.allowed (see there and tests/README.md).
# shellcheck source=tests/tap-count.bash
. "$SRCDIR/tests/tap-count.bash"

selected() {
	[ -z "$TESTS" ] || [[ "$1" =~ $TESTS ]]
}

# suite_timeout NAME: seconds the suite may run (VMs under TCG and the
# external suites need longer than the rest).
suite_timeout() {
	case "$1" in
	vm) echo "${VM_SUITE_TIMEOUT:-2700}" ;;
	conformance|engines) echo "${EXTERNAL_SUITE_TIMEOUT:-1800}" ;;
	cri) echo "${CRI_SUITE_TIMEOUT:-600}" ;;
	*) echo "$SUITE_TIMEOUT" ;;
	esac
}

# run_suite NAME DIR CMD...: run CMD in DIR under the suite's timeout, show
# its output, and count its results.
run_suite() {
	local name="$1" dir="$2" rc log limit
	shift 2
	selected "$name" || return 0
	limit="$(suite_timeout "$name")"
	log="$LOGDIR/$(printf '%s' "$name" | tr '/ ' '__').log"
	printf '# ---- %s (%s)\n' "$name" "$(date -u +%H:%M:%S)"
	local t0=$SECONDS
	(cd "$dir" && exec timeout -k 30 "$limit" "$@") </dev/null 2>&1 | tee "$log"
	rc="${PIPESTATUS[0]}"
	LIMIT="$limit" DURATION=$((SECONDS - t0)) count_tap "$name" "$log" "$rc"
}

# Bats files may run a few at a time (BATS_JOBS); each writes its own log and
# results are printed in file order.
run_bats_files() {
	local files=() f name i rc
	for f in "$SRCDIR"/tests/integration/*.bats; do
		[ -e "$f" ] || continue
		name="integration/$(basename "$f")"
		selected "$name" && files+=("$f")
	done
	[ "${#files[@]}" -gt 0 ] || return 0
	if ! command -v bats >/dev/null; then
		total_fail=$((total_fail + 1))
		failures+=("integration: bats is not installed (run contrib/install-deps.sh)")
		summary+=("integration: bats missing")
		return 0
	fi
	if [ "$BATS_JOBS" -le 1 ]; then
		for f in "${files[@]}"; do
			run_suite "integration/$(basename "$f")" "$SRCDIR/tests/integration" bats --tap "$f"
		done
		return 0
	fi
	local pids=() running=0
	for i in "${!files[@]}"; do
		f="${files[$i]}"
		(cd "$SRCDIR/tests/integration" &&
			timeout -k 30 "$SUITE_TIMEOUT" bats --tap "$f" </dev/null >"$LOGDIR/bats.$i.log" 2>&1
		 echo $? >"$LOGDIR/bats.$i.rc") &
		pids+=($!)
		running=$((running + 1))
		if [ "$running" -ge "$BATS_JOBS" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
	for i in "${!files[@]}"; do
		name="integration/$(basename "${files[$i]}")"
		printf '# ---- %s\n' "$name"
		cat "$LOGDIR/bats.$i.log"
		rc="$(cat "$LOGDIR/bats.$i.rc" 2>/dev/null || echo 1)"
		count_tap "$name" "$LOGDIR/bats.$i.log" "$rc"
	done
}

printf '# brig tests: BRIG=%s\n' "$BRIG"
if [ ! -x "$BRIG" ]; then
	echo "# $BRIG is not built"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
if ! load_skips_allowed >"$LOGDIR/skips.allowed.err"; then
	echo "# the skip policy cannot be read: $(cat "$LOGDIR/skips.allowed.err")"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
[ "${BRIG_CI:-0}" = 1 ] && echo "# BRIG_CI=1: only skips of scope 'any' in tests/skips.allowed pass"

for t in $UNIT_TESTS; do
	case "$t" in
	/*) prog="$t" ;;
	*) prog="$BUILDDIR/$t" ;;
	esac
	run_suite "unit/$(basename "$t")" "$BUILDDIR" "$prog"
done

for s in fuzz vm; do
	[ -f "$SRCDIR/tests/$s/run.sh" ] && run_suite "$s" "$BUILDDIR" bash "$SRCDIR/tests/$s/run.sh"
done

run_bats_files
sweep_test_leftovers

# The engine (podman, containerd), CRI and OCI conformance suites always
# run (each skips by itself when its tools are missing: see tests/engines,
# docs/engines.md "Testing" and tests/conformance/README.md); VAR=0 skips
# one, e.g. for a quick check.
external_suite() {
	local name="$1" var="$2"
	[ -f "$SRCDIR/tests/$name/run.sh" ] || return 0
	selected "$name" || return 0
	if [ "${!var:-1}" = 0 ]; then
		printf '# ---- %s\n1..1\nok 1 # skip %s suite skipped because %s=0\n' \
			"$name" "$name" "$var" | tee "$LOGDIR/$name.log"
		count_tap "$name" "$LOGDIR/$name.log" 0
	else
		run_suite "$name" "$BUILDDIR" bash "$SRCDIR/tests/$name/run.sh"
	fi
}
external_suite engines BRIG_TEST_ENGINES
external_suite cri BRIG_TEST_CRI
external_suite conformance BRIG_TEST_CONFORMANCE

echo
echo "# ---- summary"
for s in "${summary[@]}"; do
	echo "# $s"
done
if [ "${#failures[@]}" -gt 0 ]; then
	echo "# failed:"
	for s in "${failures[@]}"; do
		echo "#   $s"
	done
fi
echo "# total time ${SECONDS}s"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
