#!/bin/bash
# Short, bounded libFuzzer runs: the config parser (tests/fuzz/fuzz_config,
# seeded with the unit-test fixtures) and the DNS answer parser of the
# egress allow list (tests/fuzz/fuzz_dns, seeded with a few answers written
# here). Prints TAP. Called by tests/run-tests.sh with BUILDDIR (the build
# tree); FUZZ_TIME overrides the config parser's 20 s budget, FUZZ_DNS_TIME
# the DNS parser's 10 s; and brig cp's tar reader (tests/fuzz/fuzz_tar,
# seeded with archives GNU tar writes here), FUZZ_TAR_TIME (10 s).
set -u

here="$(cd "$(dirname "$0")" && pwd)"
BUILDDIR="${BUILDDIR:-$(pwd)}"
FUZZ_TIME="${FUZZ_TIME:-20}"
FUZZ_DNS_TIME="${FUZZ_DNS_TIME:-10}"
FUZZ_TAR_TIME="${FUZZ_TAR_TIME:-10}"
n=0
failed=0

work="$(mktemp -d "${TMPDIR:-/tmp}/brig-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
artifacts="$BUILDDIR/tests/fuzz/artifacts"
mkdir -p "$artifacts"

# fuzz NAME WHAT TIME SEEDDIR ARGS...: one target, one TAP line.
fuzz() {
	local name="$1" what="$2" time="$3" seeds="$4" fuzzer="$BUILDDIR/tests/fuzz/$1" reason rc runs
	shift 4
	n=$((n + 1))
	if [ ! -x "$fuzzer" ]; then
		reason="$name not built"
		if [ -e "$BUILDDIR/tests/fuzz/build.log" ] || [ -e "$BUILDDIR/tests/fuzz/build-dns.log" ] ||
			[ -e "$BUILDDIR/tests/fuzz/build-tar.log" ]; then
			reason="$reason: clang could not build it, is its libFuzzer runtime missing? (Debian: libclang-rt-14-dev; see $BUILDDIR/tests/fuzz/build*.log)"
		else
			reason="$reason (no clang, or configured with --disable-fuzzing)"
		fi
		echo "ok $n # skip $reason"
		return
	fi
	mkdir -p "$work/$name-corpus"
	"$fuzzer" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$artifacts/$name-" -print_final_stats=1 "$@" \
		"$work/$name-corpus" "$seeds" >"$work/$name.log" 2>&1
	rc=$?
	runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -n1)"
	if [ "$rc" -eq 0 ]; then
		echo "ok $n - fuzz $what: ${runs:-?} runs, no crash"
		return
	fi
	failed=$((failed + 1))
	echo "not ok $n - fuzz $what: exit status $rc after ${runs:-?} runs (crash inputs in $artifacts)"
	sed 's/^/# /' "$work/$name.log" | tail -n 60
}

echo "1..3"
mkdir "$work/config-seeds"
cp "$here/../unit/fixtures/"*.json "$work/config-seeds/"
fuzz fuzz_config "config parser" "$FUZZ_TIME" "$work/config-seeds" \
	-max_len=16384 -dict="$here/json.dict"

# DNS seeds: answers for example.com (A; AAAA), a CNAME chain
# www.example.com -> example.com, NXDOMAIN, a truncated answer.
d="$work/dns-seeds"
mkdir "$d"
q='\007example\003com\000'
printf '\022\064\201\200\000\001\000\001\000\000\000\000'"$q"'\000\001\000\001\300\014\000\001\000\001\000\000\000\074\000\004\300\000\002\001' >"$d/a"
printf '\022\064\201\200\000\001\000\001\000\000\000\000'"$q"'\000\034\000\001\300\014\000\034\000\001\000\000\000\074\000\020\040\001\015\270\000\000\000\000\000\000\000\000\000\000\000\001' >"$d/aaaa"
printf '\000\011\201\200\000\001\000\002\000\000\000\000\003www'"$q"'\000\001\000\001\300\014\000\005\000\001\000\000\000\074\000\002\300\020\300\020\000\001\000\001\000\000\000\074\000\004\306\063\144\007' >"$d/cname"
printf '\000\001\201\203\000\001\000\000\000\000\000\000'"$q"'\000\001\000\001' >"$d/nx"
printf '\000\001\203\200\000\001\000\000\000\000\000\000'"$q"'\000\001\000\001' >"$d/tc"
fuzz fuzz_dns "DNS answer parser" "$FUZZ_DNS_TIME" "$d" -max_len=1024

# tar seeds: GNU and pax archives of a file, a long name, a symlink, a hard
# link and a directory
t="$work/tar-seeds" s="$work/tar-src"
mkdir -p "$t" "$s/d/$(printf 'n%.0s' $(seq 1 110))"
echo data >"$s/d/f"
ln "$s/d/f" "$s/d/h"
ln -s f "$s/d/l"
for fmt in gnu pax ustar; do
	tar -C "$s" --format="$fmt" -cf "$t/$fmt.tar" d 2>/dev/null || true
done
fuzz fuzz_tar "tar reader" "$FUZZ_TAR_TIME" "$t" -max_len=16384
[ "$failed" -eq 0 ]
