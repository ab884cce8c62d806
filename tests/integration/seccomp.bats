#!/usr/bin/env bats
# linux.seccomp: every action, errnoRet, argument operators, flags, unknown
# names, the error paths, SCMP_ACT_NOTIFY with a listener, the compiled
# filter cache, and brig's hardened default profile. Each test proves the
# filter from inside the container: the call fails with the configured
# errno, or the process dies with SIGSYS (status 159).
# Covers any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	teardown_bundle
}

# Allow everything except the given rule (a syscalls[] entry).
allow_but() {
	set_seccomp "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[$1]}"
}

@test "seccomp: SCMP_ACT_ERRNO with errnoRet makes the call fail with that errno" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":13}'
	set_args sh -c 'mkdir /tmp/d; echo "rc=$?"; [ -d /tmp/d ] && echo exists; touch /tmp/f && echo touched'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "Permission denied"
	assert_contains "$output" "rc=1"
	assert_contains "$output" "touched"
	[[ "$output" != *exists* ]]
}

@test "seccomp: SCMP_ACT_ERRNO without errnoRet means EPERM" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}'
	set_args sh -c 'mkdir /tmp/d'
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "Operation not permitted"
}

@test "seccomp: defaultAction SCMP_ACT_ERRNO with defaultErrnoRet, explicit allowlist" {
	install_probe
	# Everything the busybox shell and the probe need, nothing else.
	set_seccomp '{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":38,"syscalls":[
		{"names":["read","write","writev","openat","open","close","fstat","newfstatat","stat","lstat",
		"execve","brk","mmap","munmap","mprotect","arch_prctl","set_tid_address","set_robust_list",
		"rseq","prlimit64","getrandom","exit_group","exit","rt_sigaction","rt_sigprocmask","rt_sigreturn",
		"ioctl","fcntl","getpid","getppid","getuid","geteuid","getgid","getegid","uname","readlink",
		"wait4","fork","vfork","clone","dup2","dup3","getcwd","chdir","access","faccessat","faccessat2",
		"prctl","statx","lseek","pread64","sigaltstack","futex","getdents64","readlinkat","sched_yield",
		"getpgrp","setpgid","getpgid","close_range","poll","select","pselect6","kill","tgkill",
		"getrlimit","setrlimit","sysinfo","mremap","madvise","gettid","tkill","fstatfs","statfs",
		"epoll_create1","epoll_ctl","epoll_pwait","epoll_wait","nanosleep","clock_gettime",
		"sched_getaffinity","capget","capset","setgroups","setresuid","setresgid","umask",
		"sendmsg","recvmsg","socket","connect","pipe2","sigaltstack","mknodat","fchdir"],
		"action":"SCMP_ACT_ALLOW"}]}'
	set_args confine_probe syscall getpid mkdir mount
	run brig run sc
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "getpid: ok"
	assert_contains "$output" "mkdir: ENOSYS"
	assert_contains "$output" "mount: ENOSYS"
}

@test "seccomp: SCMP_ACT_KILL kills the process with SIGSYS (status 159)" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_KILL"}'
	set_args sh -c 'mkdir /tmp/d; echo "child=$?"'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "child=159"
}

@test "seccomp: SCMP_ACT_KILL on the container process: run exits 159" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_KILL_PROCESS"}'
	set_args mkdir /tmp/d
	run brig run sc
	[ "$status" -eq 159 ]
}

@test "seccomp: SCMP_ACT_KILL_THREAD and SCMP_ACT_TRAP raise SIGSYS" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_KILL_THREAD"},
		{"names":["rmdir"],"action":"SCMP_ACT_TRAP"}'
	set_args sh -c 'mkdir /tmp/d; echo "kill=$?"; rmdir /tmp; echo "trap=$?"'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "kill=159"
	assert_contains "$output" "trap=159"
}

@test "seccomp: SCMP_ACT_TRACE without a tracer fails the call with ENOSYS; SCMP_ACT_LOG allows it" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_TRACE","errnoRet":1},
		{"names":["rmdir"],"action":"SCMP_ACT_LOG"}'
	set_args sh -c 'mkdir /tmp/d; echo "trace=$?"; mkdir -p /tmp/e 2>/dev/null; touch /tmp/x; rm /tmp/x; echo done'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "Function not implemented"
	assert_contains "$output" "trace=1"
	assert_contains "$output" "done"
}

