#!/usr/bin/env bats
# The ephemeral root filesystem (run.brig.rootfs.ephemeral, docs/sandbox.md):
# writes anywhere in the rootfs succeed inside while the bundle's rootfs stays
# byte-for-byte unchanged (a manifest checksummed before and after); a second
# container of the bundle does not see the first one's writes; the tmpfs
# layer's size cap holds (ENOSPC inside); the disk layer under the state dir;
# delete leaves no mount, directory or layer; bad annotation values and
# root.readonly=true are refused by name with nothing left; config mounts
# (a tmpfs /tmp, a bind) and masked/readonly paths still land on top; a
# user-namespace container; brig state, brig features and spec --ephemeral;
# restore refuses it.
# Covers any cgroup mode (nothing here depends on the cgroup layout).

load helpers
load confine_helpers

MAP_HOST=100000

setup() {
	requires root
	setup_bundle
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"'
}

teardown() {
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	return 0
}

# manifest: every path of the bundle's rootfs with its type, mode, owner,
# size, mtime and content checksum.
manifest() {
	(cd "$BUNDLE/rootfs" && find . -xdev -printf '%p %y %m %U:%G %s %T@\n' | sort &&
		find . -xdev -type f -exec sha256sum {} + | sort) | sha256sum
}

@test "ephemeral: writes anywhere succeed inside; the bundle's rootfs is unchanged" {
	local before after
	before="$(manifest)"
	set_args sh -c 'echo new >/etc/passwd && echo x >/newfile && mkdir -p /usr/new/dir &&
		rm /bin/true && echo data >/root/f && cat /etc/passwd && ls /newfile &&
		test ! -e /bin/true && echo wrote-all'
	run brig run eph
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "wrote-all"
	assert_contains "$output" "new"
	after="$(manifest)"
	[ "$before" = "$after" ]
	[ ! -e "$BUNDLE/rootfs/newfile" ]
	[ -e "$BUNDLE/rootfs/bin/true" ]
	[ -z "$(host_mounts | grep -v " - nsfs ")" ]
	assert_no_leftovers
}

@test "ephemeral: a second container of the bundle does not see the first one's writes" {
	set_cgroup_path one
	set_args sh -c 'echo secret >/left-behind; echo tenant1 >>/etc/hostname; sleep 100'
	run_detached one
	wait_for_status one running
	set_cgroup_path two
	set_args sh -c 'ls /left-behind 2>&1; cat /etc/hostname; echo done'
	run brig run two
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "No such file"
	[[ "$output" != *tenant1* ]]
	# The first one's writes are there for it, and nowhere on the host.
	run brig exec one cat /left-behind
	[ "$output" = "secret" ]
	[ ! -e "$BUNDLE/rootfs/left-behind" ]
	brig kill one KILL
	wait_for_status one stopped
	brig delete one
	assert_no_leftovers
}

@test "ephemeral: the size cap holds (ENOSPC inside)" {
	update_config '.annotations["run.brig.rootfs.ephemeral.size"] = "4m"'
	set_args sh -c 'dd if=/dev/zero of=/big bs=1M count=8 2>&1; echo rc=$?; echo size=$(stat -c %s /big)'
	run brig run cap
	echo "$output"
	assert_contains "$output" "No space left on device"
	assert_contains "$output" "rc=1"
	# 4 MiB at most, not 8
	size="$(echo "$output" | sed -n 's/^size=//p')"
	[ "$size" -le $((4 * 1024 * 1024)) ]
	assert_no_leftovers
}

@test "ephemeral: delete leaves nothing: no mount, no dir, no tmpfs" {
	set_args sh -c 'echo x >/f; sleep 100'
	create_container del
	# The layer is in the container's mount namespace only.
	[ -z "$(host_mounts | grep -v " - nsfs ")" ]
	pid="$(brig state del | jq -r .pid)"
	grep -q " / / .* - overlay " "/proc/$pid/mountinfo"
	brig start del
	brig kill del KILL
	wait_for_status del stopped
	brig delete del
	[ -z "$(host_mounts | grep -v " - nsfs ")" ]
	[ ! -e "$BUNDLE/rootfs/f" ]
	assert_no_leftovers
}

@test "ephemeral: the disk layer lives in the state dir and delete removes it" {
	update_config '.annotations["run.brig.rootfs.ephemeral.size"] = "disk"'
	set_args sh -c 'mkdir -p /a/b/c && echo big >/a/b/c/f && ln -s / /a/loop && rm /bin/true && sleep 100'
	run_detached dsk
	wait_for_status dsk running
	state="$(brig state dsk)"
	echo "$state"
	[ "$(echo "$state" | jq -r .brig.rootfs.mode)" = "disk" ]
	upper="$(echo "$state" | jq -r .brig.rootfs.upper)"
	[ "$upper" = "$ROOT/dsk/ephemeral/upper" ]
	for _ in $(seq 50); do [ -e "$upper/a/b/c/f" ] && break; sleep 0.1; done
	[ "$(cat "$upper/a/b/c/f")" = "big" ]
	[ ! -e "$BUNDLE/rootfs/a" ]
	[ -z "$(host_mounts | grep -v " - nsfs ")" ]
	brig kill dsk KILL
	wait_for_status dsk stopped
	brig delete dsk
	[ ! -e "$ROOT/dsk" ]
	[ -e "$BUNDLE/rootfs/bin/true" ]
	assert_no_leftovers
}

