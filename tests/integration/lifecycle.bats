#!/usr/bin/env bats
# The container state machine: create -> created -> start -> running ->
# (process exits) -> stopped -> delete -> gone, and every command in every
# state, with runc's exit codes and the error texts callers match on.
# Covers any cgroup mode (containers go under the test cgroup parent).

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# expect_no_such_container ID: $output of a failed command names the
# missing container (brig: `container "ID" does not exist`; runc 1.1 omits
# the id).
expect_no_such_container() {
	if is_brig; then
		assert_contains "$output" "container \"$1\" does not exist"
	else
		assert_contains "$output" "does not exist"
	fi
}

@test "lifecycle: the created init keeps no fd the caller leaked: a pipe reaches end-of-file" {
	# An engine reads create's output until end-of-file; an init that kept
	# an inherited write end open while it waits for start would block it.
	update_config '.process.args = ["sleep", "100"]'
	mkfifo "$BUNDLE/leak"
	timeout 10 cat "$BUNDLE/leak" >/dev/null 3>&- &
	local reader=$! rc=0
	create_container ctr 5>"$BUNDLE/leak"
	wait "$reader" || rc=$? # 124: the init kept the write end open
	[ "$(brig state ctr | jq -r .status)" = created ]
	[ "$rc" -eq 0 ]
}

@test "lifecycle: create, start, exit, delete walks the state machine" {
	# The process waits on a fifo in the rootfs so the test decides when it exits.
	mkfifo "$BUNDLE/rootfs/dev-gate"
	update_config '.process.args = ["sh", "-c", "read x < /dev-gate; exit 0"]'
	create_container ctr

	run brig state ctr
	[ "$status" -eq 0 ]
	echo "$output" | jq -e . >/dev/null
	[ "$(jq -r .status <<<"$output")" = created ]
	[ "$(jq -r .id <<<"$output")" = ctr ]
	local pid
	pid="$(jq -r .pid <<<"$output")"
	[ "$pid" -gt 0 ]
	process_alive "$pid"
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
	[ "$(jq -r .rootfs <<<"$output")" = "$BUNDLE/rootfs" ]
	# created: RFC 3339 with nanoseconds, UTC
	[[ "$(jq -r .created <<<"$output")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]]
	[ -n "$(jq -r .ociVersion <<<"$output")" ]
	if is_brig; then
		[ "$(jq -r .ociVersion <<<"$output")" = 1.3.0 ]
	fi
	# The init is blocked before the user process: it does not run it yet.
	! grep -q 'dev-gate' "/proc/$pid/cmdline" || false

	run brig start ctr
	[ "$status" -eq 0 ]
	wait_for_status ctr running
	[ "$(brig state ctr | jq -r .pid)" = "$pid" ]
	# Now the user process runs as the init.
	grep -q 'dev-gate' "/proc/$pid/cmdline"

	echo go >"$BUNDLE/rootfs/dev-gate"
	wait_for_status ctr stopped
	! process_alive "$pid" || false

	run brig delete ctr
	[ "$status" -eq 0 ]
	run brig state ctr
	[ "$status" -eq 1 ]
	expect_no_such_container ctr
	assert_no_leftovers
}

@test "lifecycle: start twice fails, the container keeps running" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr running
	run brig start ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "running"
	[ "$(brig state ctr | jq -r .status)" = running ]
}

@test "lifecycle: start on a stopped container fails" {
	update_config '.process.args = ["true"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr stopped
	run brig start ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "stopped"
	[ "$(brig state ctr | jq -r .status)" = stopped ]
}

@test "lifecycle: state of a stopped container reports pid 0" {
	update_config '.process.args = ["true"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr stopped
	run brig state ctr
	[ "$status" -eq 0 ]
	[ "$(jq -r .pid <<<"$output")" = 0 ]
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
}

@test "lifecycle: kill a stopped container fails with 'not running'" {
	update_config '.process.args = ["true"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr stopped
	run brig kill ctr KILL
	[ "$status" -eq 1 ]
	assert_contains "$output" "not running"
	run brig kill ctr
	[ "$status" -eq 1 ]
}

@test "lifecycle: kill a created container stops it" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	local pid
	pid="$(brig state ctr | jq -r .pid)"
	run brig kill ctr KILL
	[ "$status" -eq 0 ]
	wait_for_status ctr stopped
	! process_alive "$pid" || false
	brig delete ctr
	assert_no_leftovers
}

