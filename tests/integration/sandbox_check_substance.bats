#!/usr/bin/env bats
# `brig check` and the node policy judge what a config does, not how it is
# spelt (issue #22 item 4): each case here gave no finding on the brig
# before it (d3d6522) and is a fixture of its rule now:
#   block-device-mount       ext4/xfs/btrfs... of a /dev node, by type in any case
#   kernel-fs-mount          debugfs, tracefs, securityfs, bpf, configfs,
#                            efivarfs, binfmt_misc by type, or bound from
#                            where one is mounted
#   devices-all              device-cgroup wildcards by type (b, c, u, "")
#   sensitive-mount          /var/lib/kubelet/pods (every pod's secrets),
#                            through //, /./, .., a trailing slash, a symlink
#                            (also a dangling one), a relative source, a parent
#   seccomp-default-permits  SCMP_ACT_ERRNO with defaultErrnoRet 0,
#                            SCMP_ACT_TRACE, SCMP_ACT_LOG defaults
#   update                   under a node policy, judged like exec on the
#                            limits after the update; refused updates leave
#                            the cgroup's limits as they were
# Never touches /etc/brig or a host mount: the one filesystem mounted here
# (bpf, for the bind case) is in a mount namespace the test makes.

load helpers

setup() {
	setup_bundle
	CHK="$(test_tmpdir substance)"
	(cd "$CHK" && "$RUNTIME" spec --hardened) || return 1
	mkdir "$CHK/f" "$CHK/f/rootfs"
}

teardown() {
	teardown_bundle
	[ -n "${CHK:-}" ] && rm -rf "$CHK"
	return 0
}

# fixture JQ [check flags...]: the hardened config with JQ applied, checked
# under baseline (JSON); $status and $output.
fixture() {
	local filter="$1"
	shift
	jq "$filter" "$CHK/config.json" >"$CHK/f/config.json"
	run brig check --bundle "$CHK/f" --format json --profile baseline "$@"
}

# finds RULE SEVERITY PATH: the last fixture has exactly that finding.
finds() {
	jq -e --arg r "$1" --arg s "$2" --arg p "$3" \
		'[.findings[] | select(.rule == $r and .severity == $s and .path == $p)] | length == 1' \
		<<<"$output" >/dev/null || { echo "want $1 $2 at $3 in: $output" >&2; return 1; }
}

@test "substance: the hardened spec has no baseline finding (the base of every fixture)" {
	fixture '.'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq '.findings | length' <<<"$output")" -eq 0 ]
}

@test "substance: filesystems of host block devices are critical in every profile" {
	local m p
	for m in '{"destination":"/d","type":"ext4","source":"/dev/sda1"}' \
		'{"destination":"/d","type":"xfs","source":"/dev/vda"}' \
		'{"destination":"/d","type":"BTRFS","source":"/dev/nvme0n1p2","options":["ro"]}'; do
		for p in baseline restricted sandbox; do
			fixture ".mounts += [$m]" --profile "$p"
			echo "$p $m: $output"
			[ "$status" -eq 1 ]
			finds block-device-mount critical 'mounts[7].type'
		done
	done
	# A /dev node of the host behind a symlink, with a type the list lacks.
	local blk
	blk="$(find /dev -maxdepth 1 -type b | head -n 1)"
	[ -n "$blk" ] || skip "host limit: no block device node in /dev"
	ln -s "$blk" "$CHK/disk"
	fixture ".mounts += [{\"destination\":\"/d\",\"type\":\"somefs\",\"source\":\"$CHK/disk\"}]"
	finds block-device-mount critical 'mounts[7].source'
	# tmpfs ignores its source: no finding.
	fixture '.mounts += [{"destination":"/d","type":"tmpfs","source":"tmpfs"}]'
	[ "$(jq '[.findings[] | select(.rule == "block-device-mount")] | length' <<<"$output")" -eq 0 ]
}

