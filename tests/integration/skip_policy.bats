#!/usr/bin/env bats
# The skip policy (issue 22, item 16; tests/README.md "Skips"): a skip can
# hide a broken feature while the run stays green, so tests/run-tests.sh
# counts a skip whose reason tests/skips.allowed does not list as a
# failure, a suite that skips whole as a skip, and no test is gated on
# brig's help text. Fake TAP streams go through the real counting
# (tests/tap-count.bash). Needs nothing of the host.

setup() {
	TESTS_DIR="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	# shellcheck source=tests/tap-count.bash
	. "$TESTS_DIR/tap-count.bash"
	load_skips_allowed
	total_pass=0 total_fail=0 total_skip=0
	summary=() failures=()
	TAP="$(mktemp "${BATS_TEST_TMPDIR:-/tmp}/tap.XXXXXX")"
	unset BRIG_CI
}

# count SUITE: count $TAP (written by the test) as suite SUITE, exit 0.
count() {
	count_tap "$1" "$TAP" 0
	echo "passed $total_pass failed $total_fail skipped $total_skip"
	printf 'failure: %s\n' "${failures[@]}"
}

@test "skips: an unlisted skip fails the count and its line is printed" {
	printf '1..3\nok 1 a\nok 2 b # skip brig has no reset command yet\nok 3 c\n' >"$TAP"
	count integration/sandbox_reset.bats
	[ "$total_fail" -eq 1 ]
	[ "$total_skip" -eq 0 ]
	[ "$total_pass" -eq 2 ]
	[[ "${failures[0]}" == *"skip not allowed"*"ok 2 b # skip brig has no reset command yet"* ]]
}

@test "skips: a listed host limit counts as a skip, in its own suite only" {
	printf '1..1\nok 1 criu # skip criu cannot run on this kernel (6.1), criu check says: x\n' >"$TAP"
	count integration/checkpoint.bats
	[ "$total_fail" -eq 0 ]
	[ "$total_skip" -eq 1 ]
	# the same reason elsewhere is not a host limit of that suite
	count integration/lifecycle.bats
	[ "$total_fail" -eq 1 ]
}

@test "skips: a suite that skips whole counts as one skip, and fails unlisted" {
	printf '1..0 # skip qemu-system-x86_64 is not installed (package qemu-system-x86)\n' >"$TAP"
	count vm
	[ "$total_skip" -eq 1 ]
	[ "$total_fail" -eq 0 ]
	printf '1..0 # skip the suite is broken\n' >"$TAP"
	count vm
	[ "$total_skip" -eq 1 ]
	[ "$total_fail" -eq 1 ]
	[[ "${failures[0]}" == *"1..0 # skip the suite is broken"* ]]
}

@test "skips: a local limit (a tool CI installs) passes outside CI, fails under BRIG_CI=1" {
	printf '1..1\nok 1 x # skip test requires strace on the host\n' >"$TAP"
	count integration/boundary_faults.bats
	[ "$total_skip" -eq 1 ]
	BRIG_CI=1
	count integration/boundary_faults.bats
	[ "$total_fail" -eq 1 ]
	# a kernel limit holds under CI too
	printf '1..1\nok 1 x # skip kernel without time namespaces\n' >"$TAP"
	count integration/process.bats
	[ "$total_fail" -eq 1 ]
	[ "$total_skip" -eq 2 ]
}

@test "skips: a skip without a reason, and an unlisted TODO, fail" {
	printf '1..3\nok 1 a # skip\nnot ok 2 b # TODO later\nnot ok 3 - validation/x # TODO expected failure: listed\n' >"$TAP"
	count conformance
	[ "$total_fail" -eq 2 ]
	[ "$total_skip" -eq 1 ]
	# the word in a test's name is no directive
	printf '1..1\nok 1 - unknown syscall names are skipped\n' >"$TAP"
	count unit/test_seccomp
	[ "$total_pass" -eq 1 ]
}

@test "skips: tests/run-tests.sh fails on a fake suite with an unlisted skip" {
	local tap="$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\necho 1..2\necho ok 1 - fine\necho "ok 2 - gated # skip brig has no pool command yet"\n' >"$tap"
	chmod +x "$tap"
	# the unit-test slot runs any TAP program; BRIG only has to exist
	run env UNIT_TESTS="$tap" TESTS='^unit/' BRIG=/bin/true BUILDDIR="$BATS_TEST_TMPDIR" \
		bash "$TESTS_DIR/run-tests.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "1 passed, 1 failed, 0 skipped" ]
	assert_line_has "skip not allowed (tests/skips.allowed): ok 2 - gated # skip brig has no pool command yet"
}

# assert_line_has TEXT: some line of $output contains TEXT.
assert_line_has() {
	[[ "$output" == *"$1"* ]] || { echo "no line has: $1" >&2; return 1; }
}

@test "skips: every entry of tests/skips.allowed has a fact and a check, and a regex that compiles" {
	local bad="$BATS_TEST_TMPDIR/bad"
	run load_skips_allowed
	[ "$status" -eq 0 ]
	[ "${#allow_re[@]}" -gt 10 ]
	local re
	for re in "${allow_re[@]}"; do
		[[ x =~ $re ]] || [ $? -eq 1 ] || { echo "regex does not compile: $re" >&2; false; }
	done
	printf 'any vm ^a reason$\n\tcheck: ls\n' >"$bad"
	run load_skips_allowed "$bad"
	[ "$status" -eq 1 ]
	[[ "$output" == *"needs a fact"* ]]
}

@test "skips: no test is gated on brig's help text or on a command brig lacks" {
	run grep -rnE --exclude=skip_policy.bats 'command:[a-z]|runtime_has_command|requires_command' \
		"$TESTS_DIR/integration" "$TESTS_DIR/engines"
	echo "$output"
	[ "$status" -eq 1 ]
	run grep -rnE --include='*.bats' --include='*.bash' --include='*.sh' --include='*.py' \
		--exclude=skip_policy.bats -- '--help[^|]*\|\|[[:space:]]*skip|skip .*--help' "$TESTS_DIR"
	echo "$output"
	[ "$status" -eq 1 ]
}
