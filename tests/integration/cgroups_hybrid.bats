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
	note_unified_root
}

teardown() {
	local pid d
	[ -n "${LOOP_PIDS:-}" ] && kill $LOOP_PIDS 2>/dev/null
	[ -n "${HOLDS_LOCK:-}" ] && flock -u 9
	teardown_bundle
	# what a failed test left in the test's own cgroups (only those)
	for pid in $(grep -l ":/$HY_TOP/" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3); do
		kill -KILL "$pid" 2>/dev/null
	done
	sleep 0.1
	for d in /sys/fs/cgroup/*/"$HY_TOP"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	restore_unified_root
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

# xattr_of DIR NAME: the trusted attribute's value, empty when there is none.
xattr_of() {
	python3 -c 'import os, sys
try: print(os.getxattr(sys.argv[1], sys.argv[2]).decode())
except OSError: print("")' "$1" "$2"
}

requires_unified_hugetlb() {
	[ ! -d /sys/fs/cgroup/hugetlb ] || skip "v1 has hugetlb here: brig enables nothing in cgroup2"
	grep -qw hugetlb "$UNIFIED/cgroup.controllers" || skip "no hugetlb controller in cgroup2"
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	[ -x /usr/bin/python3 ] || skip "test requires python3 (reads the trusted attributes)"
	# enabled there by someone else: nothing of brig's to take back (one
	# brig enabled and could not take back yet is fine)
	if grep -qw hugetlb <<<"$UNIFIED_ROOT_CTL" && [ "$(xattr_of "$UNIFIED" trusted.brig.enabled)" != hugetlb ]; then
		skip "the host's cgroup2 root already enables hugetlb: nothing of brig's to take back there"
	fi
	return 0
}

# foreign_hands_on: a child of the cgroup2 root that is not the test's
# enables hugetlb for its own children (another runtime, a conformance
# harness): the kernel keeps the root's then, and so must brig.
foreign_hands_on() {
	local d
	for d in "$UNIFIED"/*/; do
		[ "$d" = "$UNIFIED/$HY_TOP/" ] && continue
		grep -qw hugetlb "$d/cgroup.subtree_control" 2>/dev/null && { echo "$d hands hugetlb on" >&2; return 0; }
	done
	return 1
}

