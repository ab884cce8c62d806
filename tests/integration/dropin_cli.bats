#!/usr/bin/env bats
# Drop-in for runc (issue #16): what runc does and brig must do the same.
#   item 2   a new network namespace has lo up (127.0.0.1 usable inside)
#   item 3   cpu.realtimeRuntime: parents without a budget get one; a parent
#            with too small a budget is named (cgroup v1 with
#            CONFIG_RT_GROUP_SCHED; skipped elsewhere)
#   item 7   a cgroup2 mount covered by a tmpfs is not used (own mount ns)
#   item 13  --log-format text / --debug: runc's key=value lines on stderr
#   item 14  ps --format json of a container without processes: null
#   item 16  spec: a cgroup namespace only on a pure cgroup v2 host
#   item 17  options after the container id; device access strings
#   item 19  checkpoint --parent-path must be relative
# Cgroup modes: any (items 3 and 7 need v1 controllers; 7 also the hybrid
# /sys/fs/cgroup/unified mount; they skip saying so).

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
	if [ -n "${RT_PARENT:-}" ]; then
		find "/sys/fs/cgroup/cpu/$RT_PARENT" -depth -type d -exec rmdir {} + 2>/dev/null || true
		for d in /sys/fs/cgroup/*/"$RT_PARENT"; do
			[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	[ -n "${SPEC_DIR:-}" ] && rm -rf "$SPEC_DIR"
	return 0
}

@test "dropin: a new network namespace has lo up, 127.0.0.1 works inside (#16 item 2)" {
	set_args sh -c 'ip link show lo; nc -l -p 7777 >/tmp/got &
		for i in 1 2 3 4 5 6 7 8 9 10; do echo hello | nc -w 1 127.0.0.1 7777 && break; sleep 0.2; done
		for i in $(seq 50); do [ -s /tmp/got ] && break; sleep 0.1; done
		echo "got=$(cat /tmp/got)"'
	run brig run lo1
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "<LOOPBACK,UP"
	assert_contains "$output" "got=hello"
}

@test "dropin: a joined network namespace is left as it is (#16 item 2)" {
	# The joined namespace's lo stays down: brig configures only what it made.
	local ns pid
	unshare -n sleep 60 &
	pid=$!
	sleep 0.2
	ns="/proc/$pid/ns/net"
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"$ns\" else . end)"
	set_args ip link show lo
	run brig run lo2
	kill "$pid" 2>/dev/null || true
	[ "$status" -eq 0 ]
	[[ "$output" != *"<LOOPBACK,UP"* ]]
}

# rt_requires: the cpu controller with realtime group scheduling.
rt_requires() {
	[ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] ||
		skip "no /sys/fs/cgroup/cpu/cpu.rt_runtime_us (cgroup v1 cpu with CONFIG_RT_GROUP_SCHED needed)"
}

@test "dropin: realtimeRuntime gives the parent brig makes a budget, the host root keeps its own (#16 item 3)" {
	rt_requires
	local root_before
	root_before="$(cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us)"
	RT_PARENT="brig-test-rt.$$.$BATS_TEST_NUMBER"
	update_config ".linux.cgroupsPath = \"/$RT_PARENT/c1\" |
		.linux.resources.cpu = {\"realtimeRuntime\": 1000, \"realtimePeriod\": 1000000}"
	set_args sleep 60
	run_detached rt1
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" -eq 1000 ]
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/c1/cpu.rt_runtime_us")" -eq 1000 ]
	[ "$(cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us)" = "$root_before" ]
	grep -q "cpu.*:/$RT_PARENT/c1\$" "/proc/$(brig state rt1 | jq .pid)/cgroup"
}

@test "dropin: realtimeRuntime above a parent's own budget names that parent (#16 item 3)" {
	rt_requires
	RT_PARENT="brig-test-rt.$$.$BATS_TEST_NUMBER"
	mkdir -p "/sys/fs/cgroup/cpu/$RT_PARENT"
	echo 500 >"/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us"
	update_config ".linux.cgroupsPath = \"/$RT_PARENT/x/c1\" |
		.linux.resources.cpu = {\"realtimeRuntime\": 1000, \"realtimePeriod\": 1000000}"
	set_args true
	run brig run rt2
	[ "$status" -eq 1 ]
	assert_contains "$output" "realtimeRuntime 1000"
	assert_contains "$output" "/sys/fs/cgroup/cpu/$RT_PARENT"
	assert_contains "$output" "500"
	# the parent the test set keeps its value; nothing of the container stays
	[ "$(cat "/sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us")" -eq 500 ]
	[ ! -e "/sys/fs/cgroup/cpu/$RT_PARENT/x/c1" ]
	[ ! -e "$ROOT/rt2" ]
}

@test "dropin: a cgroup2 mount covered by a tmpfs is not used (#16 item 7)" {
	[ -d /sys/fs/cgroup/memory ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] ||
		skip "needs a hybrid host (v1 controllers and cgroup2 at /sys/fs/cgroup/unified)"
	update_config '.linux.namespaces -= [{"type":"cgroup"}]'
	set_args cat /proc/self/cgroup
	# A private mount namespace of the test's own: the host's table is untouched.
	run unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs /sys/fs/cgroup/unified || exit 99
		"$@"' sh timeout -k 5 60 "$RUNTIME" --root "$ROOT" run cov1
	[ "$status" -eq 0 ]
	# placed in its v1 cgroups, as on a pure v1 host
	assert_contains "$output" "memory:/$TEST_CGROUP_PARENT/$CGROUP_NAME"
	[ "$(stat -f -c %T /sys/fs/cgroup/unified)" = cgroup2fs ]
	assert_no_leftovers
}

@test "dropin: --log-format text and --debug write runc's key=value lines to stderr (#16 item 13)" {
	run brig --log-format text state nosuch
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^time=\"[0-9T:.-]+Z\"\ level=error\ msg=\"container\ \\\"nosuch\\\"\ does\ not\ exist\"$ ]]
	run brig --log-format json state nosuch
	[ "$(jq -r .level <<<"$output")" = error ]
	[ "$(jq -r .msg <<<"$output")" = 'container "nosuch" does not exist' ]
	# --debug: every line is key=value, debug ones too
	set_args true
	run brig --debug run dbg1
	[ "$status" -eq 0 ]
	grep -q '^time="[^"]*" level=debug msg=' <<<"$output"
	! grep -v '^time="[^"]*" level=[a-z]* msg=' <<<"$output" || false
	# with --log the file gets the line and stderr the bare message
	run brig --log "$BUNDLE/log" state nosuch
	[ "$output" = 'container "nosuch" does not exist' ]
	grep -q '^time="[^"]*" level=error msg="container \\"nosuch\\" does not exist"$' "$BUNDLE/log"
}

@test "dropin: ps --format json of a container without processes prints null (#16 item 14)" {
	set_args sleep 60
	run_detached ps1
	run brig ps --format json ps1
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -ge 1 ]
	brig kill ps1 KILL
	wait_for_status ps1 stopped
	run brig ps --format json ps1
	[ "$status" -eq 0 ]
	[ "$output" = null ]
}

@test "dropin: spec adds a cgroup namespace only on a pure cgroup v2 host (#16 item 16)" {
	SPEC_DIR="$(test_tmpdir spec)"
	brig spec --bundle "$SPEC_DIR"
	run jq -r '[.linux.namespaces[].type] | index("cgroup") != null' "$SPEC_DIR/config.json"
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		[ "$output" = true ]
	else
		[ "$output" = false ]
		# and a container of that config sees its real cgroup path
		update_config '.linux.namespaces -= [{"type":"cgroup"}]'
		update_config ".linux.namespaces = $(jq -c .linux.namespaces "$SPEC_DIR/config.json")"
		set_args cat /proc/self/cgroup
		run brig run spec1
		[ "$status" -eq 0 ]
		assert_contains "$output" ":/$TEST_CGROUP_PARENT/$CGROUP_NAME"
	fi
}

@test "dropin: options after the container id are accepted (#16 item 17)" {
	set_args sleep 60
	run_detached opt1
	brig update opt1 --pids-limit 77
	local d
	for d in /sys/fs/cgroup/pids/"$TEST_CGROUP_PARENT/$CGROUP_NAME" /sys/fs/cgroup/"$TEST_CGROUP_PARENT/$CGROUP_NAME"; do
		[ -f "$d/pids.max" ] && [ "$(cat "$d/pids.max")" = 77 ]
	done
	brig kill opt1 KILL --all
	wait_for_status opt1 stopped
	brig delete opt1 --force
	[ ! -e "$ROOT/opt1" ]
}

@test "dropin: device access strings as runc takes them (#16 item 17)" {
	local a
	set_args sh -c 'head -c 4 /dev/zero | wc -c'
	for a in wr rw mrw rr; do
		update_config ".linux.resources.devices = [{\"allow\": false, \"access\": \"rwm\"},
			{\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 5, \"access\": \"$a\"}]"
		run brig run "dev-$a"
		echo "$output"
		[ "$status" -eq 0 ]
		assert_contains "$output" "4"
	done
	# empty: refused like runc, before anything is made
	update_config '.linux.resources.devices = [{"allow": true, "type": "c", "major": 1, "minor": 5, "access": ""}]'
	run brig run dev-empty
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.resources.devices[0].access: must not be empty"
	assert_no_leftovers dev-empty
	[ -z "$(test_cgroup_dirs)" ]
}

@test "dropin: checkpoint --parent-path must be relative (#16 item 19)" {
	set_args sleep 60
	run_detached cp1
	run brig checkpoint --image-path "$BUNDLE/img" --parent-path /tmp/elsewhere cp1
	[ "$status" -eq 1 ]
	assert_contains "$output" "--parent-path must be relative"
	run brig checkpoint --image-path "$BUNDLE/img" --parent-path ../nosuch cp1
	[ "$status" -eq 1 ]
	assert_contains "$output" "invalid --parent-path"
	# criu never ran: the container still runs, no dump log was written
	[ "$(brig state cp1 | jq -r .status)" = running ]
	[ ! -e "$BUNDLE/img/dump.log" ]
}
