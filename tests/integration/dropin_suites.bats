#!/usr/bin/env bats
# Drop-in, round 2 (issue #26 items 1, 3, 4, 6, 7, 8, 9, 2): what runc's and
# crun's own test suites caught, each proved against the behaviour of
# Debian's runc on this host:
#   id mappings over the whole 32-bit range (what the kernel takes in
#     uid_map), refused only where the kernel would refuse them;
#   linux.sysctl kernel.hostname refused with a uts namespace (it conflicts
#     with the hostname field), kernel.domainname kept as runc keeps it;
#   update --memory -1 on cgroup v1 with a memory+swap limit;
#   createContainer hooks in the container's root;
#   bind sources inside the rootfs resolved through earlier mounts and the
#     container's own symlinks, destinations written with the rootfs path;
#   a bind's own atime flags replace its source's;
#   NOTIFY_SOCKET naming a socket that does not exist yet;
#   process.scheduler SCHED_FIFO/SCHED_RR with v1 realtime group scheduling.
# Any cgroup mode unless a test says otherwise.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	rt_parent_cleanup
	return 0
}

# userns_identity UIDSIZE GIDSIZE: a user namespace mapping ids 0.. to the
# same host ids (root of the container is root of the host).
userns_identity() {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": '"$1"'}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": '"$2"'}]'
}

# ---- item 1: id mappings ----

@test "userns: a mapping of every id (size 4294967295) is taken, as the kernel takes it" {
	userns_identity 4294967295 4294967295
	set_args sh -c 'cat /proc/self/uid_map /proc/self/gid_map; id -u; id -g'
	run brig run m1
	echo "$output"
	[ "$status" -eq 0 ]
	# the kernel prints "first lower count" with padding
	[ "$(echo "${lines[0]}" | tr -s ' ' | sed 's/^ //')" = "0 0 4294967295" ]
	[ "$(echo "${lines[1]}" | tr -s ' ' | sed 's/^ //')" = "0 0 4294967295" ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = 0 ]
	assert_no_leftovers m1
}

@test "userns: mappings above 2147483647 that the kernel takes work; a wrap or an overlap is refused by name" {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536},
			{"containerID": 4294967290, "hostID": 3000000000, "size": 5}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536},
			{"containerID": 3000000000, "hostID": 4294967000, "size": 295}]'
	set_args sh -c 'tr -s " " </proc/self/uid_map; tr -s " " </proc/self/gid_map'
	run brig run m2
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "4294967290 3000000000 5"
	assert_contains "$output" "3000000000 4294967000 295"
	# 4294967291 + 5 passes 4294967295: the kernel refuses it, so does brig
	update_config '.linux.uidMappings[1].containerID = 4294967291'
	run brig run m3
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.uidMappings[1]: containerID 4294967291 + size 5 is beyond the id range"
	update_config '.linux.uidMappings[1] = {"containerID": 1, "hostID": 4294967295, "size": 1}'
	run brig run m3
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.uidMappings[1]: hostID 4294967295 + size 1 is beyond the id range"
	update_config '.linux.uidMappings[1] = {"containerID": 70000, "hostID": 1000, "size": 10}'
	run brig run m3
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.uidMappings[1]: its hostIDs overlap those of linux.uidMappings[0]"
	update_config '.linux.uidMappings[1] = {"containerID": 0, "hostID": 5000, "size": 10}'
	run brig run m3
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.uidMappings[1]: its containerIDs overlap those of linux.uidMappings[0]"
	assert_no_leftovers
}

# ---- item 3: kernel.hostname and kernel.domainname ----

