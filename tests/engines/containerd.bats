#!/usr/bin/env bats
# containerd 1.6 through its runc v2 shim (io.containerd.runc.v2) with the
# runtime under test as the shim's runc binary (ctr run --runc-binary), on
# this hybrid cgroup host as it is, with the cgroupfs driver (no
# --systemd-cgroup). containerd runs on its own socket, root and state dirs.
# Run through tests/engines/run.sh (private mount namespace).

load helpers
bats_require_minimum_version 1.5.0

SHIM=/usr/bin/containerd-shim-runc-v2

setup_file() {
	local why
	why="$(engine_skip_reason)"
	local p
	for p in containerd ctr containerd-shim-runc-v2 skopeo; do
		[ -n "$why" ] && break
		command -v "$p" >/dev/null || why="$p is not installed (contrib/install-deps.sh)"
	done
	export ENGINE_SKIP="$why"
	[ -z "$why" ] || return 0
	engine_setup_common containerd
	# setup runs only the engine (no container): when it fails, the
	# engine cannot run here, and every test says so with its error
	if ! containerd_setup 2>"$ENGINE_TMP/setup.err"; then
		ENGINE_SKIP="containerd cannot run here: $(tail -n 3 "$ENGINE_TMP/setup.err" | tr -s '\n\t ' ' ')"
		[ -s "$ENGINE_TMP/setup.err" ] || ENGINE_SKIP+="setup failed without a message"
	fi
}

teardown_file() {
	[ -n "${ENGINE_TMP:-}" ] || return 0
	containerd_teardown
	engine_teardown_common
}

setup() {
	[ -z "${ENGINE_SKIP:-}" ] || skip "$ENGINE_SKIP"
}

teardown() {
	[ -n "${ENGINE_SKIP:-}" ] && return 0
	ctr_remove_all
}

# The shim runs the runtime with --root /run/containerd/runc/NAMESPACE.
RUNTIME_ROOT="/run/containerd/runc/brig-test"

# task_pid ID: the pid of the task's init on the host.
task_pid() {
	ctr tasks list | awk -v id="$1" '$1 == id { print $2 }'
}

# task_status ID: RUNNING, PAUSED, STOPPED, ...
task_status() {
	ctr tasks list | awk -v id="$1" '$1 == id { print $3 }'
}

# wait_task_status ID STATUS: poll for up to 10s.
wait_task_status() {
	local got
	for _ in $(seq 100); do
		got="$(task_status "$1")"
		[ "$got" = "$2" ] && return 0
		sleep 0.1
	done
	echo "task $1: status '$got', wanted '$2'" >&2
	return 1
}

@test "containerd: run --rm through the runc v2 shim, exit codes" {
	run ctr_run --rm c1 sh -c 'echo hello-$((6 * 7)) from pid $$'
	assert_status 0
	assert_contains "$output" "hello-42 from pid 1"
	run ctr_run --rm c2 sh -c 'exit 42'
	assert_status 42
	run ctr containers list --quiet
	[ -z "$output" ]
}

@test "containerd: the shim drives the runtime under test" {
	ctr_run -d --null-io c1 sleep 1000
	# the container is in the runtime's own state under the shim's --root
	run "$ENGINE_RUNTIME" --root "$RUNTIME_ROOT" state c1
	assert_status 0
	[ "$(jq -r .status <<<"$output")" = running ]
	[ "$(jq -r .pid <<<"$output")" = "$(task_pid c1)" ]
	# and in our cgroup parent (cgroupfs driver)
	grep -q ":$CGROUP_PARENT/c1\$" "/proc/$(task_pid c1)/cgroup"
}

@test "containerd: run with a missing command fails with the runtime's message" {
	run ctr_run --rm c1 /no/such/exe
	[ "$status" -ne 0 ]
	assert_contains "$output" "/no/such/exe"
	run ctr containers list --quiet
	[ -z "$output" ]
}

@test "containerd: tasks exec" {
	ctr_run -d --null-io c1 sh -c 'echo $$ >/pid1; exec sleep 1000'
	run ctr tasks exec --exec-id e1 c1 sh -c 'cat /pid1; echo exec-$((6 * 7))'
	assert_status 0
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = exec-42 ]
	run ctr tasks exec --exec-id e2 c1 sh -c 'exit 3'
	assert_status 3
	run ctr tasks exec --exec-id e3 c1 tty
	[ "$status" -ne 0 ]
	assert_contains "$output" "not a tty"
}

