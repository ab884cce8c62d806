#!/usr/bin/env bats
# Validation that keeps a hostile config off the host (issue #11 items 2, 3
# and 10). Each refusal is checked for its named error, exit status 1, and
# that nothing was left behind (no state, cgroup or process):
#   linux.sysctl: only ipc sysctls with an ipc namespace, net.* with a
#     network namespace, kernel.domainname with a uts namespace (never
#     kernel.hostname: it conflicts with the hostname field)
#     (none of them the host's, also when joined by path); every other key
#     and every malformed key refused; both spellings (dots and slashes).
#     The host's values are read before and after (teardown restores any
#     that a broken runtime changed). Allowed sysctls are read back inside.
#   uid/gid 4294967295 ((uid_t) -1, "unchanged" to setresuid) and any id
#     above 2147483647 in process.user and exec -u/-g/-p: the process never
#     runs as root by accident; id mappings past 4294967294 (the kernel's
#     limit in uid_map, dropin_suites.bats has the rest).
#   a rootfs whose /proc, /sys or /dev is a symlink (inside the rootfs or
#     to a host path) or a file: refused, nothing mounted through it.
# Covers any cgroup mode.

load helpers
load confine_helpers

# Host sysctls a runtime that lets the config through would change.
HOST_SYSCTLS="kernel/core_pattern net/ipv4/conf/lo/forwarding fs/mqueue/queues_max
	kernel/hostname kernel/domainname kernel/msgmax"

setup() {
	requires root
	setup_bundle
	declare -gA SAVED_SYSCTL
	local k
	for k in $HOST_SYSCTLS; do
		SAVED_SYSCTL[$k]="$(cat "/proc/sys/$k")"
	done
}

teardown() {
	[ -n "${NS_PID:-}" ] && kill -KILL "$NS_PID" 2>/dev/null
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	restore_host_sysctls
	return 0
}

# restore_host_sysctls: put back, exactly, every saved host value that
# changed (only a runtime that wrote the host's sysctls changes them).
restore_host_sysctls() {
	local k now
	for k in $HOST_SYSCTLS; do
		[ -n "${SAVED_SYSCTL[$k]+set}" ] || continue
		now="$(cat "/proc/sys/$k")"
		if [ "$now" != "${SAVED_SYSCTL[$k]}" ]; then
			printf '%s\n' "${SAVED_SYSCTL[$k]}" >"/proc/sys/$k"
			echo "# restored host $k (was changed to '$now')" >&3
		fi
	done
}

# assert_host_sysctls_unchanged: every saved host value is still the same.
assert_host_sysctls_unchanged() {
	local k now
	for k in $HOST_SYSCTLS; do
		now="$(cat "/proc/sys/$k")"
		[ "$now" = "${SAVED_SYSCTL[$k]}" ] ||
			{ echo "host $k changed: '${SAVED_SYSCTL[$k]}' -> '$now'" >&2; return 1; }
	done
}

# set_sysctl KEY VALUE: linux.sysctl = {KEY: VALUE} (replacing any other).
set_sysctl() {
	update_config ".linux.sysctl = $(jq -nc --arg k "$1" --arg v "$2" '{($k): $v}')"
}

# without_ns TYPE: drop TYPE from linux.namespaces.
without_ns() {
	update_config ".linux.namespaces |= map(select(.type != \"$1\"))"
}

# join_ns TYPE PATH: linux.namespaces joins TYPE at PATH.
join_ns() {
	update_config ".linux.namespaces |= map(if .type == \"$1\" then .path = \"$2\" else . end)"
}

# other_value FILE: a number different from FILE's.
other_value() {
	echo $(( $(cat "$1") == 0 ? 1 : $(cat "$1") - 1 ))
}

# ---- item 2: linux.sysctl ----

@test "sysctl: kernel.core_pattern (dots or slashes) is refused; the host's is unchanged" {
	local key
	for key in kernel.core_pattern kernel/core_pattern; do
		set_sysctl "$key" "brig-test-core-$$"
		create_fails cp "linux.sysctl \"$key\"" "not namespaced"
		assert_host_sysctls_unchanged
	done
}

