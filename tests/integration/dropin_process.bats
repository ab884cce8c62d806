#!/usr/bin/env bats
# Drop-in for runc, the process side (issue #16 items 4, 6, 9, 10, 11, 15):
#   - an exec'd process (and the init) has a session and process group of its
#     own, visible inside the container's pid namespace, and cannot signal
#     the runtime's process group on the host (item 4);
#   - ambient capabilities the kernel refuses (listed without inheritable,
#     as `runc spec` writes them) print nothing, only a debug line (item 6);
#   - a pty that brig proxies itself (foreground run/exec -t) passes "\n"
#     through untranslated; a console-socket pty keeps the kernel's ONLCR,
#     as runc (item 9);
#   - createContainer/startContainer hooks without env get the process's
#     environment, not the runtime's (item 10);
#   - an executable without the exec bit for the user runs when the process
#     holds CAP_DAC_OVERRIDE, as execve decides (item 11);
#   - process.env: a variable given twice is kept once (last value, first
#     place), an empty HOME= becomes the user's home (item 15).
# Every check is made from inside the container (or on what a hook saw).
# Any cgroup mode (v1, hybrid, v2): no cgroup is looked at.
# RUNTIME=/usr/sbin/runc runs the same tests against runc 1.1.

load helpers

RECVTTY="${RECVTTY:-${BUILDDIR:-$SRCDIR}/tests/tools/recvtty}"

setup() {
	requires root
	setup_bundle
	RECVTTY_PID= SLEEP_PID=
}

teardown() {
	if [ -n "${RECVTTY_PID:-}" ]; then
		kill "$RECVTTY_PID" 2>/dev/null || true
		wait "$RECVTTY_PID" 2>/dev/null || true
	fi
	if [ -n "${SLEEP_PID:-}" ] && process_alive "$SLEEP_PID"; then
		kill "$SLEEP_PID" 2>/dev/null || true
	fi
	teardown_bundle
}

# stat_fields PID_FILE: "pid pgrp session" from a /proc/N/stat line on stdin
# (the command name holds no space here).
stat_fields() {
	awk '{ print $1, $5, $6 }'
}

# tty_text FILE: what a proxied pty wrote, without what script(1) typed into
# it: a NUL at the end of its input, echoed by the pty as "^@" (runc's and
# brig's alike; it may come before, after or amid the output).
tty_text() {
	tr -d '\0' <"$1" | sed 's/\^@//g'
}

@test "dropin: an exec'd process leads its own session and process group" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	local f
	f="$(brig exec ctr cat /proc/self/stat | stat_fields)"
	echo "exec: pid pgrp sid = $f"
	set -- $f
	# Not 0 (a group outside the pid namespace), and its own, as runc's setsid.
	[ "$1" -gt 1 ]
	[ "$2" = "$1" ]
	[ "$3" = "$1" ]
	# The init likewise.
	f="$(brig exec ctr cat /proc/1/stat | stat_fields)"
	echo "init: pid pgrp sid = $f"
	[ "$f" = "1 1 1" ]
}

# in_own_session CMD...: run the runtime with CMD in a new session (setsid)
# beside a host `sleep` of the same process group, whose pid goes to
# $SLEEP_PID; only processes of this test are in that group.
in_own_session() {
	setsid -w bash -c 'sleep 60 & echo $! >"$1/sleep.pid"; shift
		"$@" >"$BUNDLE/session.out" 2>&1; echo "rc=$?" >>"$BUNDLE/session.out"' \
		sh "$BUNDLE" "$RUNTIME" --root "$ROOT" "$@" </dev/null || true
	SLEEP_PID="$(cat "$BUNDLE/sleep.pid")"
	cat "$BUNDLE/session.out" 2>/dev/null || true
}

@test "dropin: a process in the container cannot signal the runtime's process group" {
	# kill(0, SIGTERM) signals the caller's process group: with the group
	# brig had, that was brig, its caller and whatever else ran in that job
	# on the host.
	update_config '.process.args = ["kill", "-TERM", "0"]'
	in_own_session run ctr
	process_alive "$SLEEP_PID"
	grep -qx 'rc=0' "$BUNDLE/session.out"
	kill "$SLEEP_PID"

	# The same from an exec'd process.
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr2
	in_own_session exec ctr2 kill -TERM 0
	process_alive "$SLEEP_PID"
	# Its group is itself: it got the SIGTERM (128+15), as in runc.
	grep -qx 'rc=143' "$BUNDLE/session.out"
	# (the container's own init was not in that group either)
	[ "$(brig state ctr2 | jq -r .status)" = running ]
}

