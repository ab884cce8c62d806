#!/usr/bin/env bats
# Drop-in for runc under systemd (#16 items 8, 20 and 21):
#   NOTIFY_SOCKET (sd_notify): the container sees a socket at
#     /run/notify/notify.sock (a read-only bind of ROOT/ID/notify), and what
#     it sends reaches the caller's NOTIFY_SOCKET (a datagram listener of the
#     test) with MAINPID added: the init's pid for `start` and `run -d`,
#     brig's own for a foreground `run`; the container's own MAINPID,
#     NOTIFYACCESS and FDSTORE lines are not relayed (podman
#     --sdnotify=container through brig: tests/engines/podman.bats). A
#     NOTIFY_SOCKET that does not exist yet holds nothing up: relayed once
#     it is there (#26 item 9, as crun).
#   contrib/install-deps.sh installs what the VM suites need (debootstrap:
#     the systemd VM ran nowhere but on hand-prepared machines).
#   tests/conformance/isolate.sh joins its test cgroup when the cgroup2
#     root delegates controllers (runs where the test may enable them in the
#     root: the pure v2 VM, tests/vm/run.sh, or a host whose root already
#     has them; skips elsewhere).
# The NOTIFY_SOCKET tests cover any cgroup mode.

load helpers
load confine_helpers

SDNOTIFY="$CONFINE_TOOLS/sdnotify"

setup() {
	requires root
	setup_bundle
}

# notify_setup [later]: the sd_notify client in the rootfs (/bin/sdnotify)
# and a systemd-style listener at $HOST_SOCK (see listen); with "later" the
# test starts the listener itself.
notify_setup() {
	need_built "$SDNOTIFY"
	# the listener (not in the pure v2 VM: see tests/skips.allowed)
	requires program:python3
	cp "$SDNOTIFY" "$BUNDLE/rootfs/bin/sdnotify"
	NOTIFY_DIR="$(test_tmpdir notify)"
	HOST_SOCK="$NOTIFY_DIR/host.sock"
	GOT="$NOTIFY_DIR/got"
	[ "${1:-}" = later ] || listen
}

teardown() {
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	teardown_bundle
	[ -n "${NOTIFY_DIR:-}" ] && rm -rf "$NOTIFY_DIR"
	[ -n "${ISOLATE_NAME:-}" ] && isolate_cleanup
	return 0
}

# listen: a systemd-style NOTIFY_SOCKET at $HOST_SOCK; every datagram is
# appended to $GOT as one JSON string per line. fds that come with a
# datagram (BARRIER=1) are closed by the kernel unread: the barrier is
# answered, as systemd answers it.
listen() {
	/usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".ready", "w").close()
with open(sys.argv[2], "a") as out:
    while True:
        m = s.recv(65536)
        out.write(json.dumps(m.decode("utf-8", "replace")) + "\n")
        out.flush()
' "$HOST_SOCK" "$GOT" &
	LISTENER_PID=$!
	local i
	for i in $(seq 100); do
		[ -e "$HOST_SOCK.ready" ] && return 0
		sleep 0.05
	done
	echo "the listener did not start" >&2
	return 1
}

# messages: the datagrams received so far, each as its lines joined by "|".
messages() {
	[ -f "$GOT" ] || return 0
	jq -r 'split("\n") | map(select(. != "")) | join("|")' "$GOT"
}

@test "notify: run -d waits for READY=1 and relays it with the init's pid as MAINPID" {
	notify_setup
	# The process first reports a status, then (after a second) claims to be
	# ready and names pid 1 of the host as the main pid.
	set_args sh -c 'echo "$NOTIFY_SOCKET" >/tmp/env
		touch /run/notify/x 2>/tmp/touch; echo $? >>/tmp/touch
		sdnotify STATUS=starting
		sleep 1
		sdnotify "$(printf "MAINPID=1\nSTATUS=up\nREADY=1")"
		exec sleep 1000'
	local t0=$SECONDS
	NOTIFY_SOCKET="$HOST_SOCK" run_detached n1
	local pid
	pid="$(brig state n1 | jq -r .pid)"
	# run -d returned only once READY=1 had reached the listener.
	run messages
	echo "$output"
	[ "${lines[0]}" = "STATUS=starting" ]
	[ "${lines[1]}" = "MAINPID=$pid|STATUS=up|READY=1" ]
	# sd_notify_barrier(3): brig waited for the listener to take them.
	[ "${lines[2]}" = "BARRIER=1" ]
	[ "${#lines[@]}" -eq 3 ]
	[ $((SECONDS - t0)) -ge 1 ]
	# Inside: the socket's path, on a read-only mount.
	run brig exec n1 sh -c 'cat /tmp/env; cat /tmp/touch; ls -l /run/notify/notify.sock'
	echo "$output"
	[ "${lines[0]}" = /run/notify/notify.sock ]
	assert_contains "${lines[1]}" "Read-only file system"
	[ "${lines[2]}" = 1 ]
	[[ "${lines[3]}" == srwxrwxrwx* ]]
	brig delete -f n1
	assert_no_leftovers n1
}