@test "sysctl: kernel.hostname is refused with a uts namespace, even equal to hostname or without one; kernel.domainname is kept" {
	set_args sh -c 'cat /proc/sys/kernel/hostname /proc/sys/kernel/domainname'
	local before
	before="$(cat /proc/sys/kernel/hostname)"
	for cfg in '.linux.sysctl = {"kernel.hostname": "brig"}' \
		'.linux.sysctl = {"kernel/hostname": "other"}' \
		'del(.hostname) | .linux.sysctl = {"kernel.hostname": "other"}'; do
		update_config "$cfg"
		run brig run h1
		echo "$cfg -> $status: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" 'conflicts with the OCI "hostname" field'
		# nothing ran: no output of the process
		[[ "$output" != *"brig"$'\n'* ]]
		assert_no_leftovers h1
	done
	[ "$(cat /proc/sys/kernel/hostname)" = "$before" ]
	# kernel.domainname as docker sets it (no domainname field), or equal
	# to the field, is applied inside, as runc applies it
	update_config '.hostname = "brig" | .linux.sysctl = {"kernel.domainname": "d1.example"}'
	run brig run h2
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'brig\nd1.example')" ]
	update_config '.domainname = "d1.example"'
	run brig run h3
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'brig\nd1.example')" ]
	# ... and refused when it differs from the field (crun)
	update_config '.domainname = "other.example"'
	run brig run h4
	[ "$status" -eq 1 ]
	assert_contains "$output" 'linux.sysctl "kernel.domainname": "d1.example" conflicts with domainname "other.example"'
	assert_no_leftovers
}

# ---- item 4: update --memory -1 with a memory+swap limit ----

@test "update: --memory -1 lifts a memory+swap limit too (cgroup v1: in the order the kernel takes)" {
	local mem swapfile
	if [ -d /sys/fs/cgroup/memory ]; then
		mem="/sys/fs/cgroup/memory/$TEST_CGROUP_PARENT/$CGROUP_NAME"
		swapfile=memory.memsw.limit_in_bytes
		[ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] ||
			skip "the kernel does not account swap (no memory.memsw.limit_in_bytes)"
	else
		mem="/sys/fs/cgroup/$TEST_CGROUP_PARENT/$CGROUP_NAME"
		swapfile=memory.swap.max
	fi
	update_config '.linux.resources.memory = {"limit": 33554432, "swap": 50331648}'
	set_args sleep 1000
	run_detached u1
	[ -e "$mem/$swapfile" ] || skip "the kernel does not account swap (no $swapfile)"
	# 64 MiB in one buffer: more than memory+swap allows, the OOM killer
	# takes dd
	run brig exec u1 dd if=/dev/zero of=/dev/null bs=64M count=1
	echo "before: $status $output"
	[ "$status" -ne 0 ]
	if [ "$swapfile" = memory.memsw.limit_in_bytes ]; then
		# a limit above memory+swap alone: the kernel says EINVAL, brig
		# names the other limit
		run brig update --memory 100M u1
		[ "$status" -eq 1 ]
		assert_contains "$output" "above the memory+swap limit memory.memsw.limit_in_bytes 50331648"
	fi
	run brig update --memory -1 u1
	echo "update: $status $output"
	[ "$status" -eq 0 ]
	cat "$mem/memory.limit_in_bytes" "$mem/memory.max" "$mem/$swapfile" 2>/dev/null || true
	if [ "$swapfile" = memory.memsw.limit_in_bytes ]; then
		[ "$(cat "$mem/memory.limit_in_bytes")" = "$(cat "$mem/$swapfile")" ]
		[ "$(cat "$mem/memory.limit_in_bytes")" -gt 4611686018427387904 ]
	else
		[ "$(cat "$mem/memory.max")" = max ]
		[ "$(cat "$mem/$swapfile")" = max ]
	fi
	# inside: the same 64 MiB fit now
	run brig exec u1 dd if=/dev/zero of=/dev/null bs=64M count=1
	echo "after: $status $output"
	[ "$status" -eq 0 ]
	# what is recorded for the next update is what is in force
	jq -e '.linux.resources.memory.limit == -1 and .linux.resources.memory.swap == -1' \
		"$ROOT/u1/config.json"
	brig delete -f u1
	assert_no_leftovers u1
}

# ---- item 8: a bind's own atime flags replace the source's ----

# mount_opts PATH: the per-mount options of PATH in the container's
# mountinfo output ($output), split one per line.
mount_opts() {
	awk -v p="$1" '$5 == p { print $6 }' <<<"$output" | tail -n1 | tr , '\n'
}