# assert_root_released: after the test's last delete, nothing brig enabled
# for it is left in the root, nor brig's mark; but when another cgroup hands
# hugetlb on, brig leaves it, mark and all, for a later delete.
assert_root_released() {
	if foreign_hands_on; then
		grep -qw hugetlb "$UNIFIED/cgroup.subtree_control"
		[ "$(xattr_of "$UNIFIED" trusted.brig.enabled)" = hugetlb ]
		return 0
	fi
	! grep -qw hugetlb "$UNIFIED/cgroup.subtree_control" || false
	[ -z "$(xattr_of "$UNIFIED" trusted.brig.enabled)" ]
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

# ---- item 10: hugetlb in the cgroup2 ancestors, taken back ----

# huge_config: a 4 MiB limit of 2 MB pages, and a cgroup2 mount through
# which the process reads the limit it is under.
huge_config() {
	update_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
	add_mount '{"destination": "/cg2", "type": "cgroup2", "source": "cgroup2", "options": ["ro"]}'
}

@test "cgroups_hybrid: a hugepage limit enables hugetlb in the cgroup2 ancestors while a container needs it; delete takes back what brig enabled, the root's too" {
	requires_unified_hugetlb
	huge_config
	update_config '.process.args = ["sh", "-c", "cat /cg2/hugetlb.2MB.max; exec sleep 100"]'
	run_detached h1
	# a second container of the same parent needs it as well
	update_config ".linux.cgroupsPath = \"/$HY_TOP/c2\""
	run_detached h2
	local i
	for i in $(seq 50); do [ -s "$BUNDLE/h1.out" ] && [ -s "$BUNDLE/h2.out" ] && break; sleep 0.1; done
	# inside: the limit is in force
	[ "$(cat "$BUNDLE/h1.out")" = 4194304 ]
	[ "$(cat "$BUNDLE/h2.out")" = 4194304 ]
	# brig enabled it, and wrote down that it did (for the root: or it had
	# already, for a container before)
	grep -qw hugetlb "$UNIFIED/cgroup.subtree_control"
	grep -qw hugetlb "$UNIFIED/$HY_TOP/cgroup.subtree_control"
	[ "$(xattr_of "$UNIFIED" trusted.brig.enabled)" = hugetlb ]
	[ "$(xattr_of "$UNIFIED/$HY_TOP" trusted.brig.enabled)" = hugetlb ]
	[ "$(xattr_of "$UNIFIED$HY" trusted.brig.needs)" = hugetlb ]
	# one container left: it still needs hugetlb
	brig delete -f h1
	grep -qw hugetlb "$UNIFIED/cgroup.subtree_control"
	[ "$(cat "$UNIFIED/$HY_TOP/c2/hugetlb.2MB.max")" = 4194304 ]
	# the last one: the root is as it was, no mark of brig's is left
	brig delete -f h2
	! grep -qw hugetlb "$UNIFIED/$HY_TOP/cgroup.subtree_control" || false
	[ -z "$(xattr_of "$UNIFIED/$HY_TOP" trusted.brig.enabled)" ]
	assert_root_released
	assert_no_leftovers
}

@test "cgroups_hybrid: concurrent creates and deletes with hugepage limits always find hugetlb; the root is restored at the end" {
	requires_unified_hugetlb
	huge_config
	update_config '.process.args = ["cat", "/cg2/hugetlb.2MB.max"]'
	local w n
	# two writers, each a run after run in a cgroup of its own below the
	# test's parent: one's delete takes back while the other creates
	for w in a b; do
		(
			for n in 1 2 3 4 5 6; do
				jq ".linux.cgroupsPath = \"/$HY_TOP/$w\"" "$BUNDLE/config.json" >"$BUNDLE/$w.json"
				mkdir -p "$BUNDLE/$w" && cp "$BUNDLE/$w.json" "$BUNDLE/$w/config.json"
				ln -sfn "$BUNDLE/rootfs" "$BUNDLE/$w/rootfs"
				out="$("$RUNTIME" --root "$ROOT" run -b "$BUNDLE/$w" "$w$n" </dev/null 2>&1)"
				echo "$w$n: $out" >>"$BUNDLE/results"
			done
		) &
		LOOP_PIDS="$LOOP_PIDS $!"
	done
	wait $LOOP_PIDS
	LOOP_PIDS=
	cat "$BUNDLE/results"
	[ "$(wc -l <"$BUNDLE/results")" -eq 12 ]
	# every container found its limit in force
	[ "$(grep -c ': 4194304$' "$BUNDLE/results")" -eq 12 ]
	assert_root_released
	assert_no_leftovers
}

@test "cgroups_hybrid: someone else holding the cgroup2 root's lock holds up a create for a few seconds at most; a later delete takes hugetlb back" {
	requires_unified_hugetlb
	command -v flock >/dev/null || skip "test requires flock(1)"
	huge_config
	update_config '.process.args = ["sh", "-c", "cat /cg2/hugetlb.2MB.max; exec sleep 100"]'
	# what a process given the hierarchy's root could do: hold its flock
	exec 9<"$UNIFIED"
	flock -x 9
	HOLDS_LOCK=1
	local t0=$SECONDS i
	run_detached l1
	[ $((SECONDS - t0)) -lt 30 ]
	for i in $(seq 50); do [ -s "$BUNDLE/l1.out" ] && break; sleep 0.1; done
	[ "$(cat "$BUNDLE/l1.out")" = 4194304 ]
	flock -u 9
	exec 9<&-
	HOLDS_LOCK=
	brig delete -f l1
	assert_root_released
	assert_no_leftovers l1
	assert_hy_gone
}
