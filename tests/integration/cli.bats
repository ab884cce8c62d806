#!/usr/bin/env bats
# brig's command line: --version, --help, unknown commands, global flags in
# both --opt=value and --opt value forms, --log and --log-format json.
# brig-only: these check brig's own output, not runc's.

load helpers

setup() {
	requires brig
	ROOT="$(test_tmpdir root)"
	LOGFILE="$ROOT.log"
}

teardown() {
	teardown_bundle
	rm -f "$LOGFILE"
}

# RFC 3339 with nanoseconds, e.g. 2024-05-01T12:00:00.123456789Z
RFC3339NANO='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}(Z|[+-][0-9]{2}:[0-9]{2})$'

# check_json_log FILE: every line is one JSON object with level, msg and
# an RFC 3339 nanosecond time.
check_json_log() {
	local line n=0
	while IFS= read -r line; do
		n=$((n + 1))
		echo "log line: $line"
		jq -e 'type == "object" and (.level | type == "string")
			and (.msg | type == "string") and (.time | type == "string")' <<<"$line" >/dev/null
		[[ "$(jq -r .time <<<"$line")" =~ $RFC3339NANO ]]
		[[ "$(jq -r .level <<<"$line")" =~ ^(debug|info|warning|error|fatal|panic)$ ]]
	done <"$1"
	[ "$n" -gt 0 ]
}

@test "cli: --version prints version, spec and features" {
	run "$RUNTIME" --version
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^brig\ version\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[ "${lines[1]}" = "spec: 1.3.0" ]
	# the compiled-in features: +NAME / -NAME words
	[[ "${lines[2]}" =~ ^[+-][A-Z0-9_]+(\ [+-][A-Z0-9_]+)*$ ]]
	assert_contains "${lines[2]}" "SECCOMP"
	assert_contains "${lines[2]}" "CAP"
	local v="$output"
	run "$RUNTIME" -v
	[ "$status" -eq 0 ]
	[ "$output" = "$v" ]
	run "$RUNTIME" version
	[ "$status" -eq 0 ]
	[ "$output" = "$v" ]
}

@test "cli: --help lists the commands and exits 0" {
	run "$RUNTIME" --help
	[ "$status" -eq 0 ]
	assert_contains "$output" "Usage:"
	assert_contains "$output" "version"
	assert_contains "$output" "--root"
	run "$RUNTIME" -h
	[ "$status" -eq 0 ]
	assert_contains "$output" "Usage:"
}

@test "cli: every command listed in --help answers its own --help" {
	local cmd n=0
	for cmd in $("$RUNTIME" --help | awk '/^Commands:/ {on=1; next} on && /^$/ {exit} on {print $1}'); do
		n=$((n + 1))
		run "$RUNTIME" "$cmd" --help
		echo "$cmd --help -> $status"
		[ "$status" -eq 0 ]
		[ -n "$output" ]
		[[ "$output" != *"unknown command"* ]]
	done
	[ "$n" -gt 0 ]
}

@test "cli: an unknown command exits 1 and names it" {
	run "$RUNTIME" --root "$ROOT" frobnicate
	[ "$status" -eq 1 ]
	assert_contains "$output" "frobnicate"
}

@test "cli: an unknown global flag exits 1 and names it" {
	run "$RUNTIME" --no-such-global list
	[ "$status" -eq 1 ]
	assert_contains "$output" "no-such-global"
}

@test "cli: an invalid --log-format exits 1 and names the value" {
	run "$RUNTIME" --root "$ROOT" --log-format xml list
	[ "$status" -eq 1 ]
	assert_contains "$output" "xml"
}

@test "cli: errors exit 1 and go to stderr, not stdout" {
	run bash -c "\"$RUNTIME\" --root \"$ROOT\" state nosuch 2>/dev/null"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	run bash -c "\"$RUNTIME\" --root \"$ROOT\" state nosuch 2>&1 >/dev/null"
	assert_contains "$output" 'container "nosuch" does not exist'
}