@test "seccomp: argument filters SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ and repeated indexes (OR)" {
	# chmod to 0777 refused (EQ); any mode with all 'other' bits set refused
	# (MASKED_EQ: value is the mask, valueTwo the datum); umask 0 or 1 refused
	# (same index twice: either matches).
	allow_but '{"names":["fchmodat"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"args":[{"index":2,"value":511,"op":"SCMP_CMP_EQ"}]},
		{"names":["chmod"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"args":[{"index":1,"value":511,"op":"SCMP_CMP_EQ"}]},
		{"names":["fchmodat"],"action":"SCMP_ACT_ERRNO","errnoRet":13,"args":[{"index":2,"value":7,"valueTwo":7,"op":"SCMP_CMP_MASKED_EQ"}]},
		{"names":["chmod"],"action":"SCMP_ACT_ERRNO","errnoRet":13,"args":[{"index":1,"value":7,"valueTwo":7,"op":"SCMP_CMP_MASKED_EQ"}]}'
	set_args sh -c 'touch /tmp/f
		chmod 777 /tmp/f; echo "eq=$?"
		chmod 707 /tmp/f; echo "masked=$?"
		chmod 755 /tmp/f; echo "plain=$?"
		stat -c %a /tmp/f'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "eq=1"
	assert_contains "$output" "masked=1"
	assert_contains "$output" "plain=0"
	assert_contains "$output" "755"
	assert_contains "$output" "Operation not permitted"
	assert_contains "$output" "Permission denied"
}

@test "seccomp: the other comparison operators (NE, LT, LE, GT, GE)" {
	install_probe
	# personality(0xffffffff) is the probe's query call: GT/GE/NE match it,
	# LT/LE do not.
	allow_but '{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"args":[{"index":0,"value":4294967295,"op":"SCMP_CMP_LT"}]},
		{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":2,"args":[{"index":0,"value":4294967294,"op":"SCMP_CMP_LE"}]}'
	set_args confine_probe syscall personality_query getpid
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "personality_query: ok"
	assert_contains "$output" "getpid: ok"

	allow_but '{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":3,"args":[{"index":0,"value":4294967294,"op":"SCMP_CMP_GT"}]}'
	run brig run sc
	assert_contains "$output" "personality_query: ESRCH"

	allow_but '{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":3,"args":[{"index":0,"value":4294967295,"op":"SCMP_CMP_GE"}]}'
	run brig run sc
	assert_contains "$output" "personality_query: ESRCH"

	allow_but '{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":3,"args":[{"index":0,"value":0,"op":"SCMP_CMP_NE"}]}'
	run brig run sc
	assert_contains "$output" "personality_query: ESRCH"
}

@test "seccomp: unknown syscall names are skipped, the rest applies" {
	allow_but '{"names":["no_such_syscall_brig","mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}'
	set_args sh -c 'mkdir /tmp/d'
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "Operation not permitted"
}

@test "seccomp: architectures and flags are accepted (TSYNC, LOG, SPEC_ALLOW)" {
	# runc 1.1 refuses every flag ("seccomp flags are not yet supported").
	requires brig
	set_seccomp '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64","SCMP_ARCH_X86","SCMP_ARCH_X32"],
		"flags":["SECCOMP_FILTER_FLAG_TSYNC","SECCOMP_FILTER_FLAG_LOG","SECCOMP_FILTER_FLAG_SPEC_ALLOW"],
		"syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":30}]}'
	set_args sh -c 'mkdir /tmp/d'
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "Read-only file system"
}

@test "seccomp: an unknown action is an error naming it and its path; nothing is left behind" {
	allow_but '{"names":["getpid"],"action":"SCMP_ACT_ALLOW"},{"names":["mkdir"],"action":"SCMP_ACT_FOO"}'
	set_args true
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "SCMP_ACT_FOO"
	if is_brig; then
		assert_contains "$output" 'linux.seccomp.syscalls[1].action: unknown action "SCMP_ACT_FOO"'
		assert_no_leftovers sc
	fi
}

@test "seccomp: unknown operator, architecture and flag are errors naming them" {
	allow_but '{"names":["dup"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_NOPE"}]}'
	set_args true
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "SCMP_CMP_NOPE"

	set_seccomp '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_PDP11"]}'
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "SCMP_ARCH_PDP11"

	set_seccomp '{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_NOPE"]}'
	run brig run sc
	[ "$status" -ne 0 ]
	# (runc 1.1 refuses every flag without naming it.)
	if is_brig; then
		assert_contains "$output" 'linux.seccomp.flags[0]: unknown flag "SECCOMP_FILTER_FLAG_NOPE"'
	fi
}

@test "seccomp: errnoRet on an action that takes none is an error" {
	requires brig
	allow_but '{"names":["mkdir"],"action":"SCMP_ACT_KILL","errnoRet":1}'
	set_args true
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "linux.seccomp.syscalls[0].errnoRet: action SCMP_ACT_KILL does not take an errno value"
}

@test "seccomp: the filter also holds for exec'd processes" {
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":13}'
	set_args sleep 100
	run_detached sc
	wait_for_status sc running
	run brig exec sc sh -c 'mkdir /tmp/d'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Permission denied"
}

