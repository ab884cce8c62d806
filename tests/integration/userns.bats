#!/usr/bin/env bats
# User namespaces: uid/gid mappings seen from inside and from the host, the
# rootfs and /dev usable inside, chown to mapped ids, idmapped bind mounts
# (mount_setattr MOUNT_ATTR_IDMAP) showing mapped owners, and rootless
# mode (brig run as an unprivileged user, --root under $XDG_RUNTIME_DIR).
# Covers any cgroup mode (rootless runs without a cgroupsPath).

load helpers
load confine_helpers

# The container's ids 0..65535 are host ids 100000..165535.
MAP_HOST=100000

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	[ -n "${RL_DIR:-}" ] && rm -rf "$RL_DIR"
	return 0
}

@test "userns: the uid inside is the mapped one, seen from inside and from the host" {
	with_userns
	set_args sh -c 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; sleep 100'
	run_detached uns
	wait_for_status uns running
	local pid
	pid="$(brig state uns | jq -r .pid)"
	# Host view: the init runs as host uid/gid 100000.
	[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" = "$MAP_HOST" ]
	[ "$(awk '$1 == "Gid:" { print $2 }' "/proc/$pid/status")" = "$MAP_HOST" ]
	# The container's user namespace is not the host's.
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
	run cat "$BUNDLE/uns.out"
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[[ "${lines[2]}" =~ ^[[:space:]]*0[[:space:]]+$MAP_HOST[[:space:]]+65536$ ]]
	[[ "${lines[3]}" =~ ^[[:space:]]*0[[:space:]]+$MAP_HOST[[:space:]]+65536$ ]]
}

@test "userns: /dev nodes and /dev/pts are usable inside" {
	with_userns
	set_args sh -c 'echo x >/dev/null && echo null-ok
		echo "zero=$(head -c 4 /dev/zero | wc -c)"
		echo "urandom=$(head -c 4 /dev/urandom | wc -c)"
		[ -c /dev/tty ] && echo tty-node
		stat -c "ptmx %g" /dev/pts/ptmx'
	run brig run uns
	[ "$status" -eq 0 ]
	assert_contains "$output" "null-ok"
	assert_contains "$output" "zero=4"
	assert_contains "$output" "urandom=4"
	assert_contains "$output" "tty-node"
	# devpts was mounted with gid=5, a mapped group.
	[[ "$output" != *"ptmx 65534"* ]]
}

@test "userns: root inside can chown to mapped ids; the host sees the shifted owner" {
	with_userns
	update_config '.process.capabilities.bounding += ["CAP_CHOWN"] |
		.process.capabilities.effective += ["CAP_CHOWN"] |
		.process.capabilities.permitted += ["CAP_CHOWN"]'
	set_args sh -c 'touch /tmp/owned && chown 1000:1000 /tmp/owned && echo chowned
		chown 70000 /tmp/owned; echo "unmapped=$?"'
	run brig run uns
	[ "$status" -eq 0 ]
	assert_contains "$output" "chowned"
	# 70000 is beyond the mapping: refused.
	assert_contains "$output" "unmapped=1"
	[ "$(stat -c %u:%g "$BUNDLE/rootfs/tmp/owned")" = "$((MAP_HOST + 1000)):$((MAP_HOST + 1000))" ]
}

@test "userns: without a mapping for it, host root's files are nobody's inside" {
	with_userns
	set_args sh -c 'stat -c "%u %g" /bin/busybox; touch /bin/x 2>&1; echo "rc=$?"'
	run brig run uns
	[ "$status" -eq 0 ]
	assert_contains "$output" "65534 65534"
	assert_contains "$output" "rc=1"
}

@test "userns: an idmapped bind mount shows the mapped owners" {
	requires brig
	with_userns
	HOST_DIR="$(test_tmpdir idmap)"
	chmod 0755 "$HOST_DIR"
	touch "$HOST_DIR/root-file" "$HOST_DIR/user-file"
	chown 1000:1000 "$HOST_DIR/user-file"
	# The container's root cannot create directories in a rootfs owned by
	# an unmapped host root: provide the mount points.
	mkdir "$BUNDLE/rootfs/plain" "$BUNDLE/rootfs/idmapped"
	update_config ".process.capabilities.bounding += [\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\"] |
		.process.capabilities.effective += [\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\"] |
		.process.capabilities.permitted += [\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\"] |
		.mounts += [{\"destination\":\"/plain\",\"type\":\"bind\",\"source\":\"$HOST_DIR\",\"options\":[\"bind\"]},
		{\"destination\":\"/idmapped\",\"type\":\"bind\",\"source\":\"$HOST_DIR\",\"options\":[\"bind\",\"idmap\"],
		\"uidMappings\":[{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}],
		\"gidMappings\":[{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}]}]"
	set_args sh -c 'stat -c "plain %n %u" /plain/root-file /plain/user-file
		stat -c "idmap %n %u" /idmapped/root-file /idmapped/user-file
		touch /idmapped/made-inside && echo wrote'
	run brig run idm
	echo "$output"
	[ "$status" -eq 0 ]
	# Without idmap the host ids are unmapped in the container: nobody.
	assert_contains "$output" "plain /plain/root-file 65534"
	assert_contains "$output" "plain /plain/user-file 65534"
	# With it, host 0 is the container's root and host 1000 its 1000.
	assert_contains "$output" "idmap /idmapped/root-file 0"
	assert_contains "$output" "idmap /idmapped/user-file 1000"
	assert_contains "$output" "wrote"
	# A file root creates inside belongs to host root on disk.
	[ "$(stat -c %u "$HOST_DIR/made-inside")" = 0 ]
}

@test "userns: features reports idmap mounts" {
	requires brig
	run brig features
	[ "$status" -eq 0 ]
	[ "$(jq -r '.linux.mountExtensions.idmap.enabled' <<<"$output")" = true ]
}

# rootless_bundle: $RL_DIR with a copy of the rootfs and of the runtime
# ($rt) that user 1000 can reach, a `spec --rootless` config, and as_user.
rootless_bundle() {
	user=1000
	RL_DIR="$(test_tmpdir rootless)"
	cp -a "$BUNDLE/rootfs" "$RL_DIR/rootfs"
	mkdir -m 0700 "$RL_DIR/xdg"
	chown -R "$user:$user" "$RL_DIR"
	chmod 0755 "$RL_DIR"
	# The runtime binary must be reachable by the user: the build tree may
	# sit under a 0700 directory (CI builds in a mktemp -d), so run a copy.
	rt="$RL_DIR/runtime"
	cp "$RUNTIME" "$rt"
	chmod 0755 "$rt"
	# Everything below runs as the unprivileged user.
	run as_user sh -c "cd '$RL_DIR' && '$rt' spec --rootless"
	[ "$status" -eq 0 ]
}

# rootless_cleanup: force-delete what the user's runtime still lists.
rootless_cleanup() {
	local id
	for id in $(as_user "$rt" --root "$RL_DIR/xdg/rt" list -q 2>/dev/null); do
		as_user "$rt" --root "$RL_DIR/xdg/rt" delete -f "$id" >/dev/null 2>&1 || true
	done
}

@test "userns: rootless run as an unprivileged user with --root under XDG_RUNTIME_DIR" {
	requires program:setpriv
	local user rt
	rootless_bundle
	run as_user sh -c "cd '$RL_DIR' && jq '.process.terminal = false | .root.readonly = false |
		.process.args = [\"sh\", \"-c\", \"id -u; cat /proc/self/uid_map; echo hi >/tmp/x && cat /tmp/x\"]' config.json >c && mv c config.json"
	[ "$status" -eq 0 ]
	run as_user sh -c "cd '$RL_DIR' && '$rt' --root '$RL_DIR/xdg/rt' run rl </dev/null 2>&1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[[ "${lines[1]}" =~ ^[[:space:]]*0[[:space:]]+$user[[:space:]]+1$ ]]
	assert_contains "$output" "hi"
	# State went under the user's runtime dir, owned by the user.
	[ "$(stat -c %u "$RL_DIR/xdg/rt")" = "$user" ]
	run as_user "$rt" --root "$RL_DIR/xdg/rt" list -q
	[ -z "$output" ]
}

@test "userns: rootless exec joins a running container; before start it is refused by name" {
	requires program:setpriv
	local user rt
	rootless_bundle
	run as_user sh -c "cd '$RL_DIR' && jq '.process.terminal = false | .process.args = [\"sleep\", \"100\"]' config.json >c && mv c config.json"
	[ "$status" -eq 0 ]
	# Created, not started: the waiting init is not dumpable, so the user
	# cannot open its /proc/PID/root; the error says so.
	run as_user sh -c "cd '$RL_DIR' && '$rt' --root '$RL_DIR/xdg/rt' create rx </dev/null >/dev/null 2>&1"
	[ "$status" -eq 0 ] || { rootless_cleanup; false; }
	run as_user "$rt" --root "$RL_DIR/xdg/rt" exec rx true
	echo "$output"
	[ "$status" -ne 0 ] || { rootless_cleanup; false; }
	assert_contains "$output" "before it is started" || { rootless_cleanup; false; }
	run as_user "$rt" --root "$RL_DIR/xdg/rt" start rx
	[ "$status" -eq 0 ] || { rootless_cleanup; false; }
	# Started: the exec'd process is root of the container's user namespace
	# (host uid 1000) and sees the container's sleep as pid 1.
	run as_user "$rt" --root "$RL_DIR/xdg/rt" exec rx sh -c 'id -u; cat /proc/self/uid_map; cat /proc/1/cmdline | tr "\\0" " "'
	echo "$output"
	rootless_cleanup
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[[ "${lines[1]}" =~ ^[[:space:]]*0[[:space:]]+$user[[:space:]]+1$ ]]
	[[ "${lines[2]}" == "sleep 100"* ]]
	run as_user "$rt" --root "$RL_DIR/xdg/rt" list -q
	[ -z "$output" ]
}

# Issue 26 item 13: a new user namespace without uidMappings/gidMappings.
@test "userns: without mappings, rootless: the user's own ids become the container's root" {
	requires program:setpriv
	local user rt
	rootless_bundle
	run as_user sh -c "cd '$RL_DIR' && jq 'del(.linux.uidMappings, .linux.gidMappings) | .process.terminal = false | .root.readonly = false |
		.process.args = [\"sh\", \"-c\", \"id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map\"]' config.json >c && mv c config.json"
	[ "$status" -eq 0 ]
	run as_user sh -c "cd '$RL_DIR' && '$rt' --root '$RL_DIR/xdg/rt' run rl </dev/null 2>&1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[[ "${lines[2]}" =~ ^[[:space:]]*0[[:space:]]+$user[[:space:]]+1$ ]]
	[[ "${lines[3]}" =~ ^[[:space:]]*0[[:space:]]+$user[[:space:]]+1$ ]]
}

@test "userns: without mappings, as host root: refused (crun would map host root in), nothing left" {
	update_config '.linux.namespaces += [{"type": "user"}] | del(.linux.uidMappings, .linux.gidMappings)'
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.uidMappings: a new user namespace without mappings would map the container's root to brig's own id 0, which is root outside"
	# a complete sentence: no errno text glued on
	[[ "$output" != *"Operation not permitted"* ]]
	assert_no_leftovers ctr
}