@test "containerd: tasks exec -t and run -t get a terminal" {
	ctr_run -d --null-io c1 sleep 1000
	local ctr_cmd="/usr/bin/ctr --address $CTR_SOCK --namespace $CTR_NAMESPACE"
	run timeout 60 script -qec "$ctr_cmd tasks exec -t --exec-id e1 c1 sh -c 'tty; stty size'" /dev/null </dev/null
	assert_status 0
	assert_contains "$output" "/dev/pts/"
	run timeout 60 script -qec "$ctr_cmd run -t --rm --runc-binary $ENGINE_RUNTIME --cgroup $CGROUP_PARENT/c2 $CTR_IMAGE c2 sh -c 'tty; exit 4'" /dev/null </dev/null
	assert_status 4
	assert_contains "$output" "/dev/pts/0"
}

@test "containerd: run -t with a wrapper script as the runc binary" {
	# A wrapper that logs the runtime's stderr through tee, as people put
	# in BinaryName: bash leaves the process substitution's pipe (fd 63)
	# open, without close-on-exec, in the runtime. The shim waits for EOF
	# on create's output, which tee holds until every writer is gone: a
	# runtime whose waiting container init keeps inherited fds hangs the
	# create until `start`, which the shim never sends.
	local wrapper="$ENGINE_TMP/wrapper/$RUNTIME_NAME"
	mkdir -p "$(dirname "$wrapper")"
	cat >"$wrapper" <<-EOF2
	#!/bin/bash
	exec "$ENGINE_RUNTIME" "\$@" 2> >(tee -a "$ENGINE_TMP/wrapper.log" >&2)
	EOF2
	chmod +x "$wrapper"
	local ctr_cmd="/usr/bin/ctr --address $CTR_SOCK --namespace $CTR_NAMESPACE"
	run timeout 30 script -qec "$ctr_cmd run -t --rm --runc-binary $wrapper --cgroup $CGROUP_PARENT/wrapped $CTR_IMAGE wrapped sh -c 'tty; exit 4'" /dev/null </dev/null
	assert_status 4
	assert_contains "$output" "/dev/pts/0"
}

@test "containerd: tasks ps" {
	ctr_run -d --null-io c1 sh -c 'sleep 1000 & exec sleep 999'
	sleep 0.5
	local pid
	pid="$(task_pid c1)"
	run ctr tasks ps c1
	assert_status 0
	assert_contains "$output" "$pid"
	# two processes: the init and its child
	[ "$(grep -cE '^[0-9]+' <<<"$output")" -eq 2 ]
}

@test "containerd: tasks pause and resume" {
	ctr_run -d --null-io c1 sh -c 'i=0; while :; do i=$((i + 1)); echo $i >/count.new; mv /count.new /count; sleep 0.05; done'
	local root a b
	root="/proc/$(task_pid c1)/root"
	sleep 0.5
	run ctr tasks pause c1
	assert_status 0
	wait_task_status c1 PAUSED
	a="$(cat "$root/count")"
	sleep 0.5
	b="$(cat "$root/count")"
	[ "$a" = "$b" ] || { echo "counter moved while paused: $a -> $b" >&2; false; }
	run ctr tasks resume c1
	assert_status 0
	wait_task_status c1 RUNNING
	sleep 0.5
	b="$(cat "$root/count")"
	[ "$b" -gt "$a" ] || { echo "counter stuck after resume: $a -> $b" >&2; false; }
}

@test "containerd: tasks metrics" {
	ctr_run -d --null-io --memory-limit=67108864 c1 sleep 1000
	# the shim reads the cgroup of the task's pid: the runtime must have put
	# the process in the cgroup it configured
	run ctr tasks metrics --format json c1
	assert_status 0
	if [ -d /sys/fs/cgroup/memory ]; then
		# cgroup v1 metrics
		[ "$(jq -r '.memory.usage.limit' <<<"$output")" = 67108864 ]
		[ "$(jq -r '.pids.current' <<<"$output")" -eq 1 ]
	else
		[ "$(jq -r '.memory.usage_limit' <<<"$output")" = 67108864 ]
		[ "$(jq -r '.pids.current' <<<"$output")" -eq 1 ]
	fi
}

@test "containerd: tasks kill with a signal" {
	ctr_run -d --log-uri="file://$ENGINE_TMP/c1.log" c1 sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.1; done'
	for _ in $(seq 50); do
		grep -q ready "$ENGINE_TMP/c1.log" 2>/dev/null && break
		sleep 0.1
	done
	run ctr tasks kill --signal SIGUSR1 c1
	assert_status 0
	wait_task_status c1 STOPPED
	run grep got-usr1 "$ENGINE_TMP/c1.log"
	assert_status 0
	run ctr tasks delete c1
	assert_status 0
	assert_contains "$output" "exit code 7"
}

