#!/usr/bin/env bats
# Cgroup and state boundaries (issue #11 items 4, 5, 6, 13, 14): a create
# killed at any moment leaves nothing that delete --force cannot undo; a
# damaged state.json is listed and removable; a cgroup that already holds
# foreign processes is refused (or shared on request, never signalled,
# frozen or removed); a frozen cgroup is refused; delete --force kills every
# process of a container without a pid namespace, in every hierarchy.
# Every check is made from the host: the cgroup directories of every
# hierarchy, the state directory, the processes.
#
# Modes: cgroup v1, hybrid (v1 controllers + cgroup2 at
# /sys/fs/cgroup/unified: both the v1 freezer and cgroup2 cgroup.freeze are
# tested) and pure v2. The test that moves a process out of one hierarchy
# needs v1 hierarchies and is skipped on pure v2.
# Foreign processes are `sleep`s this file starts in cgroups it makes under
# the test parent; teardown kills them by pid, thaws and removes those cgroups.

load helpers

setup() {
	requires root
	setup_bundle
	FOREIGN_PIDS=""
}

teardown() {
	local d pid
	# thaw what a test froze, so that everything can exit and be removed
	for d in $(all_hier_dirs "$CGROUP_NAME"); do
		[ -f "$d/freezer.state" ] && echo THAWED >"$d/freezer.state" 2>/dev/null
		[ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
	done
	for pid in $FOREIGN_PIDS; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	# list -q hides nothing any more, but a damaged state must not keep the
	# old binary's teardown from cleaning up either
	for pid in $(test_pids); do kill -KILL "$pid" 2>/dev/null || true; done
	teardown_bundle
}

# cgroup_mounts: every cgroup (v1) and cgroup2 mountpoint of the host.
cgroup_mounts() {
	grep -E ' - cgroup2? ' /proc/self/mountinfo | awk '{print $5}' | grep '^/sys/fs/cgroup'
}

# all_hier_dirs NAME: the directory /brig-test/NAME in every hierarchy,
# whether it exists or not.
all_hier_dirs() {
	local mp
	for mp in $(cgroup_mounts); do
		echo "$mp/$TEST_CGROUP_PARENT/$1"
	done
}

# existing_hier_dirs NAME: those of them that exist.
existing_hier_dirs() {
	local d
	for d in $(all_hier_dirs "$1"); do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# make_test_cgroup NAME: make /brig-test/NAME in every hierarchy but cpuset
# (whose new cgroups need cpus and mems before they take a process).
make_test_cgroup() {
	local d
	for d in $(all_hier_dirs "$1"); do
		case "$d" in /sys/fs/cgroup/cpuset/*) continue ;; esac
		mkdir -p "$d"
	done
}

# start_foreign NAME: a `sleep` of this test placed in /brig-test/NAME (made
# by make_test_cgroup) in every hierarchy that has it; prints its pid.
start_foreign() {
	local d pid
	sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
	pid=$!
	FOREIGN_PIDS="$FOREIGN_PIDS $pid"
	for d in $(existing_hier_dirs "$1"); do
		echo "$pid" >"$d/cgroup.procs"
	done
	echo "$pid"
}

# try_run ID: `run -d` expected to fail: $status, and $output (stderr); a
# container that starts anyway (the old binary) must not hold bats' pipes.
try_run() {
	status=0
	brig run -d "$1" </dev/null >"$BUNDLE/$1.out" 2>"$BUNDLE/$1.err" 3>&- || status=$?
	output="$(cat "$BUNDLE/$1.err")"
}

# proc_frozen PID: the process is stopped by a freezer (v1 or v2).
proc_frozen() {
	local st
	st="$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat" 2>/dev/null)"
	[ "$st" = D ] && grep -q 'freez' "/proc/$1/wchan" 2>/dev/null && return 0
	grep -qE '^State:.*(stopped|frozen)' "/proc/$1/status" 2>/dev/null && return 0
	grep -q 'do_freezer_trap\|refrigerator\|__refrigerator' "/proc/$1/wchan" 2>/dev/null
}

# assert_gone ID: no state, no cgroup of this test in any hierarchy, no process.
assert_gone() {
	assert_no_leftovers "$1"
	local left
	left="$(existing_hier_dirs "$CGROUP_NAME")"
	[ -z "$left" ] || { echo "cgroups left: $left" >&2; return 1; }
}

@test "boundary: create killed at any moment: delete -f removes every cgroup, the state and the process (item 4)" {
	requires brig
	update_config '.process.args = ["sleep", "1000"]'
	local i delay pid
	for i in $(seq 50); do
		# 0 to 29 ms, twice over (spread over the whole of a 5-30 ms create)
		delay="$(printf '0.%03d' $(( (i * 7919) % 30 )))"
		"$RUNTIME" --root "$ROOT" create k </dev/null >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		brig delete -f k || { echo "iteration $i (delay $delay): delete -f failed" >&2; return 1; }
		assert_gone k || { echo "iteration $i (delay $delay)" >&2; return 1; }
	done
	# the id and its cgroup path are free again
	create_container k
	[ "$(brig state k | jq -r .status)" = created ]
	brig delete -f k
	assert_gone k
}

# damage_state ID KIND: make ROOT/ID/state.json empty, truncated, garbage or
# give it bundle: null.
damage_state() {
	local f="$ROOT/$1/state.json"
	case "$2" in
	empty) : >"$f" ;;
	truncated) head -c 40 "$f" >"$f.t" && mv "$f.t" "$f" ;;
	garbage) printf '\x01\x02not json at all{{{' >"$f" ;;
	bundle-null) jq -c '.bundle = null' "$f" >"$f.t" && mv "$f.t" "$f" ;;
	esac
}

@test "boundary: a damaged state.json is listed as unknown, named in errors, and delete -f removes everything (item 5)" {
	update_config '.process.args = ["sleep", "1000"]'
	local kind pid out
	for kind in empty truncated garbage bundle-null; do
		run_detached "d-$kind"
		pid="$(brig state "d-$kind" | jq -r .pid)"
		process_alive "$pid"
		damage_state "d-$kind" "$kind"

		# list shows it, in both formats, and the JSON stays valid
		out="$(brig list)"
		assert_contains "$out" "d-$kind"
		out="$(brig list -q)"
		assert_contains "$out" "d-$kind"
		out="$(brig list --format json)"
		[ "$(echo "$out" | jq -r --arg id "d-$kind" '.[] | select(.id == $id) | .status')" = unknown ]

		# other commands and plain delete name the file, and change nothing
		run brig state "d-$kind"
		[ "$status" -ne 0 ]
		assert_contains "$output" "$ROOT/d-$kind/state.json"
		run brig delete "d-$kind"
		[ "$status" -ne 0 ]
		assert_contains "$output" "$ROOT/d-$kind/state.json"
		process_alive "$pid"

		# delete -f: the init (recorded with its start time), the state, the cgroups
		brig delete -f "d-$kind"
		for _ in $(seq 50); do process_alive "$pid" || break; sleep 0.02; done
		! process_alive "$pid" || { echo "$kind: init $pid still alive" >&2; false; }
		assert_gone "d-$kind"
	done
}

@test "boundary: a cgroup that already holds a foreign process is refused, untouched (item 6)" {
	make_test_cgroup "$CGROUP_NAME"
	local foreign d
	foreign="$(start_foreign "$CGROUP_NAME")"
	update_config '.process.args = ["sleep", "1000"]'
	try_run c6
	[ "$status" -ne 0 ]
	assert_contains "$output" "$TEST_CGROUP_PARENT/$CGROUP_NAME"
	assert_contains "$output" "1 process"
	assert_contains "$output" "run.brig.cgroup.shared"
	[ ! -e "$ROOT/c6" ]
	# the foreign process runs on, in its cgroups, which are all still there
	process_alive "$foreign"
	! proc_frozen "$foreign" || false
	for d in $(all_hier_dirs "$CGROUP_NAME"); do
		case "$d" in /sys/fs/cgroup/cpuset/*) continue ;; esac
		[ -d "$d" ] || { echo "$d was removed" >&2; false; }
		grep -qx "$foreign" "$d/cgroup.procs"
	done
}

@test "boundary: an existing empty cgroup is used but not removed: delete removes only what create made (item 6)" {
	make_test_cgroup "$CGROUP_NAME"
	update_config '.process.args = ["sleep", "1000"]'
	run_detached c6
	local pid d
	pid="$(brig state c6 | jq -r .pid)"
	grep -q "/$TEST_CGROUP_PARENT/$CGROUP_NAME\$" "/proc/$pid/cgroup"
	brig delete -f c6
	! process_alive "$pid" || false
	[ ! -e "$ROOT/c6" ]
	# the directories this test made stay; the one brig made (cpuset) is gone
	for d in $(all_hier_dirs "$CGROUP_NAME"); do
		case "$d" in
		/sys/fs/cgroup/cpuset/*) [ ! -d "$d" ] || { echo "$d (made by brig) left" >&2; false; } ;;
		*) [ -d "$d" ] || { echo "$d (not brig's) was removed" >&2; false; } ;;
		esac
	done
}

@test "boundary: run.brig.cgroup.shared=true: kill --all, pause and delete -f never touch the foreign process (item 6)" {
	make_test_cgroup "$CGROUP_NAME"
	local foreign pid d
	foreign="$(start_foreign "$CGROUP_NAME")"
	update_config '.process.args = ["sleep", "1000"] | .annotations["run.brig.cgroup.shared"] = "true"'
	run_detached c6
	pid="$(brig state c6 | jq -r .pid)"
	grep -q "/$TEST_CGROUP_PARENT/$CGROUP_NAME\$" "/proc/$pid/cgroup"

	# pause would freeze the foreign process too: refused
	run brig pause c6
	[ "$status" -ne 0 ]
	assert_contains "$output" "shared"
	! proc_frozen "$foreign" || false
	! cgroup_frozen || false

	# kill --all: the container's processes only
	brig kill --all c6 KILL
	for _ in $(seq 50); do process_alive "$pid" || break; sleep 0.02; done
	! process_alive "$pid" || false
	process_alive "$foreign"

	brig delete -f c6
	process_alive "$foreign"
	! proc_frozen "$foreign" || false
	for d in $(all_hier_dirs "$CGROUP_NAME"); do
		case "$d" in /sys/fs/cgroup/cpuset/*) continue ;; esac
		[ -d "$d" ] || { echo "$d was removed" >&2; false; }
	done
	[ ! -e "$ROOT/c6" ]
}

@test "boundary: a bad run.brig.cgroup.shared value is refused, naming the annotation; features lists it (item 6)" {
	requires brig
	brig features | jq -e '.potentiallyUnsafeConfigAnnotations | index("run.brig.cgroup.shared")'
	update_config '.annotations["run.brig.cgroup.shared"] = "yes"'
	try_run c6
	[ "$status" -ne 0 ]
	assert_contains "$output" "run.brig.cgroup.shared"
	assert_gone c6
}

# freeze_test_cgroup KIND: make the test's cgroup and freeze it with the v1
# freezer or cgroup2's cgroup.freeze; fails (skip) when the host has neither.
freeze_test_cgroup() {
	local d
	make_test_cgroup "$CGROUP_NAME"
	for d in $(existing_hier_dirs "$CGROUP_NAME"); do
		if [ "$1" = v1 ] && [ -f "$d/freezer.state" ]; then
			echo FROZEN >"$d/freezer.state"
			FROZEN_FILE="$d/freezer.state"
			return 0
		fi
		if [ "$1" = v2 ] && [ -f "$d/cgroup.freeze" ]; then
			echo 1 >"$d/cgroup.freeze"
			FROZEN_FILE="$d/cgroup.freeze"
			return 0
		fi
	done
	return 1
}

# assert_frozen_refused FROZEN_VALUE: create in the frozen test cgroup fails
# by name, leaves no state or process, and leaves the cgroup as it was found
# (frozen, not removed).
assert_frozen_refused() {
	update_config '.process.args = ["sleep", "1000"]'
	BRIG_CMD_TIMEOUT=15 try_run c13
	[ "$status" -ne 0 ]
	assert_contains "$output" "frozen"
	assert_contains "$output" "$TEST_CGROUP_PARENT/$CGROUP_NAME"
	[ ! -e "$ROOT/c13" ]
	[ -z "$(test_pids)" ]
	[ "$(cat "$FROZEN_FILE")" = "$1" ]
}

@test "boundary: a frozen v1 freezer cgroup is refused with a named error (item 13)" {
	freeze_test_cgroup v1 || skip "no v1 freezer hierarchy"
	assert_frozen_refused FROZEN
}

@test "boundary: a frozen cgroup2 cgroup (cgroup.freeze 1) is refused with a named error (item 13)" {
	freeze_test_cgroup v2 || skip "no cgroup2 hierarchy"
	assert_frozen_refused 1
}

@test "boundary: delete -f without a pid namespace kills every process of the cgroup, in every hierarchy (item 14)" {
	requires cgroup_v1
	# host pid namespace; the init leaves a forking loop and a quiet child behind
	update_config '.linux.namespaces |= map(select(.type != "pid"))
		| .process.args = ["sh", "-c", "(while :; do sleep 1000 & sleep 0.05; done) & sleep 1000 & echo $! > /tmp/quiet; sleep 1000"]'
	run_detached c14
	local init quiet d aside
	init="$(brig state c14 | jq -r .pid)"
	for _ in $(seq 50); do [ -s "$BUNDLE/rootfs/tmp/quiet" ] && break; sleep 0.02; done
	quiet="$(cat "$BUNDLE/rootfs/tmp/quiet")"
	process_alive "$quiet"
	# one process that left the freezer and pids hierarchies (as one whose
	# joining was cut short would): still the container's in all the others
	for d in freezer pids; do
		aside="/sys/fs/cgroup/$d/$TEST_CGROUP_PARENT/$CGROUP_NAME-aside"
		[ -d "/sys/fs/cgroup/$d" ] || continue
		mkdir -p "$aside"
		echo "$quiet" >"$aside/cgroup.procs"
	done
	# the init is gone
	kill -KILL "$init"
	for _ in $(seq 50); do process_alive "$init" || break; sleep 0.02; done
	[ "$(brig state c14 | jq -r .status)" = stopped ]
	[ -n "$(test_pids)" ]

	brig delete -f c14
	! process_alive "$quiet" || { echo "process $quiet (out of the freezer) survived" >&2; false; }
	[ -z "$(test_pids | grep -v "^$quiet\$")" ] || { echo "left: $(test_pids)" >&2; false; }
	[ ! -e "$ROOT/c14" ]
	for d in $(all_hier_dirs "$CGROUP_NAME"); do
		[ ! -d "$d" ] || { echo "$d left" >&2; false; }
	done
}

@test "boundary: delete -f of a paused container kills it while frozen: it never runs again" {
	# An exec'd process counts as fast as it can into a file in the rootfs
	# (the init only sleeps: a process other than the init dies only when
	# the init's death reaches it). Once paused the count must never move
	# again, not even while delete tears the container down: a thaw before
	# the kill would let it run.
	update_config '.process.args = ["sleep", "1000"]'
	run_detached tick
	brig exec -d tick sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/tick; done' </dev/null >/dev/null 2>&1
	local i
	for i in $(seq 50); do [ -s "$BUNDLE/rootfs/tmp/tick" ] && break; sleep 0.1; done
	brig pause tick
	local before
	before="$(cat "$BUNDLE/rootfs/tmp/tick")"
	brig delete --force tick
	[ "$(cat "$BUNDLE/rootfs/tmp/tick")" = "$before" ]
	! brig state tick >/dev/null 2>&1 || false
	[ -z "$(existing_hier_dirs "$CGROUP_NAME")" ]
}

@test "boundary: a cgroupsPath with a newline cannot forge the cgroup record; it is refused" {
	# The forged lines would name a cgroup of the test's own as made by brig,
	# so that delete would kill its process and remove it.
	local victim="/$TEST_CGROUP_PARENT/$CGROUP_NAME-victim" d
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME/x\\npath $victim\\nmade /sys/fs/cgroup/pids$victim\""
	update_config '.process.args = ["sleep", "1000"]'
	try_run forge
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.cgroupsPath: control character 0x0a"
	[ ! -e "$ROOT/forge" ]
	[ -z "$(test_pids)" ]
	for d in /sys/fs/cgroup/*/"$TEST_CGROUP_PARENT"/*; do
		case "$d" in *$'\n'*) echo "left: $d"; false ;; esac
	done
}
