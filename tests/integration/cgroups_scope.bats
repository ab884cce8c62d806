#!/usr/bin/env bats
# Which cgroup hierarchies a container is in (docs/cgroups.md, "Which
# hierarchies"): on v1 and hybrid hosts brig leaves out a hierarchy the
# config does not use when nothing could be inherited there (its cgroupsPath's
# first directory does not exist in it) and the container cannot see it; the
# controllers brig and the engines need are always joined. Checked from the
# host: /proc/PID/cgroup, the cgroup directories, the ownership record.
# Hybrid-only checks skip elsewhere, saying so (pure v2 has one hierarchy,
# joined by clone3).

load helpers

setup() {
	requires root brig
	setup_bundle
	# a test-only top-level parent that exists in no hierarchy yet, so that
	# nothing can be inherited there
	SCOPE_TOP="brig-test-scope-${CGROUP_NAME##*.}"
	update_config ".linux.cgroupsPath = \"/$SCOPE_TOP/c\" | .process.args = [\"sleep\", \"100\"]"
	note_unified_root
}

teardown() {
	teardown_bundle
	local d
	for d in /sys/fs/cgroup/*/"$SCOPE_TOP" /sys/fs/cgroup/"$SCOPE_TOP"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	restore_unified_root
	return 0
}

requires_hybrid() {
	[ -d /sys/fs/cgroup/memory ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		skip "needs a hybrid host (v1 controllers and cgroup2 at /sys/fs/cgroup/unified)"
}

# requires_leftout_hugetlb: hugetlb only in a hybrid host's cgroup2 (brig
# enables it in the ancestors while a container needs it, and takes back
# what it enabled: cgroups_hybrid.bats).
requires_leftout_hugetlb() {
	requires_hybrid
	[ ! -d /sys/fs/cgroup/hugetlb ] ||
		skip "v1 has hugetlb here: no left-out hierarchy has a resource to set"
	grep -qw hugetlb /sys/fs/cgroup/unified/cgroup.controllers ||
		skip "no hugetlb controller in cgroup2"
}

# left_out_like_an_older_brig ID: what a brig before issue #26 made of a
# container with empty resources: not in the hybrid host's cgroup2 (its
# processes in the root there, no directory), a "skip" line in the record.
left_out_like_an_older_brig() {
	local d="/sys/fs/cgroup/unified/$SCOPE_TOP/c" pid i
	# passes until it is empty: a process may exit (ESRCH) or fork meanwhile
	for i in $(seq 50); do
		[ -z "$(cat "$d/cgroup.procs")" ] && break
		for pid in $(cat "$d/cgroup.procs"); do
			echo "$pid" >/sys/fs/cgroup/unified/cgroup.procs 2>/dev/null || true
		done
	done
	rmdir "$d"
	sed -i "s|^made $d\$|skip $d|" "$ROOT/$1/made"
	grep -qx "skip $d" "$ROOT/$1/made"
}

# scope_dirs: every directory of the test's container cgroup, any hierarchy.

scope_dirs() {
	local d
	for d in /sys/fs/cgroup/*/"$SCOPE_TOP"/c /sys/fs/cgroup/"$SCOPE_TOP"/c; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# scope_pids: live processes in the test's container cgroup, any hierarchy.
scope_pids() {
	local f pid
	grep -l -E ":/$SCOPE_TOP/c(/|\$)" /proc/[0-9]*/cgroup 2>/dev/null | while read -r f; do
		pid="${f#/proc/}" pid="${pid%/cgroup}"
		process_alive "$pid" && echo "$pid"
	done
	return 0
}

# v1_leftout: the v1 hierarchies a container with empty resources is left
# out of on this host (issue 25, docs/cgroups.md "Which hierarchies"):
# name=systemd unless systemd is the host's init (sd_booted(3): the
# directory /run/systemd/system), cpuset when this shell's cpuset cgroup
# (where the container stays) has the whole machine's cpus and mems.
v1_leftout() {
	local own f
	[ -d /run/systemd/system ] || echo name=systemd
	own="$(awk -F: '$2 ~ /(^|,)cpuset(,|$)/ { print $3 }' /proc/self/cgroup)"
	[ -n "$own" ] && [ -d /sys/fs/cgroup/cpuset ] || return 0
	for f in cpuset.effective_cpus cpuset.effective_mems; do
		cmp -s "/sys/fs/cgroup/cpuset/$f" "/sys/fs/cgroup/cpuset$own/$f" || return 0
	done
	echo cpuset
}

# in_every_v1 PID: the process is in /SCOPE_TOP/c in every v1 hierarchy
# (named ones too) and the directory exists there, but for those of
# v1_leftout, where it is neither.
in_every_v1() {
	local line n=0 mp ctl leftout
	leftout=" $(v1_leftout | tr '\n' ' ') "
	while IFS= read -r line; do
		[ "${line%%:*}" = 0 ] && continue
		ctl="${line#*:}" ctl="${ctl%%:*}"
		if [[ "$leftout" == *" $ctl "* ]]; then
			[ "${line##*:}" != "/$SCOPE_TOP/c" ] || { echo "joined: $line" >&2; return 1; }
			continue
		fi
		[ "${line##*:}" = "/$SCOPE_TOP/c" ] || { echo "not joined: $line" >&2; return 1; }
		n=$((n + 1))
	done <"/proc/$1/cgroup"
	for mp in $(awk '$9 == "cgroup" { print $5 }' /proc/self/mountinfo); do
		ctl="${mp##*/}"
		[ "$ctl" != systemd ] || ctl=name=systemd
		if [[ "$leftout" == *" $ctl "* ]]; then
			[ ! -e "$mp/$SCOPE_TOP/c" ] || { echo "made $mp/$SCOPE_TOP/c" >&2; return 1; }
		else
			[ -d "$mp/$SCOPE_TOP/c" ] || { echo "no $mp/$SCOPE_TOP/c" >&2; return 1; }
		fi
	done
	[ "$n" -ge 1 ]
}

@test "cgroups_scope: empty resources: every v1 hierarchy but those v1_leftout names, and the hybrid host's cgroup2" {
	requires_hybrid
	run_detached c1
	local pid
	pid="$(brig state c1 | jq -r .pid)"
	cat "/proc/$pid/cgroup"
	in_every_v1 "$pid"
	# the unified hierarchy too, as runc (issue #26 item 5)
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$pid/cgroup"
	grep -qx "made /sys/fs/cgroup/unified/$SCOPE_TOP/c" "$ROOT/c1/made"
	# only what v1_leftout names is left out
	[ "$(grep -c '^skip ' "$ROOT/c1/made")" -eq "$(v1_leftout | wc -l)" ]
	# freezer, devices are always there
	grep -q ":freezer:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
	grep -q ":devices:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
}

@test "cgroups_scope: a parent that exists in cgroup2 keeps the container there" {
	requires_hybrid
	# someone organised cgroups under the parent: what they set must apply
	mkdir "/sys/fs/cgroup/unified/$SCOPE_TOP"
	run_detached c1
	local pid
	pid="$(brig state c1 | jq -r .pid)"
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$pid/cgroup"
	in_every_v1 "$pid"
	! grep -q '^skip /sys/fs/cgroup/unified' "$ROOT/c1/made" || false
	brig delete -f c1
	[ -z "$(scope_dirs)" ]
	# brig made only the leaf: the parent it found stays
	[ -d "/sys/fs/cgroup/unified/$SCOPE_TOP" ]
}

@test "cgroups_scope: a cgroup2 mount or a run.brig. annotation keeps the container in cgroup2" {
	requires_hybrid
	add_mount '{"destination": "/mnt", "type": "cgroup2", "source": "cgroup2"}'
	run_detached c1
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$(brig state c1 | jq -r .pid)/cgroup"
	brig delete -f c1
	update_config 'del(.mounts[-1]) | .annotations["run.brig.cgroup.shared"] = "false"'
	run_detached c2
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$(brig state c2 | jq -r .pid)/cgroup"
}

@test "cgroups_scope: pause, ps, exec, events, kill --all and delete -f work and leave nothing" {
	requires_hybrid
	run_detached c1
	local pid epid
	pid="$(brig state c1 | jq -r .pid)"
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$pid/cgroup"
	# exec joins the same hierarchies as the init
	brig exec -d c1 sleep 200
	epid="$(scope_pids | grep -vx "$pid" | head -n1)"
	[ -n "$epid" ]
	diff "/proc/$pid/cgroup" "/proc/$epid/cgroup"
	run brig ps c1
	[ "$status" -eq 0 ]
	[ "$(grep -c sleep <<<"$output")" -eq 2 ]
	brig events --stats c1 | jq -e '.data.pids.current == 2'
	brig pause c1
	grep -qx FROZEN "/sys/fs/cgroup/freezer/$SCOPE_TOP/c/freezer.state"
	[ "$(brig state c1 | jq -r .status)" = paused ]
	brig resume c1
	grep -qx THAWED "/sys/fs/cgroup/freezer/$SCOPE_TOP/c/freezer.state"
	brig kill --all c1 KILL
	local i
	for i in $(seq 100); do
		process_alive "$pid" || process_alive "$epid" || break
		sleep 0.05
	done
	! process_alive "$epid" || false
	brig delete -f c1
	[ -z "$(scope_pids)" ]
	[ -z "$(scope_dirs)" ]
	[ ! -e "$ROOT/c1" ]
}

@test "cgroups_scope: delete -f of a running container removes every hierarchy's cgroup" {
	requires_hybrid
	run_detached c1
	local pid
	pid="$(brig state c1 | jq -r .pid)"
	brig delete -f c1
	! process_alive "$pid" || false
	[ -z "$(scope_dirs)" ]
}

@test "cgroups_scope: update with a resource of a left-out hierarchy joins it first (an older brig's container)" {
	requires_leftout_hugetlb
	local size=2MB
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	run_detached c1
	local pid
	pid="$(brig state c1 | jq -r .pid)"
	left_out_like_an_older_brig c1
	grep -qx '0::/' "/proc/$pid/cgroup"
	brig update -r - c1 <<<"{\"hugepageLimits\": [{\"pageSize\": \"$size\", \"limit\": 4194304}]}"
	grep -qx "0::/$SCOPE_TOP/c" "/proc/$pid/cgroup"
	[ "$(cat "/sys/fs/cgroup/unified/$SCOPE_TOP/c/hugetlb.$size.max")" = 4194304 ]
	grep -qx "made /sys/fs/cgroup/unified/$SCOPE_TOP/c" "$ROOT/c1/made"
	brig delete -f c1
	[ -z "$(scope_dirs)" ]
}

# A foreground run deletes its container from the cgroup handle it kept
# unless the record changed (an update joined a hierarchy): then from the
# record.
@test "cgroups_scope: a foreground run's delete removes a hierarchy an update joined" {
	requires_leftout_hugetlb
	local size=2MB runner
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	update_config '.process.args = ["sh", "-c", "while [ ! -e /tmp/go ]; do sleep 0.05; done"]'
	brig run c1 </dev/null >"$BUNDLE/run.out" 2>&1 &
	runner=$!
	wait_for_status c1 running
	left_out_like_an_older_brig c1
	brig update -r - c1 <<<"{\"hugepageLimits\": [{\"pageSize\": \"$size\", \"limit\": 4194304}]}"
	[ -d "/sys/fs/cgroup/unified/$SCOPE_TOP/c" ]
	brig exec c1 touch /tmp/go
	wait "$runner"
	cat "$BUNDLE/run.out"
	[ ! -s "$BUNDLE/run.out" ]
	[ -z "$(scope_dirs)" ]
	[ ! -e "$ROOT/c1" ]
}

# issue 25: cpuset gives a container only its ancestors' cpus and mems.
@test "cgroups_scope: no cpuset directory without cpus or mems; cpus, update and a restricted parent make one" {
	requires_hybrid
	[ -d /sys/fs/cgroup/cpuset ] || skip "needs the v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
	[[ " $(v1_leftout | tr '\n' ' ') " == *" cpuset "* ]] ||
		skip "this shell's cpuset cgroup does not have the machine's cpus and mems"
	[ "$(nproc)" -ge 2 ] || skip "needs two cpus to restrict a cpuset"
	local pid all
	all="$(cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus)"
	run_detached c1
	pid="$(brig state c1 | jq -r .pid)"
	# left out: no directory, the init on every cpu, exec the same
	[ ! -e "/sys/fs/cgroup/cpuset/$SCOPE_TOP/c" ]
	grep -qx "skip /sys/fs/cgroup/cpuset/$SCOPE_TOP/c" "$ROOT/c1/made"
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = "$all" ]
	[ "$(brig exec c1 grep Cpus_allowed_list /proc/self/status | awk '{ print $2 }')" = "$all" ]
	# update with cpus joins it first: the init moves into the new directory
	brig update --cpuset-cpus 0 c1
	grep -q ":cpuset:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
	[ "$(cat "/sys/fs/cgroup/cpuset/$SCOPE_TOP/c/cpuset.cpus")" = 0 ]
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = 0 ]
	brig delete -f c1
	[ -z "$(scope_dirs)" ]
	# cpus in the config: a directory from the start
	update_config '.linux.resources.cpu.cpus = "0"'
	run_detached c2
	pid="$(brig state c2 | jq -r .pid)"
	grep -q ":cpuset:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = 0 ]
	brig delete -f c2
	[ -z "$(scope_dirs)" ]
	# a parent restricted to cpu 0 by someone else: the container is put
	# below it (staying in brig's own cpuset would give it every cpu)
	update_config 'del(.linux.resources.cpu)'
	mkdir -p "/sys/fs/cgroup/cpuset/$SCOPE_TOP"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$SCOPE_TOP/cpuset.mems"
	echo 0 >"/sys/fs/cgroup/cpuset/$SCOPE_TOP/cpuset.cpus"
	run_detached c3
	pid="$(brig state c3 | jq -r .pid)"
	grep -q ":cpuset:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = 0 ]
	! grep -q "^skip /sys/fs/cgroup/cpuset" "$ROOT/c3/made" || false
	brig delete -f c3
	[ ! -e "/sys/fs/cgroup/cpuset/$SCOPE_TOP/c" ]
}

