#!/usr/bin/env bats
# Faults (issue 22, items 14 and 15; docs/security.md, "Escape classes"):
# a create or run killed at any moment leaves no process that nothing can
# find, and delete --force removes whatever it did leave; a terminal with
# no terminal on brig's side is refused at once instead of hanging, and the
# end of a terminal's input reaches the program. Any cgroup mode.

load helpers

setup() {
	requires root brig
	setup_bundle
	update_config '.process.args = ["sleep", "1000"]'
	LOAD_PIDS="" NS_PID=""
}

teardown() {
	local p
	for p in $LOAD_PIDS $NS_PID; do kill -KILL "$p" 2>/dev/null || true; done
	teardown_bundle
	return 0
}

# wait_no_test_pids SECONDS: every process of the test's cgroups is gone
# within SECONDS (zombies do not count: they hold nothing).
wait_no_test_pids() {
	local i left
	for i in $(seq $(($1 * 20))); do
		left="$(test_pids)"
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	echo "still alive in the test's cgroups:" >&2
	ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ,)" >&2
	return 1
}

# wait_test_process ARGS: a process of the test's cgroups runs with exactly
# these arguments (within 10 s).
wait_test_process() {
	local i p
	for i in $(seq 200); do
		for p in $(test_pids); do
			[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "$* " ] && return 0
		done
		sleep 0.05
	done
	echo "no process '$*' in the test's cgroups" >&2
	return 1
}

# no_init_line ID: the ownership record of ID names no init.
no_init_line() {
	cat "$ROOT/$1/made" >&2
	! grep -q '^init ' "$ROOT/$1/made" || false
}

# kill_create_in_hook: a createContainer hook keeps the init busy (it waits
# for the hook, not for create); create is killed meanwhile. The init's
# create has recorded it by then, but has not handed it over: the init (and
# its hook) must die with create, not run on until the hook ends.
kill_create_in_hook() {
	local pid
	update_config '.hooks.createContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "exec sleep 997"], "timeout": 600}]'
	"$RUNTIME" --root "$ROOT" create c </dev/null >"$BUNDLE/c.out" 2>&1 &
	pid=$!
	wait_test_process sleep 997
	kill -KILL "$pid"
	wait "$pid" || true
	wait_no_test_pids 3
	brig delete -f c
	assert_no_leftovers
}

# A create killed while its init waited for a createContainer hook left the
# init (pid 1 of its own pid namespace) and the hook running until the hook
# ended (here 997 s): nothing told the init that its create was gone.
@test "faults: an init whose create was killed dies with it (parent-death signal)" {
	kill_create_in_hook
}

# The parent-death signal is cleared by a change of credentials: the init
# takes uid 0 of its new user namespace, and must arm it again.
@test "faults: an init whose create was killed dies with it, in a user namespace (armed again after setuid)" {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	kill_create_in_hook
}

# A joined namespace makes the child of create fork the real init (a new
# process: fork clears the parent-death signal).
@test "faults: an init whose create was killed dies with it, when a namespace is joined (forked init)" {
	requires program:unshare
	unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
	NS_PID=$!
	sleep 0.2
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/proc/$NS_PID/ns/net\" else . end)"
	kill_create_in_hook
}

# strace_brig WHEN CMD...: the runtime with CMD, its WHEN-th sendmsg held
# for 60 s once done (the 1st is GO: the init is placed; the 2nd HANDOVER:
# the init is recorded). Sets BRIG_PID (the runtime) and TRACE_PID.
strace_brig() {
	local when="$1" i
	shift
	strace -qq -o "$BUNDLE/trace" -e trace=sendmsg \
		-e "inject=sendmsg:delay_exit=60000000:when=$when" \
		"$RUNTIME" --root "$ROOT" "$@" </dev/null >"$BUNDLE/brig.out" 2>&1 &
	TRACE_PID=$!
	for i in $(seq 200); do
		grep -q DELAYED "$BUNDLE/trace" 2>/dev/null && break
		sleep 0.05
	done
	cat "$BUNDLE/trace" >&2
	grep -q DELAYED "$BUNDLE/trace"
	BRIG_PID="$(pgrep -P "$TRACE_PID")"
	[ -n "$BRIG_PID" ]
	# what the init can do without its parent: READY and the wait for
	# start on d3d6522, the wait for HANDOVER now
	sleep 1
}

