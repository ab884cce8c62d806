#!/usr/bin/env bats
# SCMP_ACT_NOTIFY on the syscalls brig's own init (and exec's process) still
# makes after the filter is loaded (issue #11 item 12): execve, close, write,
# read, openat, the uid/caps/cwd calls, sendmsg. The listener fd must reach
# the agent before any of them can be notified, so create, start, run and
# exec go through with a real agent (tests/tools/seccomp_listener answering
# with SECCOMP_USER_NOTIF_FLAG_CONTINUE), with noNewPrivileges true and
# false. The agent's log proves the calls were notified; the container's
# output proves it ran. Also: an agent that takes the fd and never answers
# fails the command within brig's bound, leaves nothing behind; and the one
# profile brig cannot serve (sendmsg and write both notified) is refused by
# name. Every runtime command is bounded (BRIG_CMD_TIMEOUT), so a
# regression fails instead of hanging. Covers any cgroup mode.

# A hang must fail the test, not block the suite (brig's own bound for a
# silent agent is 15 s).
BRIG_CMD_TIMEOUT="${BRIG_CMD_TIMEOUT_SECCOMP:-30}"

load helpers
load confine_helpers

setup() {
	requires root
	need_built "$SECCOMP_LISTENER"
	setup_bundle
	SOCK="$BUNDLE/agent.sock"
	AGENT_STATE="$BUNDLE/agent.state"
	AGENT_LOG="$BUNDLE/agent.log"
}

teardown() {
	# Killing the agent first lets a process stuck in a notification go on
	# (the kernel answers ENOSYS once no listener is left).
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	[ -n "${LISTENER_PID:-}" ] && wait "$LISTENER_PID" 2>/dev/null
	LISTENER_PID=
	teardown_bundle
}

# start_agent [LISTENER OPTIONS...]: the agent on $SOCK, logging every
# notified syscall to $AGENT_LOG and letting it run (CONTINUE).
start_agent() {
	"$SECCOMP_LISTENER" "$SOCK" "$AGENT_STATE" --continue 1 --log "$AGENT_LOG" "$@" \
		>"$BUNDLE/agent.out" 2>&1 3>&- &
	LISTENER_PID=$!
	for _ in $(seq 50); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
	echo "agent did not start" >&2
	return 1
}

# notify_profile NNP NAME...: allow all, notify NAMEs to $SOCK; process.
# noNewPrivileges = NNP.
notify_profile() {
	local nnp="$1" names="" n
	shift
	for n in "$@"; do names="$names${names:+,}\"$n\""; done
	set_seccomp "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$SOCK\",
		\"syscalls\":[{\"names\":[$names],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
	update_config ".process.noNewPrivileges = $nnp"
}

# brig_logged ARGS...: like `run brig ARGS`, but stdio is a file, not a
# pipe: an init stuck in a notification for ever (the bug) must not keep
# bats waiting for the pipe's end; teardown kills it by pid.
brig_logged() {
	status=0
	brig "$@" </dev/null >"$BUNDLE/cmd.out" 2>&1 || status=$?
	output="$(cat "$BUNDLE/cmd.out")"
	echo "brig $1: status $status" # 124: killed by BRIG_CMD_TIMEOUT (a hang)
}

# notified NAME: the agent was asked about NAME at least once.
notified() {
	grep -qx "$1" "$AGENT_LOG" 2>/dev/null && return 0
	echo "agent never saw $1; it saw: $(sort -u "$AGENT_LOG" 2>/dev/null | tr '\n' ' ')" >&2
	return 1
}

# What brig's init calls between seccomp(2) and execve (strace of `run`
# without noNewPrivileges: chdir, setgroups, setresgid, setresuid, umask,
# capget, capset, prctl, getcwd, openat/newfstatat/read/close of
# /etc/passwd, newfstatat/access for PATH, sendmsg, fcntl, close_range,
# execve), and the calls of the wait for `start`.
INIT_CALLS=(execve close write read openat newfstatat access faccessat chdir getcwd
	setresuid setresgid setgroups umask capget capset prctl rt_sigaction fcntl
	close_range accept4 recvmsg)

run_with_notified_calls() {
	local nnp="$1"
	start_agent
	notify_profile "$nnp" "${INIT_CALLS[@]}"
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [1001]}'
	# The listener fd must not reach the process: with it, the container
	# could answer its own notifications.
	set_args sh -c 'echo "ran-as-$(id -u)"; ls -l /proc/$$/fd/'
	brig_logged run sc
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "ran-as-1000"
	[[ "$output" != *seccomp* ]]
	notified execve
	notified close
	notified write
	# The agent got the fd for the init, the process the filter is on.
	[ "$(jq -r '.state.id' "$AGENT_STATE")" = sc ]
	[ "$(jq -r '.fds[0]' "$AGENT_STATE")" = seccompFd ]
	assert_no_leftovers sc
}