@test "sysctl: other host-wide keys are refused by name (vm, kernel, fs, user)" {
	local key
	# The host's current values: a runtime that lets them through changes
	# nothing, but must still refuse them.
	for key in vm.overcommit_memory kernel.randomize_va_space fs/protected_symlinks \
		user.max_user_namespaces; do
		set_sysctl "$key" "$(cat "/proc/sys/$(echo "$key" | tr . /)" 2>/dev/null || echo 1)"
		create_fails other "linux.sysctl \"$key\"" "not namespaced"
	done
	assert_host_sysctls_unchanged
}

@test "sysctl: net.* without a network namespace, or joining the host's, is refused" {
	local v
	v="$(other_value /proc/sys/net/ipv4/conf/lo/forwarding)"
	set_sysctl net.ipv4.conf.lo.forwarding "$v"
	without_ns network
	create_fails net "linux.sysctl \"net.ipv4.conf.lo.forwarding\"" "network namespace"
	assert_host_sysctls_unchanged
	# Joined by a path that is the runtime's (the host's) own.
	update_config '.linux.namespaces += [{"type": "network", "path": "/proc/self/ns/net"}]'
	set_sysctl net/ipv4/conf/lo/forwarding "$v"
	create_fails net "linux.sysctl \"net/ipv4/conf/lo/forwarding\"" "is the host's"
	assert_host_sysctls_unchanged
}

@test "sysctl: ipc sysctls without an ipc namespace, or joining the host's, are refused" {
	local v key
	v="$(( $(cat /proc/sys/fs/mqueue/queues_max) + 1 ))"
	without_ns ipc
	for key in fs.mqueue.queues_max fs/mqueue/queues_max; do
		set_sysctl "$key" "$v"
		create_fails ipc "linux.sysctl \"$key\"" "ipc namespace"
		assert_host_sysctls_unchanged
	done
	set_sysctl kernel.msgmax "$(other_value /proc/sys/kernel/msgmax)"
	create_fails ipc "linux.sysctl \"kernel.msgmax\"" "ipc namespace"
	update_config '.linux.namespaces += [{"type": "ipc", "path": "/proc/self/ns/ipc"}]'
	set_sysctl fs.mqueue.queues_max "$v"
	create_fails ipc "linux.sysctl \"fs.mqueue.queues_max\"" "is the host's"
	assert_host_sysctls_unchanged
}

@test "sysctl: kernel.hostname/domainname without a uts namespace are refused; the host's are unchanged" {
	without_ns uts
	update_config 'del(.hostname)'
	set_sysctl kernel.hostname "brig-evil-$$"
	create_fails uts "linux.sysctl \"kernel.hostname\"" "uts namespace"
	set_sysctl kernel/domainname "brig-evil-$$"
	create_fails uts "linux.sysctl \"kernel/domainname\"" "uts namespace"
	update_config '.linux.namespaces += [{"type": "uts", "path": "/proc/self/ns/uts"}]'
	set_sysctl kernel.domainname "brig-evil-$$"
	create_fails uts "linux.sysctl \"kernel.domainname\"" "is the host's"
	assert_host_sysctls_unchanged
}

@test "sysctl: kernel.hostname that conflicts with hostname is refused" {
	set_args sh -c 'cat /proc/sys/kernel/hostname'
	set_sysctl kernel.hostname other
	run_fails uts "linux.sysctl \"kernel.hostname\"" "conflicts with the OCI \"hostname\" field"
	update_config '.domainname = "brig.example"'
	set_sysctl kernel.domainname other.example
	run_fails uts "linux.sysctl \"kernel.domainname\"" "conflicts with domainname \"brig.example\""
}

@test "sysctl: malformed keys are refused by name" {
	local key
	for key in .net.ipv4.ip_forward net.ipv4.ip_forward. net..ipv4.ip_forward \
		net/ipv4//ip_forward /net/ipv4/ip_forward net/./ipv4/ip_forward \
		net/ipv4/../../kernel/core_pattern; do
		set_sysctl "$key" 1
		create_fails bad "linux.sysctl \"$key\"" "not a valid sysctl name"
	done
	assert_host_sysctls_unchanged
}

