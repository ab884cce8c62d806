#!/usr/bin/env bats
# exec: a new process joins the running container (namespaces, root,
# cgroup), gets the container's process settings plus the exec flags, and
# its exit status comes back. Covers any cgroup mode.

load helpers

setup() {
	requires root
	setup_bundle
	update_config '.process.args = ["sleep", "1000"]'
	echo "from the bundle" >"$BUNDLE/rootfs/marker"
}

teardown() {
	teardown_bundle
}

# start_container: run the bundle detached as "ctr"; $INIT is its host pid.
start_container() {
	run_detached ctr
	INIT="$(brig state ctr | jq -r .pid)"
	[ "$INIT" -gt 0 ]
}

@test "exec: the process joins every namespace of the init" {
	start_container
	local ns want got
	run brig exec ctr sh -c 'for n in pid net mnt uts ipc cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done'
	[ "$status" -eq 0 ]
	for ns in pid net mnt uts ipc cgroup; do
		want="$(readlink "/proc/$INIT/ns/$ns")"
		got="$(awk -v n="$ns" '$1 == n { print $2 }' <<<"$output")"
		echo "$ns: init $want, exec $got"
		[ -n "$got" ]
		[ "$got" = "$want" ]
		# ... and not the host's.
		[ "$got" != "$(readlink "/proc/self/ns/$ns")" ]
	done
}

@test "exec: the process sees the container's root, hostname and pid namespace" {
	start_container
	run brig exec ctr sh -c 'cat /marker; hostname; echo "pid1=$(cat /proc/1/comm)"; echo "me=$$"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "from the bundle"
	assert_contains "$output" "brig"
	assert_contains "$output" "pid1=sleep"
	# A pid of the container's pid namespace: small, not a host pid.
	local me
	me="$(sed -n 's/^me=//p' <<<"$output")"
	[ "$me" -gt 1 ]
	[ "$me" -lt 100 ]
}

@test "exec: exit status and death by signal come back" {
	start_container
	run brig exec ctr sh -c 'exit 42'
	[ "$status" -eq 42 ]
	run brig exec ctr sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	run brig exec ctr true
	[ "$status" -eq 0 ]
}

@test "exec: stdout and stderr are the caller's" {
	start_container
	run brig exec ctr sh -c 'echo to-out; echo to-err >&2'
	[ "$status" -eq 0 ]
	assert_contains "$output" "to-out"
	assert_contains "$output" "to-err"
	run bash -c "echo piped-in | $RUNTIME --root $ROOT exec ctr cat"
	[ "$status" -eq 0 ]
	[ "$output" = "piped-in" ]
}

@test "exec: --env, --cwd, --user and --additional-gids" {
	start_container
	run brig exec -e FOO=bar -e TERM=dumb --cwd /tmp --user 1000:1000 -g 29 ctr \
		sh -c 'echo "foo=$FOO term=$TERM path=$PATH"; echo "cwd=$(pwd)"; echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "foo=bar"
	# --env replaces a variable of the config and keeps the others.
	assert_contains "$output" "term=dumb"
	assert_contains "$output" "path=/usr/local/sbin:"
	assert_contains "$output" "cwd=/tmp"
	assert_contains "$output" "uid=1000 gid=1000"
	[[ "$output" =~ groups=.*29 ]]
}

@test "exec: an --env without '=' is refused" {
	start_container
	run brig exec -e FOO ctr true
	echo "$output"
	[ "$status" -eq 255 ]
	assert_contains "$output" 'invalid environment variable'
	assert_contains "$output" 'FOO'
}

@test "exec: defaults come from the container's config" {
	update_config '.process.env += ["FROM_CONFIG=yes"] | .process.cwd = "/root"
		| .process.user = { "uid": 1, "gid": 1 }'
	start_container
	run brig exec ctr sh -c 'echo "cfg=$FROM_CONFIG cwd=$(pwd) uid=$(id -u)"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "cfg=yes cwd=/root uid=1"
}

@test "exec: --process runs a process.json" {
	start_container
	cat >"$BUNDLE/process.json" <<-'EOF'
	{
	  "terminal": false,
	  "user": { "uid": 65534, "gid": 65534 },
	  "args": [ "sh", "-c", "echo \"proc=$PROC uid=$(id -u) cwd=$(pwd)\"; exit 5" ],
	  "env": [ "PATH=/bin:/usr/bin", "PROC=from-json" ],
	  "cwd": "/var"
	}
	EOF
	run brig exec --process "$BUNDLE/process.json" ctr
	[ "$status" -eq 5 ]
	assert_contains "$output" "proc=from-json uid=65534 cwd=/var"
}

