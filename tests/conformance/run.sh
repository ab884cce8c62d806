#!/bin/bash
# OCI conformance: run the opencontainers/runtime-tools validation suite
# (58 tests) against brig, or against another runtime with RUNTIME=path.
#
#   tests/conformance/run.sh                 brig ($BRIG, or
#                                            $BUILDDIR/runtime/brig)
#   RUNTIME=/usr/sbin/runc tests/conformance/run.sh
#
# Prints TAP: one line per validation test ("ok N - validation/foo",
# "not ok N - validation/foo # reason"), then "N passed, M failed, K skipped".
# Tests listed in tests/conformance/EXPECTED fail for a reason given there;
# they show as "not ok N - validation/foo # TODO expected failure: reason"
# (counted as skipped), and one that passes anyway is flagged. EXPECTED
# applies to brig only (CONFORMANCE_EXPECTED=FILE or =none to choose).
# Prints "1..0 # skip <reason>" when the suite cannot be fetched or built.
#
# Environment:
#   CONFORMANCE_CACHE    tarball and build cache (/var/cache/brig-conformance)
#   CONFORMANCE_TESTS    regex: only the tests whose name matches
#   CONFORMANCE_TIMEOUT  seconds per test (default 120)
#   CONFORMANCE_JOBS     tests run at once (default 3)
#   CONFORMANCE_LOGS     keep each test's output here (default
#                        $BUILDDIR/tests/conformance-logs when BUILDDIR is set)
#   CONFORMANCE_CGROUPNS 0: no cgroup namespace per test (see isolate.sh)
#   CONFORMANCE_PREBUILT a suite built elsewhere: DIR holds runtimetest, bin/
#                        and rootfs.tar.gz (no Go, dpkg or network needed:
#                        the pure v2 VM, tests/vm/run.sh VM_CONFORMANCE=1)
#
# Each test runs as root from its own work directory (holding a copy of
# runtimetest and the rootfs tarball, built from Debian's busybox-static),
# with a private --root for the runtime, in a private mount namespace and a
# cgroup namespace rooted at a test-only cgroup (isolate.sh), under a timeout.
set -u

HERE="$(cd "$(dirname "$0")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$HERE/../.." && pwd)}"
BUILDDIR="${BUILDDIR:-}"
BRIG="${BRIG:-${BUILDDIR:+$BUILDDIR/runtime/brig}}"
UNDER_TEST="${RUNTIME:-$BRIG}"
CACHE="${CONFORMANCE_CACHE:-/var/cache/brig-conformance}"
FILTER="${CONFORMANCE_TESTS:-}"
TEST_TIMEOUT="${CONFORMANCE_TIMEOUT:-120}"
JOBS="${CONFORMANCE_JOBS:-3}"
LOGS="${CONFORMANCE_LOGS:-${BUILDDIR:+$BUILDDIR/tests/conformance-logs}}"

