#!/usr/bin/env bats
# Attacks on brig from a hostile container process (session 6, h1). Each
# test reproduces an attack that worked on the brig before its fix (see
# docs/security.md, "Escape classes").
#
# The waiting init: between `create` and `start` the container's init is
# brig code waiting for `start`, with brig's environment (the engine's or
# the operator's, not the container's) and fds, and, with
# noNewPrivileges, without its seccomp filter (loaded last before execve)
# and LSM exec label. It had dropped its capabilities to the container's
# and was dumpable, so any process of the container with those
# capabilities (one `exec`'d into the created container, or a container
# sharing the pid namespace) could ptrace it, run system calls the filter
# would have refused, and read /proc/PID/environ, fds and memory. The
# probes are tests/tools/confine_probe (`ptrace PID`: PTRACE_SEIZE) and
# busybox. Any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	install_probe
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	teardown_bundle
	[ -n "${PF_DIR:-}" ] && rm -rf "$PF_DIR" "$PF_DIR-victim"
	return 0
}

# A value only brig's own environment holds, never the container's.
SECRET="brig-h1-secret-$$"

@test "waiting init: a process exec'd into a created container cannot ptrace it nor read brig's environment" {
	BRIG_TEST_CALLER_SECRET="$SECRET" create_container wi
	wait_for_status wi created
	# uid 0 and the same capabilities as the init: only dumpability decides
	run brig exec wi confine_probe ptrace 1
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ptrace: EPERM"* ]]
	run brig exec wi sh -c "grep -q $SECRET /proc/1/environ && echo LEAKED; readlink /proc/1/fd/0; readlink /proc/1/exe"
	echo "$output"
	[[ "$output" != *LEAKED* ]]
	[[ "$output" == *"Permission denied"* ]]
	[[ "$output" != *"/dev/null"* ]]
	# the init still becomes the container's process, dumpable as usual
	brig start wi
	wait_for_status wi running
	run brig exec wi sh -c 'tr "\0" "\n" </proc/1/environ; confine_probe ptrace 1'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"HOME=/root"* ]]
	[[ "$output" != *"$SECRET"* ]]
	[[ "$output" == *"ptrace: ok"* ]]
}

@test "waiting init: a container sharing the pid namespace cannot ptrace another's waiting init" {
	local apid bpid inner
	set_cgroup_path a
	run_detached a
	apid="$(brig state a | jq -r .pid)"
	# b joins a's pid namespace, as a pod's containers do
	set_cgroup_path b
	update_config ".linux.namespaces = [.linux.namespaces[] | if .type == \"pid\" then .path = \"/proc/$apid/ns/pid\" else . end]"
	BRIG_TEST_CALLER_SECRET="$SECRET" create_container b
	wait_for_status b created
	bpid="$(brig state b | jq -r .pid)"
	# b's init as a's processes see it: the last NSpid field
	inner="$(awk '/^NSpid:/ { print $NF }' "/proc/$bpid/status")"
	[ -n "$inner" ] && [ "$inner" != "$bpid" ]
	run brig exec a sh -c "confine_probe ptrace $inner; grep -q $SECRET /proc/$inner/environ && echo LEAKED"
	echo "$output"
	[[ "$output" == *"ptrace: EPERM"* ]]
	[[ "$output" != *LEAKED* ]]
	brig delete -f b
	brig delete -f a
	assert_no_leftovers
}

# The kept cgroup: reset keeps the container's cgroup for the next tenant.
# With a v1 cgroupfs mounted rw (`brig check`: kernel-fs-writable) a uid-0
# tenant writes its own cgroup's limits without any capability; it raised
# pids.max and the memory limit, every reset check passed, and the next
# tenant ran without the config's limits. (On cgroup v2 the kernel refuses
# writes to the limits of a cgroup namespace's root from inside.)
@test "reset: limits a tenant raised through a writable cgroupfs are not handed to the next tenant" {
	requires cgroup_v1
	local d report
	# (a read-only root: reset refuses a writable one without the ephemeral layer)
	update_config '.linux.resources = {"pids": {"limit": 48}, "memory": {"limit": 268435456}}
		| .mounts += [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
			"options": ["nosuid", "noexec", "nodev", "relatime", "rw"]}] | .root.readonly = true'
	run_detached lim
	run brig exec lim sh -c 'echo max >/sys/fs/cgroup/pids/pids.max &&
		echo -1 >/sys/fs/cgroup/memory/memory.limit_in_bytes &&
		cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes'
	echo "$output"
	# the tenant's write worked (the attack's premise)
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = max ]
	run brig reset lim
	echo "$output"
	[ "$status" -eq 0 ]
	report="$output"
	brig start lim
	# the host's view of the kept cgroup, and the next tenant's
	for d in $(test_cgroup_dirs); do
		if [ -f "$d/pids.max" ]; then
			[ "$(cat "$d/pids.max")" = 48 ]
		fi
		if [ -f "$d/memory.limit_in_bytes" ]; then
			[ "$(cat "$d/memory.limit_in_bytes")" = 268435456 ]
		fi
	done
	run brig exec lim sh -c 'cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes'
	echo "$output"
	[ "${lines[0]}" = 48 ]
	[ "${lines[1]}" = 268435456 ]
	# and the report says so
	echo "$report" | grep -q '"check":"cgroup.limits","ok":true'
}

