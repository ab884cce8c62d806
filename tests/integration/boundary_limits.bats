#!/usr/bin/env bats
# Per-user kernel limits (docs/security.md "Per-user kernel limits"): a tenant
# of a `spec --sandbox` container that takes every per-user count the kernel
# keeps (inotify instances, POSIX message queue bytes, keys, pipe pages)
# leaves host root and a second sandbox able to make each of them; the
# container's user namespace is owned by its root's host uid and has brig's
# limits in /proc/sys/user; run.brig.userns=auto gives two sandboxes different
# host id ranges, frees a range at delete and hands it out again, and a
# killed create's range is freed by delete -f. The tenant holds its counts in
# a daemon inside the container: teardown deletes the containers, which ends
# it, so a failed test leaves host root nothing used up.
# Covers any cgroup mode.

load helpers

PROBE="${BUILDDIR:-$SRCDIR}/tests/tools/limit_probe"
REGISTRY=/run/brig-userns

setup() {
	requires root
	need_built "$PROBE"
	setup_bundle
	cp "$PROBE" "$BUNDLE/rootfs/bin/limit_probe"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --bundle "$BUNDLE"
	# The sandbox profile denies add_key; a tenant whose config allows it
	# must still reach no one else.
	update_config 'del(.linux.seccomp) | .process.args = ["sleep", "1000000"]'
	set_cgroup_path t1
}

teardown() {
	[ -n "${HOOK_PIDFILE:-}" ] && [ -s "$HOOK_PIDFILE" ] && kill -KILL "$(cat "$HOOK_PIDFILE")" 2>/dev/null
	teardown_bundle
	return 0
}

userns_uid() {
	brig state "$1" | jq -r '.brig.userns.uid'
}

@test "limits: a sandbox tenant at every per-user limit leaves host root and a second sandbox their inotify, message queues, keys and pipes" {
	create_container t1
	brig start t1
	run brig exec t1 /bin/limit_probe hold
	echo "tenant: $output"
	[ "$status" -eq 0 ]
	# The tenant did reach every limit (the host's per-user ones: 128
	# inotify instances, 800 KiB of queues, 200 keys, 16384 pipe pages).
	[[ "$output" =~ inotify\ ([0-9]+)\ EMFILE ]]
	[ "${BASH_REMATCH[1]}" -ge 100 ]
	[[ "$output" =~ mqueue\ ([0-9]+)\ EMFILE ]]
	[ "${BASH_REMATCH[1]}" -ge 5 ]
	[[ "$output" =~ keys\ ([0-9]+)\ EDQUOT ]]
	[ "${BASH_REMATCH[1]}" -ge 100 ]
	[[ "$output" =~ pipes\ [0-9]+\ (refused|setsize\ EPERM) ]]
	# Host root: counted apart from the tenant.
	run "$PROBE" try
	echo "host root: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'inotify ok\nmqueue ok\nkey ok\npipe ok')" ]
	# A second sandbox of the same config, while the tenant holds it all.
	set_cgroup_path t2
	create_container t2
	brig start t2
	run brig exec t2 /bin/limit_probe try
	echo "second sandbox: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'inotify ok\nmqueue ok\nkey ok\npipe ok')" ]
}

@test "limits: the user namespace is owned by container root's host uid and has brig's /proc/sys/user limits" {
	create_container t1
	brig start t1
	local pid uid
	pid="$(brig state t1 | jq -r .pid)"
	uid="$(userns_uid t1)"
	[[ "$uid" =~ ^[0-9]+$ ]]
	[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" = "$uid" ]
	# not host root (0): its counts are that uid's, not root's
	[ "$("$PROBE" owner "/proc/$pid/ns/user")" = "$uid" ]
	run brig exec t1 sh -c 'cd /proc/sys/user && for f in max_inotify_instances max_inotify_watches max_user_namespaces max_mnt_namespaces max_net_namespaces; do echo "$f $(cat $f)"; done; echo 1000000 >max_user_namespaces && echo raised'
	echo "$output"
	assert_contains "$output" "max_inotify_instances 128"
	assert_contains "$output" "max_inotify_watches 65536"
	assert_contains "$output" "max_user_namespaces 1024"
	assert_contains "$output" "max_mnt_namespaces 1024"
	assert_contains "$output" "max_net_namespaces 1024"
	# without CAP_SYS_RESOURCE the tenant cannot raise them
	[[ "$output" != *raised* ]]
}

@test "userns auto: two sandboxes get different host ranges; delete frees a range and the next create takes it" {
	local ua ub uc pa
	create_container a
	set_cgroup_path b
	create_container b
	ua="$(userns_uid a)"
	ub="$(userns_uid b)"
	echo "a=$ua b=$ub"
	[[ "$ua" =~ ^[0-9]+$ && "$ub" =~ ^[0-9]+$ ]]
	[ "$ua" -ge 1879113728 ] && [ "$ub" -ge 1879113728 ]
	# 65536 ids each, not overlapping
	[ $((ua > ub ? ua - ub : ub - ua)) -ge 65536 ]
	pa="$(brig state a | jq -r .pid)"
	[[ "$(cat "/proc/$pa/uid_map")" =~ ^[[:space:]]*0[[:space:]]+$ua[[:space:]]+65536 ]]
	[[ "$(cat "/proc/$pa/gid_map")" =~ ^[[:space:]]*0[[:space:]]+$ua[[:space:]]+65536 ]]
	[ "$(readlink "$REGISTRY/$ua")" = "$(realpath "$ROOT")/a" ]
	[ "$(readlink "$REGISTRY/$ub")" = "$(realpath "$ROOT")/b" ]
	brig delete -f a
	[ ! -e "$REGISTRY/$ua" ]
	[ ! -L "$REGISTRY/$ua" ]
	# the lowest free range: the one a had
	set_cgroup_path c
	create_container c
	uc="$(userns_uid c)"
	[ "$uc" = "$ua" ]
	[ "$(readlink "$REGISTRY/$uc")" = "$(realpath "$ROOT")/c" ]
	brig delete -f b
	brig delete -f c
	[ ! -L "$REGISTRY/$ub" ] && [ ! -L "$REGISTRY/$uc" ]
}

@test "userns auto: the rootfs is seen through the container's range, owned as the config's mapping says" {
	# spec --sandbox maps container root to 1879048192: files of the image
	# owned by that id are root's inside, whatever range the container got.
	chown 1879048192:1879048192 "$BUNDLE/rootfs/home"
	update_config '.process.args = ["sh", "-c", "stat -c %u:%g /home /bin/busybox"]'
	run brig run u1
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "0:0" ]
	# host root's files stay unmapped (nobody)
	[ "${lines[1]}" = "65534:65534" ]
}