@test "exec: a process.json without capabilities gets the container's" {
	start_container
	cat >"$BUNDLE/process.json" <<-'EOF'
	{ "cwd": "/", "env": [ "PATH=/bin" ], "args": [ "grep", "^CapBnd", "/proc/self/status" ] }
	EOF
	run brig exec --process "$BUNDLE/process.json" ctr
	echo "$output"
	[ "$status" -eq 0 ]
	# the config's three capabilities: KILL, NET_BIND_SERVICE, AUDIT_WRITE
	[ "$(awk '{ print $2 }' <<<"$output")" = 0000000020000420 ]
	[ "$(awk '{ print $2 }' <<<"$output")" = "$(awk '$1 == "CapBnd:" { print $2 }' "/proc/$INIT/status")" ]
}

@test "exec: a non-root user can reopen its stdio pipes" {
	start_container
	# Pipes made by root are mode 0600: the runtime hands them to the user
	# before the uid change, or /proc/self/fd/N (/dev/stdout) is refused.
	# bats captures the output through such a pipe.
	run brig exec -u 1000:1000 ctr sh -c 'id -u; echo out-reopened >/proc/self/fd/1 && echo err-reopened >/dev/stderr'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1000 ]
	assert_contains "$output" "out-reopened"
	assert_contains "$output" "err-reopened"
	# The same user from a process.json.
	cat >"$BUNDLE/process.json" <<-'EOF'
	{ "user": { "uid": 65534, "gid": 65534 }, "cwd": "/",
	  "env": [ "PATH=/bin" ], "args": [ "sh", "-c", "echo json-reopened >/proc/self/fd/1" ] }
	EOF
	run brig exec --process "$BUNDLE/process.json" ctr
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "json-reopened" ]
}

@test "exec: the caller's own terminal keeps its owner" {
	requires program:script
	start_container
	# stdio is a pty of the host (script's); exec without -t as a user.
	run script -qec "stat -c before=%u \$(tty); $RUNTIME --root $ROOT exec -u 1000 ctr sh -c 'echo in=\$(id -u)'; stat -c after=%u \$(tty)" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "in=1000"
	local before after
	before="$(sed -n 's/^before=\([0-9]*\).*/\1/p' <<<"$output")"
	after="$(sed -n 's/^after=\([0-9]*\).*/\1/p' <<<"$output")"
	[ -n "$before" ]
	[ "$before" = "$after" ]
}

@test "exec: LISTEN_FDS is for create and run only, as in runc" {
	start_container
	echo activated >"$BUNDLE/sock"
	run socket_activated self exec ctr sh -c 'echo fds=$LISTEN_FDS; ls /proc/self/fd | sort -n | tr "\n" " "' \
		</dev/null 3<"$BUNDLE/sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fds=" ]
	[[ "${lines[1]}" =~ ^"0 1 2 "(3 )?$ ]]
}

@test "exec: -t with a non-root user: the pty belongs to the user" {
	requires program:script
	start_container
	run script -qec "$RUNTIME --root $ROOT exec -t -u 1000:1000 ctr sh -c 'echo tty-reopened >/proc/self/fd/1 && stat -c owner=%u \$(tty)'" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tty-reopened"
	assert_contains "$output" "owner=1000"
}

@test "exec: -d returns at once and --pid-file names the process in the container" {
	start_container
	# The process keeps the stdio it is given: not bats's pipes.
	brig exec -d --pid-file "$BUNDLE/exec.pid" ctr sleep 567 </dev/null >/dev/null 2>&1
	local pid
	pid="$(cat "$BUNDLE/exec.pid")"
	[ "$pid" -gt 0 ]
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 567 " ]
	# In the init's pid namespace and cgroups, running the container's binary.
	[ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$INIT/ns/pid")" ]
	[ "$(cat "/proc/$pid/cgroup")" = "$(cat "/proc/$INIT/cgroup")" ]
	# (the path as seen in the container's mount namespace)
	[ "$(readlink "/proc/$pid/exe")" = /bin/busybox ]
}

@test "exec: the working directory is inside the container, never the caller's" {
	start_container
	local hostdir
	hostdir="$(mktemp -d /tmp/brig-test-cwd.XXXXXX)"
	touch "$hostdir/host-only-file"
	cd "$hostdir"
	run brig exec ctr sh -c 'echo "cwd=$(readlink /proc/self/cwd)"; ls /proc/self/cwd/; ls -a /proc/self/cwd/..'
	cd /
	rm -rf "$hostdir"
	[ "$status" -eq 0 ]
	assert_contains "$output" "cwd=/"
	[[ "$output" != *host-only-file* ]]
	assert_contains "$output" "marker"
	run brig exec --cwd /var/tmp ctr sh -c 'readlink /proc/self/cwd'
	[ "$status" -eq 0 ]
	[ "$output" = "/var/tmp" ]
}

@test "exec: no fd beyond stdio and --preserve-fds reaches the process" {
	start_container
	# bats keeps fd 3 open; 4 and 5 are opened here for the runtime.
	run brig exec ctr sh -c 'ls /proc/$$/fd; true' 4</dev/null 5>"$BUNDLE/five"
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "0 1 2" ]
	run brig exec --preserve-fds 2 ctr sh -c 'ls /proc/$$/fd; echo via-five >&4; true' 3</dev/null 4>"$BUNDLE/five"
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "0 1 2 3 4" ]
	[ "$(cat "$BUNDLE/five")" = "via-five" ]
}