@test "mounts: nodiratime on a bind of a noatime source gives relatime,nodiratime; a clearing option keeps the source's" {
	add_mount '{"destination": "/n", "type": "tmpfs", "source": "tmpfs", "options": ["noatime"]}'
	add_mount '{"destination": "/nd", "type": "bind", "source": "'"$BUNDLE"'/rootfs/n", "options": ["bind", "nodiratime"]}'
	add_mount '{"destination": "/ns", "type": "bind", "source": "'"$BUNDLE"'/rootfs/n", "options": ["bind", "nodiratime", "strictatime"]}'
	add_mount '{"destination": "/nk", "type": "bind", "source": "'"$BUNDLE"'/rootfs/n", "options": ["bind", "diratime", "norelatime"]}'
	set_args cat /proc/self/mountinfo
	run brig run a1
	[ "$status" -eq 0 ]
	mount_opts /nd
	# runc: "relatime,nodiratime" (the bind's own atime replaces noatime)
	mount_opts /nd | grep -qx relatime
	mount_opts /nd | grep -qx nodiratime
	! mount_opts /nd | grep -qx noatime || false
	# strictatime: neither relatime nor noatime
	! mount_opts /ns | grep -qxE 'relatime|noatime' || false
	mount_opts /ns | grep -qx nodiratime
	# options that only clear a flag leave the source's noatime
	mount_opts /nk | grep -qx noatime
	! mount_opts /nk | grep -qx nodiratime || false
}

# ---- item 6: the hooks' working directories ----

@test "hooks: createContainer runs in the container's root, prestart/createRuntime/poststart in the bundle (as runc)" {
	HOST_DIR="$(test_tmpdir hooks)"
	local log="$HOST_DIR/log" k
	# the container's root has a file the host's / has not
	echo in-container >"$BUNDLE/rootfs/marker"
	cat >"$HOST_DIR/hook.sh" <<-EOF
	#!/bin/sh
	echo "\$1 \$(pwd) \$(cat ./marker 2>/dev/null || echo -)" >>$log
	EOF
	chmod 755 "$HOST_DIR/hook.sh"
	# startContainer resolves in the container: the same script there,
	# writing to a bind of the host directory
	sed "s|$log|/log/log|" "$HOST_DIR/hook.sh" >"$BUNDLE/rootfs/bin/hook.sh"
	chmod 755 "$BUNDLE/rootfs/bin/hook.sh"
	add_mount '{"destination": "/log", "type": "bind", "source": "'"$HOST_DIR"'", "options": ["bind"]}'
	for k in prestart createRuntime createContainer poststart; do
		update_config ".hooks.$k = [{\"path\": \"$HOST_DIR/hook.sh\", \"args\": [\"hook.sh\", \"$k\"]}]"
	done
	update_config '.hooks.startContainer = [{"path": "/bin/hook.sh", "args": ["hook.sh", "startContainer"]}]
		| .process.cwd = "/tmp"'
	set_args true
	# called from elsewhere, with --bundle
	cd /
	create_container k1 --bundle "$BUNDLE"
	brig start k1
	cat "$log"
	grep -qx "prestart $BUNDLE -" "$log"
	grep -qx "createRuntime $BUNDLE -" "$log"
	# createContainer: in the rootfs with the mounts made: ./marker is the
	# container's file
	grep -qx "createContainer $BUNDLE/rootfs in-container" "$log"
	# startContainer: in the process's cwd, inside the container
	grep -qx "startContainer /tmp -" "$log"
	grep -qx "poststart $BUNDLE -" "$log"
	brig delete -f k1
	assert_no_leftovers k1
}

# ---- item 7: bind sources inside the rootfs, in mount order ----

# MAPS_100000: a mount's own mappings, container 0.. to host 100000..
MAPS_100000='"uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
	"gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],'

# requires_idmap_fs: the bundle's file system takes idmapped mounts (tmpfs
# only since Linux 6.3, ramfs never: the VM's initramfs).
requires_idmap_fs() {
	local fs v
	fs="$(stat -f -c %T "$BUNDLE")"
	v="$(uname -r | awk -F. '{ printf "%d%03d", $1, $2 }')"
	[ "$fs" != ramfs ] && { [ "$fs" != tmpfs ] || [ "$v" -ge 6003 ]; } ||
		skip "the bundle's $fs cannot be idmapped on Linux $(uname -r)"
}

# userns_100000: a user namespace with container root at host 100000, the
# rootfs owned by it.
userns_100000() {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	chown -R 100000:100000 "$BUNDLE/rootfs"
}

