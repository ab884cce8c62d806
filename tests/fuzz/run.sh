#!/bin/bash
# A short, bounded libFuzzer run of the config parser (tests/fuzz/fuzz_config),
# seeded with the unit-test fixtures. Prints TAP. Called by tests/run-tests.sh
# with BUILDDIR (the build tree); FUZZ_TIME overrides the 20 s budget.
set -u

here="$(cd "$(dirname "$0")" && pwd)"
BUILDDIR="${BUILDDIR:-$(pwd)}"
FUZZ_TIME="${FUZZ_TIME:-20}"
fuzzer="$BUILDDIR/tests/fuzz/fuzz_config"

echo "1..1"
if [ ! -x "$fuzzer" ]; then
	reason="fuzz target not built"
	if [ -e "$BUILDDIR/tests/fuzz/build.log" ]; then
		reason="$reason: clang could not build it, is its libFuzzer runtime missing? (Debian: libclang-rt-14-dev; see $BUILDDIR/tests/fuzz/build.log)"
	else
		reason="$reason (no clang, or configured with --disable-fuzzing)"
	fi
	echo "ok 1 # skip $reason"
	exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/brig-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/seeds"
cp "$here/../unit/fixtures/"*.json "$work/seeds/"
artifacts="$BUILDDIR/tests/fuzz/artifacts"
mkdir -p "$artifacts"

"$fuzzer" -max_total_time="$FUZZ_TIME" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-dict="$here/json.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
	"$work/corpus" "$work/seeds" >"$work/log" 2>&1
rc=$?
runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n1)"
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - fuzz config parser: ${runs:-?} runs, no crash"
	exit 0
fi
echo "not ok 1 - fuzz config parser: exit status $rc after ${runs:-?} runs (crash inputs in $artifacts)"
sed 's/^/# /' "$work/log" | tail -n 60
exit 1
