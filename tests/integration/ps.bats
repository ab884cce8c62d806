#!/usr/bin/env bats
# ps: the processes of a container, found through its cgroup; json is the
# array of host pids and nothing else, table filters ps(1). Any cgroup mode.

load helpers

setup() {
	requires root
	setup_bundle
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	teardown_bundle
}

# start_container_and_exec: the init (sleep 1000) plus one exec'd process
# (sleep 2000); $INIT and $EXEC are their host pids.
start_container_and_exec() {
	run_detached ctr
	INIT="$(brig state ctr | jq -r .pid)"
	[ "$INIT" -gt 0 ]
	brig exec -d --pid-file "$BUNDLE/exec.pid" ctr sleep 2000 </dev/null >/dev/null 2>&1
	EXEC="$(cat "$BUNDLE/exec.pid")"
	[ "$EXEC" -gt 0 ]
}

@test "ps: --format json prints exactly the container's host pids" {
	start_container_and_exec
	brig ps --format json ctr >"$BUNDLE/ps.out" 2>"$BUNDLE/ps.err"
	cat "$BUNDLE/ps.out" "$BUNDLE/ps.err"
	# Nothing on stderr, one JSON array of numbers on stdout.
	[ ! -s "$BUNDLE/ps.err" ]
	[ "$(jq -r 'type' "$BUNDLE/ps.out")" = array ]
	[ "$(jq -r 'map(type) | unique | join(",")' "$BUNDLE/ps.out")" = number ]
	local got want
	got="$(jq -r '.[]' "$BUNDLE/ps.out" | sort -n | tr '\n' ' ')"
	# The same set as the kernel's view of the test's cgroup.
	want="$(test_pids | sort -n | tr '\n' ' ')"
	[ -n "$want" ]
	[ "$got" = "$want" ]
	[[ " $got" == *" $INIT "* ]]
	[[ " $got" == *" $EXEC "* ]]
}

@test "ps: the table keeps ps's header and only the container's processes" {
	start_container_and_exec
	run brig ps ctr
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ PID ]]
	assert_contains "$output" "sleep 1000"
	assert_contains "$output" "sleep 2000"
	# Every line after the header is a process of the container (PID is
	# the second column of ps -ef).
	local want line pid
	want=" $(test_pids | tr '\n' ' ')"
	for line in "${lines[@]:1}"; do
		pid="$(awk '{ print $2 }' <<<"$line")"
		[[ "$want" == *" $pid "* ]] || { echo "not in the container: $line"; return 1; }
	done
	[ "${#lines[@]}" -ge 2 ]
}

@test "ps: options after the id go to ps(1)" {
	start_container_and_exec
	run brig ps ctr -o pid,comm
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^[[:space:]]*PID[[:space:]]+COMMAND ]]
	[[ "${lines[1]}" =~ ^[[:space:]]*[0-9]+[[:space:]]+sleep$ ]]
}

@test "ps: a stopped container has no processes" {
	update_config '.process.args = ["true"]'
	run_detached ctr
	wait_for_status ctr stopped
	run brig ps --format json ctr
	[ "$status" -eq 0 ]
	# runc prints null for none, brig [].
	[ "$(jq -r length <<<"$output")" -eq 0 ]
}

@test "ps: a missing container does not exist" {
	run brig ps nosuch-ctr
	[ "$status" -ne 0 ]
	assert_contains "$output" "does not exist"
	if is_brig; then
		assert_contains "$output" 'container "nosuch-ctr" does not exist'
	fi
}
