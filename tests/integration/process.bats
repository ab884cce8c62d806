#!/usr/bin/env bats
# The container process: what config.json's process (and a few linux.*
# settings) asks of it, proved from inside the container: env, cwd, user
# and groups, umask, rlimits, hostname/domainname, oomScoreAdj, sysctl, pid 1
# in a new pid namespace, fds beyond --preserve-fds closed, namespaces
# joined by path, exit codes, the missing-executable error, and that a
# failed create leaves nothing behind. Any cgroup mode.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# run_in CMD: run the container with `sh -c CMD` in the foreground, stdin
# from /dev/null; $status and $output as bats' run.
set_sh() {
	update_config "$(jq -n --arg c "$1" '{a: ["sh", "-c", $c]}' | jq -c '.a' | sed 's/^/.process.args = /')"
}

run_in() {
	set_sh "$1"
	run brig run ctr </dev/null
}

@test "process: env is exactly process.env, HOME from /etc/passwd when absent" {
	update_config '.process.env = ["PATH=/bin:/usr/bin", "FOO=bar baz", "EMPTY="]'
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	run_in 'env | sort'
	[ "$status" -eq 0 ]
	echo "$output"
	assert_contains "$output" "FOO=bar baz"
	assert_contains "$output" "EMPTY="
	# guest's home in the image's /etc/passwd is /home
	assert_contains "$output" "HOME=/home"
	# nothing of brig's own environment leaks (TERM from the default config
	# was replaced, BATS_* never passed)
	! grep -q '^TERM=' <<<"$output" || false
	! grep -q '^BATS' <<<"$output" || false
}

@test "process: an env entry without '=' fails create" {
	update_config '.process.env = ["PATH=/bin", "NOEQUALS"]'
	run_in 'echo started'
	echo "$output"
	[ "$status" -ne 0 ]
	assert_contains "$output" 'invalid environment variable'
	assert_contains "$output" 'NOEQUALS'
	[[ "$output" != *started* ]]
}

@test "process: an explicit HOME is kept" {
	update_config '.process.env = ["PATH=/bin", "HOME=/tmp"]'
	run_in 'echo "home=$HOME"'
	[ "$status" -eq 0 ]
	[ "$output" = "home=/tmp" ]
}

@test "process: cwd is applied (and created when missing)" {
	update_config '.process.cwd = "/tmp/work/dir"'
	run_in 'pwd'
	[ "$status" -eq 0 ]
	[ "$output" = "/tmp/work/dir" ]
}

@test "process: user uid, gid and additionalGids" {
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [29, 5]}'
	run_in 'id -u; id -g; id -G; grep -E "^(Uid|Gid|Groups):" /proc/self/status'
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	# id -G lists the gid then the supplementary groups
	[ "$(tr ' ' '\n' <<<"${lines[2]}" | sort -n | tr '\n' ' ')" = "5 29 1000 " ]
	assert_contains "$output" "Uid:	1000	1000	1000	1000"
	assert_contains "$output" "Gid:	1000	1000	1000	1000"
	[[ "$(grep '^Groups:' <<<"$output")" =~ ^Groups:[[:space:]]+5[[:space:]]29[[:space:]]*$ ]]
}

@test "process: root without additionalGids has no supplementary groups" {
	run_in 'grep "^Groups:" /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^Groups:[[:space:]]*$ ]]
}

@test "process: umask from process.user.umask, 0022 by default" {
	run_in 'umask'
	[ "$status" -eq 0 ]
	[ "$output" = "0022" ]
	update_config '.process.user.umask = 63'
	run_in 'umask; touch /tmp/f; stat -c %a /tmp/f'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "0077" ]
	[ "${lines[1]}" = "600" ]
}

