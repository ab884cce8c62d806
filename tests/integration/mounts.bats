#!/usr/bin/env bats
# The container's filesystem view, proved from inside the container: the
# mounts of config.json with their flags (read from /proc/self/mountinfo),
# bind/rbind, recursive attributes, masked and read-only paths, a read-only
# root, /dev (default nodes, linux.devices, links), relative paths, and
# symlinks in the image or in a volume that try to send a mount to the host.
# Runs on any cgroup mode; the cgroup mount test checks v1/hybrid or v2.

load helpers

setup() {
	requires root
	setup_bundle
	# mountinfo fields: 5 mount point, 6 per-mount options, then after " - ":
	# type, source, super options. mnt DEST prints "OPTIONS TYPE SUPER".
	cat >"$BUNDLE/rootfs/bin/mnt" <<-'EOF'
	#!/bin/sh
	awk -v d="$1" '$5 == d { for (i = 7; $i != "-"; i++); print $6, $(i+1), $(i+3) }' /proc/self/mountinfo
	EOF
	chmod 755 "$BUNDLE/rootfs/bin/mnt"
}

teardown() {
	teardown_bundle
	[ -n "${HOST_TARGET:-}" ] && rm -rf "$HOST_TARGET"
	return 0
}

@test "mounts: the default mounts are present with their flags" {
	run_sh 'for d in /proc /dev /dev/pts /dev/shm /dev/mqueue /sys; do echo "$d $(mnt $d)"; done'
	[ "$status" -eq 0 ]
	local line
	line="$(grep '^/proc ' <<<"$output")"; [[ "$line" == "/proc "*" proc "* ]]
	line="$(grep '^/dev ' <<<"$output")"
	[[ "$line" == *" tmpfs "* ]]; has_opt "$(cut -d' ' -f2 <<<"$line")" nosuid
	has_opt "$(cut -d' ' -f4 <<<"$line")" size=65536k; has_opt "$(cut -d' ' -f4 <<<"$line")" mode=755
	line="$(grep '^/dev/pts ' <<<"$output")"
	[[ "$line" == *" devpts "* ]]
	has_opt "$(cut -d' ' -f2 <<<"$line")" noexec
	has_opt "$(cut -d' ' -f4 <<<"$line")" gid=5; has_opt "$(cut -d' ' -f4 <<<"$line")" mode=620
	has_opt "$(cut -d' ' -f4 <<<"$line")" ptmxmode=666
	line="$(grep '^/dev/shm ' <<<"$output")"
	for o in nosuid nodev noexec; do has_opt "$(cut -d' ' -f2 <<<"$line")" $o; done
	line="$(grep '^/dev/mqueue ' <<<"$output")"; [[ "$line" == *" mqueue "* ]]
	line="$(grep '^/sys ' <<<"$output")"
	[[ "$line" == *" sysfs "* ]]
	for o in ro nosuid nodev noexec; do has_opt "$(cut -d' ' -f2 <<<"$line")" $o; done
}

@test "mounts: the root is a bind of the rootfs and / is not shared with the host" {
	run_sh 'awk '"'"'$5 == "/"'"'"' /proc/self/mountinfo; ls /'
	[ "$status" -eq 0 ]
	local root
	root="$(head -1 <<<"$output")"
	[[ "$root" == *" $BUNDLE/rootfs / "* ]] || [[ "$root" == *"/rootfs / "* ]]
	# rslave by default: it may be a slave of the host, never its peer
	[[ "$root" != *"shared:"* ]]
	assert_contains "$output" "bin"
}

@test "mounts: tmpfs with size, mode, ro, nosuid, noexec" {
	add_mount '{"destination": "/t1", "type": "tmpfs", "source": "tmpfs", "options": ["size=4m", "mode=700", "nosuid", "noexec"]}'
	add_mount '{"destination": "/t2", "type": "tmpfs", "source": "tmpfs", "options": ["ro", "nodev", "size=2m"]}'
	run_sh 'mnt /t1; mnt /t2; stat -c %a /t1; cp /bin/busybox /t1/bb && /t1/bb true; echo "exec=$?"; touch /t2/x; echo "write=$?"'
	[ "$status" -eq 0 ]
	local t1 t2
	t1="$(sed -n 1p <<<"$output")"; t2="$(sed -n 2p <<<"$output")"
	has_opt "$(cut -d' ' -f1 <<<"$t1")" nosuid; has_opt "$(cut -d' ' -f1 <<<"$t1")" noexec
	has_opt "$(cut -d' ' -f3 <<<"$t1")" size=4096k; has_opt "$(cut -d' ' -f3 <<<"$t1")" mode=700
	has_opt "$(cut -d' ' -f1 <<<"$t2")" ro; has_opt "$(cut -d' ' -f1 <<<"$t2")" nodev
	has_opt "$(cut -d' ' -f3 <<<"$t2")" size=2048k
	[ "$(sed -n 3p <<<"$output")" = 700 ]
	assert_contains "$output" "exec=126"
	assert_contains "$output" "write=1"
	assert_contains "$output" "Read-only file system"
}

