#!/usr/bin/env bats
# A hybrid host's cgroup2 hierarchy (issue #26 items 5 and 10; docs/cgroups.md
# "Which hierarchies" and "A hybrid host's cgroup2"):
#   every container is in its cgroup2 directory too, as runc puts it there:
#     the "0::" line of /proc/PID/cgroup names the container's cgroup;
#     delete removes the directory, a killed create's record covers it;
#   a hugepage limit (v1 without hugetlb) enables hugetlb in the cgroup2
#     ancestors only while a container of brig needs it: delete takes back
#     what brig enabled, also the host's root's, and concurrent creates
#     always find their controller.
# Hybrid hosts only (v1 controllers and cgroup2 at /sys/fs/cgroup/unified);
# the tests skip elsewhere, saying so. They never write the host's root
# cgroup.subtree_control themselves, and restore it only when they saw a
# runtime under test change it and leave it changed (the old brig did).

load helpers

UNIFIED=/sys/fs/cgroup/unified

setup() {
	requires root
	[ -d /sys/fs/cgroup/memory ] && [ "$(stat -f -c %T "$UNIFIED" 2>/dev/null)" = cgroup2fs ] ||
		skip "needs a hybrid host (v1 controllers and cgroup2 at $UNIFIED)"
	setup_bundle
	# A test-only top-level parent that exists in no hierarchy yet: the
	# brig of d3d6522 joined cgroup2 only below a parent someone had made
	# there (so /brig-test, which other tests make, would hide the change).
	HY_TOP="brig-test-hybrid-${CGROUP_NAME##*.}"
	HY="/$HY_TOP/c"
	update_config ".linux.cgroupsPath = \"$HY\""
}

teardown() {
	local pid d
	[ -n "${LOOP_PIDS:-}" ] && kill $LOOP_PIDS 2>/dev/null
	teardown_bundle
	# what a failed test left in the test's own cgroups (only those)
	for pid in $(grep -l ":/$HY_TOP/" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3); do
		kill -KILL "$pid" 2>/dev/null
	done
	sleep 0.1
	for d in /sys/fs/cgroup/*/"$HY_TOP"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# assert_hy_gone: no directory of the test's container cgroup is left in
# any hierarchy, and no process in it.
assert_hy_gone() {
	local left
	left="$(ls -d /sys/fs/cgroup/*/"$HY_TOP"/c 2>/dev/null || true)"
	[ -z "$left" ] || { echo "cgroups left: $left" >&2; return 1; }
	! grep -q ":$HY\$" /proc/[0-9]*/cgroup 2>/dev/null || { echo "processes left in $HY" >&2; false; }
}

# ---- item 5: the container is in the cgroup2 hierarchy ----

@test "cgroups_hybrid: the container's 0:: line names its cgroup2 directory, as runc's; exec joins it; delete removes it" {
	update_config '.linux.namespaces -= [{"type": "cgroup"}] | .process.args = ["sh", "-c", "grep ^0:: /proc/self/cgroup; exec sleep 100"]'
	run_detached g1
	local pid epid i
	pid="$(brig state g1 | jq -r .pid)"
	# inside (no cgroup namespace): the path, as runc shows it
	for i in $(seq 50); do [ -s "$BUNDLE/g1.out" ] && break; sleep 0.1; done
	[ "$(cat "$BUNDLE/g1.out")" = "0::$HY" ]
	grep -qx "$pid" "$UNIFIED$HY/cgroup.procs"
	# the record has it, the mark of brig's own leaf is on it
	grep -qx "made $UNIFIED$HY" "$ROOT/g1/made"
	[ "$(stat -c %a "$UNIFIED$HY")" = 1755 ]
	brig exec -d g1 sleep 200
	for i in $(seq 50); do
		epid="$(grep -vx "$pid" "$UNIFIED$HY/cgroup.procs" | head -n1)"
		[ -n "$epid" ] && break
		sleep 0.1
	done
	[ -n "$epid" ]
	diff "/proc/$pid/cgroup" "/proc/$epid/cgroup"
	brig delete -f g1
	[ ! -e "$UNIFIED$HY" ]
	assert_no_leftovers g1
	assert_hy_gone
}

@test "cgroups_hybrid: with a cgroup namespace the init is in its cgroup2 directory too (seen from the host)" {
	update_config '.process.args = ["sh", "-c", "grep ^0:: /proc/self/cgroup; exec sleep 100"]'
	run_detached g2
	local pid
	pid="$(brig state g2 | jq -r .pid)"
	grep -qx "0::$HY" "/proc/$pid/cgroup"
	# its namespace is rooted there
	[ "$(cat "$BUNDLE/g2.out")" = "0::/" ]
	brig delete -f g2
	assert_no_leftovers g2
	assert_hy_gone
}

@test "cgroups_hybrid: a create killed after making its cgroup2 directory leaves a record that delete -f undoes" {
	command -v strace >/dev/null || skip "strace is not installed (the kill is injected with it)"
	update_config '.process.args = ["sleep", "100"]'
	# killed at the clone of its init: every directory is made by then
	strace -o /dev/null -e trace=clone3 -e inject=clone3:signal=KILL:when=1 \
		"$RUNTIME" --root "$ROOT" create k </dev/null >/dev/null 2>&1 || true
	[ -f "$ROOT/k/made" ]
	! grep -q '^init ' "$ROOT/k/made" || false
	grep -qx "made $UNIFIED$HY" "$ROOT/k/made"
	[ -d "$UNIFIED$HY" ]
	brig delete -f k
	[ ! -e "$UNIFIED$HY" ]
	assert_no_leftovers k
	assert_hy_gone
}
