#!/usr/bin/env bats
# Known container-escape classes, each with a regression test that attacks
# from inside the container and fails if the boundary gives way:
#   CVE-2019-5736  overwrite the runtime binary through /proc/PID/exe
#   CVE-2024-21626 inherit a host fd or a host cwd (run, exec, --cwd)
#   CVE-2021-30465 redirect a mount onto the host through a symlink
#   masked /proc paths read through a symlink or /proc/PID/root
#   capability gain through a setuid binary under noNewPrivileges
#   ptrace or signal a process outside the container's pid namespace
# Covers any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	install_probe
}

teardown() {
	[ -n "${HOST_PID:-}" ] && kill "$HOST_PID" 2>/dev/null
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	[ -n "${RT_COPY:-}" ] && rm -f "$RT_COPY"
	return 0
}

@test "security: the container cannot write to the runtime binary via /proc/PID/exe (CVE-2019-5736)" {
	# Attack a copy of the runtime, so a successful attack breaks nothing.
	RT_COPY="$(mktemp /tmp/brig-test-runtime.XXXXXX)"
	cp "$RUNTIME" "$RT_COPY"
	chmod 0755 "$RT_COPY"
	local before
	before="$(sha256sum <"$RT_COPY")"
	# Inside: keep trying to open every visible process's exe for writing;
	# record any that opened.
	set_args sh -c 'while :; do for f in /proc/[0-9]*/exe; do
		confine_probe write "$f" 2>/dev/null | grep -q ": ok" && readlink "$f" >>/tmp/wrote
		done; done'
	RUNTIME="$RT_COPY" run_detached attack
	local i
	for i in $(seq 20); do
		RUNTIME="$RT_COPY" brig exec attack true
	done
	run brig exec attack sh -c 'cat /tmp/wrote 2>/dev/null; echo end'
	[ "$status" -eq 0 ]
	[ "$output" = end ]
	[ "$(sha256sum <"$RT_COPY")" = "$before" ]
	# And the init cannot open its own runtime-provided exe either.
	run brig exec attack confine_probe write /proc/1/exe
	assert_contains "$output" "write: ETXTBSY"
}

