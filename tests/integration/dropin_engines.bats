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
	need_built "$NET_PROBE"
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

# as_caller_with_groups GIDS ARGS...: the runtime with ARGS, run by a root
# whose supplementary groups are exactly GIDS (comma-separated), as podman's
# conmon would be for a user's groups.
as_caller_with_groups() {
	local gids="$1"
	shift
	setpriv --groups "$gids" -- timeout -k 5 "$BRIG_CMD_TIMEOUT" "$RUNTIME" --root "$ROOT" "$@"
}

@test "keep_original_groups: the process keeps the caller's groups and can use them" {
	requires program:setpriv
	# A file only group 27 may read.
	echo secret27 >"$BUNDLE/rootfs/g27"
	chown 0:27 "$BUNDLE/rootfs/g27"
	chmod 0640 "$BUNDLE/rootfs/g27"
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'grep "^Groups:" /proc/self/status; cat /g27 || echo denied'
	# Without the annotation brig drops them, as runc.
	run as_caller_with_groups 5,27 run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^Groups:[[:space:]]*$ ]]
	assert_contains "$output" denied
	# With it (podman --group-add keep-groups), the process holds 5 and 27
	# and reads the file through 27.
	update_config '.annotations["run.oci.keep_original_groups"] = "1"'
	run as_caller_with_groups 5,27 run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^Groups:[[:space:]]*5\ 27[[:space:]]*$ ]]
	[ "${lines[1]}" = secret27 ]
	# additionalGids come on top of them.
	update_config '.process.user.additionalGids = [100, 27]'
	run as_caller_with_groups 5,27 run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^Groups:[[:space:]]*5\ 27\ 100[[:space:]]*$ ]]
	# Engines learn that it loosens a boundary.
	brig features | jq -e '.potentiallyUnsafeConfigAnnotations | index("run.oci.keep_original_groups")'
}

@test "keep_original_groups: exec keeps the exec caller's groups" {
	requires program:setpriv
	update_config '.annotations["run.oci.keep_original_groups"] = "true" | .process.args = ["sleep", "100"]'
	run_detached ctr
	run as_caller_with_groups 29 exec --user 1000:1000 ctr grep "^Groups:" /proc/self/status
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^Groups:[[:space:]]*29[[:space:]]*$ ]]
}

@test "keep_original_groups: refused where a kept group would hide in a user namespace" {
	requires program:setpriv
	update_config '.annotations["run.oci.keep_original_groups"] = "1"
		| .linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args sh -c 'grep "^Groups:" /proc/self/status'
	# Host group 27 is not mapped: inside it would read as 65534 and still
	# open what host group 27 may open.
	run as_caller_with_groups 27 run ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "annotation run.oci.keep_original_groups: the caller's group 27 is not mapped"
	assert_no_leftovers ctr
	# A mapped one is kept under its container id.
	run as_caller_with_groups 100027 run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^Groups:[[:space:]]*27[[:space:]]*$ ]]
	# A value that is neither on nor off is an error naming the annotation.
	update_config '.annotations["run.oci.keep_original_groups"] = "yes"'
	run brig run ctr </dev/null
	[ "$status" -eq 1 ]
	assert_contains "$output" 'annotation run.oci.keep_original_groups: "yes" is not 1, true, 0 or false'
}

@test "keep_original_groups: brig check names host gid 0 among the groups it would keep" {
	requires program:setpriv
	update_config '.process.user = {"uid": 1000, "gid": 1000}
		| .annotations["run.oci.keep_original_groups"] = "1"'
	run setpriv --groups 0,5 -- "$RUNTIME" check --bundle "$BUNDLE" --format json
	echo "$output"
	[ "$(jq -r '[.findings[] | select(.rule == "root-user") | .path] | join(",")' <<<"$output")" = 'annotations["run.oci.keep_original_groups"]' ]
	# A caller without group 0 keeps nothing of the host's root.
	run setpriv --groups 5 -- "$RUNTIME" check --bundle "$BUNDLE" --format json
	[ "$(jq '[.findings[] | select(.rule == "root-user")] | length' <<<"$output")" -eq 0 ]
}