@test "dropin: ambient capabilities that cannot be raised are not warned about" {
	# `runc spec`'s capabilities: ambient without inheritable.
	update_config '.process.capabilities = {
		"bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"] }
		| .process.args = ["grep", "^CapAmb:", "/proc/self/status"]'
	brig run ctr >"$BUNDLE/out" 2>"$BUNDLE/err" </dev/null
	echo "stdout: $(cat "$BUNDLE/out")"
	echo "stderr: $(cat "$BUNDLE/err")"
	# The kernel refused them: none is ambient inside ...
	grep -qE '^CapAmb:[[:space:]]+0+$' "$BUNDLE/out"
	# ... and that is no news worth a line on every run.
	[ ! -s "$BUNDLE/err" ]
	if is_brig; then
		# With --debug it is still in the log.
		"$RUNTIME" --root "$ROOT" --debug --log "$BUNDLE/debug.log" run ctr2 \
			>/dev/null 2>"$BUNDLE/err2" </dev/null
		[ ! -s "$BUNDLE/err2" ]
		grep -qi 'cannot raise ambient capability CAP_KILL' "$BUNDLE/debug.log"
	fi
}

@test "dropin: a foreground run -t passes newlines through without carriage returns" {
	requires program:script
	update_config '.process.terminal = true
		| .process.args = ["printf", "one\ntwo\n"]'
	# script(1) gives the runtime a terminal; its stdout goes to a file, so
	# what is there came from the container's pty alone.
	script -qec "$RUNTIME --root $ROOT run ctr >$BUNDLE/out" /dev/null </dev/null
	od -c "$BUNDLE/out"
	[ "$(tty_text "$BUNDLE/out")" = "$(printf 'one\ntwo')" ]
	! grep -q $'\r' "$BUNDLE/out" || false
}

@test "dropin: exec -t in the foreground clears ONLCR, a console-socket pty keeps it" {
	requires program:script
	need_built "$RECVTTY"
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	script -qec "$RUNTIME --root $ROOT exec -t ctr printf 'one\ntwo\n' >$BUNDLE/out" /dev/null </dev/null
	od -c "$BUNDLE/out"
	[ "$(tty_text "$BUNDLE/out")" = "$(printf 'one\ntwo')" ]
	! grep -q $'\r' "$BUNDLE/out" || false

	# A pty sent over --console-socket is the receiver's: the kernel's
	# defaults, as runc leaves them.
	local sock="$BUNDLE/console.sock" i
	"$RECVTTY" --mode single --timeout 30 --pid-file "$BUNDLE/recvtty.pid" "$sock" \
		</dev/null >"$BUNDLE/cs.out" 2>"$BUNDLE/cs.err" 3>&- &
	RECVTTY_PID=$!
	for i in $(seq 100); do
		[ -s "$BUNDLE/recvtty.pid" ] && break
		sleep 0.05
	done
	brig exec -t -d --console-socket "$sock" ctr printf 'one\ntwo\n'
	wait "$RECVTTY_PID" || true
	RECVTTY_PID=
	od -c "$BUNDLE/cs.out"
	[ "$(cat "$BUNDLE/cs.out")" = "$(printf 'one\r\ntwo\r')" ]
}