# layered_binds [userns] [idmap]: host directories a and b bound at /mnt and
# /mnt/sub (the second destination written as the rootfs's host path, as
# runc takes it), then /mnt/sub bound again by its host path inside the
# rootfs onto /final: that source is what the earlier entries put there.
layered_binds() {
	local opts='"rbind"' maps=""
	HOST_DIR="$(test_tmpdir layers)"
	mkdir -p "$HOST_DIR/a/sub" "$HOST_DIR/b"
	echo from-a >"$HOST_DIR/a/sub/file"
	echo from-b >"$HOST_DIR/b/file"
	if [[ " $* " == *" userns "* ]]; then
		userns_100000
		# only the host's root may enter: brig opens these for the init
		chmod 0700 "$HOST_DIR"
	fi
	[[ " $* " == *" idmap "* ]] && maps="$MAPS_100000" && opts='"rbind", "idmap"'
	mkdir -p "$BUNDLE/rootfs/mnt" "$BUNDLE/rootfs/final"
	add_mount '{"destination": "/mnt", "type": "bind", "source": "'"$HOST_DIR"'/a", "options": ["bind"]}'
	add_mount '{"destination": "'"$BUNDLE"'/rootfs/mnt/sub", "type": "bind", "source": "'"$HOST_DIR"'/b", "options": ["bind"]}'
	add_mount '{"destination": "/final", "type": "bind", "source": "'"$BUNDLE"'/rootfs/mnt/sub", '"$maps"' "options": ['"$opts"']}'
	set_args sh -c 'cat /mnt/sub/file /final/file; ls -d /tmp/brig-test-bundle* 2>/dev/null || echo none'
	run brig run l1
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = from-b ]
	[ "${lines[1]}" = from-b ]
	# the destination was the container's /mnt/sub, not a new path
	[ "${lines[2]}" = none ]
	assert_no_leftovers l1
}

@test "mounts: a bind source inside the rootfs is resolved through earlier mounts; a destination may be written with the rootfs path" {
	layered_binds
}

@test "mounts: the same in a user namespace (sources brig opens for the init)" {
	layered_binds userns
}

@test "mounts: the same with an idmapped bind of the in-rootfs source (made by brig outside the user namespace)" {
	requires_idmap_fs
	layered_binds userns idmap
}

# symlink_source [userns]: an absolute symlink in the image names a path
# that exists both on the host and inside the image; a bind of the
# symlink's host path inside the rootfs must show the image's (with userns:
# idmapped, so brig opens it outside the container's user namespace).
symlink_source() {
	local opts='"bind"' maps=""
	HOST_DIR="$(test_tmpdir symsrc)"
	chmod 0755 "$HOST_DIR"
	echo host-file >"$HOST_DIR/marker"
	mkdir -p "$BUNDLE/rootfs$HOST_DIR"
	echo container-file >"$BUNDLE/rootfs$HOST_DIR/marker"
	ln -s "$HOST_DIR" "$BUNDLE/rootfs/link"
	if [ "${1:-}" = userns ]; then
		userns_100000
		maps="$MAPS_100000"
		opts='"bind", "idmap"'
	fi
	add_mount '{"destination": "/seen", "type": "bind", "source": "'"$BUNDLE"'/rootfs/link", '"$maps"' "options": ['"$opts"']}'
	add_mount '{"destination": "/host", "type": "bind", "source": "'"$HOST_DIR"'", "options": ["bind", "ro"]}'
	set_args sh -c 'cat /seen/marker /host/marker'
	run brig run s1
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = container-file ]
	[ "${lines[1]}" = host-file ]
}

@test "mounts: a bind source inside the rootfs does not follow the image's symlinks to the host; one outside stays a host path" {
	symlink_source
	# a relative source that leaves the rootfs through ".." is the host
	# path it says, whatever symlink of the image it passes (here one to
	# "/"): the bundle's own config.json
	ln -s / "$BUNDLE/rootfs/up"
	update_config '.mounts[-2].source = "rootfs/up/../../config.json" | .mounts[-2].destination = "/cfg"'
	set_args sh -c 'head -c 1 /cfg; echo'
	run brig run s2
	[ "$status" -eq 0 ]
	[ "$output" = "{" ]
	assert_no_leftovers
}