@test "lifecycle: delete a running container fails without --force, works with it" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr running
	local pid
	pid="$(brig state ctr | jq -r .pid)"

	run brig delete ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "running"
	process_alive "$pid"
	[ "$(brig state ctr | jq -r .status)" = running ]

	run brig delete --force ctr
	[ "$status" -eq 0 ]
	! process_alive "$pid" || false
	run brig state ctr
	[ "$status" -eq 1 ]
	expect_no_such_container ctr
	assert_no_leftovers
}

@test "lifecycle: delete -f works too and on a stopped container" {
	update_config '.process.args = ["true"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr stopped
	run brig delete -f ctr
	[ "$status" -eq 0 ]
	assert_no_leftovers
}

@test "lifecycle: delete a created container kills its init" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	local pid
	pid="$(brig state ctr | jq -r .pid)"
	process_alive "$pid"
	run brig delete ctr
	[ "$status" -eq 0 ]
	! process_alive "$pid" || false
	run brig state ctr
	[ "$status" -eq 1 ]
	assert_no_leftovers
}

@test "lifecycle: every command on a missing container fails naming it" {
	local cmd
	for cmd in "start" "state" "kill" "delete"; do
		run brig $cmd nosuch
		echo "$cmd: $status $output"
		[ "$status" -eq 1 ]
		expect_no_such_container nosuch
	done
	# delete --force of a missing container: runc reports nothing and succeeds.
	run brig delete --force nosuch
	[ "$status" -eq 0 ]
}

@test "lifecycle: kill accepts signal names and numbers" {
	# sh as pid 1 gets TERM only with a handler; it signals readiness after
	# installing it.
	update_config '.process.args = ["sh", "-c", "trap \"exit 0\" TERM; touch /ready; while :; do sleep 0.05; done"]'
	local sig i
	for sig in KILL SIGKILL 9 TERM SIGTERM 15; do
		rm -f "$BUNDLE/rootfs/ready"
		run_detached "c$sig"
		for i in $(seq 100); do [ -e "$BUNDLE/rootfs/ready" ] && break; sleep 0.05; done
		run brig kill "c$sig" "$sig"
		echo "kill $sig: $status $output"
		[ "$status" -eq 0 ]
		wait_for_status "c$sig" stopped
		brig delete "c$sig"
	done
	assert_no_leftovers
}

@test "lifecycle: kill delivers the signal the process sees" {
	# The shell as pid 1 ignores signals it has no handler for, so trap USR1.
	update_config '.process.args = ["sh", "-c", "trap \"echo got-usr1 > /usr1; exit 7\" USR1; echo ready > /ready; while :; do sleep 0.05; done"]'
	run_detached ctr
	local i
	for i in $(seq 100); do [ -e "$BUNDLE/rootfs/ready" ] && break; sleep 0.05; done
	run brig kill ctr USR1
	[ "$status" -eq 0 ]
	wait_for_status ctr stopped
	[ "$(cat "$BUNDLE/rootfs/usr1")" = got-usr1 ]
}

@test "lifecycle: kill without a signal sends SIGTERM" {
	update_config '.process.args = ["sh", "-c", "trap \"echo got-term > /term; exit 0\" TERM; echo ready > /ready; while :; do sleep 0.05; done"]'
	run_detached ctr
	local i
	for i in $(seq 100); do [ -e "$BUNDLE/rootfs/ready" ] && break; sleep 0.05; done
	run brig kill ctr
	[ "$status" -eq 0 ]
	wait_for_status ctr stopped
	[ "$(cat "$BUNDLE/rootfs/term")" = got-term ]
}

@test "lifecycle: kill --all signals every process of the container" {
	# On TERM the child records it and exits; the init waits for the child
	# first, so the container stops only when the child got the signal too.
	update_config '.process.args = ["sh", "-c", "sh -c \"trap \\\"echo child-term > /child; exit 0\\\" TERM; touch /child-ready; while :; do sleep 0.05; done\" & trap \"wait; exit 0\" TERM; while :; do sleep 0.05; done"]'
	run_detached ctr
	local i
	for i in $(seq 100); do [ -e "$BUNDLE/rootfs/child-ready" ] && break; sleep 0.05; done
	[ -e "$BUNDLE/rootfs/child-ready" ]
	run brig kill --all ctr TERM
	[ "$status" -eq 0 ]
	wait_for_status ctr stopped
	for i in $(seq 100); do [ -e "$BUNDLE/rootfs/child" ] && break; sleep 0.05; done
	[ "$(cat "$BUNDLE/rootfs/child")" = child-term ]
	brig delete ctr
	assert_no_leftovers
}

@test "lifecycle: kill with an unknown signal fails and names it" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	local sig
	for sig in FOO SIGFOO; do
		run brig kill ctr "$sig"
		[ "$status" -eq 1 ]
		assert_contains "$output" "$sig"
	done
	[ "$(brig state ctr | jq -r .status)" = running ]
}