# kill_traced: SIGKILL the runtime, then strace (which would wait out its
# delay before it noticed).
kill_traced() {
	kill -KILL "$BRIG_PID"
	kill -KILL "$TRACE_PID"
	wait "$TRACE_PID" || true
}

# kill_before_record COMMAND: COMMAND (create or run) held right after it
# released its init (GO), before the init line, and killed there: nothing
# of it may live on, and delete --force leaves nothing.
kill_before_record() {
	requires program:strace
	strace_brig 1 "$1" c
	no_init_line c
	kill_traced
	wait_no_test_pids 3
	brig delete -f c
	assert_no_leftovers
}

# The case seen in issue 22: create killed after it released the init (GO)
# and before it wrote the init line. The init got as far as the wait for
# start and stayed there, pid 1 of its pid namespace, in every cgroup of
# the container; the record had no init line, so delete --force killed
# nothing and removed nothing ("still holds processes: left in place").
@test "faults: create killed between placing its init and recording it leaves no init" {
	kill_before_record create
}

# The same for run: the init went on to execve the container's process,
# which ran on with nothing to find it.
@test "faults: run killed between placing its init and recording it leaves no process" {
	kill_before_record run
}

# After the handover the init outlives create (as `create` itself needs):
# the record names it and delete --force kills it.
@test "faults: create killed once it recorded its init: delete --force kills the init" {
	requires program:strace
	strace_brig 2 create c
	grep -q '^init ' "$ROOT/c/made"
	kill_traced
	sleep 0.5
	[ -n "$(test_pids)" ]
	brig delete -f c
	assert_no_leftovers
}

# A create killed after it made its cgroups and cloned its init, before the
# init line: its record says "marked" and no init. delete treated every
# such record as possibly naming another container's cgroup (a create
# killed inside its mkdir loop) and killed nothing, so an init that
# outlived its create stayed forever. config.json, written once the mkdir
# loop is over, tells the two apart.
@test "faults: delete --force kills the init of a record without its init line once create made its cgroups" {
	local pid
	create_container a
	pid="$(brig state a | jq -r .pid)"
	process_alive "$pid"
	# the state of a create killed just before its init line
	sed -i '/^init /d' "$ROOT/a/made"
	rm -f "$ROOT/a/state.json"
	[ -e "$ROOT/a/config.json" ]
	brig delete -f a
	wait_no_test_pids 3
	assert_no_leftovers
}