@test "seccomp: SCMP_ACT_NOTIFY sends the container process state and fd to listenerPath" {
	need_built "$SECCOMP_LISTENER"
	local sock="$BUNDLE/listener.sock" state="$BUNDLE/listener.state"
	"$SECCOMP_LISTENER" "$sock" "$state" >"$BUNDLE/listener.out" 2>&1 3>&- &
	LISTENER_PID=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	set_seccomp "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$sock\",
		\"listenerMetadata\":\"brig-test-meta\",
		\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
	# The listener answers mkdir with success without creating anything.
	set_args sh -c 'mkdir /tmp/notified && echo "mkdir=ok"; [ -d /tmp/notified ] || echo "not-created"'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "mkdir=ok"
	assert_contains "$output" "not-created"
	wait "$LISTENER_PID" || true
	LISTENER_PID=
	jq -e . "$state"
	[ "$(jq -r '.fds[0]' "$state")" = seccompFd ]
	[ "$(jq -r '.metadata' "$state")" = brig-test-meta ]
	[ "$(jq -r '.state.id' "$state")" = sc ]
	[ "$(jq -r '.pid' "$state")" -gt 0 ]
	[ "$(jq -r '.pid' "$state")" = "$(jq -r '.state.pid' "$state")" ]
	[ -n "$(jq -r '.ociVersion' "$state")" ]
	[ "$(jq -r '.state.bundle' "$state")" = "$BUNDLE" ]
}

@test "seccomp: SCMP_ACT_NOTIFY answered with an errno by the listener" {
	need_built "$SECCOMP_LISTENER"
	local sock="$BUNDLE/listener.sock" state="$BUNDLE/listener.state"
	"$SECCOMP_LISTENER" "$sock" "$state" --mkdir-errno 31 >"$BUNDLE/listener.out" 2>&1 3>&- &
	LISTENER_PID=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	set_seccomp "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$sock\",
		\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
	set_args sh -c 'mkdir /tmp/notified'
	run brig run sc
	[ "$status" -ne 0 ]
	assert_contains "$output" "Too many links"
}

@test "seccomp: SCMP_ACT_NOTIFY without a listening agent fails the container" {
	set_seccomp "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$BUNDLE/nobody.sock\",
		\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
	set_args true
	run brig run sc
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_no_leftovers sc
	fi
}

@test "seccomp: the compiled filter is cached under --root and reused" {
	requires brig
	allow_but '{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":13}'
	set_args sh -c 'mkdir /tmp/d'
	run brig run sc1
	assert_contains "$output" "Permission denied"
	[ -d "$ROOT/@seccomp-cache" ]
	local files
	files="$(ls "$ROOT/@seccomp-cache")"
	[ "$(echo "$files" | wc -l)" -eq 1 ]
	[[ "$files" == *.bpf ]]
	[ "$(stat -c %a "$ROOT/@seccomp-cache/$files")" = 600 ]
	local before
	before="$(stat -c %Y.%i "$ROOT/@seccomp-cache/$files")"
	run brig run sc2
	assert_contains "$output" "Permission denied"
	# Same profile: the same entry, not rewritten.
	[ "$(ls "$ROOT/@seccomp-cache")" = "$files" ]
	[ "$(stat -c %Y.%i "$ROOT/@seccomp-cache/$files")" = "$before" ]
	# `list` does not show the cache as a container.
	run brig list -q
	[[ "$output" != *seccomp-cache* ]]
}

@test "seccomp: brig's hardened default profile runs a busybox shell and blocks escapes" {
	install_probe
	# Take the profile from `brig spec --hardened`, so runc can run it too.
	local spec
	spec="$(mktemp -d "$BUNDLE/spec.XXXXXX")"
	( cd "$spec" && "$BRIG" spec --hardened )
	local profile
	profile="$(jq -c '.linux.seccomp' "$spec/config.json")"
	[ "$profile" != null ]
	set_seccomp "$profile"
	# Root with CAP_SYS_ADMIN: only the filter stands in the way.
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN","CAP_SYS_TIME","CAP_SYS_MODULE","CAP_SYS_BOOT","CAP_SYSLOG"] |
		.process.capabilities.effective = .process.capabilities.bounding |
		.process.capabilities.permitted = .process.capabilities.bounding'
	set_args sh -c 'echo hello >/tmp/f && cat /tmp/f && ls / >/dev/null && ps >/dev/null && echo shell-ok
		confine_probe syscall getpid mount umount2 unshare setns keyctl add_key bpf userfaultfd \
			perf_event_open kexec_load init_module open_by_handle_at clock_settime reboot swapon \
			syslog clone3 clone_newns personality_query personality_norandom io_uring_setup pivot_root'
	run brig run sc
	[ "$status" -eq 0 ]
	assert_contains "$output" "hello"
	assert_contains "$output" "shell-ok"
	assert_contains "$output" "getpid: ok"
	local s
	for s in mount umount2 unshare setns keyctl add_key bpf userfaultfd perf_event_open kexec_load \
		init_module open_by_handle_at clock_settime reboot swapon syslog pivot_root; do
		assert_contains "$output" "$s: EPERM"
	done
	assert_contains "$output" "clone3: ENOSYS"
	assert_contains "$output" "clone_newns: ENOSYS"
	assert_contains "$output" "personality_query: ok"
	assert_contains "$output" "personality_norandom: ENOSYS"
	assert_contains "$output" "io_uring_setup: ENOSYS"
}