@test "dropin: createContainer and startContainer hooks without env get the process's environment" {
	mkdir -p "$BUNDLE/rootfs/hooklog"
	# startContainer runs as the process's user (here 1000), as in runc.
	chmod 1777 "$BUNDLE/rootfs/hooklog"
	# The hook is busybox's cp copying its own /proc/self/environ: the
	# environment execve gave it, as it is (a shell would show its own view).
	# createContainer runs before pivot_root (host paths), startContainer
	# after it (container paths).
	update_config "$(printf '.process.args = ["true"]
		| .process.user = { "uid": 1000, "gid": 1000 }
		| .process.env = ["PATH=/bin:/usr/bin", "FROM_CONFIG=yes", "DUP=1", "DUP=2"]
		| .hooks = {
			"createContainer": [{ "path": "%s",
				"args": ["cp", "/proc/self/environ", "%s"] }],
			"startContainer": [{ "path": "/bin/busybox",
				"args": ["cp", "/proc/self/environ", "/hooklog/start.raw"] }] }' \
		"$BUNDLE/rootfs/bin/busybox" "$BUNDLE/rootfs/hooklog/create.raw")"
	FROM_RUNTIME=leak brig run ctr </dev/null
	for h in create start; do
		tr '\0' '\n' <"$BUNDLE/rootfs/hooklog/$h.raw" >"$BUNDLE/rootfs/hooklog/$h"
		echo "--- $h:"
		cat "$BUNDLE/rootfs/hooklog/$h"
		grep -qx 'FROM_CONFIG=yes' "$BUNDLE/rootfs/hooklog/$h"
		grep -qx 'PATH=/bin:/usr/bin' "$BUNDLE/rootfs/hooklog/$h"
		grep -qx 'DUP=2' "$BUNDLE/rootfs/hooklog/$h"
		[ "$(grep -c '^DUP=' "$BUNDLE/rootfs/hooklog/$h")" -eq 1 ]
		! grep -q '^FROM_RUNTIME=' "$BUNDLE/rootfs/hooklog/$h" || false
	done
	# startContainer: the process's final environment, HOME included.
	grep -qx 'HOME=/home' "$BUNDLE/rootfs/hooklog/start"
}

@test "dropin: CAP_DAC_OVERRIDE runs an executable without the exec bit for the user" {
	mkdir -p "$BUNDLE/rootfs/opt"
	# busybox runs the applet named by argv[0]: /opt/echo is echo, 0700 root.
	cp "$BUNDLE/rootfs/bin/busybox" "$BUNDLE/rootfs/opt/echo"
	chmod 0700 "$BUNDLE/rootfs/opt/echo"
	update_config '.process.user = { "uid": 1000, "gid": 1000 }
		| .process.capabilities = { "bounding": ["CAP_DAC_OVERRIDE"],
			"effective": ["CAP_DAC_OVERRIDE"], "permitted": ["CAP_DAC_OVERRIDE"] }
		| .process.args = ["/opt/echo", "ran by path"]'
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ran by path" ]
	# Found through PATH too (and no other echo on it).
	update_config '.process.env = ["PATH=/opt"] | .process.args = ["echo", "ran by PATH"]'
	run brig run ctr2 </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ran by PATH" ]
	# Without the capability the kernel says no, and so does the runtime.
	update_config '.process.capabilities = {} | .process.args = ["/opt/echo", "must not run"]'
	run brig run ctr3 </dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	assert_contains "$output" "ermission denied"
	# A seccomp filter loaded before the lookup (no noNewPrivileges) that
	# refuses faccessat2 (profiles older than it) does not break the search.
	update_config '.process.noNewPrivileges = false
		| .process.env = ["PATH=/bin"] | .process.args = ["echo", "found"]
		| .linux.seccomp = { "defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
			{ "names": ["faccessat2"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 } ] }'
	run brig run ctr4 </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = found ]
}

@test "dropin: a variable given twice is kept once, an empty HOME is the user's home" {
	update_config '.process.user = { "uid": 1000, "gid": 1000 }
		| .process.env = ["PATH=/bin", "FOO=1", "HOME=", "BAR=x", "FOO=2"]
		| .process.args = ["cat", "/proc/self/environ"]'
	local env
	# (through tr: a shell variable cannot hold the NULs)
	env="$(brig run ctr </dev/null | tr '\0' ' ')"
	echo "env: $env"
	# runc's order: first place, last value; HOME from /etc/passwd (guest).
	[ "$env" = "PATH=/bin FOO=2 HOME=/home BAR=x " ]

	# A uid without a passwd entry: HOME=/, added at the end when missing.
	update_config '.process.user = { "uid": 5000, "gid": 5000 }
		| .process.env = ["PATH=/bin", "FOO=1", "FOO=2", "FOO=3"]'
	env="$(brig run ctr2 </dev/null | tr '\0' ' ')"
	echo "env: $env"
	[ "$env" = "PATH=/bin FOO=3 HOME=/ " ]

	# exec builds the environment the same way.
	update_config '.process.user = { "uid": 0, "gid": 0 }
		| .process.env = ["PATH=/bin", "HOME="] | .process.args = ["sleep", "100"]'
	run_detached ctr3
	env="$(brig exec ctr3 cat /proc/self/environ | tr '\0' ' ')"
	echo "exec env: $env"
	[ "$env" = "PATH=/bin HOME=/root " ]
}
