#!/usr/bin/env bats
# Bad input gets a clear error that names the field or path, exit status 1,
# and leaves nothing behind: no state under --root, no cgroup under the test
# parent, no process. brig's exact wording is checked when RUNTIME is brig;
# against runc only the part runc shares. Covers any cgroup mode.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "errors: malformed config.json names the file" {
	echo '{"ociVersion": "1.3.0", "process": ' >"$BUNDLE/config.json"
	create_fails ctr
	if is_brig; then
		assert_contains "$output" "config.json"
	fi
}

@test "errors: empty config.json fails" {
	: >"$BUNDLE/config.json"
	create_fails ctr
	if is_brig; then
		assert_contains "$output" "config.json"
	fi
}

@test "errors: config.json that is not an object fails" {
	echo '[1, 2, 3]' >"$BUNDLE/config.json"
	create_fails ctr
}

@test "errors: missing config.json names it" {
	rm "$BUNDLE/config.json"
	create_fails ctr
	assert_contains "$output" "config.json"
}

@test "errors: wrong type names the field, the expected and the found type" {
	update_config '.linux.resources.memory.limit = "abc"'
	create_fails ctr
	if is_brig; then
		assert_contains "$output" "config.json: linux.resources.memory.limit: expected integer, got string"
	else
		assert_contains "$output" "linux.resources.memory.limit"
	fi
}

@test "errors: wrong type in an array element names the index" {
	update_config '.process.args = ["sh", 5]'
	create_fails ctr
	if is_brig; then
		assert_contains "$output" "process.args"
		assert_contains "$output" "expected string"
	fi
}

@test "errors: missing ociVersion is an error in brig" {
	requires brig
	update_config 'del(.ociVersion)'
	create_fails ctr
	assert_contains "$output" "ociVersion"
}

@test "errors: missing rootfs names the path" {
	update_config '.root.path = "nope"'
	create_fails ctr
	assert_contains "$output" "$BUNDLE/nope"
	if is_brig; then
		assert_contains "$output" "No such file or directory"
	fi
}

@test "errors: missing process.cwd is named" {
	update_config 'del(.process.cwd)'
	create_fails ctr
	if is_brig; then
		assert_contains "$output" "process.cwd"
	else
		assert_contains "${output,,}" "cwd"
	fi
}

@test "errors: relative process.cwd fails" {
	update_config '.process.cwd = "tmp"'
	create_fails ctr
	assert_contains "${output,,}" "cwd"
}

@test "errors: empty process.args fails" {
	update_config '.process.args = []'
	create_fails ctr
	assert_contains "$output" "args"
}

@test "errors: unknown namespace type is named" {
	update_config '.linux.namespaces += [{"type": "bogus"}]'
	create_fails ctr
	assert_contains "$output" "bogus"
}

@test "errors: namespace path that does not exist is named" {
	update_config '.linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = "/proc/self/ns/nope-xyz" else . end]'
	create_fails ctr
	assert_contains "$output" "nope-xyz"
}

@test "errors: duplicate id says already exists and keeps the first container" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	local pid
	pid="$(brig state ctr | jq -r .pid)"
	run brig create ctr </dev/null
	[ "$status" -eq 1 ]
	assert_contains "$output" "already exists"
	# The first container is untouched.
	[ "$(brig state ctr | jq -r .status)" = created ]
	[ "$(brig state ctr | jq -r .pid)" = "$pid" ]
	process_alive "$pid"
	brig delete --force ctr
	assert_no_leftovers
}

@test "errors: missing container is named in every command" {
	local cmd
	for cmd in state start delete; do
		run brig $cmd x
		[ "$status" -eq 1 ]
		if is_brig; then
			assert_contains "$output" 'container "x" does not exist'
		else
			assert_contains "$output" "does not exist"
		fi
	done
}

@test "errors: missing executable in \$PATH says so in Go's words" {
	update_config '.process.args = ["nope"]'
	create_fails ctr
	if is_brig; then
		assert_contains "$output" 'exec: "nope": executable file not found in $PATH (PATH='
	else
		assert_contains "$output" 'executable file not found in $PATH'
	fi
}

@test "errors: missing executable fails run the same way" {
	update_config '.process.args = ["nope"]'
	run_fails ctr
	if is_brig; then
		assert_contains "$output" 'exec: "nope": executable file not found in $PATH (PATH='
	else
		assert_contains "$output" 'executable file not found in $PATH'
	fi
}

@test "errors: missing absolute executable names the path" {
	update_config '.process.args = ["/nope"]'
	create_fails ctr
	assert_contains "$output" "/nope"
	assert_contains "${output,,}" "no such file or directory"
}

@test "errors: executable without the x bit says permission denied" {
	printf '#!/bin/sh\necho hi\n' >"$BUNDLE/rootfs/noexec.sh"
	chmod 0644 "$BUNDLE/rootfs/noexec.sh"
	update_config '.process.args = ["/noexec.sh"]'
	create_fails ctr
	assert_contains "${output,,}" "permission denied"
}

@test "errors: bad signal names fail, name the signal and leave the container alone" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	brig start ctr
	local sig
	for sig in FOO SIGFOO 99999 -3; do
		run brig kill ctr "$sig"
		echo "kill $sig -> $status: $output"
		[ "$status" -eq 1 ]
		# runc 1.1 names only bad names, not bad numbers
		if is_brig || [[ "$sig" = *FOO ]]; then
			assert_contains "$output" "$sig"
		fi
	done
	[ "$(brig state ctr | jq -r .status)" = running ]
}

@test "errors: invalid container ids are refused and nothing escapes --root" {
	local id
	for id in ../evil a/b .. . ""; do
		run brig create "$id" </dev/null
		echo "create '$id' -> $status: $output"
		[ "$status" -eq 1 ]
	done
	[ ! -e "$(dirname "$ROOT")/evil" ]
	assert_no_leftovers
}

@test "errors: create with a missing --bundle directory names it" {
	run brig create --bundle /nonexistent-brig-bundle ctr </dev/null
	[ "$status" -eq 1 ]
	assert_contains "$output" "/nonexistent-brig-bundle"
	assert_no_leftovers
}

@test "errors: unknown mount type fails and cleans up" {
	update_config '.mounts += [{"destination": "/mnt", "type": "nosuchfs", "source": "none"}]'
	create_fails ctr
	assert_contains "$output" "/mnt"
}

@test "errors: a failed create can be retried with the same id" {
	update_config '.process.args = ["nope"]'
	create_fails ctr
	update_config '.process.args = ["true"]'
	create_container ctr
	[ "$(brig state ctr | jq -r .status)" = created ]
}

@test "errors: unknown flag of a command fails with exit 1" {
	run brig create --no-such-flag ctr
	[ "$status" -ne 0 ]
	if is_brig; then
		[ "$status" -eq 1 ]
		assert_contains "$output" "no-such-flag"
	fi
	assert_no_leftovers
}