@test "mounts: the same for an idmapped source brig opens outside the container's user namespace" {
	requires_idmap_fs
	symlink_source userns
	assert_no_leftovers
}

# ---- item 2: SCHED_FIFO / SCHED_RR with v1 realtime group scheduling ----

# rt_parent_cleanup: the test's own top-level cgroup parent, every hierarchy.
rt_parent_cleanup() {
	local d
	[ -n "${RT_PARENT:-}" ] || return 0
	for d in /sys/fs/cgroup/*/"$RT_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

@test "scheduler: SCHED_FIFO and SCHED_RR run where realtime groups are scheduled: the cpu cgroup gets a budget from its parents, given back at delete" {
	[ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] ||
		skip "no /sys/fs/cgroup/cpu/cpu.rt_runtime_us (cgroup v1 cpu with CONFIG_RT_GROUP_SCHED needed)"
	[ "$(cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us)" -gt 300000 ] ||
		skip "the host's cpu root has little realtime budget to give"
	local root_before pid policy
	root_before="$(cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us)"
	RT_PARENT="brig-test-rtsched.$$.$BATS_TEST_NUMBER"
	# side by side under one parent brig makes
	for policy in SCHED_FIFO:1 SCHED_RR:2; do
		update_config ".linux.cgroupsPath = \"/$RT_PARENT/${policy%:*}\"
			| .process.scheduler = {\"policy\": \"${policy%:*}\", \"priority\": 10}"
		set_args sleep 100
		run_detached "r${policy#*:}"
		pid="$(brig state "r${policy#*:}" | jq -r .pid)"
		# fields 40 (rt_priority) and 41 (policy) of the process itself
		[ "$(sed -E 's/^.*\) //' "/proc/$pid/stat" | cut -d' ' -f38)" = 10 ]
		[ "$(sed -E 's/^.*\) //' "/proc/$pid/stat" | cut -d' ' -f39)" = "${policy#*:}" ]
		# 10% of the period for the container
		[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/${policy%:*}/cpu.rt_runtime_us")" = 100000 ]
	done
	# the parent brig made holds both
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" = 200000 ]
	local p1 p2 i
	p1="$(brig state r1 | jq -r .pid)" p2="$(brig state r2 | jq -r .pid)"
	brig delete -f r1
	brig delete -f r2
	# given back at delete once the kernel lets go of the removed cgroups:
	# their processes must be reaped first (this host's PID 1 takes a few
	# seconds), else a later delete below that parent gives it back
	for i in $(seq 100); do
		[ ! -e "/proc/$p1" ] && [ ! -e "/proc/$p2" ] && break
		sleep 0.1
	done
	if [ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" != 0 ]; then
		update_config ".linux.cgroupsPath = \"/$RT_PARENT/plain\" | del(.process.scheduler)"
		set_args true
		brig run r3
	fi
	# nothing of brig's budget stays on the parent
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" = 0 ]
	# the host's root keeps its own
	[ "$(cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us)" = "$root_before" ]
	assert_no_leftovers
}

@test "scheduler: a realtime policy under a parent with too little budget fails naming that parent, and leaves nothing" {
	[ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] ||
		skip "no /sys/fs/cgroup/cpu/cpu.rt_runtime_us (cgroup v1 cpu with CONFIG_RT_GROUP_SCHED needed)"
	RT_PARENT="brig-test-rtsched.$$.$BATS_TEST_NUMBER"
	mkdir -p "/sys/fs/cgroup/cpu/$RT_PARENT"
	echo 500 >"/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us"
	update_config ".linux.cgroupsPath = \"/$RT_PARENT/x/c\"
		| .process.scheduler = {\"policy\": \"SCHED_RR\", \"priority\": 5}"
	set_args true
	run brig run r3
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "process.scheduler.policy SCHED_RR"
	assert_contains "$output" "/sys/fs/cgroup/cpu/$RT_PARENT (cpu.rt_runtime_us 500) has too little left"
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" = 500 ]
	[ ! -e "/sys/fs/cgroup/cpu/$RT_PARENT/x/c" ]
	[ ! -e "$ROOT/r3" ]
	rt_parent_cleanup
}
