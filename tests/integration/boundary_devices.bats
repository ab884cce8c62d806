#!/usr/bin/env bats
# Two boundary holes of issue #11, each proved from inside the container and
# from the host:
#   item 9   the device cgroup allows exactly linux.resources.devices plus the
#            default devices: a node that linux.devices creates is not thereby
#            allowed (init and exec'd processes; read and write opens)
#   item 11  exec --ignore-paused into a paused container never holds the
#            container's lock while it waits on the frozen cgroup: resume
#            and delete --force go through, the exec then completes
# The device opens move no data: /dev/kmsg is opened read-only and
# write-only, never read or written. The container gets CAP_SYSLOG so that a
# read open of /dev/kmsg is refused only by the device cgroup (this host's
# kernel.dmesg_restrict would refuse it otherwise).
# Covers cgroup v1 and hybrid (devices.allow/deny, freezer.state); on pure v2
# the same tests run through the eBPF device program and cgroup.freeze.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	install_probe
	# devprobe PATH...: one line per device, "PATH read=R write=W", R and W
	# "ok" or the shell's error text (EPERM reads "Operation not permitted").
	cat >"$BUNDLE/rootfs/bin/devprobe" <<-'EOF'
	#!/bin/sh
	for d in "$@"; do
		r=$( (: <"$d") 2>&1 ) && r=ok
		w=$( (: >>"$d") 2>&1 ) && w=ok
		case "$r" in *"not permitted"*) r=EPERM ;; esac
		case "$w" in *"not permitted"*) w=EPERM ;; esac
		echo "$d read=$r write=$w"
	done
	EOF
	chmod 0755 "$BUNDLE/rootfs/bin/devprobe"
}

teardown() {
	# A blocked exec (old code) holds the container's lock: end it (the
	# runtime process we started, by pid) so teardown's delete does not wait.
	[ -n "${EXEC_PID:-}" ] && kill -KILL "$EXEC_PID" 2>/dev/null
	teardown_bundle
	return 0
}

# kmsg_config RULES_JSON: /dev/kmsg in linux.devices, resources.devices =
# RULES_JSON, CAP_SYSLOG, and a long-running init.
kmsg_config() {
	# With printk_devkmsg=off the driver itself refuses every open.
	[ "$(cat /proc/sys/kernel/printk_devkmsg 2>/dev/null)" != off ] ||
		skip "kernel.printk_devkmsg is off: /dev/kmsg cannot be opened at all"
	update_config '.linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1,
		"minor": 11, "fileMode": 420, "uid": 0, "gid": 0}]'
	update_config ".linux.resources.devices = $1"
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYSLOG"])'
}

# devices_list_v1: the v1 devices.list of this test's container ("" on v2).
devices_list_v1() {
	cat "/sys/fs/cgroup/devices/$TEST_CGROUP_PARENT/$CGROUP_NAME/devices.list" 2>/dev/null || true
}

@test "devices: a node in linux.devices is denied unless resources.devices allows it (init and exec)" {
	kmsg_config '[{"allow": false, "access": "rwm"}]'
	set_args sh -c 'devprobe /dev/kmsg /dev/null /dev/zero /dev/full /dev/urandom /dev/random
		head -c 5 /dev/zero | wc -c; head -c 7 /dev/urandom | wc -c
		echo discard >/dev/null && echo null-ok
		exec sleep 1000'
	run_detached kmsg
	wait_for_status kmsg running
	local i out=""
	for i in $(seq 100); do
		out="$(cat "$BUNDLE/kmsg.out")"
		[[ "$out" == *null-ok* ]] && break
		sleep 0.05
	done
	echo "init: $out"
	# The node exists (linux.devices made it) but the cgroup refuses opens.
	[ "$(brig exec kmsg stat -c '%t:%T %F' /dev/kmsg)" = "1:b character special file" ]
	assert_contains "$out" "/dev/kmsg read=EPERM write=EPERM"
	local d
	for d in null zero full urandom random; do
		assert_contains "$out" "/dev/$d read=ok write=ok"
	done
	[ "$(sed -n 7p <<<"$out")" = 5 ]
	[ "$(sed -n 8p <<<"$out")" = 7 ]

	# An exec'd process is held by the same rules.
	run brig exec kmsg devprobe /dev/kmsg /dev/null /dev/zero /dev/urandom
	echo "exec: $output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "/dev/kmsg read=EPERM write=EPERM"
	for d in null zero urandom; do
		assert_contains "$output" "/dev/$d read=ok write=ok"
	done
	run brig exec kmsg confine_probe write /dev/kmsg
	[ "$output" = "write: EPERM" ]

	# From the host: no v1 rule lets anyone read or write 1:11.
	local list
	list="$(devices_list_v1)"
	echo "devices.list: $list"
	if [ -n "$list" ]; then
		! grep -Eq '^[ac] (1|\*):(11|\*) [rw]' <<<"$list" || false
		grep -qx 'c 1:3 rwm' <<<"$list"
	fi
}

