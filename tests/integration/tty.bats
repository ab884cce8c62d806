#!/usr/bin/env bats
# Terminals: process.terminal with --console-socket (the pty master goes to
# recvtty over SCM_RIGHTS), /dev/console, consoleSize, input, the controlling
# terminal, the foreground proxy, and the flag combinations runc refuses.

load helpers

RECVTTY="${RECVTTY:-${BUILDDIR:-$SRCDIR}/tests/tools/recvtty}"

setup() {
	requires root
	need_built "$RECVTTY"
	setup_bundle
	SOCKDIR="$(test_tmpdir sock)"
	SOCK="$SOCKDIR/console.sock"
	RECVTTY_PID=
}

teardown() {
	if [ -n "${RECVTTY_PID:-}" ]; then
		kill "$RECVTTY_PID" 2>/dev/null || true
		wait "$RECVTTY_PID" 2>/dev/null || true
	fi
	teardown_bundle
	# (a skipped setup leaves no SOCKDIR: teardown must still succeed)
	[ -z "${SOCKDIR:-}" ] || rm -rf "$SOCKDIR"
}

# start_recvtty [INPUT]: receive one pty on $SOCK; what the process prints
# goes to $SOCKDIR/out, INPUT (a file, default empty) is typed into it.
start_recvtty() {
	local input="${1:-/dev/null}" i
	"$RECVTTY" --mode single --timeout 30 --pid-file "$SOCKDIR/recvtty.pid" "$SOCK" \
		<"$input" >"$SOCKDIR/out" 2>"$SOCKDIR/err" 3>&- &
	RECVTTY_PID=$!
	for i in $(seq 100); do
		[ -s "$SOCKDIR/recvtty.pid" ] && return 0
		sleep 0.05
	done
	echo "recvtty did not start: $(cat "$SOCKDIR/err")" >&2
	return 1
}

# wait_recvtty: wait until the pty's last user is gone; $tty_out holds what
# the process printed, without the pty's carriage returns.
wait_recvtty() {
	local rc=0
	wait "$RECVTTY_PID" || rc=$?
	RECVTTY_PID=
	tty_out="$(tr -d '\r' <"$SOCKDIR/out")"
	echo "recvtty exit $rc, output:" >&2
	echo "$tty_out" >&2
	cat "$SOCKDIR/err" >&2
	[ "$rc" -eq 0 ]
}

@test "tty: the process's stdio is a pty from the container's devpts, sent over the console socket" {
	update_config '.process.terminal = true
		| .process.consoleSize = { "height": 37, "width": 111 }
		| .process.args = ["sh", "-c",
			"echo tty=$(tty); echo size=$(stty size); echo err=$(readlink /proc/self/fd/2); if echo -n >/dev/tty; then echo ctty=yes; fi"]'
	start_recvtty
	run brig run -d --console-socket "$SOCK" ctr
	[ "$status" -eq 0 ]
	wait_recvtty
	# The pty comes from the container's own devpts instance: pts 0.
	[[ "$tty_out" == *"tty=/dev/pts/0"* ]]
	[[ "$tty_out" == *"size=37 111"* ]]
	[[ "$tty_out" == *"err=/dev/pts/0"* ]]
	# /dev/tty opens only for a process with a controlling terminal.
	[[ "$tty_out" == *"ctty=yes"* ]]
}

@test "tty: /dev/console is the container's pty" {
	update_config '.process.terminal = true
		| .process.args = ["sh", "-c", "echo console=$(stat -c %t:%T /dev/console) pts=$(stat -c %t:%T $(tty))"]'
	start_recvtty
	run brig run -d --console-socket "$SOCK" ctr
	[ "$status" -eq 0 ]
	wait_recvtty
	local line console pts
	line="$(grep -o 'console=[^ ]* pts=[^ ]*' <<<"$tty_out")"
	console="${line%% *}"; console="${console#console=}"
	pts="${line##*pts=}"
	[ -n "$console" ]
	[ "$console" = "$pts" ]
	# The host's /dev/console (5:1) must not show through.
	[ "$console" != "5:1" ]
}

@test "tty: input typed on the console reaches the process" {
	update_config '.process.terminal = true
		| .process.args = ["sh", "-c", "read line; echo \"got:[$line]\""]'
	printf 'hello tty\n' >"$SOCKDIR/in"
	start_recvtty "$SOCKDIR/in"
	run brig run -d --console-socket "$SOCK" ctr
	[ "$status" -eq 0 ]
	wait_recvtty
	[[ "$tty_out" == *"got:[hello tty]"* ]]
}

@test "tty: a terminal for a detached container needs a console socket" {
	update_config '.process.terminal = true | .process.args = ["true"]'
	run brig run -d ctr
	[ "$status" -ne 0 ]
	[[ "$output" == *console*socket* ]]
	run brig create ctr2
	[ "$status" -ne 0 ]
	[[ "$output" == *console*socket* ]]
	# Nothing is left behind.
	run brig list -q
	[ -z "$output" ]
}

@test "tty: a console socket without a terminal is refused" {
	update_config '.process.terminal = false | .process.args = ["true"]'
	start_recvtty
	run brig run -d --console-socket "$SOCK" ctr
	[ "$status" -ne 0 ]
	[[ "$output" == *console*socket* ]]
	run brig list -q
	[ -z "$output" ]
}

@test "tty: exec -t -d sends a new pty over the console socket" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	start_recvtty
	run brig exec -t -d --console-socket "$SOCK" ctr sh -c 'echo tty=$(tty); if echo -n >/dev/tty; then echo ctty=yes; fi'
	[ "$status" -eq 0 ]
	wait_recvtty
	[[ "$tty_out" == *"tty=/dev/pts/"* ]]
	[[ "$tty_out" == *"ctty=yes"* ]]
}

@test "tty: foreground run proxies the pty and returns the exit status" {
	requires program:script
	update_config '.process.terminal = true
		| .process.args = ["sh", "-c", "echo tty=$(tty); exit 7"]'
	# script(1) gives the runtime a terminal of its own, as a shell would.
	run script -qec "$RUNTIME --root $ROOT run ctr" /dev/null
	[ "$status" -eq 7 ]
	[[ "$output" == *"tty=/dev/pts/0"* ]]
}