@test "userns auto: a create killed after it took its range leaves it to delete -f" {
	local u
	HOOK_PIDFILE="$BUNDLE/hook.pid"
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo \$\$ >$HOOK_PIDFILE; exec sleep 1000\"]}]"
	brig create k </dev/null >/dev/null 2>&1 &
	local cpid=$!
	for _ in $(seq 100); do [ -s "$HOOK_PIDFILE" ] && break; sleep 0.05; done
	[ -s "$HOOK_PIDFILE" ]
	kill -KILL "$cpid"
	wait "$cpid" || true
	u="$(cat "$ROOT/k/userns")"
	[ "$(readlink "$REGISTRY/$u")" = "$(realpath "$ROOT")/k" ]
	brig delete -f k
	[ ! -L "$REGISTRY/$u" ]
	[ ! -e "$ROOT/k" ]
}

@test "userns auto: bad values and configs that cannot have it are refused by name, nothing left" {
	update_config '.annotations["run.brig.userns"] = "yes" | .process.args = ["true"]'
	run brig run bad
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.userns"
	update_config '.annotations["run.brig.userns"] = "auto" | .linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)'
	run brig run bad
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.userns=auto: needs a new user namespace"
	assert_no_leftovers
}

@test "userns auto: pool members each get their own range" {
	local ids id u all=""
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" | .root.readonly = false'
	run brig pool fill p --bundle "$BUNDLE" --size 3
	echo "$output"
	[ "$status" -eq 0 ]
	ids="$output"
	for id in $ids; do
		u="$(userns_uid "$id")"
		[[ "$u" =~ ^[0-9]+$ ]]
		[ "$(readlink "$REGISTRY/$u")" = "$(realpath "$ROOT")/$id" ]
		all="$all $u"
	done
	[ "$(echo $all | tr ' ' '\n' | sort -u | wc -l)" -eq 3 ]
	brig pool drain p
	for u in $all; do [ ! -L "$REGISTRY/$u" ]; done
}

@test "userns auto: --userns-range sets the host range; bad ranges are refused by name, nothing left" {
	# ranged_run ID RANGE: `brig --userns-range RANGE run -d ID`, its
	# output in $BUNDLE/ID.err (the container must not hold bats's pipe)
	ranged_run() {
		brig --userns-range "$2" run -d "$1" </dev/null >"$BUNDLE/$1.out" 2>"$BUNDLE/$1.err"
	}
	# a range nobody else uses: the last 65536-aligned ids below 2^31
	ranged_run r1 2147352576:1
	[ "$(userns_uid r1)" = 2147352576 ]
	[ "$(readlink "$REGISTRY/2147352576")" = "$(realpath "$ROOT")/r1" ]
	# full: a second container of that one range is refused
	set_cgroup_path r2
	! ranged_run r2 2147352576:1 || false
	assert_contains "$(cat "$BUNDLE/r2.err")" "are in use"
	[ ! -e "$ROOT/r2" ]
	brig delete -f r1
	[ ! -L "$REGISTRY/2147352576" ]
	local v
	for v in 0:1 65537:1 2147418112:2 65536:0 x:1 65536 65536:1x 4294901760:1; do
		! ranged_run r3 "$v" || false
		echo "$v: $(cat "$BUNDLE/r3.err")"
		assert_contains "$(cat "$BUNDLE/r3.err")" "--userns-range"
	done
	assert_no_leftovers
}