@test "lifecycle: run exits with the container's status" {
	local code
	for code in 0 1 42 255; do
		update_config ".process.args = [\"sh\", \"-c\", \"exit $code\"]"
		run brig run "r$code"
		echo "exit $code -> $status: $output"
		[ "$status" -eq "$code" ]
		# Without --keep the container is gone.
		run brig state "r$code"
		[ "$status" -eq 1 ]
	done
	assert_no_leftovers
}

@test "lifecycle: run passes stdio through and runs the process" {
	update_config '.process.args = ["sh", "-c", "echo out-$(hostname); echo err >&2; read x; echo in-$x"]'
	run bash -c "echo hello | \"$RUNTIME\" --root \"$ROOT\" run ctr"
	[ "$status" -eq 0 ]
	assert_contains "$output" "out-brig"
	assert_contains "$output" "err"
	assert_contains "$output" "in-hello"
}

@test "lifecycle: run exits with 128+signal when the container is killed" {
	update_config '.process.args = ["sleep", "100"]'
	local rc=0
	brig run ctr </dev/null >"$BUNDLE/run.out" 2>&1 &
	local runpid=$!
	wait_for_status ctr running
	brig kill ctr KILL
	wait "$runpid" || rc=$?
	[ "$rc" -eq 137 ]
	assert_no_leftovers
}

@test "lifecycle: run exits 128+15 when the process dies of SIGTERM" {
	# Without a pid namespace the process is not an init, so SIGTERM (no
	# handler) kills it instead of being ignored.
	update_config '.process.args = ["sleep", "100"] | .linux.namespaces -= [{"type": "pid"}]'
	local rc=0
	brig run ctr </dev/null >"$BUNDLE/run.out" 2>&1 &
	local runpid=$!
	wait_for_status ctr running
	brig kill ctr TERM
	wait "$runpid" || rc=$?
	[ "$rc" -eq 143 ]
}

@test "lifecycle: run --detach leaves the container running" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	[ "$(brig state ctr | jq -r .status)" = running ]
	# a cgroup of its own: brig refuses one that holds ctr's processes
	set_cgroup_path ctr2
	run_detached ctr2 --pid-file "$BUNDLE/ctr2.pid"
	[ "$(brig state ctr2 | jq -r .status)" = running ]
	[ "$(cat "$BUNDLE/ctr2.pid")" = "$(brig state ctr2 | jq -r .pid)" ]
}

@test "lifecycle: run --keep keeps the stopped container" {
	update_config '.process.args = ["sh", "-c", "exit 3"]'
	run brig run --keep ctr
	[ "$status" -eq 3 ]
	run brig state ctr
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$output")" = stopped ]
	brig delete ctr
	assert_no_leftovers
}

@test "lifecycle: --pid-file absolute and relative paths hold the init pid" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr --pid-file "$BUNDLE/abs.pid"
	[ "$(cat "$BUNDLE/abs.pid")" = "$(brig state ctr | jq -r .pid)" ]
	# no trailing newline, like runc
	[ "$(wc -l <"$BUNDLE/abs.pid")" -eq 0 ]

	mkdir -p "$BUNDLE/sub"
	cd "$BUNDLE/sub"
	set_cgroup_path ctr2 "$BUNDLE"
	create_container ctr2 --bundle "$BUNDLE" --pid-file rel.pid
	[ -f "$BUNDLE/sub/rel.pid" ]
	[ "$(cat "$BUNDLE/sub/rel.pid")" = "$(brig state ctr2 | jq -r .pid)" ]
}

@test "lifecycle: create without --bundle uses the current directory" {
	update_config '.process.args = ["sleep", "100"]'
	cd "$BUNDLE"
	create_container ctr
	[ "$(brig state ctr | jq -r .bundle)" = "$BUNDLE" ]
}

@test "lifecycle: --bundle and -b accept relative paths, state shows them absolute" {
	update_config '.process.args = ["sleep", "100"]'
	cd "$(dirname "$BUNDLE")"
	set_cgroup_path ctr
	create_container ctr --bundle "$(basename "$BUNDLE")"
	[ "$(brig state ctr | jq -r .bundle)" = "$BUNDLE" ]
	[ "$(brig state ctr | jq -r .rootfs)" = "$BUNDLE/rootfs" ]
	cd /
	set_cgroup_path ctr2
	create_container ctr2 -b "${BUNDLE#/}"
	[ "$(brig state ctr2 | jq -r .bundle)" = "$BUNDLE" ]
}