@test "exec: --cap adds a capability, --no-new-privs sets no_new_privs" {
	update_config '.process.noNewPrivileges = false'
	start_container
	run brig exec ctr sh -c 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status'
	[ "$status" -eq 0 ]
	local base
	base="$(awk '$1 == "CapEff:" { print $2 }' <<<"$output")"
	[[ "$output" =~ NoNewPrivs:[[:space:]]*0 ]]
	run brig exec --cap CAP_SYS_ADMIN --no-new-privs ctr sh -c 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status'
	[ "$status" -eq 0 ]
	local eff
	eff="$(awk '$1 == "CapEff:" { print $2 }' <<<"$output")"
	[[ "$output" =~ NoNewPrivs:[[:space:]]*1 ]]
	# CAP_SYS_ADMIN is bit 21, absent from the config's set.
	[ $(( 0x$base & (1 << 21) )) -eq 0 ]
	[ $(( 0x$eff & (1 << 21) )) -ne 0 ]
	# Never inheritable (CVE-2022-29162), so never ambient either: a
	# non-root user does not keep it across execve.
	run brig exec --cap CAP_SYS_ADMIN ctr sh -c 'grep -E "^Cap(Inh|Amb)" /proc/self/status'
	echo "$output"
	[ "$status" -eq 0 ]
	local inh amb
	inh="$(awk '$1 == "CapInh:" { print $2 }' <<<"$output")"
	amb="$(awk '$1 == "CapAmb:" { print $2 }' <<<"$output")"
	[ $(( 0x$inh & (1 << 21) )) -eq 0 ]
	[ $(( 0x$amb & (1 << 21) )) -eq 0 ]
	run brig exec -u 1000 --cap CAP_SYS_ADMIN ctr sh -c 'grep -E "^CapEff" /proc/self/status'
	[ "$status" -eq 0 ]
	[ $(( 0x$(awk '{ print $2 }' <<<"$output") & (1 << 21) )) -eq 0 ]
}

@test "exec: a missing executable is named" {
	start_container
	run brig exec ctr nosuch-binary
	[ "$status" -eq 255 ]
	if is_brig; then
		assert_contains "$output" 'exec: "nosuch-binary": executable file not found in $PATH (PATH='
	else
		assert_contains "$output" "nosuch-binary"
		assert_contains "$output" 'executable file not found in $PATH'
	fi
}

@test "exec: a missing container does not exist" {
	run brig exec nosuch-ctr true
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" 'container "nosuch-ctr" does not exist'
	else
		assert_contains "$output" "does not exist"
	fi
}

@test "exec: a stopped container refuses exec" {
	update_config '.process.args = ["true"]'
	run_detached ctr
	wait_for_status ctr stopped
	run brig exec ctr true
	[ "$status" -ne 0 ]
	# runc 1.1 fails later, while joining the namespaces, with another text.
	if is_brig; then
		assert_contains "$output" "cannot exec in a stopped container"
	fi
}

@test "exec: a paused container needs --ignore-paused" {
	start_container
	run brig pause ctr
	[ "$status" -eq 0 ]
	run brig exec ctr true
	[ "$status" -ne 0 ]
	assert_contains "$output" "paused"
	run brig resume ctr
	[ "$status" -eq 0 ]
}

@test "exec: -t in the foreground proxies a new pty" {
	requires program:script
	start_container
	run script -qec "$RUNTIME --root $ROOT exec -t ctr sh -c 'echo tty=\$(tty); exit 3'" /dev/null
	echo "$output"
	[ "$status" -eq 3 ]
	assert_contains "$output" "tty=/dev/pts/"
}

@test "exec: signals sent to the runtime reach the process" {
	start_container
	# The runtime itself, not the brig shell function, gets the signal.
	"$RUNTIME" --root "$ROOT" exec ctr sh -c 'trap "echo got-usr1; exit 9" USR1; sleep 60 & wait' \
		</dev/null >"$BUNDLE/sig.out" 2>&1 &
	local rt=$! i n rc=0
	# Wait until sh and its sleep run in the container (init + 2).
	for i in $(seq 100); do
		n="$(brig ps --format json ctr | jq length)"
		[ "$n" -ge 3 ] && break
		sleep 0.05
	done
	sleep 0.2
	kill -USR1 "$rt"
	wait "$rt" || rc=$?
	cat "$BUNDLE/sig.out"
	[ "$rc" -eq 9 ]
	assert_contains "$(cat "$BUNDLE/sig.out")" "got-usr1"
}

@test "exec: a created container accepts exec" {
	create_container ctr
	run brig exec ctr sh -c 'echo "in $(hostname)"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "in brig"
}

@test "exec: -t in the foreground starts with the caller's terminal size" {
	requires program:script
	start_container
	run script -qec "stty rows 33 cols 99; $RUNTIME --root $ROOT exec -t ctr stty size" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "33 99"
}
