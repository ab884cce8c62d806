#!/usr/bin/env bats
# brig reset's report is an attestation (docs/sandbox.md "Checks"): every
# check line must be able to say "ok": false, and say it when it could not
# look. Here each check a tenant can defeat is made to fail by a tenant
# (tests/tools/reset_tenant) that leaves something the reset cannot clean:
# a frozen v1 freezer cgroup (cgroup.empty, ns.unused), a v1 cpuset child
# (cgroup.limits), a tmpfs and an mqueue instance propagated to the host and brought back over
# the config's own mounts (tmpfs.empty, mqueue.empty, mounts.exact,
# memory.usage). The checks no tenant can make fail are proven on real
# state by tests/unit/test_reset_verify.c. And a writable root without the
# ephemeral layer, or a writable bind, is refused before anything is
# killed: no reset can undo what was written there (issue 22 item 9).
# Needs v1 freezer and cpuset hierarchies for two tests (hybrid here).

load helpers
load confine_helpers

RESET_TENANT="$CONFINE_TOOLS/reset_tenant"

setup() {
	requires root brig
	need_built "$RESET_TENANT"
	setup_bundle
	cp "$RESET_TENANT" "$BUNDLE/rootfs/bin/reset_tenant"
	set_args sleep 1000000
	update_config '.linux.resources = {"pids": {"limit": 48}, "memory": {"limit": 268435456}}
		| .annotations["run.brig.rootfs.ephemeral"] = "true"
		| .annotations["run.brig.rootfs.ephemeral.size"] = "64m"'
}

teardown() {
	local d
	# what a test froze, thawed, so that its processes can die
	for d in $(test_cgroup_dirs); do
		[ -f "$d/t/freezer.state" ] && echo THAWED >"$d/t/freezer.state"
	done
	if [ -n "${SHARED_DIR:-}" ]; then
		umount -R "$SHARED_DIR" 2>/dev/null || true
		rm -rf "$SHARED_DIR"
	fi
	teardown_bundle
	return 0
}

# check_failed CHECK [DETAIL]: the reset in $output failed CHECK (with
# DETAIL in its line) and said so in its error.
check_failed() {
	echo "$output" | grep -F "\"check\":\"$1\",\"ok\":false" | grep -qF -- "${2:-}" || {
		echo "no failed $1 line${2:+ with \"$2\"}" >&2
		return 1
	}
	assert_contains "$output" "reset failed: "
	assert_contains "$output" "$1 ("
}

# with_cgroup_mount: the v1 cgroupfs writable inside (brig check:
# kernel-fs-writable), as the tenant of boundary_attack2.bats had it.
with_cgroup_mount() {
	update_config '.mounts += [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
		"options": ["nosuid", "noexec", "nodev", "relatime", "rw"]}]'
}

@test "reset checks: a writable root without the ephemeral layer, or a writable bind, is refused before anything is killed" {
	local pid
	update_config 'del(.annotations["run.brig.rootfs.ephemeral"]) | del(.annotations["run.brig.rootfs.ephemeral.size"])'
	create_container w1
	brig start w1
	pid="$(brig state w1 | jq .pid)"
	# the tenant writes the bundle's own rootfs
	tenant_x w1 'echo secret >/leftover'
	[ "$(cat "$BUNDLE/rootfs/leftover")" = secret ]
	run brig reset w1
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "root.readonly: the root is writable and has no ephemeral layer"
	# no attestation at all, and nothing touched: the tenant still runs
	! echo "$output" | grep -q '"ok":true' || false
	[ "$(brig state w1 | jq -r .status)" = running ]
	[ "$(brig state w1 | jq .pid)" = "$pid" ]
	brig delete -f w1
	rm -f "$BUNDLE/rootfs/leftover"

	# a read-only root with a writable bind of a host directory: the same
	SHARED_DIR="$(test_tmpdir shared)"
	update_config '.root.readonly = true'
	add_mount "{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"$SHARED_DIR\", \"options\": [\"rbind\"]}"
	create_container w2
	brig start w2
	tenant_x w2 'echo secret >/data/leftover'
	run brig reset w2
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "(/data): a writable bind mount keeps what a tenant writes"
	[ "$(brig state w2 | jq -r .status)" = running ]
	brig delete -f w2
	# a pool is refused such a bundle before it makes a member
	run brig pool fill wp --bundle "$BUNDLE" --size 1
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "(/data): a writable bind mount"
	[ -z "$(brig list -q)" ]
	# read-only, it resets
	update_config '.mounts[-1].options += ["ro"]'
	create_container w3
	brig start w3
	run brig reset w3
	echo "$output"
	[ "$status" -eq 0 ]
	brig delete -f w3
	assert_no_leftovers
}

