#!/usr/bin/env bats
# Drop-in, round 2 (issue 26 items 11-15): what engines and users of crun
# and runc rely on.
#   - socket activation: a listening socket handed to brig by a
#     systemd-style activator reaches the container as fd 3, with
#     LISTEN_FDS, LISTEN_PID (the process's own pid inside) and
#     LISTEN_FDNAMES; the container accepts a connection on it (item 11);
#   - run.oci.keep_original_groups (podman --group-add keep-groups): the
#     process keeps the caller's supplementary groups (item 12);
#   - a new user namespace without mappings (item 13);
#   - stdio pipes handed to a process running as uid:gid belong to both
#     (item 14);
#   - `state` (and `list`) while `create` runs: the container does not exist
#     until create has finished, as runc and crun answer (item 15).
# Every check is made from inside the container where there is one. Any
# cgroup mode; traffic only on the host's loopback.

load helpers
load confine_helpers

NET_PROBE="$CONFINE_TOOLS/net_probe"

setup() {
	requires root
	setup_bundle
	ACTIVATOR_PID=
}

teardown() {
	# a create held by the hook of the state test lets go at once
	[ -n "${BUNDLE:-}" ] && [ -d "$BUNDLE" ] && touch "$BUNDLE/hook.go"
	if [ -n "${ACTIVATOR_PID:-}" ]; then
		kill "$ACTIVATOR_PID" 2>/dev/null || true
		wait "$ACTIVATOR_PID" 2>/dev/null || true
	fi
	teardown_bundle
}

# connect_and_read PORT: connect to 127.0.0.1:PORT (retrying while nothing
# listens yet) and print the first line the peer sends (10 s at most).
connect_and_read() {
	local port="$1" tries=100 line=
	while [ "$tries" -gt 0 ]; do
		if exec 5<>"/dev/tcp/127.0.0.1/$port"; then
			read -r -t 10 line <&5 || true
			exec 5<&-
			echo "$line"
			return 0
		fi 2>/dev/null
		sleep 0.1
		tries=$((tries - 1))
	done
	echo "nothing listens on 127.0.0.1:$port" >&2
	return 1
}

@test "socket activation: the container accepts a connection on the socket systemd passed" {
	requires program:systemd-socket-activate
	[ -x "$NET_PROBE" ] || skip "build tests/tools/net_probe first (make tests/tools/net_probe)"
	cp "$NET_PROBE" "$BUNDLE/rootfs/bin/net_probe"
	set_args sh -c 'echo "fds=$LISTEN_FDS pid=$LISTEN_PID names=$LISTEN_FDNAMES"; exec /bin/net_probe accept 3'
	# A free port on loopback: the activator fails at once on a taken one.
	local port got
	for port in $(shuf -i 20000-60000 -n 20); do
		systemd-socket-activate -l "127.0.0.1:$port" --fdname=web -- \
			"$RUNTIME" --root "$ROOT" run ctr >"$BUNDLE/out" 2>&1 &
		ACTIVATOR_PID=$!
		sleep 0.2
		process_alive "$ACTIVATOR_PID" && break
		ACTIVATOR_PID=
	done
	[ -n "$ACTIVATOR_PID" ]
	got="$(connect_and_read "$port")"
	wait "$ACTIVATOR_PID"
	ACTIVATOR_PID=
	cat "$BUNDLE/out"
	# The connection was accepted inside the container, on fd 3 ...
	[ "$got" = "hello from the container" ]
	grep -qx "accepted on fd 3" "$BUNDLE/out"
	# ... which saw the protocol's variables: its own pid (1 in its pid
	# namespace) and the name the activator gave the fd.
	grep -qx "fds=1 pid=1 names=web" "$BUNDLE/out"
}

@test "stdio: pipes handed to a process running as uid:gid belong to both" {
	update_config '.process.user = {"uid": 1000, "gid": 1001}'
	set_args sh -c 'stat -L -c "out=%u:%g" /proc/self/fd/1; stat -L -c "err=%u:%g" /proc/self/fd/2; stat -L -c "in=%u:%g" /proc/self/fd/0'
	# bats captures stdout and stderr through pipes made by root
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "out=1000:1001"
	assert_contains "$output" "err=1000:1001"
	# /dev/null is the host's: left alone
	assert_contains "$output" "in=0:0"
}

@test "state during create: the container does not exist until create has finished" {
	requires command:create
	# A createRuntime hook holds create until the test lets it go.
	update_config '.hooks.createRuntime = [{"path": "/bin/sh", "args": ["sh", "-c",
		"touch '"$BUNDLE"'/hook.started; i=0; while [ ! -e '"$BUNDLE"'/hook.go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"]}]'
	update_config '.process.args = ["sleep", "100"]'
	brig create ctr </dev/null >"$BUNDLE/create.out" 2>&1 &
	local create_pid=$! i=0
	while [ ! -e "$BUNDLE/hook.started" ] && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$BUNDLE/hook.started" ]
	# runc's answer for a container it cannot load yet: an error, status 1.
	run brig state ctr
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "does not exist"
	# list leaves it out (runc skips what it cannot load), -q too.
	run brig list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run brig list --format json
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -eq 0 ]
	touch "$BUNDLE/hook.go"
	wait "$create_pid"
	cat "$BUNDLE/create.out"
	# Once create is done, it is there.
	[ "$(brig state ctr | jq -r .status)" = created ]
	[ "$(brig list -q)" = ctr ]
}