skip_all() {
	echo "1..0 # skip $*"
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip_all "the validation suite needs root"
[ -n "$UNDER_TEST" ] || skip_all "no runtime: set BRIG or RUNTIME"
UNDER_TEST="$(command -v "$UNDER_TEST" || true)"
[ -x "$UNDER_TEST" ] || skip_all "runtime ${RUNTIME:-$BRIG} not found"
case "$UNDER_TEST" in /*) ;; *) UNDER_TEST="$PWD/$UNDER_TEST" ;; esac
for tool in unshare timeout tar gzip sha256sum; do
	command -v "$tool" >/dev/null || skip_all "$tool is not installed"
done
PREBUILT="${CONFORMANCE_PREBUILT:-}"
if [ -z "$PREBUILT" ] && { [ ! -f /bin/busybox ] ||
	! dpkg-query -W -f='${db:Status-Status}' busybox-static 2>/dev/null | grep -qx installed; }; then
	skip_all "busybox-static is not installed (contrib/install-deps.sh)"
fi

# shellcheck source=build.sh
. "$HERE/build.sh"
if [ -n "$PREBUILT" ]; then
	SUITE_DIR="$PREBUILT"
	[ -x "$SUITE_DIR/runtimetest" ] && [ -f "$SUITE_DIR/rootfs.tar.gz" ] ||
		skip_all "CONFORMANCE_PREBUILT=$PREBUILT holds no runtimetest or rootfs.tar.gz"
else
	conformance_build "$CACHE" || skip_all "$SKIP_REASON"
fi

case "${CONFORMANCE_EXPECTED:-}" in
none) EXPECTED_FILE= ;;
"") [ "$(basename "$UNDER_TEST")" = brig ] && EXPECTED_FILE="$HERE/EXPECTED" || EXPECTED_FILE= ;;
*) EXPECTED_FILE="$CONFORMANCE_EXPECTED" ;;
esac
declare -A expected=()
if [ -n "$EXPECTED_FILE" ] && [ -f "$EXPECTED_FILE" ]; then
	while read -r name reason; do
		case "$name" in "" | \#*) continue ;; esac
		expected["${name#validation/}"]="$reason"
	done <"$EXPECTED_FILE"
fi

if [ "${CONFORMANCE_CGROUPNS:-1}" != 0 ] && ! why="$("$HERE/isolate.sh" check)"; then
	echo "# no cgroup namespace per test ($why): containers' cgroups go where the runtime puts them"
	export CONFORMANCE_CGROUPNS=0
fi

# Under /tmp, not $TMPDIR: every directory above a bundle must be
# searchable by others, for the user-namespace tests.
WORK="$(mktemp -d /tmp/brig-conformance.XXXXXX)" || skip_all "cannot create a work directory"
# On exit, also when interrupted: stop the tests still running (everything
# a test started is in its cgroups), then remove the work dir and the
# test-only parent cgroups.
on_exit() {
	local d
	for d in "$WORK"/*/; do
		[ -f "$d/started" ] && [ ! -f "$d/done" ] && "$HERE/isolate.sh" cleanup "$(basename "$d")" >/dev/null 2>&1
	done
	rm -rf "$WORK"
	"$HERE/isolate.sh" cleanup-parent
}
trap on_exit EXIT
trap 'exit 130' INT TERM
# Bundles live below; a user-namespace container's root must be able to
# walk down to its rootfs.
chmod 0755 "$WORK"

if [ -n "$PREBUILT" ]; then
	ROOTFS="$PREBUILT/rootfs.tar.gz"
else
	ROOTFS="$(conformance_rootfs_path "$CACHE")"
fi
[ -f "$ROOTFS" ] || conformance_rootfs "$ROOTFS" || skip_all "cannot build the busybox rootfs tarball"
cp "$ROOTFS" "$WORK/rootfs-amd64.tar.gz"
cp "$SUITE_DIR/runtimetest" "$WORK/runtimetest"

