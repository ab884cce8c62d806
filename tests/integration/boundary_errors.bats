#!/usr/bin/env bats
# Errors that happen at the boundary between brig and the container (issue
# #11 items 7 and 8): each must be named (the field or path and the reason),
# give the right exit status, and leave nothing behind that should be gone.
#   - a hostname/domainname longer than the kernel takes (refused up front)
#   - a memory limit so small the OOM killer kills the init (named as such)
#   - negative limits other than -1 (create, update -r, update flags)
#   - start/run of a process that cannot be executed (E2BIG, ENOENT, EACCES)
#   - exec --preserve-fds with fds that do not exist; an unwritable --log
#   - a failing poststart hook: start/run fail, the container is deleted
# Covers cgroup v1, hybrid and v2 (the memory tests read the controller of
# whichever hierarchy holds it).

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
	[ -n "${RO_DIR:-}" ] && rm -rf "$RO_DIR"
	return 0
}

# memory_limit_file: the file holding this test's container memory limit
# (v1 memory controller, or v2 memory.max).
memory_limit_file() {
	local f
	for f in /sys/fs/cgroup/memory/"$TEST_CGROUP_PARENT/$CGROUP_NAME"/memory.limit_in_bytes \
		/sys/fs/cgroup/"$TEST_CGROUP_PARENT/$CGROUP_NAME"/memory.max; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# try CMD...: run a runtime command that may (wrongly) leave a container
# behind, with its output in a file rather than a pipe the container would
# hold open; sets $status and $output like bats' run.
try() {
	status=0
	brig "$@" </dev/null >"$BUNDLE/try.out" 2>&1 || status=$?
	output="$(cat "$BUNDLE/try.out")"
	echo "$* -> $status: ${output:0:300}"
}

requires_memory_controller() {
	[ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
		skip "test requires the memory cgroup controller"
}

@test "boundary_errors: a 10 MB hostname or a long domainname is refused by name, nothing left" {
	update_config '.hostname = ("a" * 10000000)'
	try run ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "hostname"
	assert_contains "$output" "64"
	[ "${#output}" -lt 1000 ]
	assert_no_leftovers

	update_config '.hostname = "ok" | .domainname = ("d" * 65)'
	try create ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "domainname"
	assert_no_leftovers

	# 64 bytes is the kernel's limit, and allowed.
	update_config '.hostname = ("h" * 64) | .domainname = "dom" | .process.args = ["hostname"]'
	run brig run ctr </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'h%.0s' $(seq 64))" ]
}

@test "boundary_errors: a memory limit too small to start the init is named, with the limit" {
	requires_memory_controller
	update_config '.linux.resources.memory.limit = 4096 | .process.args = ["true"]'
	try run ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "memory.limit 4096"
	assert_contains "$output" "too small"
	assert_no_leftovers

	try create ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "memory.limit 4096"
	assert_no_leftovers
}

@test "boundary_errors: negative limits other than -1 are refused, not written as unlimited" {
	requires_memory_controller
	local field
	for field in memory.limit memory.reservation memory.swap cpu.quota pids.limit; do
		update_config "del(.linux.resources) | .linux.resources.$field = -5"
		try create ctr
		[ "$status" -eq 1 ]
		assert_contains "$output" "linux.resources.$field -5"
		assert_no_leftovers
	done

	# -1 (unlimited) stays valid.
	update_config 'del(.linux.resources) | .linux.resources.memory.limit = -1 | .process.args = ["sleep", "100"]'
	run_detached ctr
	# update: neither the resources file nor the flag lifts an existing limit.
	echo '{"memory": {"limit": 67108864}}' >"$BUNDLE/ok.json"
	brig update -r "$BUNDLE/ok.json" ctr
	local file before
	file="$(memory_limit_file)"
	before="$(cat "$file")"
	[ "$before" = 67108864 ]
	echo '{"memory": {"limit": -5}}' >"$BUNDLE/neg.json"
	run brig update -r "$BUNDLE/neg.json" ctr
	echo "update -r -> $status: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "memory.limit -5"
	[ "$(cat "$file")" = "$before" ]
	run brig update --memory -5 ctr
	[ "$status" -ne 0 ]
	assert_contains "$output" "--memory"
	[ "$(cat "$file")" = "$before" ]
}

@test "boundary_errors: start and run fail with the errno and the path when the process cannot be executed" {
	# E2BIG: one argument above the kernel's 128 KiB per-string limit.
	update_config '.process.args = ["echo", ("a" * 10000000)]'
	create_container big
	run brig start big
	echo "start big -> $status: ${output:0:300}"
	[ "$status" -eq 1 ]
	assert_contains "$output" "argument list too long"
	assert_contains "$output" "echo"
	wait_for_status big stopped

	try run bigrun
	[ "$status" -eq 1 ]
	assert_contains "$output" "argument list too long"
	assert_contains "$output" "/bin/echo"
	[ ! -e "$ROOT/bigrun" ]

	# ENOENT: the script's interpreter does not exist (the script does).
	printf '#!/no/such/interpreter\n' >"$BUNDLE/rootfs/bin/noint"
	chmod 0755 "$BUNDLE/rootfs/bin/noint"
	update_config '.process.args = ["/bin/noint"]'
	create_container noent
	run brig start noent
	echo "start noent -> $status: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "/bin/noint"
	assert_contains "$output" "no such file or directory"
	wait_for_status noent stopped

	# EACCES: the program lost its execute bit after create.
	printf '#!/bin/sh\necho ran\n' >"$BUNDLE/rootfs/bin/noexec"
	chmod 0755 "$BUNDLE/rootfs/bin/noexec"
	update_config '.process.args = ["/bin/noexec"]'
	create_container acces
	chmod 0644 "$BUNDLE/rootfs/bin/noexec"
	run brig start acces
	echo "start acces -> $status: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "/bin/noexec"
	assert_contains "$output" "permission denied"
	wait_for_status acces stopped
	[ ! -s "$BUNDLE/acces.out" ]

	# A program that runs still starts (start waits for its execve).
	update_config '.process.args = ["sh", "-c", "echo started"]'
	create_container fine
	brig start fine
	wait_for_status fine stopped
	[ "$(cat "$BUNDLE/fine.out")" = started ]
}

@test "boundary_errors: exec --preserve-fds past the open fds and an unwritable --log fail by name" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	wait_for_status ctr running
	run brig exec --preserve-fds 1000000 ctr touch /tmp/ran
	echo "exec --preserve-fds -> $status: $output"
	[ "$status" -ne 0 ]
	assert_contains "$output" "--preserve-fds"
	assert_contains "$output" "not open"
	run brig exec ctr test -e /tmp/ran
	[ "$status" -ne 0 ]

	# --log that cannot be written: a missing directory, a directory, a
	# read-only file system (a tmpfs mounted read-only in a private mount
	# namespace, so the host's mounts are untouched).
	run brig --log "$BUNDLE/no/such/dir/log" exec ctr touch /tmp/ran
	[ "$status" -ne 0 ]
	assert_contains "$output" "$BUNDLE/no/such/dir/log"
	run brig --log "$BUNDLE" exec ctr touch /tmp/ran
	[ "$status" -ne 0 ]
	assert_contains "$output" "$BUNDLE"
	RO_DIR="$(test_tmpdir rolog)"
	run unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && exec "$2" --root "$3" --log "$1/log" exec ctr touch /tmp/ran' \
		sh "$RO_DIR" "$RUNTIME" "$ROOT"
	echo "--log on a read-only fs -> $status: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "$RO_DIR/log"
	run brig exec ctr test -e /tmp/ran
	[ "$status" -ne 0 ]
}