# 200 kills of create at random moments while two busy loops load the
# machine: no process of a killed create survives unless the record names
# it as its init, and delete --force leaves nothing (state, cgroup, mount
# or process).
@test "faults: create killed at 200 random moments under load leaves nothing delete --force cannot remove" {
	requires program:python3
	local i id pid left
	for i in 1 2; do
		(while :; do :; done) </dev/null >/dev/null 2>&1 &
		LOAD_PIDS="$LOAD_PIDS $!"
	done
	python3 - "$RUNTIME" "$ROOT" "/$TEST_CGROUP_PARENT/$CGROUP_NAME" <<-'EOF'
	import json, os, random, signal, sys, time
	brig, root, cg = sys.argv[1:4]
	cfg = json.load(open("config.json"))
	null = os.open("/dev/null", os.O_RDWR)
	for i in range(200):
	    cfg["linux"]["cgroupsPath"] = "%s-k%d" % (cg, i)
	    with open("config.json.new", "w") as f:
	        json.dump(cfg, f)
	    os.rename("config.json.new", "config.json")
	    pid = os.fork()
	    if pid == 0:
	        for fd in (0, 1, 2):
	            os.dup2(null, fd)
	        os.execv(brig, [brig, "--root", root, "create", "k%d" % i])
	    time.sleep(random.uniform(0, 0.008))
	    os.kill(pid, signal.SIGKILL)
	    os.waitpid(pid, 0)
	EOF
	kill -KILL $LOAD_PIDS
	LOAD_PIDS=""
	sleep 1
	# every survivor is an init its record names
	for pid in $(test_pids); do
		grep -l "^init $pid " "$ROOT"/*/made >&2 ||
			{ echo "pid $pid is named by no record:" >&2; ps -o pid,ppid,stat,args -p "$pid" >&2; false; }
	done
	for id in $(ls "$ROOT"); do
		brig delete -f "$id"
	done
	wait_no_test_pids 3
	assert_no_leftovers
	! grep -E "$ROOT|$BUNDLE" /proc/self/mountinfo || false
}

# no_terminal_refused STATUS CMD...: CMD (the runtime, with a terminal in
# the foreground) in a session of its own (no controlling terminal) with
# stdio that are not terminals is refused within seconds with exit STATUS,
# runc's phrase and brig's detail. stdin: $STDIN_MODE (null, closed, pipe).
no_terminal_refused() {
	local want="$1" rc=0
	shift
	case "$STDIN_MODE" in
	null) timeout 20 setsid -w "$RUNTIME" --root "$ROOT" "$@" </dev/null >"$BUNDLE/out" 2>&1 || rc=$? ;;
	closed) timeout 20 setsid -w "$RUNTIME" --root "$ROOT" "$@" <&- >"$BUNDLE/out" 2>&1 || rc=$? ;;
	pipe) echo 'echo typed' | timeout 20 setsid -w "$RUNTIME" --root "$ROOT" "$@" >"$BUNDLE/out" 2>&1 || rc=$? ;;
	esac
	echo "stdin $STDIN_MODE: exit $rc: $(cat "$BUNDLE/out")"
	[ "$rc" -eq "$want" ]
	grep -q 'open /dev/tty: no such device or address' "$BUNDLE/out"
	grep -q 'process.terminal' "$BUNDLE/out"
}

# `brig spec` (terminal true) then `brig run demo </dev/null` with no
# terminal anywhere hung (5 of 5 in issue 22): the shell waited for input
# nobody could type and ignored the SIGTERM run forwarded to it. runc
# refuses at once ("open /dev/tty: no such device or address").
@test "terminal: run in the foreground with no terminal on brig's side is refused at once, leaving nothing" {
	requires program:setsid
	update_config '.process.terminal = true | .process.args = ["sh"]'
	for STDIN_MODE in null closed pipe; do
		no_terminal_refused 1 run t
		assert_no_leftovers
	done
}

@test "terminal: exec --tty in the foreground with no terminal on brig's side is refused at once" {
	requires program:setsid
	run_detached e
	local before
	before="$(test_pids | sort)"
	for STDIN_MODE in null closed pipe; do
		no_terminal_refused 255 exec -t e sh
		[ "$(test_pids | sort)" = "$before" ]
	done
	brig delete -f e
	assert_no_leftovers
}

# create never proxies: a terminal without --console-socket is refused
# (nothing would receive it), with no terminal as with one.
@test "terminal: create with a terminal and no console socket is refused, leaving nothing" {
	requires program:setsid
	update_config '.process.terminal = true'
	run timeout 20 setsid -w "$RUNTIME" --root "$ROOT" create t </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "--console-socket"
	assert_no_leftovers
}

# With a terminal on brig's side (script(1)'s) and stdin at its end, brig
# types the EOF character into the container's pty. Typed while the pty
# was canonical, it is kept as an end of line, which a program that turns
# to raw mode afterwards (a shell's line editor at its first prompt) reads
# as a NUL byte: the program waited forever for input that had ended (a
# spec shell run </dev/null hung 1 time in 20 here). Here the program
# turns raw after a second and waits for ^D (byte 04).
@test "terminal: the end of the input reaches a program that turns the pty raw after it ended" {
	requires program:script
	update_config '.process.terminal = true | .process.args = ["sh", "-c", "sleep 1; stty raw -echo; while :; do c=$(dd bs=1 count=1 2>/dev/null | od -An -tx1); echo \"byte:$c\"; case $c in *04*) echo got-eof; exit 0;; esac; done"]'
	run timeout 20 script -qec "$RUNTIME --root $ROOT run t </dev/null" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" got-eof
	assert_no_leftovers
}

@test "terminal: run </dev/null of an interactive shell on a terminal ends, 10 times" {
	requires program:script
	update_config '.process.terminal = true | .process.args = ["sh"]'
	local i rc
	for i in $(seq 10); do
		rc=0
		timeout 20 script -qec "$RUNTIME --root $ROOT run t$i </dev/null" /dev/null </dev/null >"$BUNDLE/out" 2>&1 || rc=$?
		echo "run $i: exit $rc"
		[ "$rc" -eq 0 ]
	done
	assert_no_leftovers
}