@test "mounts: bind and rbind; relative bind source is taken from the bundle" {
	mkdir -p "$BUNDLE/vol"
	echo hello >"$BUNDLE/vol/file"
	# a submount inside the source, made by an earlier mount of this container
	mkdir -p "$BUNDLE/rootfs/src/sub"
	echo lower >"$BUNDLE/rootfs/src/sub/under"
	add_mount '{"destination": "/src/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount "{\"destination\": \"/b\", \"source\": \"$BUNDLE/rootfs/src\", \"options\": [\"bind\"]}"
	add_mount "{\"destination\": \"/rb\", \"source\": \"$BUNDLE/rootfs/src\", \"options\": [\"rbind\"]}"
	add_mount '{"destination": "/vol", "source": "vol", "options": ["bind", "rw"]}'
	run_sh 'echo "b=$(mnt /b/sub | wc -l) rb=$(mnt /rb/sub | wc -l)"; cat /b/sub/under; ls /rb/sub | wc -l; cat /vol/file; echo written >/vol/new'
	[ "$status" -eq 0 ]
	assert_contains "$output" "b=0 rb=1"
	assert_contains "$output" "lower"
	assert_contains "$output" "hello"
	[ "$(cat "$BUNDLE/vol/new")" = written ]
}

@test "mounts: bind with ro, nosuid, nodev, noexec keeps the flags" {
	mkdir -p "$BUNDLE/vol"
	add_mount '{"destination": "/vol", "type": "bind", "source": "vol", "options": ["rbind", "ro", "nosuid", "nodev", "noexec"]}'
	add_mount "{\"destination\": \"/etc/myhosts\", \"source\": \"$BUNDLE/rootfs/etc/hosts\", \"options\": [\"bind\", \"ro\"]}"
	run_sh 'mnt /vol; mnt /etc/myhosts; touch /vol/x; echo "write=$?"; cat /etc/myhosts'
	[ "$status" -eq 0 ]
	local v
	v="$(sed -n 1p <<<"$output" | cut -d' ' -f1)"
	for o in ro nosuid nodev noexec; do has_opt "$v" $o; done
	has_opt "$(sed -n 2p <<<"$output" | cut -d' ' -f1)" ro
	assert_contains "$output" "write=1"
	assert_contains "$output" "127.0.0.1 localhost"
}

@test "mounts: rro makes submounts read-only, ro only the top" {
	mkdir -p "$BUNDLE/rootfs/src/sub"
	add_mount '{"destination": "/src/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount "{\"destination\": \"/rro\", \"source\": \"$BUNDLE/rootfs/src\", \"options\": [\"rbind\", \"rro\"]}"
	add_mount "{\"destination\": \"/ro\", \"source\": \"$BUNDLE/rootfs/src\", \"options\": [\"rbind\", \"ro\"]}"
	run_sh 'mnt /rro/sub; mnt /ro/sub; touch /rro/sub/x; echo "rro=$?"; touch /ro/sub/x; echo "ro=$?"; touch /ro/x; echo "top=$?"'
	[ "$status" -eq 0 ]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	has_opt "$(sed -n 2p <<<"$output" | cut -d' ' -f1)" rw
	assert_contains "$output" "rro=1"
	assert_contains "$output" "ro=0"
	assert_contains "$output" "top=1"
}

@test "mounts: recursive nosuid/noexec and propagation options" {
	mkdir -p "$BUNDLE/rootfs/src/sub"
	add_mount '{"destination": "/src/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount "{\"destination\": \"/r\", \"source\": \"$BUNDLE/rootfs/src\", \"options\": [\"rbind\", \"rnosuid\", \"rnoexec\", \"rshared\"]}"
	run_sh 'awk '"'"'$5 == "/r" || $5 == "/r/sub" { print $5, $6, $7 }'"'"' /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	local top sub
	top="$(grep '^/r ' <<<"$output")"; sub="$(grep '^/r/sub ' <<<"$output")"
	for o in nosuid noexec; do has_opt "$(cut -d' ' -f2 <<<"$top")" $o; has_opt "$(cut -d' ' -f2 <<<"$sub")" $o; done
	[[ "$(cut -d' ' -f3 <<<"$top")" == shared:* ]]
	[[ "$(cut -d' ' -f3 <<<"$sub")" == shared:* ]]
}