@test "boundary_errors: a failing poststart hook fails start and run and deletes the container" {
	cat >"$BUNDLE/poststart-fail" <<-'EOF'
		#!/bin/sh
		echo "poststart refuses"
		exit 3
	EOF
	chmod 0755 "$BUNDLE/poststart-fail"
	update_config ".process.args = [\"sleep\", \"100\"]
		| .hooks.poststart = [{\"path\": \"$BUNDLE/poststart-fail\"}]
		| .hooks.poststop = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo x >>$BUNDLE/poststop-ran\"]}]"
	create_container ctr
	local pid
	pid="$(brig state ctr | jq -r .pid)"
	[ "$pid" -gt 0 ]
	run brig start ctr
	echo "start -> $status: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "poststart"
	assert_contains "$output" "poststart refuses"
	# Killed and deleted: no state, no cgroup in any hierarchy, no process.
	! process_alive "$pid" || false
	run brig state ctr
	[ "$status" -ne 0 ]
	assert_no_leftovers
	[ "$(wc -l <"$BUNDLE/poststop-ran")" -eq 1 ]

	# run (and run -d) do the same.
	rm -f "$BUNDLE/poststop-ran"
	try run -d ctr2
	[ "$status" -eq 1 ]
	assert_contains "$output" "poststart refuses"
	assert_no_leftovers
	[ "$(wc -l <"$BUNDLE/poststop-ran")" -eq 1 ]
}