@test "substance: debugfs, tracefs, securityfs, bpf, configfs, efivarfs, binfmt_misc are critical by type" {
	local t
	for t in debugfs tracefs securityfs bpf configfs efivarfs binfmt_misc DebugFS; do
		fixture ".mounts += [{\"destination\":\"/k\",\"type\":\"$t\",\"source\":\"none\"}]"
		echo "$t: $output"
		[ "$status" -eq 1 ]
		finds kernel-fs-mount critical 'mounts[7].type'
	done
}

@test "substance: a bind from where the host mounts a kernel filesystem is judged by that filesystem" {
	requires root program:unshare
	# A bpf filesystem in a mount namespace of this test only.
	mkdir "$CHK/bpf"
	jq '.mounts += [{"destination":"/k","type":"bind","source":"'"$CHK"'/bpf/","options":["rbind","ro"]}]' \
		"$CHK/config.json" >"$CHK/f/config.json"
	run unshare -m --propagation private sh -c \
		"mount -t bpf bpf '$CHK/bpf' || exit 77; '$RUNTIME' --root '$ROOT' check --bundle '$CHK/f' --profile baseline --format json"
	[ "$status" -ne 77 ] || skip "host limit: cannot mount a bpf filesystem in a new mount namespace"
	echo "$output"
	[ "$status" -eq 1 ]
	finds kernel-fs-mount critical 'mounts[7].source'
	assert_contains "$output" "is on bpf, bound at /k"
}

@test "substance: device-cgroup wildcards by type allow every block or character device" {
	local d
	for d in '{"allow":true,"type":"b"}' '{"allow":true,"type":"c","access":"rwm"}' \
		'{"allow":true,"type":"u","access":"rw"}' '{"allow":true,"type":""}' \
		'{"allow":true,"type":"b","minor":0,"access":"rw"}'; do
		fixture ".linux.resources.devices += [$d]"
		echo "$d: $output"
		[ "$status" -eq 1 ]
		finds devices-all critical 'linux.resources.devices[1]'
	done
	# Named devices and denies are no finding.
	fixture '.linux.resources.devices += [{"allow":true,"type":"c","major":1,"minor":3,"access":"rw"},
		{"allow":false,"type":"b"},{"allow":true,"type":"b","major":7,"access":"rw"}]'
	[ "$(jq '[.findings[] | select(.rule == "devices-all")] | length' <<<"$output")" -eq 0 ]
}

@test "substance: a bind of /var/lib/kubelet/pods (every pod's secrets) is critical even read-only, however reached" {
	ln -s /var/lib/kubelet/pods "$CHK/podlink"
	local src
	for src in /var/lib/kubelet/pods /var/lib/kubelet/pods/ //var/lib/./kubelet/pods \
		/var/lib/kubelet/x/../pods /var/run/../lib/kubelet/pods "$CHK/podlink" "$CHK/podlink/." \
		"$CHK/podlink/../pods" /var/lib/kubelet /var/lib / "../../../../../var/lib/kubelet/pods"; do
		fixture ".mounts += [{\"destination\":\"/k\",\"type\":\"bind\",\"source\":\"$src\",\"options\":[\"rbind\",\"ro\"]}]"
		echo "$src: $output"
		[ "$status" -eq 1 ]
		finds sensitive-mount critical 'mounts[7].source'
	done
	# One pod's own volume (what kubelet binds into its containers) is not.
	fixture '.mounts += [{"destination":"/k","type":"bind","source":"/var/lib/kubelet/pods/0123/volumes/kubernetes.io~secret/tok","options":["rbind","ro"]}]'
	[ "$status" -eq 0 ]
	[ "$(jq '.findings | length' <<<"$output")" -eq 0 ]
}