@test "reset checks: cgroup.empty and ns.unused fail when the tenant froze its init in a freezer cgroup of its own" {
	requires cgroup_v1
	[ -d /sys/fs/cgroup/freezer ] || skip "the host has no v1 freezer hierarchy (a v2 freezer lets SIGKILL through)"
	local d
	with_cgroup_mount
	create_container f1
	brig start f1
	# the tenant (uid 0, a writable cgroupfs, no capability needed): a
	# child freezer cgroup, its init moved there, frozen. A v1 freezer
	# holds a SIGKILL'd task until it is thawed.
	run tenant_x f1 'cd /sys/fs/cgroup/freezer && mkdir t && echo 1 >t/cgroup.procs &&
		echo FROZEN >t/freezer.state && cat t/freezer.state'
	echo "$output"
	[ "$status" -eq 0 ]
	run brig reset f1
	echo "$output"
	[ "$status" -eq 1 ]
	# the old init never exited, so its pid namespace may hold anything
	check_failed ns.unused "did not exit"
	check_failed cgroup.empty "processes left in the cgroup"
	[ "$(brig state f1 | jq -r .status)" != created ]
	run brig exec f1 true
	[ "$status" -ne 0 ]
	assert_contains "$output" "reset failed: cgroup.empty"
	for d in $(test_cgroup_dirs); do
		[ -f "$d/t/freezer.state" ] && echo THAWED >"$d/t/freezer.state"
	done
	sleep 0.2
	brig delete -f f1
	remove_test_cgroups
	assert_no_leftovers
}

@test "reset checks: cgroup.limits fails when a cpuset child the tenant made keeps the config's cpus from being written" {
	requires cgroup_v1
	[ -d /sys/fs/cgroup/cpuset ] || skip "the host has no v1 cpuset hierarchy"
	[ "$(nproc)" -ge 2 ] || skip "the host has one CPU (a cpuset child needs another)"
	local d
	with_cgroup_mount
	update_config '.linux.resources.cpu = {"cpus": "0", "mems": "0"}'
	create_container c1
	brig start c1
	# the tenant widens its own cpuset, then a child on CPU 1: a parent's
	# cpus must cover its children's, so the config's "0" cannot be
	# written back while the child exists, and reset does not remove
	# the directories a tenant made
	run tenant_x c1 'cd /sys/fs/cgroup/cpuset && echo 0-1 >cpuset.cpus && mkdir t &&
		echo 1 >t/cpuset.cpus && echo 0 >t/cpuset.mems && cat cpuset.cpus t/cpuset.cpus'
	echo "$output"
	[ "$status" -eq 0 ]
	run brig reset c1
	echo "$output"
	[ "$status" -eq 1 ]
	check_failed cgroup.limits cpuset
	# the reset stopped there: no new init
	[ "$(brig state c1 | jq -r .status)" = stopped ]
	for d in $(test_cgroup_dirs); do rmdir "$d/t" 2>/dev/null || true; done
	brig delete -f c1
	assert_no_leftovers
}

# propagating_config: CAP_SYS_ADMIN, rshared propagation and a read-only
# rbind of a test-made shared directory at /shared, placed after the mount
# MOUNT_JSON at /shared/X, which it covers: what the tenant propagates
# to the host at SHARED_DIR/X comes back over the config's own mount.
propagating_config() {
	SHARED_DIR="$(test_tmpdir shared)"
	mkdir -p "$SHARED_DIR/t" "$SHARED_DIR/mq"
	mount --bind "$SHARED_DIR" "$SHARED_DIR"
	mount --make-shared "$SHARED_DIR"
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]
		| .linux.rootfsPropagation = "rshared"'
	add_mount "$1"
	add_mount "{\"destination\": \"/shared\", \"type\": \"bind\", \"source\": \"$SHARED_DIR\", \"options\": [\"rbind\", \"rshared\", \"ro\"]}"
}

@test "reset checks: tmpfs.empty, mounts.exact and memory.usage fail for a tmpfs the tenant propagated over the config's" {
	propagating_config '{"destination": "/shared/t", "type": "tmpfs", "source": "tmpfs", "options": ["size=64m"]}'
	create_container t1
	brig start t1
	run tenant_x t1 'mount -t tmpfs -o size=64m tenant /shared/t && echo secret >/shared/t/leftover &&
		dd if=/dev/zero of=/shared/t/big bs=1M count=24 2>/dev/null && ls /shared/t'
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q " $SHARED_DIR/t " /proc/self/mountinfo ||
		skip "the tenant's mount did not propagate to the host on this kernel"
	run brig reset t1
	echo "$output"
	[ "$status" -eq 1 ]
	check_failed tmpfs.empty "/shared/t holds"
	check_failed mounts.exact "/shared/t (one more on top)"
	# its pages stay charged to the kept cgroup, out of the reclaim's reach
	check_failed memory.usage "bytes in use"
	umount -R "$SHARED_DIR"
	brig delete -f t1
	assert_no_leftovers
}

@test "reset checks: mqueue.empty fails for a queue in an mqueue instance the tenant propagated over the config's" {
	propagating_config '{"destination": "/shared/mq", "type": "mqueue", "source": "mqueue"}'
	create_container q1
	brig start q1
	run tenant_x q1 'mount -t mqueue tenant /shared/mq && reset_tenant mq-leave tq && ls /shared/mq'
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tq"
	grep -q " $SHARED_DIR/mq " /proc/self/mountinfo ||
		skip "the tenant's mount did not propagate to the host on this kernel"
	run brig reset q1
	echo "$output"
	[ "$status" -eq 1 ]
	# every mqueue mount of the config is looked at, not only the first
	check_failed mqueue.empty "1 POSIX message queues"
	umount -R "$SHARED_DIR"
	brig delete -f q1
	assert_no_leftovers
}