@test "ephemeral: the disk layer is refused on a memory file system state root (no cap there)" {
	[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs here"
	update_config '.annotations["run.brig.rootfs.ephemeral.size"] = "disk"'
	set_args true
	HOST_DIR="$(mktemp -d /dev/shm/brig-test-root.XXXXXX)"
	run timeout 60 "$RUNTIME" --root "$HOST_DIR" run shmdisk
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.rootfs.ephemeral.size=disk: the state root is on a memory file system"
	[ ! -e "$HOST_DIR/shmdisk" ]
	[ -z "$(host_mounts | grep -v " - nsfs ")" ]
}

@test "ephemeral: bad values and root.readonly=true are refused by name, nothing left" {
	local v
	for v in yes 1 TRUE ""; do
		update_config ".annotations[\"run.brig.rootfs.ephemeral\"] = \"$v\""
		run brig run bad
		echo "$v: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" "run.brig.rootfs.ephemeral"
		assert_no_leftovers
	done
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"'
	for v in 10x -5 0 1t 4095 "" 99999999999999999999g; do
		update_config ".annotations[\"run.brig.rootfs.ephemeral.size\"] = \"$v\""
		run brig run bad
		echo "$v: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" "run.brig.rootfs.ephemeral.size"
		assert_no_leftovers
	done
	update_config 'del(.annotations["run.brig.rootfs.ephemeral"]) | .annotations["run.brig.rootfs.ephemeral.size"] = "1m"'
	run brig run bad
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.rootfs.ephemeral.size"
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" | del(.annotations["run.brig.rootfs.ephemeral.size"]) | .root.readonly = true'
	run brig run bad
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "root.readonly"
	assert_no_leftovers
	# "false" is plain create: the rootfs is written.
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "false" | .root.readonly = false'
	set_args sh -c 'echo x >/written'
	run brig run off
	[ "$status" -eq 0 ]
	[ -e "$BUNDLE/rootfs/written" ]
}

@test "ephemeral: config mounts, masked and readonly paths land on top of the overlay" {
	HOST_DIR="$(mktemp -d /tmp/brig-test-ephbind.XXXXXX)"
	echo from-host >"$HOST_DIR/hostfile"
	update_config ".mounts += [{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"size=1m\"]},
		{\"destination\":\"/mnt/host\",\"type\":\"bind\",\"source\":\"$HOST_DIR\",\"options\":[\"rbind\",\"ro\"]}] |
		.linux.maskedPaths += [\"/etc/shadow\"] | .linux.readonlyPaths += [\"/usr\"]"
	set_args sh -c 'grep -E " /tmp | /mnt/host | / " /proc/self/mountinfo; cat /mnt/host/hostfile
		echo x >/mnt/host/nope 2>&1 || echo bind-ro
		echo x >/usr/nope 2>&1 || echo usr-ro
		test -s /etc/shadow || echo shadow-masked
		echo x >/etc/ok && echo root-rw'
	run brig run mnt
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" " / / "
	assert_contains "$output" "overlay"
	assert_contains "$output" " /tmp "
	assert_contains "$output" "from-host"
	assert_contains "$output" "bind-ro"
	assert_contains "$output" "usr-ro"
	assert_contains "$output" "shadow-masked"
	assert_contains "$output" "root-rw"
	[ ! -e "$HOST_DIR/nope" ]
	[ ! -e "$BUNDLE/rootfs/etc/ok" ]
	[ ! -e "$BUNDLE/rootfs/mnt/host" ] || [ -z "$(ls -A "$BUNDLE/rootfs/mnt/host")" ]
	assert_no_leftovers
}

@test "ephemeral: a user-namespace container writes its layer, the bundle stays unchanged" {
	chown -R "$MAP_HOST:$MAP_HOST" "$BUNDLE/rootfs"
	update_config ".linux.namespaces += [{\"type\":\"user\"}] |
		.linux.uidMappings = [{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}] |
		.linux.gidMappings = [{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}]"
	local before after
	before="$(manifest)"
	set_args sh -c 'echo x >/etc/new && rm /bin/true && echo userns-wrote; stat -c "%u %a" /'
	run brig run uns
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "userns-wrote"
	assert_contains "$output" "0 755"
	after="$(manifest)"
	[ "$before" = "$after" ]
	assert_no_leftovers
	# The disk layer is under the state root, which container root of a
	# user namespace cannot reach: refused by name, nothing left.
	update_config '.annotations["run.brig.rootfs.ephemeral.size"] = "disk"'
	run brig run unsdisk
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.rootfs.ephemeral.size=disk"
	assert_no_leftovers
}

@test "ephemeral: brig state, features and spec --sandbox --ephemeral show it" {
	update_config '.annotations["run.brig.rootfs.ephemeral.size"] = "8m"'
	set_args sleep 100
	create_container st
	run brig state st
	echo "$output"
	[ "$(echo "$output" | jq -r .brig.rootfs.mode)" = "tmpfs" ]
	[ "$(echo "$output" | jq -r .brig.rootfs.size)" = "8388608" ]
	brig delete --force st
	run "$BRIG" features
	[ "$(echo "$output" | jq -r '.annotations["run.brig.rootfs.ephemeral"]')" = "true|false" ]
	assert_contains "$(echo "$output" | jq -r '.annotations["run.brig.rootfs.ephemeral.size"]')" "disk"
	local d
	d="$(mktemp -d /tmp/brig-test-ephspec.XXXXXX)"
	"$BRIG" spec --sandbox --ephemeral --bundle "$d"
	run jq -r '.annotations["run.brig.rootfs.ephemeral"], .root.readonly' "$d/config.json"
	[ "${lines[0]}" = "true" ]
	[ "${lines[1]}" = "false" ]
	# The layer stands in for the read-only root in the sandbox profile.
	run brig check --bundle "$d" --profile sandbox --fail-on info --format json
	rm -rf "$d"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq '.findings | length' <<<"$output")" -eq 0 ]
	run "$BRIG" spec --ephemeral --bundle /nonexistent
	[ "$status" -ne 0 ]
	assert_contains "$output" "--ephemeral needs --sandbox"
	assert_no_leftovers
}

@test "ephemeral: spec --sandbox --ephemeral runs: root writable inside, bundle unchanged" {
	local before after
	# container root is host uid 1879048192 (spec --sandbox's default)
	chown -R 1879048192:1879048192 "$BUNDLE/rootfs"
	before="$(manifest)"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --ephemeral --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" |
		.process.args = [\"sh\", \"-c\", \"echo x >/rootfs-write && rm /bin/true && grep ' / / ' /proc/self/mountinfo && echo sandbox-wrote\"]"
	run brig run sbe
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "overlay"
	assert_contains "$output" "sandbox-wrote"
	after="$(manifest)"
	[ "$before" = "$after" ]
	# (the seccomp filter cache of the state root stays, as for any run)
	assert_no_leftovers sbe
}

@test "ephemeral: a root-owned bundle: container root writes anywhere, owners read 0, the bundle stays" {
	local before after
	# the usual bundle: owned by host root, which the sandbox's user
	# namespace does not map (container root is an auto range)
	[ "$(stat -c %u "$BUNDLE/rootfs/etc/passwd")" = 0 ]
	before="$(manifest)"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --ephemeral --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" |
		.process.args = [\"sh\", \"-c\", \"echo hi >/x && echo a >>/etc/passwd && echo wrote; stat -c %u / /etc/passwd /bin/busybox; cat /proc/self/mountinfo\"]"
	run brig run rootowned
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = wrote ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = 0 ]
	[ "${lines[3]}" = 0 ]
	# the idmapped lower is in no mount table the tenant can see: only the
	# overlay stands for the bundle
	[[ "$output" != *ext4* && "$output" != *idmapped* ]]
	after="$(manifest)"
	[ "$before" = "$after" ]
	assert_no_leftovers rootowned
}

@test "ephemeral: a tenant with CAP_SYS_ADMIN in its user namespace cannot reach the bundle" {
	local before after
	need_built "$CONFINE_TOOLS/ro_breaker"
	cp "$CONFINE_TOOLS/ro_breaker" "$BUNDLE/rootfs/bin/ro_breaker"
	before="$(manifest)"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --ephemeral --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" | del(.linux.seccomp) |
		.process.capabilities = {\"bounding\": [\"CAP_SYS_ADMIN\"], \"effective\": [\"CAP_SYS_ADMIN\"], \"permitted\": [\"CAP_SYS_ADMIN\"]} |
		.process.args = [\"sh\", \"-c\", \"for m in \$(cut -d\\\" \\\" -f5 /proc/self/mountinfo); do mount -o remount,bind,rw \$m 2>/dev/null; echo x >\$m/.pwn 2>/dev/null; done;
			ro_breaker / pwn; umount -l / 2>/dev/null; echo y >/pwn2; ls -a / | grep -c lower; echo end\"]"
	run brig run capadmin
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "done"
	assert_contains "$output" "end"
	after="$(manifest)"
	[ "$before" = "$after" ]
	assert_no_leftovers capadmin
}

@test "ephemeral: restore refuses the layer by name (criu would write the bundle)" {
	update_config '.process.terminal = false'
	local img
	img="$BUNDLE/img"
	mkdir "$img"
	run brig restore --image-path "$img" rst
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.rootfs.ephemeral: not supported by restore"
	[ ! -e "$img/restore.log" ]
	assert_no_leftovers rst
}
