#!/usr/bin/env bats
# Messages (issue 26 items 16 and 17).
#   - Where brig refuses what runc refuses, the message begins with runc's own
#     words, which scripts, engines and runc's test suite match ("invalid
#     configuration", "container's cgroup unexpectedly frozen", "container's
#     cgroup is not empty", 'exec: "/x": no such file or directory', "exec
#     /x: no such file or directory", "must be mounted on ordinary
#     directory", "preserved-fd 0", "hook ran past specified timeout"),
#     brig's detail after them (item 16).
#   - For a person: no errno text glued onto a message that states its own
#     reason; every annotation error begins "annotation KEY:"; start of a
#     running container names it; delete of a running one points at
#     --force; pool drain says what it did; an unknown capability is warned
#     about once; run prints nothing of its own and
#     exits with the process's status, as the README says (item 17).
# Every refusal also leaves nothing behind. Any cgroup mode unless a test
# says (the frozen cgroup: a v1 freezer or a pure v2 host).

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	FROZEN_DIR=
}

teardown() {
	if [ -n "${FROZEN_DIR:-}" ]; then
		echo THAWED >"$FROZEN_DIR/freezer.state" 2>/dev/null || true
		echo 0 >"$FROZEN_DIR/cgroup.freeze" 2>/dev/null || true
	fi
	[ -n "${BUNDLE:-}" ] && [ -d "$BUNDLE" ] && touch "$BUNDLE/hook.go"
	teardown_bundle
}

# fails_with CMD... : run the runtime with CMD; it must exit 1 and leave no
# container behind. $output as bats' run.
fails_with() {
	run brig "$@" </dev/null
	echo "$* -> $status: $output"
	[ "$status" -eq 1 ]
	assert_no_leftovers
}

# ---- item 16: runc's words ----

@test "messages: a config that cannot be applied here says invalid configuration" {
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 10}]'
	fails_with run ctr
	assert_contains "$output" "invalid configuration: linux.uidMappings: a user namespace is required"
	update_config 'del(.linux.uidMappings) | .linux.namespaces -= [{"type": "uts"}]'
	fails_with run ctr
	assert_contains "$output" "invalid configuration: config.json: hostname needs a uts namespace"
}

@test "messages: linux.resources.unified on cgroup v1 says invalid configuration, as runc" {
	requires cgroup_v1
	update_config '.linux.resources.unified = {"memory.min": "131072"}'
	fails_with run ctr
	assert_contains "$output" "invalid configuration: linux.resources.unified: requires cgroup v2"
}

@test "messages: an existing frozen cgroup says container's cgroup unexpectedly frozen" {
	local d
	if [ -d /sys/fs/cgroup/freezer ]; then
		d="/sys/fs/cgroup/freezer/$TEST_CGROUP_PARENT/$CGROUP_NAME"
		mkdir -p "$d"
		FROZEN_DIR="$d"
		echo FROZEN >"$d/freezer.state"
	elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		d="/sys/fs/cgroup/$TEST_CGROUP_PARENT/$CGROUP_NAME"
		mkdir -p "$d"
		FROZEN_DIR="$d"
		echo 1 >"$d/cgroup.freeze"
	else
		skip "test requires a v1 freezer or a pure cgroup v2 host"
	fi
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "container's cgroup unexpectedly frozen: linux.cgroupsPath: cgroup"
	[ ! -e "$ROOT/ctr" ]
	run brig create ctr2 </dev/null
	[ "$status" -eq 1 ]
	assert_contains "$output" "container's cgroup unexpectedly frozen"
}

@test "messages: a cgroup that holds another container says container's cgroup is not empty" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ct1
	run brig run -d ct2 </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "container's cgroup is not empty: linux.cgroupsPath: cgroup"
	[ ! -e "$ROOT/ct2" ]
}

@test "messages: a missing executable: runc's exec: \"X\": words, lower case as engines match them" {
	update_config '.process.args = ["/no/such/x"]'
	fails_with run ctr
	assert_contains "$output" 'exec: "/no/such/x": no such file or directory'
	update_config '.process.args = ["nosuch"]'
	fails_with run ctr
	assert_contains "$output" 'exec: "nosuch": executable file not found in $PATH'
}

@test "messages: execve's failure reads exec PATH: errno, once" {
	printf '#!/mmnnttbb foo bar\nsh\n' >"$BUNDLE/rootfs/run.sh"
	chmod +x "$BUNDLE/rootfs/run.sh"
	update_config '.process.args = ["/run.sh"]'
	fails_with run ctr
	assert_contains "$output" "exec /run.sh: no such file or directory"
	# one line: the error is not printed twice
	[ "${#lines[@]}" -eq 1 ]
}

@test "messages: a /proc that is not a directory must be mounted on ordinary directory" {
	rm -rf "$BUNDLE/rootfs/proc"
	ln -s /symlink "$BUNDLE/rootfs/proc"
	fails_with run ctr
	assert_contains "$output" "must be mounted on ordinary directory"
	assert_contains "$output" "/proc in the rootfs is a symlink"
}