@test "sysctl: namespaced sysctls are applied inside (new and joined namespaces)" {
	requires program:unshare
	update_config '.domainname = "brig.example" | .linux.sysctl = {
		"net.ipv4.ip_forward": "1", "net/ipv4/conf/lo/forwarding": "1",
		"kernel.shmmax": "123456789", "kernel/msgmnb": "12345", "fs.mqueue.queues_max": "77",
		"kernel.domainname": "brig.example" }'
	set_args sh -c 'cd /proc/sys; cat net/ipv4/ip_forward net/ipv4/conf/lo/forwarding \
		kernel/shmmax kernel/msgmnb fs/mqueue/queues_max kernel/hostname kernel/domainname'
	run brig run ok
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '1\n1\n123456789\n12345\n77\nbrig\nbrig.example')" ]
	assert_host_sysctls_unchanged
	# A network namespace joined by path that is not the host's.
	unshare -n sleep 1000 &
	NS_PID=$!
	local i
	for i in $(seq 50); do
		[ "$(readlink "/proc/$NS_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	join_ns network "/proc/$NS_PID/ns/net"
	update_config '.linux.sysctl = { "net.ipv4.conf.lo.forwarding": "1" }'
	set_args cat /proc/sys/net/ipv4/conf/lo/forwarding
	run brig run ok
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	[ "$(nsenter --net="/proc/$NS_PID/ns/net" cat /proc/sys/net/ipv4/conf/lo/forwarding)" = 1 ]
	assert_host_sysctls_unchanged
}

# ---- item 3: uid/gid range ----

@test "user: uid/gid 4294967295 or above 2147483647 in process.user is refused, never root" {
	set_args sh -c 'id -u; id -g; id -G'
	update_config '.process.user = { "uid": 4294967295, "gid": 4294967295 }'
	run_fails u "process.user.uid: 4294967295 is out of range"
	[[ "$output" != *$'\n0\n0'* ]]
	update_config '.process.user = { "uid": 1000, "gid": 4294967295 }'
	run_fails u "process.user.gid: 4294967295 is out of range"
	update_config '.process.user = { "uid": 2147483648, "gid": 1000 }'
	run_fails u "process.user.uid: 2147483648 is out of range"
	update_config '.process.user = { "uid": 1000, "gid": 1000, "additionalGids": [ 1, 2147483648 ] }'
	run_fails u "process.user.additionalGids[1]: 2147483648 is out of range"
	# The largest id is fine.
	update_config '.process.user = { "uid": 2147483647, "gid": 2147483647 }'
	run brig run u
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 2147483647 ]
	[ "${lines[1]}" = 2147483647 ]
}

# exec's own failures exit 255 (as runc's), not the process's status.
@test "user: exec -u, -g and -p with ids above 2147483647 are refused, never root" {
	set_args sleep 1000
	run_detached x
	local p
	for p in '"uid": 4294967295, "gid": 4294967295' '"uid": 1000, "gid": 2147483648' \
		'"uid": 1000, "gid": 1000, "additionalGids": [4294967295]'; do
		cat >"$BUNDLE/process.json" <<-EOF
		{ "args": ["sh", "-c", "id -u; id -g"], "env": ["PATH=/bin"], "cwd": "/", "user": { $p } }
		EOF
		run brig exec -p "$BUNDLE/process.json" x
		echo "exec -p {$p} -> $status: $output"
		[ "$status" -eq 255 ]
		assert_contains "$output" "is out of range"
		assert_contains "$output" "process.user."
	done
	local spec
	for spec in 4294967295 4294967295:4294967295 2147483648 1000:2147483648; do
		run brig exec -u "$spec" x id -u
		echo "exec -u $spec -> $status: $output"
		[ "$status" -eq 255 ]
		assert_contains "$output" "is out of range"
		[ "$output" != 0 ]
	done
	run brig exec -u 1000:1000 -g 2147483648 x id -G
	echo "exec -g -> $status: $output"
	[ "$status" -eq 255 ]
	assert_contains "$output" "--additional-gids: 2147483648 is out of range"
}

@test "user: id mappings beyond 0..4294967294 are refused" {
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536},
		{"containerID": 4294967294, "hostID": 200000, "size": 2}]'
	create_fails m "linux.uidMappings[1]: containerID 4294967294 + size 2 is beyond the id range"
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 4294967295, "size": 1}]'
	create_fails m "linux.uidMappings[0]: hostID 4294967295 + size 1 is beyond the id range"
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 0}]'
	create_fails m "linux.gidMappings[0].size: must be at least 1"
	update_config '.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.mounts += [{"destination": "/mnt", "type": "bind", "source": "/tmp",
			"options": ["bind", "idmap"],
			"uidMappings": [{"containerID": 4294967295, "hostID": 100000, "size": 1}],
			"gidMappings": [{"containerID": 0, "hostID": 100000, "size": 1}]}]'
	create_fails m "mounts[6]: uidMappings[0]: containerID 4294967295 + size 1 is beyond the id range"
}