@test "lifecycle: annotations are passed through to state" {
	update_config '.process.args = ["sleep", "100"] | .annotations = {"org.example.key": "value one", "io.brig.test": "2"}'
	create_container ctr
	run brig state ctr
	[ "$status" -eq 0 ]
	[ "$(jq -r '.annotations["org.example.key"]' <<<"$output")" = "value one" ]
	[ "$(jq -r '.annotations["io.brig.test"]' <<<"$output")" = 2 ]
}

@test "lifecycle: list -q, table and json show the containers and statuses" {
	update_config '.process.args = ["sleep", "100"]'
	set_cgroup_path a
	create_container a
	set_cgroup_path b
	run_detached b
	update_config '.process.args = ["true"]'
	set_cgroup_path c
	create_container c
	brig start c
	wait_for_status c stopped

	run brig list -q
	[ "$status" -eq 0 ]
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "a b c " ]

	run brig list
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^ID[[:space:]]+PID[[:space:]]+STATUS[[:space:]]+BUNDLE[[:space:]]+CREATED[[:space:]]+OWNER ]]
	[ "${#lines[@]}" -eq 4 ]
	grep -qE "^a +[0-9]+ +created +$BUNDLE " <<<"$output"
	grep -qE "^b +[0-9]+ +running +$BUNDLE " <<<"$output"
	grep -qE "^c +0 +stopped +$BUNDLE " <<<"$output"

	run brig list --format json
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$output"
	[ "$(jq -r 'map(.id) | sort | join(",")' <<<"$output")" = a,b,c ]
	[ "$(jq -r '.[] | select(.id=="a") | .status' <<<"$output")" = created ]
	[ "$(jq -r '.[] | select(.id=="b") | .status' <<<"$output")" = running ]
	[ "$(jq -r '.[] | select(.id=="c") | .status' <<<"$output")" = stopped ]
	[ "$(jq -r '.[] | select(.id=="b") | .pid' <<<"$output")" = "$(brig state b | jq -r .pid)" ]
	[ "$(jq -r '.[0].bundle' <<<"$output")" = "$BUNDLE" ]

	run brig list -f json
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -eq 3 ]
}