@test "notify: start relays READY=1 of a created container with the init's pid as MAINPID" {
	notify_setup
	set_args sh -c 'sdnotify READY=1; exec sleep 1000'
	NOTIFY_SOCKET="$HOST_SOCK" create_container n2
	# Nothing is sent before start.
	[ -z "$(messages)" ]
	NOTIFY_SOCKET="$HOST_SOCK" brig start n2
	local pid
	pid="$(brig state n2 | jq -r .pid)"
	run messages
	echo "$output"
	[ "${lines[0]}" = "MAINPID=$pid|READY=1" ]
	[ "${lines[1]}" = "BARRIER=1" ]
	[ "${#lines[@]}" -eq 2 ]
	brig delete -f n2
	assert_no_leftovers n2
}

@test "notify: only the container's state reaches the host, never MAINPID, NOTIFYACCESS or FDSTORE" {
	notify_setup
	set_args sh -c 'sdnotify "$(printf "MAINPID=1\nNOTIFYACCESS=all\nFDSTORE=1\nFDNAME=x\nSTATUS=a")"
		sdnotify "MAINPID=1"
		sdnotify "$(printf "STATUS=b\nREADY=1")"
		exec sleep 1000'
	NOTIFY_SOCKET="$HOST_SOCK" run_detached n3
	local pid
	pid="$(brig state n3 | jq -r .pid)"
	run messages
	echo "$output"
	[ "${lines[0]}" = "STATUS=a" ]
	[ "${lines[1]}" = "MAINPID=$pid|STATUS=b|READY=1" ]
	[ "${lines[2]}" = "BARRIER=1" ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "notify: a foreground run relays READY=1 with its own pid as MAINPID" {
	notify_setup
	set_args sh -c 'sdnotify READY=1; exit 3'
	local rc=0
	NOTIFY_SOCKET="$HOST_SOCK" "$RUNTIME" --root "$ROOT" run n4 </dev/null &
	local bpid=$!
	wait "$bpid" || rc=$?
	[ "$rc" -eq 3 ]
	run messages
	echo "$output"
	[ "${lines[0]}" = "MAINPID=$bpid|READY=1" ]
	[ "${lines[1]}" = "BARRIER=1" ]
	[ "${#lines[@]}" -eq 2 ]
	assert_no_leftovers n4
}

@test "notify: a container that exits before READY=1 does not hang run -d" {
	notify_setup
	set_args sh -c 'sdnotify STATUS=failing; exit 1'
	NOTIFY_SOCKET="$HOST_SOCK" run_detached n5
	wait_for_status n5 stopped
	run messages
	[ "$output" = "STATUS=failing" ]
	brig delete n5
	assert_no_leftovers n5
}

@test "notify: a NOTIFY_SOCKET that is not a socket path fails create and leaves nothing" {
	set_args true
	local rc=0
	NOTIFY_SOCKET="relative/sock" create_container n6 || rc=$?
	[ "$rc" -eq 1 ]
	assert_contains "$(cat "$BUNDLE/n6.err")" "NOTIFY_SOCKET"
	assert_no_leftovers n6
}

# #26 item 9: crun runs the container when NOTIFY_SOCKET names a socket
# that is not there yet, and relays once it is.
@test "notify: a NOTIFY_SOCKET that does not exist yet: run -d runs the container and relays READY=1 once the socket is there" {
	notify_setup later
	mkdir "$NOTIFY_DIR/ctl"
	add_mount '{"destination": "/ctl", "type": "bind", "source": "'"$NOTIFY_DIR/ctl"'", "options": ["bind"]}'
	set_args sh -c 'sdnotify STATUS=early
		while [ ! -e /ctl/go ]; do sleep 0.05; done
		sdnotify READY=1; exec sleep 1000'
	local runner rc=0 pid
	NOTIFY_SOCKET="$HOST_SOCK" "$RUNTIME" --root "$ROOT" run -d n7 </dev/null \
		>"$BUNDLE/n7.out" 2>"$BUNDLE/n7.err" &
	runner=$!
	wait_for_status n7 running
	pid="$(brig state n7 | jq -r .pid)"
	# the container runs (its first datagram had nowhere to go)
	process_alive "$pid"
	listen
	touch "$NOTIFY_DIR/ctl/go"
	wait "$runner" || rc=$?
	cat "$BUNDLE/n7.err"
	[ "$rc" -eq 0 ]
	run messages
	echo "$output"
	[[ "$output" == *"MAINPID=$pid|READY=1"* ]]
	[ "${lines[-1]}" = "BARRIER=1" ]
	brig delete -f n7
	assert_no_leftovers n7
}

@test "notify: start of a container whose NOTIFY_SOCKET never appears is not held up" {
	need_built "$SDNOTIFY"
	cp "$SDNOTIFY" "$BUNDLE/rootfs/bin/sdnotify"
	NOTIFY_DIR="$(test_tmpdir notify)"
	set_args sh -c 'sdnotify READY=1; echo up >/tmp/up; exec sleep 1000'
	NOTIFY_SOCKET="$NOTIFY_DIR/none.sock" create_container n8
	local t0=$SECONDS
	NOTIFY_SOCKET="$NOTIFY_DIR/none.sock" run brig start n8
	echo "$output"
	[ "$status" -eq 0 ]
	[ $((SECONDS - t0)) -lt 10 ]
	# the process ran past its READY=1
	run brig exec n8 cat /tmp/up
	[ "$output" = up ]
	brig delete -f n8
	assert_no_leftovers n8
}

# ---- #16 item 21: the systemd VM suite runs on a fresh machine ----

@test "install-deps.sh installs every program the VM suites check for" {
	requires program:dpkg-query program:dpkg
	local f cmd path pkg missing=""
	# Every `command -v NAME` of tests/vm/*.sh: the package that ships NAME
	# on this host must be in install-deps.sh's list (or be Essential).
	for cmd in $(sed -n 's/.*command -v \([a-z0-9._-]*\).*/\1/p' "$SRCDIR"/tests/vm/*.sh | sort -u); do
		path="$(command -v "$cmd")" || { missing+=" $cmd(not-installed)"; continue; }
		path="$(readlink -f "$path")"
		pkg="$(dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null)" ||
			{ missing+=" $cmd(no-package)"; continue; }
		pkg="${pkg%%:*}"
		[ "$(dpkg-query -W -f='${Essential}' "$pkg" 2>/dev/null)" = yes ] && continue
		grep -qE "^[[:space:]]+([a-z0-9.+-]+ )*$pkg( |\$)" "$SRCDIR/contrib/install-deps.sh" ||
			missing+=" $cmd($pkg)"
	done
	echo "missing:$missing"
	[ -z "$missing" ]
}

# ---- #16 item 20: the conformance harness under a delegating cgroup2 root ----

isolate_cleanup() {
	"$SRCDIR/tests/conformance/isolate.sh" cleanup "$ISOLATE_NAME" >/dev/null 2>&1
	"$SRCDIR/tests/conformance/isolate.sh" cleanup-parent >/dev/null 2>&1
	[ -n "${ROOT_SUBTREE_BEFORE+x}" ] && restore_root_subtree
	return 0
}

# The cgroup2 root's subtree_control as it was before the test (the VM's
# init leaves it empty; a host's stays as it is).
restore_root_subtree() {
	local c
	for c in $(cat /sys/fs/cgroup/cgroup.subtree_control); do
		[[ " $ROOT_SUBTREE_BEFORE " == *" $c "* ]] ||
			echo "-$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	done
}

@test "isolate.sh: a conformance test joins its cgroup when the cgroup2 root delegates controllers" {
	requires cgroup_v2 program:unshare
	[ "$(cat /proc/self/cgroup)" = "0::/" ] ||
		skip "the harness must run in the cgroup2 root (it does in the pure v2 VM)"
	ROOT_SUBTREE_BEFORE="$(cat /sys/fs/cgroup/cgroup.subtree_control)"
	if [ -z "$ROOT_SUBTREE_BEFORE" ]; then
		# Only where changing the root is ours to do: the VM.
		[ "${BRIG_VM:-0}" = 1 ] ||
			skip "the cgroup2 root delegates no controller here (the pure v2 VM enables them)"
		local c
		for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
			echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control
		done
	fi
	[ -n "$(cat /sys/fs/cgroup/cgroup.subtree_control)" ]
	ISOLATE_NAME="dropin-$$"
	run "$SRCDIR/tests/conformance/isolate.sh" run "$ISOLATE_NAME" 60 "$RUNTIME" "$ROOT" -- \
		sh -c 'cat /proc/self/cgroup; cat /sys/fs/cgroup/cgroup.subtree_control'
	echo "$output"
	[ "$status" -eq 0 ]
	# In its cgroup namespace: a leaf below the namespace root, whose
	# controllers are delegated to the containers the test makes.
	[ "${lines[0]}" = "0::/conformance-harness" ]
	[ -n "${lines[1]}" ]
}