@test "substance: seccomp defaults that only look like a deny or an audit are high under baseline" {
	fixture '.linux.seccomp.defaultErrnoRet = 0'
	echo "$output"
	[ "$status" -eq 1 ]
	finds seccomp-default-permits high 'linux.seccomp.defaultErrnoRet'
	fixture '.linux.seccomp.defaultAction = "SCMP_ACT_TRACE"'
	[ "$status" -eq 1 ]
	finds seccomp-default-permits high 'linux.seccomp.defaultAction'
	fixture '.linux.seccomp.defaultAction = "SCMP_ACT_LOG"'
	[ "$status" -eq 1 ]
	finds seccomp-default-permits high 'linux.seccomp.defaultAction'
	# TRACE allows under restricted's denylist rule too (a tracer in the
	# container lets its child's calls run).
	fixture '.linux.seccomp.defaultAction = "SCMP_ACT_TRACE"' --profile restricted --fail-on info
	assert_contains "$(jq -r '.findings[].rule' <<<"$output")" seccomp-denylist
	# EPERM, ENOSYS and no defaultErrnoRet (EPERM) are no finding.
	fixture '.linux.seccomp.defaultErrnoRet = 1'
	[ "$status" -eq 0 ]
	fixture 'del(.linux.seccomp.defaultErrnoRet)'
	[ "$status" -eq 0 ]
}

# cg_value FILE...: the first of the named files found in the test cgroups.
cg_value() {
	local d f
	for d in $(test_cgroup_dirs); do
		for f in "$@"; do
			[ -f "$d/$f" ] && { cat "$d/$f"; return 0; }
		done
	done
	return 1
}

@test "substance: update under a node policy is judged like exec: a limit the policy requires cannot be lifted" {
	requires root
	update_config '.process.args = ["sleep", "100"] | .linux.resources.pids = {"limit": 100}
		| .linux.resources.memory = {"limit": 268435456}'
	run_detached up
	wait_for_status up running
	[ "$(cg_value pids.max)" = 100 ]
	local mem
	mem="$(cg_value memory.limit_in_bytes memory.max)"
	[ "$mem" = 268435456 ]
	echo '{"profile":"restricted","failOn":"medium"}' >"$BUNDLE/policy.json"
	local args
	for args in "--pids-limit -1" "--pids-limit 0" "--memory -1" "--pids-limit 50 --memory -1"; do
		# shellcheck disable=SC2086
		run brig --policy "$BUNDLE/policy.json" update $args up
		echo "$args: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" "the update refused by the policy $BUNDLE/policy.json (profile restricted, fail-on medium)"
		[[ "$output" == *"no-pids-limit at linux.resources.pids.limit"* || "$output" == *"no-memory-limit at linux.resources.memory.limit"* ]]
		# Nothing changed: the cgroup and the recorded config.
		[ "$(cg_value pids.max)" = 100 ]
		[ "$(cg_value memory.limit_in_bytes memory.max)" = "$mem" ]
	done
	# The resources file: the same judgement, and a device wildcard too.
	echo '{"pids":{"limit":-1}}' >"$BUNDLE/res.json"
	run brig --policy "$BUNDLE/policy.json" update -r "$BUNDLE/res.json" up
	[ "$status" -eq 1 ]
	assert_contains "$output" "no-pids-limit"
	run brig --policy "$BUNDLE/policy.json" update -r - up <<<'{"devices":[{"allow":true,"type":"b","access":"rwm"}]}'
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "critical devices-all at linux.resources.devices"
	[ "$(cg_value pids.max)" = 100 ]
	# The recorded config keeps the limits (check --container reads it).
	run brig check --container up --profile restricted --format json
	[ "$(jq '[.findings[] | select(.rule == "no-pids-limit" or .rule == "no-memory-limit")] | length' <<<"$output")" -eq 0 ]
	# What the policy allows goes through.
	run brig --policy "$BUNDLE/policy.json" update --pids-limit 50 up
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cg_value pids.max)" = 50 ]
	# Without a policy the caller decides, as runc.
	run brig update --pids-limit -1 up
	[ "$status" -eq 0 ]
	[ "$(cg_value pids.max)" = max ]
}