@test "lifecycle: list of an empty root prints a header or an empty json array" {
	run brig list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run brig list --format json
	[ "$status" -eq 0 ]
	# runc prints null for an empty list; brig prints []
	[[ "$output" = "[]" || "$output" = "null" ]]
	run brig list
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "lifecycle: a recycled id works after delete" {
	update_config '.process.args = ["true"]'
	create_container ctr
	brig start ctr
	wait_for_status ctr stopped
	brig delete ctr
	create_container ctr
	[ "$(brig state ctr | jq -r .status)" = created ]
	brig delete ctr
	assert_no_leftovers
}

@test "lifecycle: the container's process sees its own pid namespace and hostname" {
	update_config '.process.args = ["sh", "-c", "echo pid=$$ host=$(hostname)"]'
	run brig run ctr
	[ "$status" -eq 0 ]
	assert_contains "$output" "pid=1 host=brig"
}

@test "lifecycle: without a mount namespace the rootfs is / and the host's mount table is unchanged" {
	# runtime-spec: a namespace type not listed is inherited. brig enters the
	# rootfs with chroot and mounts nothing (the mounts would land on the
	# host's table), saying so. Only brig: runc mounts them on the table of
	# the mount namespace it runs in.
	is_brig || skip "runc would mount the config's mounts on the host's mount table"
	echo "rootfs-marker" >"$BUNDLE/rootfs/marker"
	update_config '.linux.namespaces |= map(select(.type != "mount"))
		| .process.args = ["sh", "-c", "cat /marker; ls /proc | wc -l; test -e /etc/debian_version && echo host-root; echo end"]'
	local before after
	before="$(cat /proc/self/mountinfo)"
	# maskedPaths (and readonlyPaths, root.readonly) cannot be applied
	# without a mount namespace: refused, as runc does
	run create_container ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.maskedPaths: needs a mount namespace"
	assert_no_leftovers
	update_config 'del(.linux.maskedPaths, .linux.readonlyPaths)'
	create_container ctr
	assert_contains "$(cat "$BUNDLE/ctr.err")" "no mount namespace"
	local pid
	pid="$(brig state ctr | jq -r .pid)"
	# the init shares the test shell's mount namespace, rooted at the rootfs
	[ "$(readlink "/proc/$pid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]
	[ "$(readlink "/proc/$pid/root")" = "$(cd "$BUNDLE/rootfs" && pwd -P)" ]
	after="$(cat /proc/self/mountinfo)"
	[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; false; }
	brig start ctr
	wait_for_status ctr stopped
	brig delete ctr
	after="$(cat /proc/self/mountinfo)"
	[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; false; }
	# the process saw the rootfs as /: the marker, an empty /proc (nothing
	# mounted), no host file
	run cat "$BUNDLE/ctr.out"
	[ "${lines[0]}" = "rootfs-marker" ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = end ]
	assert_no_leftovers
}

@test "lifecycle: create without process succeeds, start fails, delete removes it" {
	# runtime-spec 1.3 config.md: process is optional at create; start MUST
	# generate an error when it was not set. runc 1.1 refuses at create.
	is_brig || skip "runc refuses a config without process at create"
	update_config 'del(.process)'
	create_container ctr
	[ "$(brig state ctr | jq -r .status)" = created ]
	run brig start ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" 'cannot start container "ctr": its config.json has no process'
	# start had no effect: still created, delete removes it
	[ "$(brig state ctr | jq -r .status)" = created ]
	run brig delete ctr
	[ "$status" -eq 0 ]
	assert_no_leftovers
	# run is create + start: it fails at once and leaves nothing
	run brig run ctr2 </dev/null
	[ "$status" -eq 1 ]
	assert_contains "$output" "process is required"
	assert_no_leftovers
}

@test "lifecycle: a created container can be paused and resumed" {
	update_config '.process.args = ["sh", "-c", "echo started"]'
	create_container ctr
	brig pause ctr
	[ "$(brig state ctr | jq -r .status)" = paused ]
	cgroup_frozen
	run brig start ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "paused"
	run brig delete ctr
	[ "$status" -eq 1 ]
	assert_contains "$output" "paused"
	brig resume ctr
	[ "$(brig state ctr | jq -r .status)" = created ]
	! cgroup_frozen || false
	brig start ctr
	wait_for_status ctr stopped
	[ "$(cat "$BUNDLE/ctr.out")" = started ]
	brig delete ctr
	assert_no_leftovers
}

@test "lifecycle: SIGKILL stops a paused container (kill and kill --all), other signals wait" {
	update_config '.process.args = ["sh", "-c", "trap \"echo got-usr1 >/tmp/usr1\" USR1; while :; do sleep 0.1; done"]'
	run_detached ctr
	brig pause ctr
	[ "$(brig state ctr | jq -r .status)" = paused ]
	# A caught signal is delivered once resumed: the handler's file (the
	# container's /tmp is the bundle's rootfs) appears only then.
	local i
	brig kill ctr USR1
	sleep 0.3
	[ "$(brig state ctr | jq -r .status)" = paused ]
	[ ! -e "$BUNDLE/rootfs/tmp/usr1" ]
	brig resume ctr
	wait_for_status ctr running
	for i in $(seq 50); do [ -e "$BUNDLE/rootfs/tmp/usr1" ] && break; sleep 0.1; done
	[ -e "$BUNDLE/rootfs/tmp/usr1" ]
	# SIGKILL needs no resume.
	brig pause ctr
	brig kill ctr KILL
	wait_for_status ctr stopped
	brig delete ctr
	run_detached ctr2
	brig pause ctr2
	brig kill --all ctr2 KILL
	wait_for_status ctr2 stopped
	brig delete ctr2
	assert_no_leftovers
}

@test "lifecycle: update records the new resources, a later update keeps them" {
	update_config '.process.args = ["sleep", "100"]
		| .linux.resources = {"memory": {"limit": 33554432}}
		| .mounts += [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
			"options": ["ro", "nosuid", "noexec", "nodev"]}]'
	run_detached ctr
	brig update --memory 64m ctr
	brig update --pids-limit 42 ctr
	# From inside: both limits are in force (v1 controllers or pure v2).
	run brig exec ctr sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null ||
		cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null ||
		cat /sys/fs/cgroup/pids.max'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 67108864 ]
	[ "${lines[1]}" = 42 ]
	# brig's saved config.json has both. (runc 1.1's state.json keeps only
	# the last update's values: its memory reads 0 here.)
	if is_brig; then
		jq -c .linux.resources "$ROOT/ctr/config.json"
		[ "$(jq .linux.resources.memory.limit "$ROOT/ctr/config.json")" = 67108864 ]
		[ "$(jq .linux.resources.pids.limit "$ROOT/ctr/config.json")" = 42 ]
	fi
	# exec and the rest of the lifecycle still read the saved config.
	run brig exec ctr true
	[ "$status" -eq 0 ]
	brig delete --force ctr
	assert_no_leftovers ctr
}