@test "messages: --preserve-fds without the fd names the preserved-fd" {
	run bash -c 'exec 3>&-; exec "$@"' bash "$RUNTIME" --root "$ROOT" run --preserve-fds=1 ctr </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "--preserve-fds=1: fd 3 (preserved-fd 0) is not open"
	assert_no_leftovers
}

@test "messages: a hook killed at its timeout ran past specified timeout" {
	printf '#!/bin/sh\nsleep 30\n' >"$BUNDLE/slow.sh"
	chmod +x "$BUNDLE/slow.sh"
	update_config "$(printf '.hooks.createRuntime = [{"path": "%s", "timeout": 1}]' "$BUNDLE/slow.sh")"
	fails_with run ctr
	assert_contains "$output" "hook ran past specified timeout of 1 s"
}

# ---- item 17: a person reads them ----

@test "messages: a refusal that states its reason carries no errno text" {
	update_config '.annotations["run.brig.egress"] = "none"
		| .process.capabilities.bounding += ["CAP_NET_RAW"]
		| .process.capabilities.effective += ["CAP_NET_RAW"]
		| .process.capabilities.permitted += ["CAP_NET_RAW"]'
	fails_with run ctr
	assert_contains "$output" "CAP_NET_RAW"
	[[ "$output" != *"Operation not permitted"* ]]
	# 257 allow entries
	update_config 'del(.annotations["run.brig.egress"]) | .process.capabilities.bounding -= ["CAP_NET_RAW"]
		| .process.capabilities.effective -= ["CAP_NET_RAW"] | .process.capabilities.permitted -= ["CAP_NET_RAW"]'
	local many
	many="$({ seq -f '192.0.2.%g/32' 1 200; seq -f '198.51.100.%g/32' 1 57; } | paste -sd,)"
	update_config ".annotations[\"run.brig.egress\"] = \"allowlist\" | .annotations[\"run.brig.egress.allow\"] = \"$many\""
	fails_with run ctr
	assert_contains "$output" "annotation run.brig.egress.allow: more than 256 entries"
	[[ "$output" != *"Argument list too long"* ]]
	# and the validation messages that said "Invalid argument"
	update_config 'del(.annotations) | .process.args = []'
	fails_with run ctr
	assert_contains "$output" "process.args must not be empty"
	[[ "$output" != *"Invalid argument"* ]]
}

@test "messages: every annotation error begins annotation KEY:" {
	local key value want
	while IFS='|' read -r key value want; do
		update_config "del(.annotations) | .annotations[\"$key\"] = \"$value\""
		fails_with run ctr
		assert_contains "$output" "$want"
	done <<-'EOF'
	run.brig.egress|sometimes|annotation run.brig.egress: "sometimes" is not none, public or allowlist
	run.brig.egress.typo|x|annotation run.brig.egress.typo: unknown key
	run.brig.egress.allow|192.0.2.1|annotation run.brig.egress.allow: needs run.brig.egress
	run.brig.reset|maybe|annotation run.brig.reset: "maybe" is not true or false
	run.brig.cgroup.shared|maybe|annotation run.brig.cgroup.shared: "maybe" is not true or false
	run.brig.rootfs.ephemeral|maybe|annotation run.brig.rootfs.ephemeral: "maybe" is not true or false
	run.oci.keep_original_groups|maybe|annotation run.oci.keep_original_groups: "maybe" is not 1, true, 0 or false
	EOF
}

@test "messages: start of a running container names it; delete of one points at --force" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached ctr
	run brig start ctr
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" 'cannot start an already running container: "ctr"'
	run brig delete ctr
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "cannot delete container ctr that is not stopped: running (delete --force kills it first)"
	# the container is untouched
	[ "$(brig state ctr | jq -r .status)" = running ]
	brig kill ctr KILL
	wait_for_status ctr stopped
	run brig start ctr
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" 'cannot start a container that has stopped: "ctr"'
}

@test "messages: pool drain says what it did" {
	update_config '.root.readonly = true | .process.args = ["sleep", "100"]'
	run brig pool fill p --bundle "$BUNDLE" --size 2
	[ "$status" -eq 0 ]
	run brig pool drain p
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = 'pool "p" drained: 2 members deleted, the pool removed' ]
	[ -z "$(brig list -q)" ]
}

@test "messages: run prints nothing of its own and exits with the process's status, as the README says" {
	update_config '.process.args = ["sh", "-c", "exit 7"]'
	run brig run ctr </dev/null
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	grep -q "^brig run demo; echo \$? .*brig exits with the process's status" "$SRCDIR/README.md"
	! grep -q "print the exit status" "$SRCDIR/README.md"
}

@test "messages: an unknown capability is warned about once, not once by brig and again by the init" {
	update_config '.process.capabilities.bounding += ["CAP_NO_SUCH"] | .process.args = ["true"]'
	run brig run ctr </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'unknown capability "CAP_NO_SUCH"' <<<"$output")" -eq 1 ]
}
