#!/usr/bin/env bats
# A Kubernetes pod's annotations reach every container of the pod through
# CRI, the pause container included (docs/sandbox.md, "Pods through CRI").
# The pause container, which containerd marks io.kubernetes.cri.container-type
# = sandbox (CRI-O: io.kubernetes.cri-o.ContainerType = sandbox), gets a
# read-only root and the default capabilities (CAP_NET_RAW): brig leaves it
# out of run.brig.egress and run.brig.rootfs.ephemeral instead of refusing
# it (which failed the whole pod), and applies them, with every check, to
# any other container. tests/cri/run.sh shows the same end to end through
# containerd's CRI plugin.
# Covers any cgroup mode: the egress policy here is `none` in a network
# namespace brig makes, which every mode enforces.

load helpers

setup() {
	requires root brig
	setup_bundle
	# what containerd's CRI plugin gives a pause container with the pod's
	# annotations: the pod's policy, a read-only root, CAP_NET_RAW
	update_config '.annotations["run.brig.egress"] = "none"
		| .annotations["run.brig.rootfs.ephemeral"] = "true"
		| .annotations["io.kubernetes.cri.container-type"] = "sandbox"
		| .root.readonly = true
		| .process.capabilities.bounding += ["CAP_NET_RAW"]
		| .process.capabilities.effective += ["CAP_NET_RAW"]
		| .process.capabilities.permitted += ["CAP_NET_RAW"]'
	set_args sleep 100
}

teardown() {
	teardown_bundle
}

@test "pod sandbox: the pause container is created with the pod's annotations, the policy left out" {
	run_detached pause
	run brig state pause
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$output")" = running ]
	# no policy and no layer recorded: nothing was applied
	[ "$(jq -c '.brig.egress // "none-applied"' <<<"$output")" = '"none-applied"' ]
	[ "$(jq -c '.brig.rootfs // "none-applied"' <<<"$output")" = '"none-applied"' ]
	# the root is the read-only one the config asked for, no writable layer
	run brig exec pause sh -c 'touch /x 2>&1; echo rc=$?'
	assert_contains "$output" "Read-only file system"
	brig delete --force pause
	assert_no_leftovers
}

@test "pod sandbox: CRI-O's mark is honoured the same way" {
	update_config 'del(.annotations["io.kubernetes.cri.container-type"])
		| .annotations["io.kubernetes.cri-o.ContainerType"] = "sandbox"'
	run_detached crio-pause
	run brig state crio-pause
	[ "$status" -eq 0 ]
	[ "$(jq -c '.brig.egress // "none-applied"' <<<"$output")" = '"none-applied"' ]
	brig delete --force crio-pause
	assert_no_leftovers
}

@test "pod sandbox: a workload container (container-type container) is checked and refused as before" {
	update_config '.annotations["io.kubernetes.cri.container-type"] = "container"'
	run brig create --bundle "$BUNDLE" work
	[ "$status" -eq 1 ]
	assert_contains "$output" "run.brig.egress"
	assert_contains "$output" "CAP_NET_RAW"
	assert_no_leftovers
	# without the NET_RAW the ephemeral check comes next: the read-only root
	update_config '.process.capabilities.bounding -= ["CAP_NET_RAW"]
		| .process.capabilities.effective -= ["CAP_NET_RAW"]
		| .process.capabilities.permitted -= ["CAP_NET_RAW"]'
	run brig create --bundle "$BUNDLE" work
	[ "$status" -eq 1 ]
	assert_contains "$output" "root.readonly"
	assert_no_leftovers
	# any other value of the mark is not the pause container either
	update_config '.annotations["io.kubernetes.cri.container-type"] = "Sandbox"'
	run brig create --bundle "$BUNDLE" work
	[ "$status" -eq 1 ]
	assert_no_leftovers
}

@test "pod sandbox: a workload container of the pod gets the policy and the layer" {
	update_config '.annotations["io.kubernetes.cri.container-type"] = "container"
		| .root.readonly = false
		| .process.capabilities.bounding -= ["CAP_NET_RAW"]
		| .process.capabilities.effective -= ["CAP_NET_RAW"]
		| .process.capabilities.permitted -= ["CAP_NET_RAW"]'
	run_detached work
	run brig state work
	[ "$status" -eq 0 ]
	[ "$(jq -r .brig.egress.mode <<<"$output")" = none ]
	[ "$(jq -r .brig.rootfs.mode <<<"$output")" = tmpfs ]
	# the write lands in the layer, not in the bundle
	run brig exec work sh -c 'echo layer >/written && cat /written'
	[ "$status" -eq 0 ]
	[ "$output" = layer ]
	[ ! -e "$BUNDLE/rootfs/written" ]
	brig delete --force work
	assert_no_leftovers
}

@test "pod sandbox: brig check does not credit a marked container with the policy it does not get" {
	# A node policy must judge what runs: the mark turns the annotations
	# off, so a config could otherwise pass egress-unset and the writable
	# root rule with a policy that is never applied.
	update_config '.root.readonly = false'
	run brig check --bundle "$BUNDLE" --profile sandbox --format json
	jq -e '[.findings[] | select(.rule == "egress-unset")] | length == 1' <<<"$output"
	jq -e '[.findings[] | select(.rule == "egress-unset")][0].message | test("pause")' <<<"$output"
	jq -e '[.findings[] | select(.rule == "rootfs-writable")] | length == 1' <<<"$output"
	# the same config without the mark gets the credit
	update_config 'del(.annotations["io.kubernetes.cri.container-type"])'
	run brig check --bundle "$BUNDLE" --profile sandbox --format json
	jq -e '[.findings[] | select(.rule == "egress-unset" or .rule == "rootfs-writable")] | length == 0' <<<"$output"
}