@test "cli: --log-format json --log writes one JSON object per line" {
	run "$RUNTIME" --root "$ROOT" --log "$LOGFILE" --log-format json state nosuch
	[ "$status" -eq 1 ]
	# the error also reaches stderr
	assert_contains "$output" 'container "nosuch" does not exist'
	check_json_log "$LOGFILE"
	[ "$(jq -r 'select(.level == "error") | .msg' "$LOGFILE" | grep -c 'container "nosuch" does not exist')" -eq 1 ]
}

@test "cli: the JSON log escapes quotes, backslashes and control characters" {
	run "$RUNTIME" --root "$ROOT" --log "$LOGFILE" --log-format json state 'a"b\c'
	[ "$status" -eq 1 ]
	check_json_log "$LOGFILE"
}

@test "cli: --debug with a JSON log keeps every line valid JSON" {
	run "$RUNTIME" --debug --root "$ROOT" --log "$LOGFILE" --log-format json list
	[ "$status" -eq 0 ]
	if [ -s "$LOGFILE" ]; then
		check_json_log "$LOGFILE"
	fi
	run "$RUNTIME" --debug --root "$ROOT" --log "$LOGFILE" --log-format json state nosuch
	check_json_log "$LOGFILE"
}

@test "cli: --log with the text format appends the error to the file" {
	echo "earlier line" >"$LOGFILE"
	run "$RUNTIME" --root "$ROOT" --log "$LOGFILE" state nosuch
	[ "$status" -eq 1 ]
	[ "$(head -n1 "$LOGFILE")" = "earlier line" ]
	grep -q 'level=error msg="container \\"nosuch\\" does not exist"$' "$LOGFILE"
}

@test "cli: global flags accept --opt=value and --opt value" {
	setup_bundle
	update_config '.process.args = ["sleep", "100"]'
	timeout -k 5 60 "$RUNTIME" --root="$ROOT" --log="$LOGFILE" --log-format=json create eq </dev/null >/dev/null 2>&1
	run "$RUNTIME" --root "$ROOT" --log "$LOGFILE" --log-format json list -q
	[ "$status" -eq 0 ]
	[ "$output" = eq ]
	run "$RUNTIME" --root="$ROOT" list -q
	[ "$output" = eq ]
	# a different root does not see it
	run "$RUNTIME" --root "$ROOT.other" list -q
	[ -z "$output" ]
	rm -rf "$ROOT.other"
	"$RUNTIME" --root "$ROOT" delete --force eq
}

@test "cli: single-dash long global flags are accepted (-root, -log-format)" {
	# -root takes effect: list finds the container created under $ROOT ...
	setup_bundle
	update_config '.process.args = ["sleep", "100"]'
	create_container single
	run "$RUNTIME" -root "$ROOT" -log-format json list -q
	[ "$status" -eq 0 ]
	[ "$output" = single ]
	# ... and so does -log-format: the error below is logged as JSON.
	run "$RUNTIME" -root "$ROOT" -log "$LOGFILE" -log-format json state nosuch
	[ "$status" -eq 1 ]
	check_json_log "$LOGFILE"
}

@test "cli: restore accepts containerd's single-dash -no-subreaper" {
	# containerd passes `restore ... -no-subreaper`; it must parse as the flag,
	# so the error is about the missing checkpoint, not an unknown option.
	run "$RUNTIME" --root "$ROOT" restore -no-subreaper --image-path /nonexistent-brig-ckpt ctr
	[ "$status" -eq 1 ]
	[[ "$output" != *"no-subreaper"* ]]
}

@test "cli: --root is created when missing" {
	rmdir "$ROOT"
	# list of a missing root lists nothing and, like runc's, makes nothing
	run "$RUNTIME" --root "$ROOT" list
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT" ] || false
	# create makes it (a missing root inside $ROOT: teardown removes it; the
	# container's cgroup is the bundle's, which teardown removes too)
	setup_bundle
	update_config '.process.args = ["true"]'
	local missing="$ROOT/nested/root"
	# (the waiting init keeps its stdio: not bats' pipes)
	"$RUNTIME" --root "$missing" create --bundle "$BUNDLE" made </dev/null >/dev/null 2>&1
	[ -d "$missing/made" ]
	"$RUNTIME" --root "$missing" delete --force made
}
