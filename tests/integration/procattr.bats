#!/usr/bin/env bats
# Process attributes (runtime/lib/process/procattr.c): linux.personality,
# process.scheduler, process.ioPriority, process.execCPUAffinity and
# linux.memoryPolicy, each checked from inside, and the errors for unknown
# names. runc 1.1 knows only personality, so the rest is brig-only.
# Covers any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# stat_field N: field N of the container's /proc/self/stat in $output.
stat_field() {
	# the command name is in parentheses and has no spaces here (sh)
	awk -v n="$1" '/^[0-9]+ \(/ { print $n }' <<<"$output"
}

@test "procattr: personality LINUX32 makes uname report a 32-bit machine" {
	# runc 1.1 ignores linux.personality (runc 1.2 added it).
	requires brig
	update_config '.linux.personality = {"domain":"LINUX32"}'
	set_args uname -m
	run brig run pers
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^i[3-6]86$ ]]
}

@test "procattr: an unknown personality domain is an error naming it" {
	# runc 1.1 ignores linux.personality (runc 1.2 added it).
	requires brig
	update_config '.linux.personality = {"domain":"LINUX64K"}'
	set_args true
	run brig run pers
	[ "$status" -ne 0 ]
	assert_contains "$output" "LINUX64K"
	if is_brig; then
		assert_contains "$output" 'linux.personality.domain: unknown domain "LINUX64K"'
		assert_no_leftovers pers
	fi
}

@test "procattr: scheduler SCHED_BATCH with nice, SCHED_IDLE, SCHED_FIFO with priority" {
	requires brig
	update_config '.process.scheduler = {"policy":"SCHED_BATCH","nice":7}'
	set_args cat /proc/self/stat
	run brig run sch
	[ "$status" -eq 0 ]
	# fields 19 (nice) and 41 (policy)
	[ "$(stat_field 19)" = 7 ]
	[ "$(stat_field 41)" = 3 ]

	update_config '.process.scheduler = {"policy":"SCHED_IDLE"}'
	run brig run sch1
	[ "$status" -eq 0 ]
	[ "$(stat_field 41)" = 5 ]

	# With RT group scheduling (cgroup v1 cpu.rt_runtime_us) a new cgroup
	# has no real-time budget: brig gives the container's one (#26 item 2).
	update_config '.process.scheduler = {"policy":"SCHED_FIFO","priority":10,"flags":["SCHED_FLAG_RESET_ON_FORK"]}'
	run brig run sch2
	[ "$status" -eq 0 ]
	# field 40 rt_priority; RESET_ON_FORK keeps a forked child from
	# inheriting FIFO, so cat (exec'd, not forked) still shows it.
	[ "$(stat_field 40)" = 10 ]
	[ "$(stat_field 41)" = 1 ]
}

@test "procattr: bad scheduler settings are errors naming the field" {
	requires brig
	set_args true
	update_config '.process.scheduler = {"policy":"SCHED_TURBO"}'
	run brig run s1
	[ "$status" -ne 0 ]
	assert_contains "$output" 'process.scheduler.policy: unknown policy "SCHED_TURBO"'
	update_config '.process.scheduler = {"policy":"SCHED_FIFO"}'
	run brig run s2
	[ "$status" -ne 0 ]
	assert_contains "$output" "process.scheduler.priority: SCHED_FIFO needs a priority in 1..99"
	update_config '.process.scheduler = {"policy":"SCHED_OTHER","nice":40}'
	run brig run s3
	[ "$status" -ne 0 ]
	assert_contains "$output" "process.scheduler.nice: 40 is out of range"
	update_config '.process.scheduler = {"policy":"SCHED_OTHER","flags":["SCHED_FLAG_NOPE"]}'
	run brig run s4
	[ "$status" -ne 0 ]
	assert_contains "$output" 'process.scheduler.flags[0]: unknown flag "SCHED_FLAG_NOPE"'
	assert_no_leftovers
}

@test "procattr: ioPriority sets the I/O class and level" {
	requires brig
	update_config '.process.ioPriority = {"class":"IOPRIO_CLASS_BE","priority":6}'
	set_args ionice
	run brig run io
	[ "$status" -eq 0 ]
	assert_contains "$output" "best-effort"
	assert_contains "$output" "prio 6"

	update_config '.process.ioPriority = {"class":"IOPRIO_CLASS_IDLE"}'
	run brig run io2
	[ "$status" -eq 0 ]
	assert_contains "$output" "idle"

	update_config '.process.ioPriority = {"class":"IOPRIO_CLASS_TURBO"}'
	run brig run io3
	[ "$status" -ne 0 ]
	assert_contains "$output" 'process.ioPriority.class: unknown class "IOPRIO_CLASS_TURBO"'
}

@test "procattr: execCPUAffinity.final pins the process" {
	requires brig
	update_config '.process.execCPUAffinity = {"final":"0"}'
	set_args sh -c 'grep Cpus_allowed_list /proc/self/status'
	run brig run aff
	[ "$status" -eq 0 ]
	assert_contains "$output" "Cpus_allowed_list:	0"

	update_config '.process.execCPUAffinity = {"final":"0-x"}'
	run brig run aff2
	[ "$status" -ne 0 ]
	assert_contains "$output" 'process.execCPUAffinity.final: invalid list "0-x"'
}

@test "procattr: memoryPolicy MPOL_BIND binds the process's memory to the nodes" {
	requires brig
	[ -e /proc/self/numa_maps ] || skip "kernel without NUMA"
	update_config '.linux.memoryPolicy = {"mode":"MPOL_BIND","nodes":"0"}'
	set_args sh -c 'grep -c " bind:0" /proc/self/numa_maps'
	run brig run mp
	[ "$status" -eq 0 ]
	[ "$output" -gt 0 ]

	update_config '.linux.memoryPolicy = {"mode":"MPOL_BIND"}'
	run brig run mp2
	[ "$status" -ne 0 ]
	assert_contains "$output" "linux.memoryPolicy.nodes: required for MPOL_BIND"

	update_config '.linux.memoryPolicy = {"mode":"MPOL_SOMETIMES"}'
	run brig run mp3
	[ "$status" -ne 0 ]
	assert_contains "$output" 'linux.memoryPolicy.mode: unknown mode "MPOL_SOMETIMES"'
}

@test "procattr: an LSM label for an LSM the kernel lacks fails up front, as runc fails" {
	[ -e /sys/module/apparmor/parameters/enabled ] && grep -q Y /sys/module/apparmor/parameters/enabled &&
		skip "AppArmor is enabled here"
	update_config '.process.apparmorProfile = "brig-test-profile"'
	set_args true
	run brig run lsm
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" 'process.apparmorProfile: "brig-test-profile" is set but AppArmor is not enabled'
		assert_no_leftovers lsm
	fi
	[ -d /sys/fs/selinux ] && skip "SELinux is enabled here"
	update_config 'del(.process.apparmorProfile) | .process.selinuxLabel = "system_u:system_r:container_t:s0"'
	run brig run lsm2
	[ "$status" -ne 0 ]
	assert_contains "$output" "selinux"
}