@test "boundary seccomp: run with execve, close, write and the init's other calls notified (noNewPrivileges false)" {
	run_with_notified_calls false
	# Loaded before the uid change: the agent saw it.
	notified setresuid
	notified capset
}

@test "boundary seccomp: run with execve, close, write and the init's other calls notified (noNewPrivileges true)" {
	run_with_notified_calls true
}

# The set runc's own tests notify: one the old brig accepted, and hung on
# (its init waited on close or execve before the agent had the fd).
run_important_calls() {
	start_agent
	notify_profile "$1" execve openat open read close
	set_args sh -c 'echo important-calls-ok'
	brig_logged run sc
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "important-calls-ok"
	notified execve
	notified close
	assert_no_leftovers sc
}

@test "boundary seccomp: run with execve, openat, open, read, close notified (noNewPrivileges false)" {
	run_important_calls false
}

@test "boundary seccomp: run with execve, openat, open, read, close notified (noNewPrivileges true)" {
	run_important_calls true
}

# Without write and sendmsg: profiles the old brig accepted, and hung on.
create_start_notified() {
	local nnp="$1"
	start_agent
	notify_profile "$nnp" execve close openat read chdir getcwd prctl accept4
	set_args sh -c 'echo started >/tmp/started; exec sleep 100'
	create_container sc
	[ "$(brig state sc | jq -r .status)" = created ]
	brig start sc
	wait_for_status sc running
	# The container's own shell got past execve and its notified calls.
	local i
	for i in $(seq 50); do
		brig exec sc cat /tmp/started 2>/dev/null | grep -q started && break
		sleep 0.1
	done
	[ "$(brig exec sc cat /tmp/started)" = started ]
	notified execve
	notified close
	brig kill sc KILL
	wait_for_status sc stopped
	brig delete sc
	assert_no_leftovers sc
}

@test "boundary seccomp: create + start with execve, close, openat, accept4 notified (noNewPrivileges false)" {
	create_start_notified false
}

@test "boundary seccomp: create + start with execve, close, openat, accept4 notified (noNewPrivileges true)" {
	create_start_notified true
}

exec_notified() {
	local nnp="$1"
	start_agent
	notify_profile "$nnp" execve close read openat chdir
	set_args sleep 100
	run_detached sc
	wait_for_status sc running
	brig_logged exec sc sh -c 'echo exec-ran'
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "exec-ran"
	# A second connection for exec's own process, with its pid.
	[ "$(jq -r '.state.id' "$AGENT_STATE.2")" = sc ]
	local pid
	pid="$(jq -r '.pid' "$AGENT_STATE.2")"
	[ "$pid" -gt 0 ]
	[ "$pid" != "$(jq -r '.pid' "$AGENT_STATE")" ]
	[ "$(grep -cx execve "$AGENT_LOG")" -ge 2 ]
}

@test "boundary seccomp: exec with execve, close, openat notified (noNewPrivileges false)" {
	exec_notified false
}

@test "boundary seccomp: exec with execve, close, openat notified (noNewPrivileges true)" {
	exec_notified true
}

@test "boundary seccomp: sendmsg notified (the fd goes over by number instead)" {
	start_agent
	notify_profile false sendmsg sendto execve
	set_args sh -c 'echo sendmsg-profile-ok'
	brig_logged run sc
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "sendmsg-profile-ok"
	# The init's READY went through the agent: the fd had reached it.
	notified sendmsg
	notified execve
	assert_no_leftovers sc
}

@test "boundary seccomp: sendmsg notified with noNewPrivileges true, create + start" {
	start_agent
	notify_profile true sendmsg execve close
	set_args sh -c 'exec sleep 100'
	create_container sc
	brig start sc
	wait_for_status sc running
	notified sendmsg
	notified execve
	brig delete -f sc
	assert_no_leftovers sc
}

@test "boundary seccomp: SCMP_ACT_NOTIFY on both sendmsg and write is refused by name" {
	requires brig
	notify_profile false write sendmsg
	set_args true
	brig_logged run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "linux.seccomp.syscalls[0].names[1]: SCMP_ACT_NOTIFY cannot be used for both sendmsg and write"
	assert_no_leftovers sc
}

@test "boundary seccomp: an agent that never answers fails create in bounded time, nothing left" {
	requires brig
	start_agent --hold 1
	notify_profile false execve close chdir
	set_args true
	local t0 t1
	t0="$(date +%s)"
	brig_logged create sc
	t1="$(date +%s)"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ] # not killed by the test's timeout
	assert_contains "$output" "did not answer"
	[ $((t1 - t0)) -lt 25 ]
	# Killed and removed: no init stuck in a notification, lock free.
	assert_no_leftovers sc
	run brig delete -f sc
	run brig list -q
	[ -z "$output" ]
}
