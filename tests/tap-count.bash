# Counting TAP for tests/run-tests.sh, and the skip policy (sourced; also by
# tests/integration/skip_policy.bats, which feeds it fake streams).
#
# A skip (or TODO) hides a test: it passes the count only when its reason
# matches an entry of tests/skips.allowed, a known limit of the host with
# the fact that justifies it. Any other skip counts as a failure, and its
# line is printed among the failures. A suite that skips whole ("1..0 #
# skip REASON") counts as one skip, under the same rule. Entries of scope
# "local" (a tool or a right that CI provides) hold only outside CI: under
# BRIG_CI=1 (set by .ci/run) such a skip fails too.
#
# Globals it adds to: total_pass, total_fail, total_skip, summary[],
# failures[] (run-tests.sh declares them); LIMIT, DURATION, SUITE_TIMEOUT
# for the notes.

SKIPS_ALLOWED="${SKIPS_ALLOWED:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/skips.allowed}"
allow_scope=() allow_suite=() allow_re=()

# load_skips_allowed [FILE]: read the entries; 1 (with why on stdout) when
# the file is missing or an entry lacks its suite, regex, fact or check.
load_skips_allowed() {
	local file="${1:-$SKIPS_ALLOWED}" line n=0 cur=-1 scope suite re
	local -a has_fact=() has_check=()
	allow_scope=() allow_suite=() allow_re=()
	[ -r "$file" ] || { echo "$file: cannot be read"; return 1; }
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case "$line" in
		'' | '#'*) continue ;;
		[[:space:]]*fact:*) [ "$cur" -ge 0 ] && has_fact[cur]=1 ;;
		[[:space:]]*check:*) [ "$cur" -ge 0 ] && has_check[cur]=1 ;;
		[[:space:]]*) ;;
		any[[:space:]]* | local[[:space:]]*)
			read -r scope suite re <<<"$line"
			if [ -z "$suite" ] || [ -z "$re" ]; then
				echo "$file:$n: an entry is SCOPE SUITE REGEX"
				return 1
			fi
			cur=${#allow_re[@]}
			allow_scope+=("$scope") allow_suite+=("$suite") allow_re+=("$re") ;;
		*)
			echo "$file:$n: not an entry (any|local SUITE REGEX), a fact: or check: line, or a comment"
			return 1 ;;
		esac
	done <"$file"
	for ((n = 0; n < ${#allow_re[@]}; n++)); do
		if [ -z "${has_fact[n]:-}" ] || [ -z "${has_check[n]:-}" ]; then
			echo "$file: the entry for '${allow_re[n]}' needs a fact: and a check: line"
			return 1
		fi
	done
	return 0
}

# skip_reason LINE: when LINE carries a SKIP or TODO directive, set REASON
# to its text (possibly empty) and return 0.
skip_reason() {
	local s="$1" re='^#[[:space:]]*([Ss][Kk][Ii][Pp]|TODO|todo)([[:space:]:]+(.*))?$'
	while [[ "$s" == *"#"* ]]; do
		s="#${s#*#}"
		if [[ "$s" =~ $re ]]; then
			REASON="${BASH_REMATCH[3]}"
			return 0
		fi
		s="${s#\#}"
	done
	return 1
}

# skip_allowed SUITE REASON: an entry allows this reason in this suite (a
# local one only outside CI). A skip without a reason is never allowed.
skip_allowed() {
	local suite="$1" reason="$2" i
	[ -n "$reason" ] || return 1
	for ((i = 0; i < ${#allow_re[@]}; i++)); do
		[ "${allow_scope[i]}" = local ] && [ "${BRIG_CI:-0}" = 1 ] && continue
		[[ "$suite" =~ ^(${allow_suite[i]})$ ]] || continue
		[[ "$reason" =~ ${allow_re[i]} ]] && return 0
	done
	return 1
}

# count_tap SUITE LOG RC: add the TAP results in LOG to the totals. A suite
# that exits non-zero without reporting a failure, reports fewer results than
# its plan, or timed out counts one extra failure; so does every skip (or
# TODO, or skipped suite) whose reason tests/skips.allowed does not list.
count_tap() {
	local name="$1" log="$2" rc="$3"
	local pass=0 fail=0 skip=0 planned=-1 line REASON
	while IFS= read -r line; do
		case "$line" in
		"not ok "* | "ok "* | 1..0*)
			if ! skip_reason "$line"; then
				case "$line" in
				"not ok "*)
					fail=$((fail + 1))
					failures+=("$name: ${line#not ok }") ;;
				"ok "*) pass=$((pass + 1)) ;;
				esac
			elif skip_allowed "$name" "$REASON"; then
				skip=$((skip + 1))
			else
				fail=$((fail + 1))
				failures+=("$name: skip not allowed (tests/skips.allowed): $line")
			fi ;;
		esac
		[[ "$line" =~ ^1\.\.([0-9]+) ]] && planned="${BASH_REMATCH[1]}"
	done <"$log"

	local note=""
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail=$((fail + 1))
		note=" (timed out after ${LIMIT:-$SUITE_TIMEOUT}s)"
		failures+=("$name: timed out after ${LIMIT:-$SUITE_TIMEOUT}s")
	elif [ "$planned" -gt 0 ] && [ $((pass + fail + skip)) -lt "$planned" ]; then
		note=" (ran $((pass + fail + skip)) of $planned planned tests, exit $rc)"
		fail=$((fail + 1))
		failures+=("$name: stopped early$note")
	elif [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=$((fail + 1))
		note=" (exit status $rc without a failed test)"
		failures+=("$name: crashed$note")
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
	summary+=("$(printf '%-36s %4d passed, %d failed, %d skipped%s%s' "$name" "$pass" "$fail" "$skip" \
		"${DURATION:+ [${DURATION}s]}" "$note")")
}