@test "mounts: relative destinations are taken from /" {
	add_mount '{"destination": "rel/dir", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_sh 'mnt /rel/dir'
	[ "$status" -eq 0 ]
	[[ "$output" == *" tmpfs "* ]]
}

@test "mounts: overlay with lowerdir, upperdir, workdir" {
	mkdir -p "$BUNDLE/lower" "$BUNDLE/upper" "$BUNDLE/work"
	echo from-lower >"$BUNDLE/lower/l"
	add_mount "{\"destination\": \"/ov\", \"type\": \"overlay\", \"source\": \"overlay\", \"options\": [\"lowerdir=$BUNDLE/lower\", \"upperdir=$BUNDLE/upper\", \"workdir=$BUNDLE/work\"]}"
	run_sh 'cat /ov/l; echo up >/ov/u; mnt /ov'
	[ "$status" -eq 0 ]
	assert_contains "$output" "from-lower"
	assert_contains "$output" " overlay "
	[ "$(cat "$BUNDLE/upper/u")" = up ]
}

@test "mounts: masked paths read empty, also a masked directory" {
	mkdir -p "$BUNDLE/rootfs/secret"
	echo topsecret >"$BUNDLE/rootfs/secret/a"
	echo topsecret >"$BUNDLE/rootfs/etc/secretfile"
	update_config '.linux.maskedPaths += ["/secret", "/etc/secretfile", "/proc/kcore", "/does/not/exist"]'
	[ -n "$(head -c 1 /proc/keys)" ] || skip "host /proc/keys is empty"
	run_sh 'echo "keys=$(cat /proc/keys | wc -c)"; echo "dir=$(ls -A /secret | wc -l)"; echo "file=$(cat /etc/secretfile | wc -c)"; echo "kcore=$(cat /proc/kcore 2>/dev/null | wc -c)"; touch /secret/x; echo "write=$?"; echo "fw=$(ls -A /sys/firmware | wc -l)"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "keys=0"
	assert_contains "$output" "dir=0"
	assert_contains "$output" "file=0"
	assert_contains "$output" "kcore=0"
	assert_contains "$output" "write=1"
	assert_contains "$output" "fw=0"
}

@test "mounts: masked and read-only paths hold through symlinks, /proc/self/root and remount" {
	[ -n "$(head -c 1 /proc/keys)" ] || skip "host /proc/keys is empty"
	run_sh 'ln -s /proc/keys /tmp/k; echo "link=$(cat /tmp/k | wc -c)"; echo "root=$(cat /proc/self/root/proc/keys | wc -c)"; echo "pid1=$(cat /proc/1/root/proc/keys | wc -c)"; mount -o remount,rw /proc/sys; echo "remount=$?"; umount /proc/keys; echo "umount=$?"; echo "after=$(cat /proc/keys | wc -c)"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "link=0"
	assert_contains "$output" "root=0"
	assert_contains "$output" "pid1=0"
	[[ "$output" != *"remount=0"* ]]
	[[ "$output" != *"umount=0"* ]]
	assert_contains "$output" "after=0"
}

@test "mounts: read-only paths refuse writes, the rest of /proc does not" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	run_sh 'mnt /proc/sys; echo brig-ro >/proc/sys/kernel/hostname; echo "sys=$?"; echo 0 >/proc/self/oom_score_adj; echo "self=$?"'
	[ "$status" -eq 0 ]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	assert_contains "$output" "sys=1"
	assert_contains "$output" "Read-only file system"
	assert_contains "$output" "self=0"
}

@test "mounts: root.readonly makes / read-only, mounts below stay writable" {
	update_config '.root.readonly = true'
	run_sh 'mnt /; touch /newfile; echo "root=$?"; touch /dev/shm/x; echo "shm=$?"'
	[ "$status" -eq 0 ]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	assert_contains "$output" "root=1"
	assert_contains "$output" "shm=0"
	[ ! -e "$BUNDLE/rootfs/newfile" ]
}