tests=()
for t in "$SUITE_DIR"/bin/*; do
	name="$(basename "$t")"
	[ -z "$FILTER" ] || [[ "$name" =~ $FILTER ]] || continue
	tests+=("$name")
done

echo "# runtime under test: $UNDER_TEST"
echo "# suite: $RT_TARBALL (sha256 $RT_SHA256), built in $SUITE_DIR"
echo "1..${#tests[@]}"

# Tests whose verdict depends on a race the spec leaves open run up to
# eight times until one passes (each failed run is shown):
# poststart: the hook and the container process each append a line to one
#   file and the test wants the process's line first; the spec only says
#   the hooks run after the process was executed, and under load the
#   hook's shell can write first (about every second run on a 2-CPU VM, the
#   same with runc-speed and faster brig builds; CI once lost three in a row).
RACY="poststart"

# run_test NAME: run validation/NAME in its own work dir; its stdout,
# stderr and exit status go to $WORK/NAME/{out,err,rc}.
run_test() {
	local name="$1" dir="$WORK/$1"
	mkdir -p "$dir" && touch "$dir/started"
	run_once "$name"
	case " $RACY " in
	*" $name "*)
		local try
		for try in 1 2 3 4 5 6 7; do
			[ "$(cat "$dir/rc")" != 0 ] || grep -qE '^(not ok|  error:)' "$dir/out" || break
			for f in out err rc seconds; do mv "$dir/$f" "$dir/$f.try$try"; done
			run_once "$name"
		done ;;
	esac
}

run_once() {
	local name="$1" dir="$WORK/$1" t0=$SECONDS
	mkdir -p "$dir/tmp" "$dir/root"
	chmod 0755 "$dir" "$dir/tmp"
	# Files, not symlinks: the suite copies them into the bundle.
	ln "$WORK/runtimetest" "$dir/runtimetest"
	ln "$WORK/rootfs-amd64.tar.gz" "$dir/rootfs-amd64.tar.gz"
	printf '#!/bin/sh\nexec "%s" --root "%s" "$@"\n' "$UNDER_TEST" "$dir/root" >"$dir/runtime"
	chmod 0755 "$dir/runtime"
	(
		cd "$dir" &&
			TMPDIR="$dir/tmp" RUNTIME="$dir/runtime" exec timeout -k 10 $((TEST_TIMEOUT + 60)) \
				"$HERE/isolate.sh" run "$name" "$TEST_TIMEOUT" "$UNDER_TEST" "$dir/root" -- \
				"$SUITE_DIR/bin/$name"
	) </dev/null >"$dir/out" 2>"$dir/err"
	echo $? >"$dir/rc"
	echo $((SECONDS - t0)) >"$dir/seconds"
	"$HERE/isolate.sh" cleanup "$name" >>"$dir/err" 2>&1
	rm -rf "$dir/tmp" "$dir/root" "$dir/runtimetest" "$dir/rootfs-amd64.tar.gz"
}

# classify NAME: set RESULT (pass, fail, skip) and REASON from the test's
# TAP output and exit status. The output may hold several TAP streams (each
# from "TAP version 13" to its plan). A test fails when it exits non-zero,
# prints a "not ok" (other than TODO), or a stream has no plan or fewer
# results than planned. A stream with no results and plan "1..0" passes
# (several tests print only that when all went well), unless it carries a
# YAML "error:": some tests report their failure only that way.
classify() {
	local dir="$WORK/$1" rc line in_yaml=0
	local oks=0 skips=0 fails=0 first_fail='' first_skip='' bad_plan='' errors=''
	local s_results=0 s_plan=-1 s_error='' s_started=0
	rc="$(cat "$dir/rc" 2>/dev/null || echo 1)"
	end_stream() {
		[ "$s_started" = 1 ] || return 0
		if [ "$s_plan" -lt 0 ]; then
			bad_plan="no TAP plan"
		elif [ "$s_results" != "$s_plan" ]; then
			bad_plan="planned $s_plan, ran $s_results"
		elif [ "$s_results" = 0 ] && [ -n "$s_error" ]; then
			[ -n "$errors" ] || errors="$s_error"
		fi
		s_results=0 s_plan=-1 s_error='' s_started=0
	}
	while IFS= read -r line; do
		if [ "$in_yaml" = 1 ]; then
			case "$line" in
			"  ...") in_yaml=0 ;;
			"  error: |"*)
				# A literal block: its first line says it.
				[ -n "$s_error" ] || s_error="|" ;;
			"  error: "*)
				[ -n "$s_error" ] || s_error="$(sed -E 's/^"(.*)"$/\1/' <<<"${line#  error: }")" ;;
			"    "*)
				[ "$s_error" = "|" ] && s_error="${line#    }" ;;
			esac
			continue
		fi
		case "$line" in
		"TAP version"*)
			end_stream
			s_started=1 ;;
		"  ---") in_yaml=1 ;;
		"not ok "*)
			s_started=1 s_results=$((s_results + 1))
			if [[ "$line" =~ \#[[:space:]]*[Tt][Oo][Dd][Oo] ]]; then
				oks=$((oks + 1))
			else
				fails=$((fails + 1))
				[ -n "$first_fail" ] || first_fail="$(sed -E 's/^not ok [0-9]+( - )?//' <<<"$line")"
			fi ;;
		"ok "*)
			s_started=1 s_results=$((s_results + 1))
			if [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]*(.*) ]]; then
				skips=$((skips + 1))
				[ -n "$first_skip" ] || first_skip="${BASH_REMATCH[1]}"
			else
				oks=$((oks + 1))
			fi ;;
		1..*)
			s_started=1
			[[ "$line" =~ ^1\.\.([0-9]+) ]] && s_plan="${BASH_REMATCH[1]}"
			if [ "$s_plan" = 0 ] && [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]*(.*) ]]; then
				first_skip="${BASH_REMATCH[1]:-skipped}"
				skips=$((skips + 1))
			fi ;;
		esac
	done <"$dir/out"
	end_stream

	RESULT=fail
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		REASON="timed out after ${TEST_TIMEOUT}s"
	elif [ "$fails" -gt 0 ]; then
		REASON="$fails failed: $first_fail"
	elif [ "$rc" != 0 ]; then
		REASON="exit status $rc: $(grep -v '^#' "$dir/err" | grep . | tail -n 1)"
	elif [ ! -s "$dir/out" ]; then
		# Only the tests that expect the runtime to refuse the config say
		# nothing when it does; for any other test silence means
		# runtimetest never ran.
		case " $SILENT_ON_SUCCESS " in
		*" $1 "*) RESULT=pass REASON="runtime refused the config, as expected" ;;
		*) REASON="no output" ;;
		esac
	elif [ -n "$bad_plan" ]; then
		REASON="$bad_plan"
	elif [ -n "$errors" ]; then
		REASON="error: $errors"
	elif [ "$oks" = 0 ] && [ "$skips" -gt 0 ]; then
		RESULT=skip REASON="$first_skip"
	else
		RESULT=pass REASON="$oks passed, $skips skipped"
	fi
	REASON="$(tr '\n#' ' _' <<<"$REASON" | cut -c1-240)"
}

# These tests print nothing at all when they pass: the runtime rejected a
# config it must reject (the test exits 1 with a message otherwise).
SILENT_ON_SUCCESS="process_capabilities_fail process_rlimits_fail"

n=0 passed=0 failed=0 skipped=0
unexpected_passes=()
# report NAME: print the TAP line for a finished test and count it.
report() {
	local name="$1" why="${expected[$1]:-}" try f
	n=$((n + 1))
	for try in 1 2 3 4 5 6 7; do
		[ -f "$WORK/$name/out.try$try" ] || break
		mkdir -p "$WORK/$name.try$try"
		for f in out err rc; do cp "$WORK/$name/$f.try$try" "$WORK/$name.try$try/$f"; done
		classify "$name.try$try"
		echo "# validation/$name: run $try: $RESULT ($REASON); run again (racy test)"
		rm -rf "${WORK:?}/$name.try$try"
	done
	classify "$name"
	if [ -n "$why" ]; then
		if [ "$RESULT" = pass ]; then
			echo "ok $n - validation/$name # unexpected pass: listed in EXPECTED ($why)"
			passed=$((passed + 1))
			unexpected_passes+=("$name")
		else
			echo "not ok $n - validation/$name # TODO expected failure: $why"
			echo "#   got: $REASON"
			skipped=$((skipped + 1))
		fi
		return
	fi
	case "$RESULT" in
	pass)
		echo "ok $n - validation/$name"
		passed=$((passed + 1)) ;;
	skip)
		echo "ok $n - validation/$name # SKIP $REASON"
		skipped=$((skipped + 1)) ;;
	*)
		echo "not ok $n - validation/$name # $REASON"
		failed=$((failed + 1))
		# The runtime's own words, for the diagnosis.
		grep -v '^[[:space:]]*$' "$WORK/$name/err" | tail -n 8 | sed 's/^/#   /' ;;
	esac
}

start=$SECONDS
# Up to $JOBS tests at a time; results print in order as they finish.
next_print=0 running=0
for i in "${!tests[@]}"; do
	(run_test "${tests[$i]}"; touch "$WORK/${tests[$i]}/done") &
	running=$((running + 1))
	while [ "$running" -ge "$JOBS" ]; do
		wait -n
		running=$((running - 1))
	done
	while [ "$next_print" -lt "${#tests[@]}" ] && [ -f "$WORK/${tests[$next_print]}/done" ]; do
		report "${tests[$next_print]}"
		next_print=$((next_print + 1))
	done
done
wait
while [ "$next_print" -lt "${#tests[@]}" ]; do
	report "${tests[$next_print]}"
	next_print=$((next_print + 1))
done

if [ -n "$LOGS" ]; then
	mkdir -p "$LOGS" && for name in "${tests[@]}"; do
		rm -rf "${LOGS:?}/$name"
		mkdir -p "$LOGS/$name" && cp "$WORK/$name"/{out,err,rc,seconds}* "$LOGS/$name/" 2>/dev/null
	done
	echo "# each test's stdout, stderr, exit status and duration: $LOGS/NAME/{out,err,rc,seconds}"
fi
if [ "${#unexpected_passes[@]}" -gt 0 ]; then
	echo "# passed although listed in EXPECTED (remove them there): ${unexpected_passes[*]}"
fi
echo "# conformance: $((SECONDS - start))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