# The pinned network namespace: reset keeps it for the next tenant only
# when the tenant could not change it. Needing /proc/sys read-only only for
# a process.user of uid 0 missed every other way to uid 0: here a uid-1000
# tenant without noNewPrivileges runs a setuid-root program of the image
# and writes a net sysctl of its namespace (uid 0 needs no capability for
# that); the namespace was kept and the next tenant got the tenant's value.
@test "reset: a net sysctl a non-root tenant wrote through a setuid program does not reach the next tenant" {
	local pid ns1 ns2 host
	install_probe 4755
	update_config '.process.user = {"uid": 1000, "gid": 1000}
		| .process.noNewPrivileges = false
		| .linux.readonlyPaths -= ["/proc/sys"]
		| .annotations["run.brig.reset"] = "true" | .root.readonly = true'
	host="$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)"
	run_detached sc
	pid="$(brig state sc | jq .pid)"
	ns1="$(readlink "/proc/$pid/ns/net")"
	run brig exec sc sh -c 'id -u; confine_probe put /proc/sys/net/ipv4/ip_unprivileged_port_start 7;
		cat /proc/sys/net/ipv4/ip_unprivileged_port_start'
	echo "$output"
	# the attack's premise: a uid-1000 tenant changed it in its namespace
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = "put: ok" ]
	[ "${lines[2]}" = 7 ]
	run brig reset sc
	echo "$output"
	[ "$status" -eq 0 ]
	brig start sc
	pid="$(brig state sc | jq .pid)"
	ns2="$(readlink "/proc/$pid/ns/net")"
	run brig exec sc cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	echo "$output ($ns1 -> $ns2)"
	[ "$output" = 1024 ]
	[ "$ns1" != "$ns2" ]
	# the host's own value was never touched
	[ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" = "$host" ]
}

# --pid-file: brig writes it through PATH.tmp.PID and rename(2). The
# temporary name is predictable (brig's pid), and the pid file's directory
# may belong to a less privileged user (an operator's `sudo brig run
# --pid-file ~alice/ctr.pid`). That user planted a symlink under the
# temporary name and root brig truncated and wrote the file it points to.
# brig_with_planted_tmp DIR ARGS...: the runtime exec'd by a shell whose
# pid (hence brig's, which re-executes in place) the attacker knows; the
# attacker, user nobody, plants the symlink first. Output in $BUNDLE/pf.log
# (a container must not hold the test's pipes).
brig_with_planted_tmp() {
	local dir="$1"
	shift
	sh -c 'dir="$1" victim="$2"; shift 2
		setpriv --reuid 65534 --regid 65534 --clear-groups ln -s "$victim" "$dir/ctr.pid.tmp.$$" || exit 99
		exec "$@"' sh "$dir" "$VICTIM" "$RUNTIME" --root "$ROOT" "$@" </dev/null >"$BUNDLE/pf.log" 2>&1
}

@test "pid-file: a symlink planted at the temporary name by the directory's owner is not followed (create, exec)" {
	requires program:setpriv
	local dir
	dir="$(test_tmpdir pidfile)"
	PF_DIR="$dir"
	VICTIM="$dir-victim"
	echo precious >"$VICTIM"
	chmod 0644 "$VICTIM"
	chown 65534:65534 "$dir"
	brig_with_planted_tmp "$dir" create --pid-file "$dir/ctr.pid" pf || { cat "$BUNDLE/pf.log"; false; }
	[ "$(cat "$VICTIM")" = precious ]
	# the pid file is brig's own, holding the init's pid
	[ ! -L "$dir/ctr.pid" ]
	[ "$(cat "$dir/ctr.pid")" = "$(brig state pf | jq .pid)" ]
	brig_with_planted_tmp "$dir" exec -d --pid-file "$dir/ctr.pid" pf sleep 100 || { cat "$BUNDLE/pf.log"; false; }
	[ "$(cat "$VICTIM")" = precious ]
	[ ! -L "$dir/ctr.pid" ]
	process_alive "$(cat "$dir/ctr.pid")"
	brig delete -f pf
}