@test "containerd: memory limit and an OOM kill give 137" {
	# ctr's spec has no cgroup mount: read the limit on the host
	ctr_run -d --null-io --memory-limit=33554432 c1 sleep 1000
	if [ -d /sys/fs/cgroup/memory ]; then
		[ "$(cat "/sys/fs/cgroup/memory$CGROUP_PARENT/c1/memory.limit_in_bytes")" = 33554432 ]
	else
		[ "$(cat "/sys/fs/cgroup$CGROUP_PARENT/c1/memory.max")" = 33554432 ]
	fi
	run ctr_run --rm --memory-limit=33554432 c2 tail /dev/zero
	assert_status 137
}

@test "containerd: --read-only" {
	run ctr_run --rm --read-only c1 sh -c 'touch /f'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Read-only file system"
	run ctr_run --rm c2 sh -c 'touch /f && echo rw-ok'
	assert_status 0
	assert_contains "$output" "rw-ok"
}

@test "containerd: --cap-drop" {
	run ctr_run --rm --cap-drop=CAP_CHOWN c1 sh -c 'grep CapEff: /proc/self/status; touch /f; chown 1000 /f'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Operation not permitted"
	# ctr's default set is docker's (0xa80425fb); without CAP_CHOWN (bit 0)
	assert_contains "$output" "CapEff:	00000000a80425fa"
	run ctr_run --rm c2 sh -c 'touch /f; chown 1000 /f && echo chown-ok'
	assert_status 0
	assert_contains "$output" "chown-ok"
}

@test "containerd: --seccomp and --seccomp-profile" {
	cat >"$ENGINE_TMP/no-mkdir.json" <<-'EOF2'
	{
	  "defaultAction": "SCMP_ACT_ALLOW",
	  "syscalls": [
	    { "names": [ "mkdir", "mkdirat" ], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 }
	  ]
	}
	EOF2
	run ctr_run --rm --seccomp --seccomp-profile="$ENGINE_TMP/no-mkdir.json" c1 sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/d'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Seccomp:	2"
	assert_contains "$output" "Operation not permitted"
	# containerd's default profile: filtered, mkdir allowed
	run ctr_run --rm --seccomp c2 sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/d && echo mkdir-ok'
	assert_status 0
	assert_contains "$output" "Seccomp:	2"
	assert_contains "$output" "mkdir-ok"
	run ctr_run --rm c3 grep Seccomp: /proc/self/status
	assert_status 0
	assert_contains "$output" "Seccomp:	0"
}

@test "containerd: tasks delete --force of a running task cleans up (cgroupfs)" {
	ctr_run -d --null-io c1 sh -c 'sleep 1000 & exec sleep 999'
	local pid
	pid="$(task_pid c1)"
	[ -n "$pid" ]
	run ctr tasks delete --force c1
	assert_status 0
	assert_contains "$output" "exit code 137"
	run ctr tasks list --quiet
	[ -z "$output" ]
	# no process, no runtime state, no cgroup left
	if pid_alive "$pid"; then
		echo "pid $pid is still running: $(cat "/proc/$pid/stat" 2>/dev/null)" >&2
		false
	fi
	run "$ENGINE_RUNTIME" --root "$RUNTIME_ROOT" list --quiet
	[ -z "$output" ]
	local d
	for d in /sys/fs/cgroup/*"$CGROUP_PARENT/c1"; do
		[ ! -d "$d" ] || { echo "cgroup left: $d" >&2; false; }
	done
	run ctr containers delete c1
	assert_status 0
}

@test "containerd: the runtime's features JSON, as the shim reads it" {
	run "$ENGINE_RUNTIME" features
	assert_status 0
	jq -e '.ociVersionMin and .ociVersionMax and (.mountOptions | type == "array")
		and (.linux.namespaces | index("pid")) and (.linux.capabilities | index("CAP_SYS_ADMIN"))
		and (.linux.cgroup | type == "object") and (.linux.seccomp.enabled | type == "boolean")' <<<"$output"
}

@test "containerd: the shim's features call" {
	# containerd >= 2.0: `ctr plugins inspect-runtime` has the shim run
	# `containerd-shim-runc-v2 -info`, which runs `BINARY features`
	run "$SHIM" -info </dev/null
	if [[ "$output" == *"flag provided but not defined: -info"* ]]; then
		skip "containerd $(containerd --version | awk '{print $3}') shim has no features call: '$SHIM -info' says '${lines[0]}' (the call came with containerd 2.0)"
	fi
	run ctr plugins inspect-runtime --runtime io.containerd.runc.v2 --runc-binary "$ENGINE_RUNTIME"
	assert_status 0
	jq -e '.Features.ociVersionMax and (.Features.linux.namespaces | index("pid"))' <<<"$output"
}