@test "security: no host fd reaches the container process (CVE-2024-21626)" {
	set_args confine_probe fds
	# Extra fds open in the caller must not leak either.
	run brig run fds 7</etc/hostname 8>/dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "security: no host fd reaches an exec'd process (CVE-2024-21626)" {
	set_args sleep 100
	run_detached fds
	wait_for_status fds running
	run brig exec fds confine_probe fds 7</etc/hostname
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "security: cwd /proc/self/fd/N cannot reach the host (CVE-2024-21626)" {
	local marker="brig-escape-marker-$$"
	touch "/tmp/$marker"
	local n
	for n in 3 4 5 6 7 8 9; do
		update_config ".process.cwd = \"/proc/self/fd/$n\""
		set_args sh -c 'for i in 1 2 3 4 5 6 7 8; do cd .. 2>/dev/null; done; ls /tmp 2>/dev/null; ls ../../../../../../tmp 2>/dev/null; readlink /proc/self/cwd'
		run brig run "cwd$n"
		# Either refused, or the process is inside its own root.
		[[ "$output" != *"$marker"* ]] || { rm -f "/tmp/$marker"; false; }
	done
	rm -f "/tmp/$marker"
}

@test "security: exec --cwd /proc/self/fd/N cannot reach the host (CVE-2024-21626)" {
	local marker="brig-escape-marker-x$$"
	touch "/tmp/$marker"
	set_args sleep 100
	run_detached cwdx
	wait_for_status cwdx running
	local n
	for n in 3 4 5 6 7 8 9; do
		run brig exec --cwd "/proc/self/fd/$n" cwdx sh -c 'for i in 1 2 3 4 5 6 7 8; do cd .. 2>/dev/null; done; ls /tmp 2>/dev/null; ls ../../../../../../tmp 2>/dev/null'
		[[ "$output" != *"$marker"* ]] || { rm -f "/tmp/$marker"; false; }
	done
	rm -f "/tmp/$marker"
}

@test "security: a symlinked mount destination stays inside the rootfs (CVE-2021-30465)" {
	HOST_DIR="$(test_tmpdir hostdir)"
	# Absolute and relative links that would point at HOST_DIR if the runtime
	# followed them on the host.
	ln -s "$HOST_DIR" "$BUNDLE/rootfs/evil-abs"
	ln -s "../../../../../../../../..$HOST_DIR" "$BUNDLE/rootfs/evil-rel"
	update_config '.mounts += [
		{"destination":"/evil-abs","type":"tmpfs","source":"tmpfs","options":["size=1m"]},
		{"destination":"/evil-rel/sub","type":"tmpfs","source":"tmpfs","options":["size=1m"]}]'
	set_args sh -c 'touch /evil-abs/pwned-abs /evil-rel/sub/pwned-rel && echo wrote
		grep -c " '"$HOST_DIR"' tmpfs" /proc/self/mounts'
	run brig run sym
	# Whether the runtime refuses the config or confines the mounts, the
	# host directory stays untouched and nothing is mounted on it.
	[ -z "$(ls -A "$HOST_DIR")" ]
	! grep -q " $HOST_DIR " /proc/self/mountinfo || false
	if [ "$status" -eq 0 ]; then
		assert_contains "$output" "wrote"
	fi
}

@test "security: masked /proc paths stay masked through symlinks and /proc/PID/root" {
	# (/proc/kcore is masked too, but this host's kernel has none; keys and
	# timer_list have content on every kernel.)
	[ -s /proc/keys ] || [ -n "$(head -c 1 /proc/keys)" ] || skip "host /proc/keys is empty"
	set_args sh -c 'ln -s /proc/timer_list /tmp/tl
		echo "link=$(cat /tmp/tl 2>/dev/null | wc -c)"
		echo "root=$(cat /proc/self/root/proc/timer_list 2>/dev/null | wc -c)"
		echo "pid1=$(cat /proc/1/root/proc/keys 2>/dev/null | wc -c)"
		echo "cwd=$(cd /proc/self/root/proc && cat ./keys 2>/dev/null | wc -c)"
		echo "control=$(cat /proc/1/root/proc/uptime | wc -c)"
		echo "fw=$(ls -A /sys/firmware 2>/dev/null | wc -l)"
		confine_probe write /proc/sys/kernel/hostname
		confine_probe syscall mount umount2'
	run brig run mask
	[ "$status" -eq 0 ]
	assert_contains "$output" "link=0"
	assert_contains "$output" "root=0"
	assert_contains "$output" "pid1=0"
	assert_contains "$output" "cwd=0"
	[[ "$output" != *"control=0"* ]]
	assert_contains "$output" "fw=0"
	assert_contains "$output" "write: EROFS"
	# Without CAP_SYS_ADMIN the masks cannot be unmounted or covered.
	assert_contains "$output" "mount: EPERM"
	assert_contains "$output" "umount2: EPERM"
}

@test "security: a setuid binary gains nothing under noNewPrivileges" {
	install_probe 4755
	update_config '.process.user = {"uid":1000,"gid":1000}'
	set_args confine_probe whoami
	run brig run nnp
	[ "$status" -eq 0 ]
	assert_contains "$output" "euid=1000"
	assert_contains "$output" "capeff=0000000000000000"
	assert_contains "$output" "nnp=1"

	# Control: without noNewPrivileges the same binary does gain root and
	# the bounding set, so the check above can fail.
	update_config '.process.noNewPrivileges = false'
	run brig run nonnp
	[ "$status" -eq 0 ]
	assert_contains "$output" "euid=0"
	assert_contains "$output" "capeff=$(cap_mask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE)"
}

@test "security: no ptrace or signal to processes outside the pid namespace" {
	sleep 1000 &
	HOST_PID=$!
	update_config '.process.capabilities.bounding += ["CAP_SYS_PTRACE"] |
		.process.capabilities.effective += ["CAP_SYS_PTRACE"] |
		.process.capabilities.permitted += ["CAP_SYS_PTRACE"]'
	set_args sh -c "confine_probe kill $HOST_PID; confine_probe ptrace $HOST_PID
		[ -e /proc/$HOST_PID/status ] && echo visible
		sleep 100 & confine_probe kill \$!; confine_probe ptrace \$!; kill \$!"
	run brig run pidns
	[ "$status" -eq 0 ]
	# Outside: not even visible. Inside (control): allowed.
	local outside inside
	outside="$(sed -n 1,2p <<<"$output")"
	inside="$(sed -n '3,$p' <<<"$output")"
	assert_contains "$outside" "kill: ESRCH"
	assert_contains "$outside" "ptrace: ESRCH"
	[[ "$output" != *visible* ]]
	assert_contains "$inside" "kill: ok"
	assert_contains "$inside" "ptrace: ok"
	kill -0 "$HOST_PID"
}