# The pinned network namespace again: reset reused it when its socket
# counters were zero. Connections that ended leave their destinations in
# the namespace's TCP metrics cache (kept for an hour, listed by anyone in
# the namespace); the tenant ends connections to 127.77.1.1..3 without
# leaving TIME_WAIT (recycled by a new SYN, then reset), so the next tenant
# read addresses the last one chose: a channel between tenants. The tools
# are tests/tools/reset_tenant metrics-leave / metrics-read.
@test "reset: a tenant's TCP metrics cache entries do not reach the next tenant" {
	local t="$CONFINE_TOOLS/reset_tenant"
	need_built "$t"
	cp "$t" "$BUNDLE/rootfs/bin/reset_tenant"
	update_config '.annotations["run.brig.reset"] = "true" | .root.readonly = true'
	run_detached tm
	run brig exec tm sh -c 'reset_tenant metrics-leave 3 && reset_tenant metrics-read'
	echo "$output"
	[ "$status" -eq 0 ]
	# the attack's premise: only the metrics are left, no socket
	[[ "$output" == *"metrics 3"* ]]
	run brig reset tm
	echo "$output"
	[ "$status" -eq 0 ]
	brig start tm
	run brig exec tm reset_tenant metrics-read
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "metrics 0" ]
}

# The exec socket: `start` releases the init by connecting to
# ROOT/ID/exec.sock. Its mode came from the caller's umask: with umask 0
# and a state root others may traverse (0711, as docs/security.md
# describes it), any local user could connect and start the container
# behind the engine's back (whose own `start` then failed).
@test "exec.sock: a local user cannot start a created container (umask 0, state root 0711)" {
	requires program:setpriv program:python3
	local pid py=/usr/bin/python3
	chmod 0711 "$ROOT"
	(umask 0 && create_container es)
	pid="$(brig state es | jq .pid)"
	run setpriv --reuid 65534 --regid 65534 --clear-groups "$py" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused:", e.strerror)
    sys.exit(0)
print("connected")
s.recv(100)' "$ROOT/es/exec.sock"
	echo "$output"
	[[ "$output" == *"refused"* ]]
	sleep 0.2
	# still waiting for start: brig, not the container's program
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" != "sleep 1000 " ]
	brig start es
	wait_for_status es running
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 1000 " ]
}

# The same channel through IPv6 flow labels: a shared label lingers up to
# 150 s after its socket is closed (no privilege needed), with the 20 bits
# its maker chose, and /proc/net/ip6_flowlabel lists it to everyone in the
# namespace. No socket is left, so the namespace was reused.
@test "reset: a tenant's lingering IPv6 flow labels do not reach the next tenant" {
	local t="$CONFINE_TOOLS/reset_tenant"
	need_built "$t"
	[ -e /proc/net/ip6_flowlabel ] || skip "the host has no IPv6 (no /proc/net/ip6_flowlabel)"
	cp "$t" "$BUNDLE/rootfs/bin/reset_tenant"
	update_config '.annotations["run.brig.reset"] = "true" | .root.readonly = true'
	run_detached fl
	run brig exec fl sh -c 'reset_tenant flowlabel-leave 2 && grep -c 7700 /proc/net/ip6_flowlabel'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = 2 ]
	run brig reset fl
	echo "$output"
	[ "$status" -eq 0 ]
	brig start fl
	run brig exec fl sh -c 'grep -c 7700 /proc/net/ip6_flowlabel || true'
	echo "$output"
	[ "$output" = 0 ]
}

# A hostile image's /etc/passwd: brig reads it (for HOME) in the init,
# before execve, while create (or reset) waits for it with the state lock
# held. A FIFO there blocked the open for ever; /dev/zero kept the loop
# reading for ever. Only a regular file is read now, and HOME falls back
# to "/". Each run is bounded here by 20 s.
@test "passwd: a FIFO or /dev/zero as the image's /etc/passwd does not hang run" {
	local kind st
	update_config '.process.args = ["sh", "-c", "echo HOME=$HOME"]'
	for kind in fifo zero; do
		rm -f "$BUNDLE/rootfs/etc/passwd"
		if [ "$kind" = fifo ]; then
			mkfifo "$BUNDLE/rootfs/etc/passwd"
		else
			ln -s /dev/zero "$BUNDLE/rootfs/etc/passwd"
		fi
		# stdio on a file: a hung init must not hold the test's pipes
		st=0
		timeout -k 5 20 "$RUNTIME" --root "$ROOT" run "pw-$kind" </dev/null >"$BUNDLE/pw.out" 2>&1 || st=$?
		echo "$kind: $st $(cat "$BUNDLE/pw.out")"
		[ "$st" -eq 0 ]
		[ "$(cat "$BUNDLE/pw.out")" = "HOME=/" ]
		brig delete -f "pw-$kind"
	done
}
