#!/usr/bin/env bats
# Judge the thing, not its name (issue #22 item 2, docs/sandbox.md):
#   namespaces  a linux.namespaces path is judged by the namespace it opens,
#               however it is spelt (//, /./, /proc/2, thread-self/../..,
#               a symlink), by `brig check` and again by the node policy at
#               create on the very fd the init joins; a path check cannot
#               open is reported as not checked; another container's
#               namespace (a pod's) stays allowed. Proved from inside: on
#               the old brig the container printed the host's network
#               namespace inode and killed a sleep the test started.
# The configs are `brig spec --sandbox` (passes the sandbox profile) and
# `brig spec --hardened` (passes baseline), so the policy refuses only for
# what each test adds. Every policy is a temp file given with --policy.
# Any cgroup mode.

load helpers
load confine_helpers

setup() {
	setup_bundle
	CHK="$(test_tmpdir judge)"
	(cd "$CHK" && "$RUNTIME" spec --sandbox) || return 1
	mkdir "$CHK/f"
}

teardown() {
	[ -n "${SLEEP_PID:-}" ] && kill "$SLEEP_PID" 2>/dev/null
	teardown_bundle
	[ -n "${NS_POD:-}" ] && ip netns del "$NS_POD" 2>/dev/null
	[ -n "${CHK:-}" ] && rm -rf "$CHK"
	return 0
}

# check_with JQ [check flags...]: `brig check` (JSON) of the sandbox config
# with JQ applied; $status and $output.
check_with() {
	local filter="$1"
	shift
	jq "$filter" "$CHK/config.json" >"$CHK/f/config.json"
	run brig check --bundle "$CHK/f" --format json "$@"
}

# rules_of: the rule ids of the findings in $output, sorted and unique.
rules_of() {
	jq -r '.findings[].rule' <<<"$output" | sort -u | tr '\n' ' '
}

# ns_path TYPE PATH: the jq filter that joins TYPE through PATH.
ns_path() {
	printf '.linux.namespaces |= map(if .type == "%s" then .path = "%s" else . end)' "$1" "$2"
}

# sandbox_bundle ARGS...: the bundle's config becomes `brig spec --sandbox`
# in the test's cgroup, running ARGS.
sandbox_bundle() {
	rm "$BUNDLE/config.json"
	brig spec --sandbox --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\""
	set_args "$@"
}

# make_pod_netns: a network namespace standing for another container's
# (a pod's pause container), in $NS_POD.
make_pod_netns() {
	NS_POD="brig-judge-pod-$$-${BATS_TEST_NUMBER}"
	ip netns add "$NS_POD"
}

HOST_NET="$(readlink /proc/self/ns/net)"

# refused_run ID RAN NEEDLE: `brig --policy $CHK/policy.json run ID` is
# refused naming NEEDLE, leaving nothing, and RAN (what the container
# prints when it runs, as it did on the old brig) is not in its output.
refused_run() {
	run brig --policy "$CHK/policy.json" run "$1"
	echo "$output"
	[[ "$output" != *"$2"* ]]
	[ "$status" -eq 1 ]
	assert_contains "$output" "$3"
	assert_no_leftovers "$1"
}

# Spellings of brig's own (the host's) network namespace that open
# anywhere: each gave 0 findings and joined the host's on the old brig.
HOST_NET_SPELLINGS=(//proc/self/ns/net /proc/./self/ns/net /proc/2/ns/net
	/proc/thread-self/../../ns/net /proc/self/../self/ns/net)

@test "judge: check finds the host's namespaces by what the path opens, however spelt" {
	local p t
	ln -s /proc/self/ns/net "$CHK/link-net"
	ln -s /proc/self/ns/pid "$CHK/link-pid"
	for p in "${HOST_NET_SPELLINGS[@]}" "$CHK/link-net"; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $(rules_of)"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "host-ns-network " ]
		assert_contains "$(jq -r '.findings[0].message' <<<"$output")" "joins the host's network namespace"
		[ "$(jq -r '.findings[0].path' <<<"$output")" = "linux.namespaces[2].path" ]
	done
	# Every type, judged by its own rule.
	for t in "pid /proc/./self/ns/pid host-ns-pid" "ipc //proc/self/ns/ipc host-ns-ipc" \
		"uts /proc/2/ns/uts host-ns-uts" "mount /proc/self/../self/ns/mnt host-ns-mount" \
		"cgroup /proc/thread-self/../../ns/cgroup host-ns-cgroup" \
		"user //proc/self/ns/user no-userns" "pid $CHK/link-pid host-ns-pid"; do
		set -- $t
		check_with "$(ns_path "$1" "$2")" --fail-on info
		echo "$t: $(rules_of)"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "$3 " ]
	done
}