@test "mounts: default device nodes" {
	run_sh 'for d in null zero full random urandom tty; do echo "$d $(stat -c "%F %t:%T %a %u:%g" /dev/$d)"; done; echo x >/dev/null; echo "null=$?"; head -c 4 /dev/zero | wc -c'
	[ "$status" -eq 0 ]
	assert_contains "$output" "null character special file 1:3 666 0:0"
	assert_contains "$output" "zero character special file 1:5 666 0:0"
	assert_contains "$output" "full character special file 1:7 666 0:0"
	assert_contains "$output" "random character special file 1:8 666 0:0"
	assert_contains "$output" "urandom character special file 1:9 666 0:0"
	assert_contains "$output" "tty character special file 5:0 666 0:0"
	assert_contains "$output" "null=0"
}

@test "mounts: linux.devices with type, numbers, fileMode, uid and gid" {
	update_config '.linux.devices = [
		{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 384, "uid": 1000, "gid": 29},
		{"path": "/dev/loopx", "type": "b", "major": 7, "minor": 200, "fileMode": 432},
		{"path": "/dev/sub/ctl", "type": "u", "major": 1, "minor": 3},
		{"path": "/dev/fifo", "type": "p", "fileMode": 420}]'
	run_sh 'for d in fuse loopx sub/ctl fifo; do echo "$d $(stat -c "%F %t:%T %a %u:%g" /dev/$d)"; done'
	[ "$status" -eq 0 ]
	assert_contains "$output" "fuse character special file a:e5 600 1000:29"
	assert_contains "$output" "loopx block special file 7:c8 660 0:0"
	assert_contains "$output" "sub/ctl character special file 1:3 666 0:0"
	assert_contains "$output" "fifo fifo 0:0 644 0:0"
}

@test "mounts: an invalid device type is refused naming the field" {
	update_config '.linux.devices = [{"path": "/dev/x", "type": "x", "major": 1, "minor": 3}]'
	run_sh 'true'
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" 'linux.devices[0].type: "x" is not one of c, b, u, p'
		assert_no_leftovers
	fi
}

@test "mounts: /dev/fd, std links and /dev/ptmx" {
	run_sh 'for l in fd stdin stdout stderr ptmx; do echo "$l -> $(readlink /dev/$l)"; done; ls /dev/fd/ >/dev/null && echo fd-ok; [ -c /dev/pts/ptmx ] && echo ptmx-ok'
	[ "$status" -eq 0 ]
	assert_contains "$output" "fd -> /proc/self/fd"
	assert_contains "$output" "stdin -> /proc/self/fd/0"
	assert_contains "$output" "stdout -> /proc/self/fd/1"
	assert_contains "$output" "stderr -> /proc/self/fd/2"
	assert_contains "$output" "ptmx -> pts/ptmx"
	assert_contains "$output" "fd-ok"
	assert_contains "$output" "ptmx-ok"
}

@test "mounts: a symlink in the image cannot send a mount to the host" {
	HOST_TARGET="$(mktemp -d /tmp/brig-host-target.XXXXXX)"
	# evil -> an absolute host path that exists on the host (and not in the rootfs)
	ln -s "$HOST_TARGET" "$BUNDLE/rootfs/evil"
	# deeper -> a host path that does not exist: a runtime following it on
	# the host would mkdir it there
	ln -s "$HOST_TARGET/created" "$BUNDLE/rootfs/deeper"
	echo payload >"$BUNDLE/payload"
	add_mount '{"destination": "/evil", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount '{"destination": "/deeper/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount '{"destination": "/evil/file", "source": "payload", "options": ["bind"]}'
	run_sh "mnt $HOST_TARGET; mnt $HOST_TARGET/created/sub; cat /evil/file; echo marker >/evil/marker"
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1p <<<"$output")" == *" tmpfs "* ]]
	[[ "$(sed -n 2p <<<"$output")" == *" tmpfs "* ]]
	assert_contains "$output" "payload"
	# nothing reached the host directory
	[ -z "$(ls -A "$HOST_TARGET")" ]
	# the path was created inside the rootfs instead (created/sub is on
	# the tmpfs mounted there, gone with the container)
	[ -d "$BUNDLE/rootfs/$HOST_TARGET" ]
}