@test "process: rlimits are set, soft and hard" {
	update_config '.process.rlimits = [
		{"type": "RLIMIT_NOFILE", "soft": 123, "hard": 456},
		{"type": "RLIMIT_CORE", "soft": 0, "hard": 0},
		{"type": "RLIMIT_NPROC", "soft": 77, "hard": 99}]'
	run_in 'ulimit -Sn; ulimit -Hn; ulimit -c; grep -E "Max (processes|open files)" /proc/self/limits'
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[0]}" = 123 ]
	[ "${lines[1]}" = 456 ]
	[ "${lines[2]}" = 0 ]
	[[ "$output" =~ Max\ processes\ +77\ +99 ]]
}

@test "process: an rlimit above the hard limit brig may set fails create" {
	# No CAP_SYS_RESOURCE on this host's bounding set: raising RLIMIT_NOFILE's
	# hard limit beyond fs.nr_open can never work.
	local nr_open
	nr_open="$(cat /proc/sys/fs/nr_open)"
	update_config ".process.rlimits = [{\"type\": \"RLIMIT_NOFILE\", \"soft\": $((nr_open + 1)), \"hard\": $((nr_open + 1))}]"
	run brig run ctr </dev/null
	[ "$status" -ne 0 ]
	is_brig && assert_contains "$output" "RLIMIT_NOFILE"
	assert_no_leftovers
}

@test "process: hostname and domainname" {
	update_config '.hostname = "box-one" | .domainname = "example.test"'
	run_in 'hostname; cat /proc/sys/kernel/domainname'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = box-one ]
	# runc 1.1 predates domainname (runtime-spec 1.2)
	if is_brig; then
		[ "${lines[1]}" = example.test ]
	fi
	# the host's names are untouched
	[ "$(hostname)" != box-one ]
}

@test "process: oomScoreAdj" {
	update_config '.process.oomScoreAdj = 345'
	run_in 'cat /proc/self/oom_score_adj'
	[ "$status" -eq 0 ]
	[ "$output" = 345 ]
}

@test "process: sysctl is written inside the container's namespaces" {
	local host
	host="$(cat /proc/sys/net/ipv4/ip_forward)"
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "net/ipv4/tcp_syncookies": "0", "kernel.msgmax": "12345"}'
	run_in 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/tcp_syncookies /proc/sys/kernel/msgmax'
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = 12345 ]
	# the host's value did not change (the container has its own netns)
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host" ]
}

@test "process: the process is pid 1 of a new pid namespace" {
	run_in 'echo $$; readlink /proc/self/ns/pid; ps -o pid | wc -l'
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" != "$(readlink /proc/self/ns/pid)" ]
	# only sh itself, ps and wc: nothing of the host is visible
	[ "${lines[2]}" -le 4 ]
}

@test "process: fds beyond --preserve-fds are closed, preserved ones stay" {
	echo preserved >"$BUNDLE/p3"
	run_in 'ls /proc/self/fd | sort -n | tr "\n" " "; echo; cat <&3'
	# fd 3 preserved, fd 4 and 5 not
	run brig run --preserve-fds 1 ctr </dev/null 3<"$BUNDLE/p3" 4<"$BUNDLE/p3" 5>/dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	# ls's own directory fd (4 here) is the only other one
	[[ "${lines[0]}" =~ ^"0 1 2 3 "(4 )?$ ]]
	[ "${lines[1]}" = preserved ]
	# without --preserve-fds fd 3 is closed too
	run brig run ctr </dev/null 3<"$BUNDLE/p3"
	[ "$status" -ne 0 ]
	[[ "${lines[0]}" =~ ^"0 1 2 "(3 )?$ ]]
}