# issue 25: the named systemd hierarchy is systemd's: as the host's init it
# tracks every unit's processes there, and nothing else sets anything there.
@test "cgroups_scope: name=systemd is joined only where systemd is the host's init" {
	requires_hybrid
	local pid mp
	mp="$(awk '$9 == "cgroup" && $NF ~ /(^|,)name=systemd(,|$)/ { print $5; exit }' /proc/self/mountinfo)"
	[ -n "$mp" ] || skip "no name=systemd hierarchy mounted"
	# someone else's parent there does not count: it carries no settings
	mkdir "$mp/$SCOPE_TOP"
	run_detached c1
	pid="$(brig state c1 | jq -r .pid)"
	if [ -d /run/systemd/system ]; then
		grep -q ":name=systemd:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup"
		[ -d "$mp/$SCOPE_TOP/c" ]
	else
		! grep -q ":name=systemd:/$SCOPE_TOP/c\$" "/proc/$pid/cgroup" || false
		[ ! -e "$mp/$SCOPE_TOP/c" ]
		grep -qx "skip $mp/$SCOPE_TOP/c" "$ROOT/c1/made"
		# exec joins what the init joined: its cgroup namespace root there
		brig exec c1 cat /proc/self/cgroup | grep -qx '[0-9]*:name=systemd:/'
	fi
	# a cgroup mount in the config keeps it (systemd inside the container)
	brig delete -f c1
	add_mount '{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup"}'
	run_detached c2
	grep -q ":name=systemd:/$SCOPE_TOP/c\$" "/proc/$(brig state c2 | jq -r .pid)/cgroup"
}