@test "mounts: a symlink inside a volume cannot redirect a later mount (CVE-2021-30465 class)" {
	HOST_TARGET="$(mktemp -u /tmp/brig-host-swap.XXXXXX)"
	mkdir -p "$BUNDLE/vol"
	ln -s "$HOST_TARGET" "$BUNDLE/vol/link"
	ln -s / "$BUNDLE/vol/root"
	add_mount '{"destination": "/vol", "source": "vol", "options": ["rbind"]}'
	add_mount '{"destination": "/vol/link/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount '{"destination": "/vol/root/etc/volroot", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_sh "mnt $HOST_TARGET/sub; mnt /etc/volroot"
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1p <<<"$output")" == *" tmpfs "* ]]
	[[ "$(sed -n 2p <<<"$output")" == *" tmpfs "* ]]
	[ ! -e "$HOST_TARGET" ]
	[ ! -e /etc/volroot ]
}

@test "mounts: a mount destination of / that is not a bind is refused" {
	add_mount '{"destination": "/", "type": "tmpfs", "source": "tmpfs"}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" 'destination "/" is the root: only a bind mount may replace the rootfs'
		assert_no_leftovers
	fi
}

@test "mounts: cgroup mount shows the container's cgroups read-only" {
	add_mount '{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}'
	run_sh 'awk '"'"'$5 ~ "^/sys/fs/cgroup" { for (i = 7; $i != "-"; i++); print $5, $6, $(i+1) }'"'"' /proc/self/mountinfo; cat /proc/self/cgroup; mkdir /sys/fs/cgroup/pids/x; echo "mkdir=$?"'
	[ "$status" -eq 0 ]
	assert_contains "$output" "mkdir=1"
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		[[ "$output" == *"/sys/fs/cgroup ro,"*" cgroup2"* ]]
	else
		# v1/hybrid: a tmpfs holding one cgroup mount per hierarchy
		[[ "$(grep '^/sys/fs/cgroup ' <<<"$output")" == *" tmpfs" ]]
		local h
		for h in /sys/fs/cgroup/*; do
			[ "$(stat -f -c %T "$h")" = cgroupfs ] || continue
			[ "$(basename "$h")" = unified ] && continue
			grep -q "^$h ro,.* cgroup$" <<<"$output"
		done
		# the cgroup namespace makes the container's cgroup the root
		grep -q '^[0-9]*:memory:/$' <<<"$output"
	fi
}

@test "mounts: sysfs without a network namespace" {
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	run_sh 'mnt /sys; ls /sys/class/net | wc -l'
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1p <<<"$output")" == *" sysfs "* ]]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	[ "$(sed -n 2p <<<"$output")" -ge 1 ]
}

@test "mounts: --no-pivot chroots into the rootfs and hides the host mounts" {
	update_config '.process.args = ["sh", "-c", "cat /proc/self/mountinfo; ls /"]'
	run brig run --no-pivot ctr-nopivot
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" " / "
	assert_contains "$output" "bin"
	# the host's own mounts (e.g. /sys/fs/cgroup hierarchies) are not listed
	! grep -q " /sys/fs/cgroup/memory " <<<"$output" || false
}

@test "mounts: tmpcopyup fills the tmpfs with the directory's content" {
	mkdir -p "$BUNDLE/rootfs/data/sub"
	echo content >"$BUNDLE/rootfs/data/sub/file"
	ln -s sub/file "$BUNDLE/rootfs/data/link"
	chmod 0750 "$BUNDLE/rootfs/data"
	chown 1000:29 "$BUNDLE/rootfs/data/sub/file"
	add_mount '{"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup", "size=1m"]}'
	run_sh 'mnt /data; cat /data/link; stat -c "%a %u:%g" /data /data/sub/file; echo new >/data/new'
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1p <<<"$output")" == *" tmpfs "* ]]
	assert_contains "$output" "content"
	assert_contains "$output" "750 0:0"
	assert_contains "$output" "644 1000:29"
	[ ! -e "$BUNDLE/rootfs/data/new" ]
}

@test "mounts: a tmpfs over a directory keeps its mode unless mode= is given" {
	mkdir -p "$BUNDLE/rootfs/keep" "$BUNDLE/rootfs/set"
	chmod 0710 "$BUNDLE/rootfs/keep" "$BUNDLE/rootfs/set"
	add_mount '{"destination": "/keep", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	add_mount '{"destination": "/set", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m", "mode=755"]}'
	run_sh 'stat -c "%n %a" /keep /set'
	[ "$status" -eq 0 ]
	assert_contains "$output" "/keep 710"
	# runc 1.1 chmods the tmpfs to the directory's mode even with mode=
	# (a bug fixed in later runc); brig honours mode=
	if is_brig; then
		assert_contains "$output" "/set 755"
	fi
}

@test "mounts: a read-only /dev still gets its device nodes" {
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	run_sh 'mnt /dev; [ -c /dev/null ] && echo null-ok; touch /dev/x; echo "write=$?"; echo x >/dev/null; echo "null=$?"'
	[ "$status" -eq 0 ]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	assert_contains "$output" "null-ok"
	assert_contains "$output" "write=1"
	assert_contains "$output" "null=0"
}

@test "mounts: a failing mount is named in the error" {
	add_mount '{"destination": "/x", "type": "nosuchfs", "source": "none"}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	assert_contains "$output" "/x"
	if is_brig; then
		assert_contains "$output" "mount none to /x: No such device"
		assert_no_leftovers
	fi
}

# A user namespace mapping container 0-65535 to host 100000-165535.
use_userns() {
	chown -R 100000:100000 "$BUNDLE/rootfs"
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
}

@test "mounts: in a user namespace device nodes are the host's, bind-mounted" {
	use_userns
	update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]'
	run_sh 'for d in null zero tty fuse; do echo "$d $(stat -c "%t:%T" /dev/$d) $(mnt /dev/$d | cut -d" " -f2)"; done; echo x >/dev/null && echo null-ok'
	[ "$status" -eq 0 ]
	assert_contains "$output" "null 1:3 devtmpfs"
	assert_contains "$output" "zero 1:5 devtmpfs"
	assert_contains "$output" "tty 5:0 devtmpfs"
	assert_contains "$output" "fuse a:e5 devtmpfs"
	assert_contains "$output" "null-ok"
}

@test "mounts: in a user namespace without a network namespace /sys is the host's, read-only" {
	requires brig # runc 1.1 fails to mount sysfs there
	use_userns
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	run_sh 'mnt /sys; ls /sys/kernel >/dev/null && echo sys-ok; touch /sys/kernel/x; echo "write=$?"'
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1p <<<"$output")" == *" sysfs "* ]]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" ro
	assert_contains "$output" "sys-ok"
	assert_contains "$output" "write=1"
}

@test "mounts: idmap shows the container's owners on an unmapped volume" {
	requires brig # runc 1.1 has no idmapped mounts
	use_userns
	mkdir -p "$BUNDLE/vol/sub"
	touch "$BUNDLE/vol/f"
	chown 5:7 "$BUNDLE/vol/sub"
	add_mount '{"destination": "/vol", "source": "vol", "options": ["rbind", "idmap"]}'
	run_sh 'mnt /vol; stat -c "%n %u:%g" /vol/f /vol/sub; touch /vol/new && echo created'
	[ "$status" -eq 0 ]
	has_opt "$(sed -n 1p <<<"$output" | cut -d' ' -f1)" idmapped
	assert_contains "$output" "/vol/f 0:0"
	assert_contains "$output" "/vol/sub 5:7"
	assert_contains "$output" "created"
	# created by the container's root: owned by the host's root on disk
	[ "$(stat -c %u:%g "$BUNDLE/vol/new")" = 0:0 ]
}

@test "mounts: idmap with the mount's own uidMappings/gidMappings" {
	requires brig
	mkdir -p "$BUNDLE/vol"
	touch "$BUNDLE/vol/f"
	chown 3:4 "$BUNDLE/vol/f"
	add_mount '{"destination": "/vol", "source": "vol", "options": ["bind", "idmap"],
		"uidMappings": [{"containerID": 0, "hostID": 1000, "size": 10}],
		"gidMappings": [{"containerID": 0, "hostID": 2000, "size": 10}]}'
	run_sh 'stat -c "%u:%g" /vol/f'
	[ "$status" -eq 0 ]
	assert_contains "$output" "1003:2004"
}

@test "mounts: rootfsPropagation is applied to the container's /" {
	local p
	for p in rshared private rslave; do
		update_config ".linux.rootfsPropagation = \"$p\""
		run_sh 'awk '"'"'$5 == "/" { print $7 }'"'"' /proc/self/mountinfo'
		[ "$status" -eq 0 ]
		# runc 1.1 leaves / private even for rshared (it only uses the value
		# before pivot_root); brig applies it to the container's /
		case "$p" in
		rshared) ! is_brig || [[ "$output" == shared:* ]] ;;
		*) [[ "$output" != *shared:* ]] ;;
		esac
		brig delete -f "ctr$BATS_TEST_NUMBER" >/dev/null 2>&1 || true
	done
	update_config '.linux.rootfsPropagation = "sideways"'
	run_sh 'true'
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" 'linux.rootfsPropagation: "sideways"'
	fi
}