@test "process: socket activation passes LISTEN_FDS fds and sets LISTEN_FDS/LISTEN_PID" {
	echo activated >"$BUNDLE/sock"
	echo preserved >"$BUNDLE/p"
	set_sh 'echo "fds=$LISTEN_FDS pid=$LISTEN_PID"; cat <&3; cat <&4; ls /proc/self/fd | sort -n | tr "\n" " "'
	# The listen fds come first (3), then --preserve-fds (4); 5 is closed.
	run socket_activated self run --preserve-fds 1 ctr </dev/null 3<"$BUNDLE/sock" 4<"$BUNDLE/p" 5</dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	# pid 1: the process is the init of a new pid namespace
	[ "${lines[0]}" = "fds=1 pid=1" ]
	[ "${lines[1]}" = activated ]
	[ "${lines[2]}" = preserved ]
	[[ "${lines[3]}" =~ ^"0 1 2 3 4 "(5 )?$ ]]
	# LISTEN_PID of another process: the fds are not the runtime's to pass.
	run socket_activated 1 run ctr </dev/null 3<"$BUNDLE/sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fds= pid=" ]
	assert_contains "$output" "3: Bad file descriptor"
	[[ "${lines[-1]}" =~ ^"0 1 2 "(3 )?$ ]]
}

@test "process: socket activation without a pid namespace: LISTEN_PID is the process's pid" {
	# runc always writes LISTEN_PID=1, which names the host's init here.
	requires brig
	echo activated >"$BUNDLE/p3"
	update_config '.linux.namespaces -= [{"type": "pid"}]'
	set_sh 'echo "fds=$LISTEN_FDS pid=$LISTEN_PID me=$$"; cat <&3'
	run socket_activated self run ctr </dev/null 3<"$BUNDLE/p3"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^fds=1\ pid=([0-9]+)\ me=([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[1]}" -gt 1 ]
	[ "${lines[1]}" = activated ]
}

@test "process: socket activation with create and start" {
	echo activated >"$BUNDLE/sock"
	update_config '.process.args = ["sh", "-c", "echo \"fds=$LISTEN_FDS\"; cat <&3"]'
	socket_activated self create ctr </dev/null >"$BUNDLE/out" 2>&1 3<"$BUNDLE/sock"
	brig start ctr
	wait_for_status ctr stopped
	cat "$BUNDLE/out"
	[ "$(cat "$BUNDLE/out")" = "$(printf 'fds=1\nactivated')" ]
}

@test "process: a non-root user can reopen its stdio pipes" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	# bats captures stdout and stderr through a pipe made by root (mode 0600).
	run_in 'echo out-reopened >/proc/self/fd/1 && echo err-reopened >/dev/stderr && stat -L -c owner=%u /proc/self/fd/1'
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "out-reopened"
	assert_contains "$output" "err-reopened"
	assert_contains "$output" "owner=1000"
	# /dev/null and files are not the user's to take (runc's foreground run
	# gives the process pipes of its own instead of the caller's stdio).
	run_in 'stat -L -c owner=%u /proc/self/fd/0'
	echo "$output"
	[ "$status" -eq 0 ]
	! is_brig || [ "$output" = "owner=0" ]
	[ "$(stat -c %u /dev/null)" -eq 0 ]
}

@test "process: a non-root user owns its terminal" {
	requires program:script
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .process.terminal = true
		| .process.args = ["sh", "-c", "echo tty-reopened >/proc/self/fd/1 && stat -c owner=%u $(tty)"]'
	run script -qec "$RUNTIME --root $ROOT run ctr" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tty-reopened"
	assert_contains "$output" "owner=1000"
}

@test "process: stdio fds given to brig reach the process" {
	run_in 'echo out; echo err >&2; read x; echo "in=$x"'
	brig run ctr <<<"hello" >"$BUNDLE/o" 2>"$BUNDLE/e"
	[ "$(cat "$BUNDLE/o")" = "$(printf 'out\nin=hello')" ]
	[ "$(cat "$BUNDLE/e")" = err ]
}