@test "devices: resources.devices allows a linux.devices node with exactly the access it names" {
	kmsg_config '[{"allow": false, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "r"}]'
	set_args sh -c 'devprobe /dev/kmsg /dev/null; exec sleep 1000'
	run_detached kmsgr
	wait_for_status kmsgr running
	local i out=""
	for i in $(seq 100); do
		out="$(cat "$BUNDLE/kmsgr.out")"
		[[ "$out" == */dev/null* ]] && break
		sleep 0.05
	done
	echo "init: $out"
	assert_contains "$out" "/dev/kmsg read=ok write=EPERM"
	assert_contains "$out" "/dev/null read=ok write=ok"
	run brig exec kmsgr devprobe /dev/kmsg
	echo "exec: $output"
	[ "$output" = "/dev/kmsg read=ok write=EPERM" ]
	local list
	list="$(devices_list_v1)"
	echo "devices.list: $list"
	if [ -n "$list" ]; then
		grep -qx 'c 1:11 r' <<<"$list"
	fi
}

# wait_exec SECONDS: wait for the background exec ($EXEC_PID) to end; its
# exit status in EXEC_RC (none: it is still running after SECONDS).
wait_exec() {
	local i
	EXEC_RC=none
	for i in $(seq $(($1 * 20))); do
		process_alive "$EXEC_PID" || break
		sleep 0.05
	done
	process_alive "$EXEC_PID" && return 0
	EXEC_RC=0
	wait "$EXEC_PID" || EXEC_RC=$?
	EXEC_PID=
	echo "exec: rc=$EXEC_RC out=$(cat "$BUNDLE/exec.out") err=$(cat "$BUNDLE/exec.err")"
}

# exec_blocked_in_cgroup: wait (up to 10 s) until the background exec's
# process sits in the container's frozen cgroup next to the init: the
# point where the old code held the lock and waited.
exec_blocked_in_cgroup() {
	local i
	for i in $(seq 200); do
		[ "$(test_pids | wc -l)" -ge 2 ] && return 0
		sleep 0.05
	done
	echo "the exec never reached the container's cgroup" >&2
	return 1
}

@test "exec --ignore-paused into a paused container does not block resume" {
	set_args sleep 1000
	run_detached frz
	wait_for_status frz running
	brig pause frz
	cgroup_frozen
	# The exec may wait while the container is paused; it must not hold up
	# resume. Timeouts turn a regression into a failure, not a hang.
	"$RUNTIME" --root "$ROOT" exec --ignore-paused frz sh -c 'echo exec-ran-$((6 * 7))' \
		</dev/null >"$BUNDLE/exec.out" 2>"$BUNDLE/exec.err" 3>&- &
	EXEC_PID=$!
	exec_blocked_in_cgroup
	run timeout -k 1 8 "$RUNTIME" --root "$ROOT" resume frz
	echo "resume: $status $output"
	[ "$status" -eq 0 ]
	! cgroup_frozen || false
	# The exec completes once the container runs again, with its output.
	wait_exec 10
	[ "$EXEC_RC" = 0 ]
	[ "$(cat "$BUNDLE/exec.out")" = exec-ran-42 ]
	[ "$(brig state frz | jq -r .status)" = running ]
	# Only the init is left in the cgroup.
	[ "$(test_pids | wc -l)" -eq 1 ]
	brig delete --force frz
	assert_no_leftovers
}

@test "exec --ignore-paused into a paused container does not block delete --force" {
	set_args sleep 1000
	run_detached frzd
	wait_for_status frzd running
	brig pause frzd
	"$RUNTIME" --root "$ROOT" exec --ignore-paused frzd sleep 1000 \
		</dev/null >"$BUNDLE/exec.out" 2>"$BUNDLE/exec.err" 3>&- &
	EXEC_PID=$!
	exec_blocked_in_cgroup
	# (kill --all KILL thaws a paused container, so it would end the wait:
	# delete --force alone must get through.)
	run timeout -k 1 15 "$RUNTIME" --root "$ROOT" delete --force frzd
	echo "delete: $status $output"
	[ "$status" -eq 0 ]
	# The exec ends: its process was killed with the container.
	wait_exec 10
	[ "$EXEC_RC" != none ]
	[ "$EXEC_RC" -ne 0 ]
	[ -z "$(cat "$BUNDLE/exec.out")" ]
	assert_no_leftovers frzd
	assert_no_leftovers
}