# ---- item 10: /proc, /sys, /dev of the image must be plain directories ----

@test "rootfs: /proc that is a symlink inside the rootfs is refused" {
	rm -rf "$BUNDLE/rootfs/proc"
	mkdir -p "$BUNDLE/rootfs/tmp/p"
	ln -s /tmp/p "$BUNDLE/rootfs/proc"
	set_args cat /proc/self/status
	run_fails p "mount proc to /proc: /proc must be mounted on ordinary directory: /proc in the rootfs is a symlink"
	# Nothing was mounted through it, and it was left as it was.
	[ -z "$(ls -A "$BUNDLE/rootfs/tmp/p")" ]
	[ "$(readlink "$BUNDLE/rootfs/proc")" = /tmp/p ]
	! grep -q " $BUNDLE/rootfs" /proc/self/mountinfo || false
}

@test "rootfs: /proc that is a symlink to a host path is refused; the host path is untouched" {
	HOST_DIR="$(test_tmpdir host)"
	rm -rf "$BUNDLE/rootfs/proc"
	ln -s "$HOST_DIR" "$BUNDLE/rootfs/proc"
	set_args cat /proc/self/status
	run_fails p "mount proc to /proc: /proc must be mounted on ordinary directory: /proc in the rootfs is a symlink"
	[ -z "$(ls -A "$HOST_DIR")" ]
	[ ! -e "$BUNDLE/rootfs$HOST_DIR" ]
	! grep -q " $HOST_DIR " /proc/self/mountinfo || false
	# A dangling one too (the image's own absolute path).
	rm "$BUNDLE/rootfs/proc"
	ln -s /nonexistent/proc "$BUNDLE/rootfs/proc"
	run_fails p "/proc in the rootfs is a symlink"
	[ ! -e "$BUNDLE/rootfs/nonexistent" ]
}

@test "rootfs: /sys that is a symlink or a file, and /proc that is a file, are refused" {
	rm -rf "$BUNDLE/rootfs/sys"
	mkdir -p "$BUNDLE/rootfs/tmp/s"
	ln -s /tmp/s "$BUNDLE/rootfs/sys"
	set_args ls /sys
	run_fails s "mount sysfs to /sys: /sys must be mounted on ordinary directory: /sys in the rootfs is a symlink"
	[ -z "$(ls -A "$BUNDLE/rootfs/tmp/s")" ]
	rm "$BUNDLE/rootfs/sys"
	touch "$BUNDLE/rootfs/sys"
	run_fails s "mount sysfs to /sys: /sys must be mounted on ordinary directory: /sys in the rootfs is not a directory"
	rm "$BUNDLE/rootfs/sys"
	mkdir "$BUNDLE/rootfs/sys"
	rm -rf "$BUNDLE/rootfs/proc"
	touch "$BUNDLE/rootfs/proc"
	run_fails s "mount proc to /proc: /proc must be mounted on ordinary directory: /proc in the rootfs is not a directory"
}

@test "rootfs: /dev that is a symlink is refused, with a /dev mount and without" {
	rm -rf "$BUNDLE/rootfs/dev"
	mkdir -p "$BUNDLE/rootfs/tmp/d"
	ln -s /tmp/d "$BUNDLE/rootfs/dev"
	set_args ls /dev
	run_fails d "mount tmpfs to /dev: /dev must be mounted on ordinary directory: /dev in the rootfs is a symlink"
	[ -z "$(ls -A "$BUNDLE/rootfs/tmp/d")" ]
	# Without a /dev mount the device nodes would be made through it.
	update_config '.mounts |= map(select(.destination | startswith("/dev") | not))'
	run_fails d "set up /dev: /dev must be mounted on ordinary directory: /dev in the rootfs is a symlink"
	[ -z "$(ls -A "$BUNDLE/rootfs/tmp/d")" ]
}