@test "process: namespaces joined by path" {
	update_config '.process.args = ["sleep", "100"] | .hostname = "first"'
	set_cgroup_path a
	create_container a
	local pid
	pid="$(brig state a | jq -r .pid)"
	# b joins a's network, uts and ipc namespaces, and has its own pid ns
	cp "$BUNDLE/config.json" "$BUNDLE/config.a.json"
	set_cgroup_path b
	update_config ".hostname = null | .linux.namespaces = [
		{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"cgroup\"},
		{\"type\": \"network\", \"path\": \"/proc/$pid/ns/net\"},
		{\"type\": \"uts\", \"path\": \"/proc/$pid/ns/uts\"},
		{\"type\": \"ipc\", \"path\": \"/proc/$pid/ns/ipc\"}] | del(.hostname)"
	update_config '.process.args = ["sh", "-c", "for n in net uts ipc pid; do readlink /proc/self/ns/$n; done; hostname; echo $$"]'
	run brig run b </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(readlink /proc/$pid/ns/net)" ]
	[ "${lines[1]}" = "$(readlink /proc/$pid/ns/uts)" ]
	[ "${lines[2]}" = "$(readlink /proc/$pid/ns/ipc)" ]
	[ "${lines[3]}" != "$(readlink /proc/$pid/ns/pid)" ]
	[ "${lines[4]}" = first ]
	[ "${lines[5]}" = 1 ]
	brig delete -f a
}

@test "process: joining the pid namespace of another container" {
	update_config '.process.args = ["sleep", "100"]'
	set_cgroup_path a
	create_container a
	brig start a
	local pid
	pid="$(brig state a | jq -r .pid)"
	set_cgroup_path b
	update_config "(.linux.namespaces[] | select(.type == \"pid\")) .path = \"/proc/$pid/ns/pid\""
	update_config '.process.args = ["sh", "-c", "readlink /proc/self/ns/pid; echo $$; ps -o comm | grep -c sleep"]'
	run brig run b </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(readlink /proc/$pid/ns/pid)" ]
	# not pid 1: a's sleep is pid 1 of that namespace, and visible
	[ "${lines[1]}" != 1 ]
	[ "${lines[2]}" = 1 ]
	brig delete -f a
}

@test "process: a namespace path of the wrong type fails create and names it" {
	update_config '.linux.namespaces += [{"type": "user", "path": "/proc/self/ns/net"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]'
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_no_leftovers
}

@test "process: run exits with the process's exit code" {
	run_in 'exit 42'
	[ "$status" -eq 42 ]
	run_in 'true'
	[ "$status" -eq 0 ]
}

@test "process: run exits with 128+signal when the process is killed" {
	# pid 1 of a pid namespace cannot be killed from inside: share the host's
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))'
	run_in 'kill -KILL $$'
	[ "$status" -eq 137 ]
	run_in 'trap - USR1; kill -USR1 $$; sleep 5'
	[ "$status" -eq $((128 + 10)) ]
}

@test "process: a missing executable fails create with the PATH error" {
	update_config '.process.args = ["no-such-binary", "x"]'
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	if is_brig; then
		assert_contains "$output" 'exec: "no-such-binary": executable file not found in $PATH (PATH='
	else
		assert_contains "$output" 'executable file not found in $PATH'
	fi
	assert_no_leftovers
}

@test "process: a missing absolute executable fails create" {
	update_config '.process.args = ["/bin/no-such-binary"]'
	run brig create ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "no-such-binary"
	assert_contains "${output,,}" "no such file or directory"
	assert_no_leftovers
}

@test "process: an executable that is not executable fails with permission denied" {
	printf '#!/bin/sh\necho hi\n' >"$BUNDLE/rootfs/bin/noexec"
	chmod 0644 "$BUNDLE/rootfs/bin/noexec"
	update_config '.process.args = ["/bin/noexec"]'
	run brig create ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "${output,,}" "permission denied"
	assert_no_leftovers
}

@test "process: a failed create leaves no state, cgroup or process behind" {
	# fails late: after namespaces, cgroup and mounts exist
	update_config '.process.args = ["no-such-binary"]'
	run brig create ctr </dev/null
	[ "$status" -eq 1 ]
	assert_no_leftovers
	run brig list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# fails early: a bad rootfs
	update_config '.process.args = ["true"] | .root.path = "no-such-rootfs"'
	run brig create ctr </dev/null
	[ "$status" -eq 1 ]
	assert_no_leftovers
	# and the id is free again
	update_config '.root.path = "rootfs"'
	run brig run ctr </dev/null
	[ "$status" -eq 0 ]
}

@test "process: noNewPrivileges sets no_new_privs" {
	update_config '.process.noNewPrivileges = true'
	run_in 'grep NoNewPrivs /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$output" =~ NoNewPrivs:[[:space:]]+1 ]]
	update_config '.process.noNewPrivileges = false'
	run_in 'grep NoNewPrivs /proc/self/status'
	[[ "$output" =~ NoNewPrivs:[[:space:]]+0 ]]
}

@test "process: args are passed verbatim" {
	update_config '.process.args = ["sh", "-c", "for a; do echo \"[$a]\"; done", "zero", "one two", "", "*"]'
	run brig run ctr </dev/null
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "[one two]" ]
	[ "${lines[1]}" = "[]" ]
	[ "${lines[2]}" = "[*]" ]
}

@test "process: PATH lookup uses the container's PATH" {
	mkdir -p "$BUNDLE/rootfs/opt/tools"
	printf '#!/bin/sh\necho found-it\n' >"$BUNDLE/rootfs/opt/tools/mytool"
	chmod 0755 "$BUNDLE/rootfs/opt/tools/mytool"
	update_config '.process.env = ["PATH=/opt/tools:/bin"] | .process.args = ["mytool"]'
	run brig run ctr </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = found-it ]
}