@test "judge: check reports a path it cannot open, or of another type, as not checked" {
	local p
	# Paths that open nowhere (a task 1 of brig's own process; task 1 of
	# brig's task list) or not here (pid 1's, when root may not examine pid
	# 1), and the old spellings of pid 1's: never silently ok.
	for p in /proc/self/task/1/ns/net /proc/thread-self/../1/ns/net /run/netns/brig-judge-none; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $output"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "not-checked " ]
		[ "$(jq -r '.findings[0].severity' <<<"$output")" = high ]
		assert_contains "$(jq -r '.findings[0].message' <<<"$output")" "not checked"
	done
	for p in /proc/1/ns/net /proc/1/task/1/ns/net; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $(rules_of)"
		[ "$status" -eq 1 ]
		[[ "$(rules_of)" =~ ^(host-ns-network|not-checked)\ $ ]]
	done
	# As grave as what it may be: a mount namespace is critical.
	check_with "$(ns_path mount /proc/self/task/1/ns/mnt)"
	[ "$(jq -r '.findings[0].rule + " " + .findings[0].severity' <<<"$output")" = "not-checked critical" ]
	# A pid namespace listed as network, a file that is no namespace.
	check_with "$(ns_path network /proc/self/ns/pid)" --profile baseline
	[ "$(rules_of)" = "not-checked " ]
	assert_contains "$output" "is a pid namespace (brig's own, pid:["
	assert_contains "$output" "not network: create refuses it"
	check_with "$(ns_path network /dev/null)" --profile baseline
	[ "$(rules_of)" = "not-checked " ]
	assert_contains "$output" "/dev/null is not a namespace"
}

@test "judge: another container's network namespace stays allowed, also through a symlink" {
	requires root
	make_pod_netns
	ln -s "/var/run/netns/$NS_POD" "$CHK/link-pod"
	for p in "/var/run/netns/$NS_POD" "//run/netns/./$NS_POD" "$CHK/link-pod"; do
		check_with "$(ns_path network "$p")" --fail-on info
		echo "$p: $output"
		[ "$status" -eq 0 ]
		[ -z "$(rules_of)" ]
	done
}

@test "judge: create under a sandbox policy refuses the host's network namespace by any spelling, leaving nothing" {
	requires root
	local p
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	sandbox_bundle sh -c 'echo "inside: $(readlink /proc/self/ns/net)"'
	ln -s /proc/self/ns/net "$CHK/link-net"
	for p in "${HOST_NET_SPELLINGS[@]}" "$CHK/link-net"; do
		update_config "$(ns_path network "$p")"
		echo "$p:"
		# the old brig ran it: "inside: <the host's net:[...]>"
		refused_run judge-net "inside: $HOST_NET" \
			"host-ns-network at linux.namespaces[2].path: $p joins the host's network namespace"
		assert_contains "$output" "refused by the policy $CHK/policy.json (profile sandbox, fail-on high)"
	done
	# A path of another type is refused whatever the policy.
	update_config "$(ns_path network /proc/self/ns/pid)"
	run brig run judge-net
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "/proc/self/ns/pid is a pid namespace, not network"
	assert_no_leftovers judge-net
	# A pod's namespace runs, in that namespace.
	make_pod_netns
	update_config "$(ns_path network "/var/run/netns/$NS_POD")"
	run brig --policy "$CHK/policy.json" run judge-net
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "inside: $(ip netns exec "$NS_POD" readlink /proc/self/ns/net)" ]
}

@test "judge: the policy judges at create what the path opens then, not what check saw" {
	requires root
	make_pod_netns
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	sandbox_bundle sh -c 'echo "inside: $(readlink /proc/self/ns/net)"'
	ln -s "/var/run/netns/$NS_POD" "$BUNDLE/netns"
	update_config "$(ns_path network "$BUNDLE/netns")"
	run brig --policy "$CHK/policy.json" check --format json
	[ "$status" -eq 0 ]
	[ -z "$(rules_of)" ]
	# The link is swapped between check and create.
	ln -sfn /proc/self/ns/net "$BUNDLE/netns"
	refused_run judge-swap "inside: $HOST_NET" "host-ns-network at linux.namespaces[2].path"
}

@test "judge: create under a baseline policy refuses the host's pid namespace: no host process is signalled" {
	requires root
	local p
	rm "$BUNDLE/config.json"
	brig spec --hardened --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" | .process.terminal = false"
	echo '{"profile":"baseline","failOn":"high"}' >"$CHK/policy.json"
	# the hardened config passes baseline as it is
	run brig --policy "$CHK/policy.json" check --format json
	[ "$status" -eq 0 ]
	sleep 1000 &
	SLEEP_PID=$!
	set_args sh -c "kill $SLEEP_PID && echo killed a host process"
	ln -s /proc/self/ns/pid "$CHK/link-pid"
	for p in /proc/./self/ns/pid //proc/self/ns/pid /proc/thread-self/../../ns/pid "$CHK/link-pid"; do
		update_config "$(ns_path pid "$p")"
		echo "$p:"
		refused_run judge-pid "killed a host process" \
			"host-ns-pid at linux.namespaces[0].path: $p joins the host's pid namespace"
		kill -0 "$SLEEP_PID"
	done
}