@test "process: a new user namespace with uid/gid mappings" {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
	run_in 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; stat -c %u /bin/busybox; echo $$'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[[ "${lines[2]}" =~ ^\ +0\ +100000\ +65536$ ]]
	[[ "${lines[3]}" =~ ^\ +0\ +200000\ +65536$ ]]
	# the image belongs to host root, which is not mapped
	[ "${lines[4]}" = 65534 ]
	[ "${lines[5]}" = 1 ]
}

@test "process: joining another container's user namespace (and creating the rest)" {
	update_config '.process.args = ["sleep", "100"] | .linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_cgroup_path a
	create_container a
	brig start a
	local pid
	pid="$(brig state a | jq -r .pid)"
	set_cgroup_path b
	# the mappings stay (runc 1.1 insists on them); a joined namespace
	# already has its maps
	update_config "(.linux.namespaces[] | select(.type == \"user\")) .path = \"/proc/$pid/ns/user\""
	update_config '.process.args = ["sh", "-c", "readlink /proc/self/ns/user; readlink /proc/self/ns/pid; readlink /proc/self/ns/net; id -u; echo $$"]'
	run brig run b </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(readlink /proc/$pid/ns/user)" ]
	# its own pid and network namespaces, not a's
	[ "${lines[1]}" != "$(readlink /proc/$pid/ns/pid)" ]
	[ "${lines[2]}" != "$(readlink /proc/$pid/ns/net)" ]
	[ "${lines[3]}" = 0 ]
	[ "${lines[4]}" = 1 ]
	brig delete -f a
}

@test "process: a time namespace with offsets" {
	requires brig
	[ -e /proc/self/ns/time ] || skip "kernel without time namespaces"
	update_config '.linux.namespaces += [{"type": "time"}]
		| .linux.timeOffsets = {"boottime": {"secs": 1000000, "nanosecs": 0}}'
	run_in 'cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time'
	echo "$output"
	[ "$status" -eq 0 ]
	local host
	host="$(cut -d. -f1 /proc/uptime)"
	[ "${lines[0]}" -ge $((host + 1000000 - 5)) ]
	[ "${lines[1]}" != "$(readlink /proc/self/ns/time)" ]
	# the caller's own time namespace for children is untouched
	[ "$(readlink /proc/self/ns/time_for_children)" = "$(readlink /proc/self/ns/time)" ]
}
