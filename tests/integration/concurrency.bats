#!/usr/bin/env bats
# Concurrent commands: many containers at once, and racing commands on one
# container. Nothing may crash, the final state must be consistent, and
# nothing may be left behind. Any cgroup mode.

load helpers

N=20

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# make_bundles ARGS_JSON: N bundles $BUNDLE/bI sharing the rootfs, each with
# its own cgroup, running ARGS_JSON.
make_bundles() {
	local i
	for i in $(seq "$N"); do
		mkdir -p "$BUNDLE/b$i"
		jq --arg root "$BUNDLE/rootfs" \
			--arg cg "/$TEST_CGROUP_PARENT/$CGROUP_NAME-c$i" \
			--argjson args "$1" \
			'.root.path = $root | .linux.cgroupsPath = $cg | .process.args = $args' \
			"$BUNDLE/config.json" >"$BUNDLE/b$i/config.json"
	done
}

# wait_all PIDS...: wait for each job; print and count the failures.
wait_all() {
	local pid failed=0
	for pid in "$@"; do
		wait "$pid" || failed=$((failed + 1))
	done
	echo "$failed job(s) failed"
	return "$failed"
}

@test "concurrency: $N containers created, started and deleted in parallel" {
	make_bundles '["sleep", "100"]'
	local pids=() i
	for i in $(seq "$N"); do
		(create_container "c$i" -b "$BUNDLE/b$i" && brig start "c$i") &
		pids+=($!)
	done
	wait_all "${pids[@]}"

	run brig list -q
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq "$N" ]
	for i in $(seq "$N"); do
		[ "$(brig state "c$i" | jq -r .status)" = running ]
	done
	# every container has its own init in its own cgroup
	[ "$(brig list --format json | jq '[.[].pid] | unique | length')" -eq "$N" ]

	pids=()
	for i in $(seq "$N"); do
		brig delete --force "c$i" &
		pids+=($!)
	done
	wait_all "${pids[@]}"

	run brig list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	assert_no_leftovers
}

@test "concurrency: $N full create/start/exit/delete cycles in parallel" {
	make_bundles '["sh", "-c", "echo hello from $(hostname)"]'
	local pids=() i
	for i in $(seq "$N"); do
		(
			create_container "c$i" -b "$BUNDLE/b$i" &&
			brig start "c$i" &&
			wait_for_status "c$i" stopped 200 &&
			brig delete "c$i"
		) &
		pids+=($!)
	done
	wait_all "${pids[@]}"
	for i in $(seq "$N"); do
		[ "$(cat "$BUNDLE/c$i.out")" = "hello from brig" ]
	done
	assert_no_leftovers
}

@test "concurrency: $N parallel run -d then parallel kill and delete" {
	make_bundles '["sh", "-c", "trap \"exit 0\" TERM; while :; do sleep 0.05; done"]'
	local pids=() i
	for i in $(seq "$N"); do
		(cd "$BUNDLE/b$i" && run_detached "c$i") &
		pids+=($!)
	done
	wait_all "${pids[@]}"
	[ "$(brig list --format json | jq '[.[] | select(.status == "running")] | length')" -eq "$N" ]
	pids=()
	for i in $(seq "$N"); do
		(brig kill "c$i" KILL && wait_for_status "c$i" stopped && brig delete "c$i") &
		pids+=($!)
	done
	wait_all "${pids[@]}"
	assert_no_leftovers
}

@test "concurrency: parallel creates of one id: exactly one wins" {
	update_config '.process.args = ["sleep", "100"]'
	local pids=() i ok=0
	for i in $(seq 10); do
		brig create dup </dev/null >"$BUNDLE/dup.$i.out" 2>"$BUNDLE/dup.$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		if wait "${pids[$i]}"; then
			ok=$((ok + 1))
		else
			cat "$BUNDLE/dup.$((i + 1)).err"
		fi
	done
	echo "$ok creates succeeded"
	[ "$ok" -eq 1 ]
	for i in $(seq 10); do
		[ -s "$BUNDLE/dup.$i.err" ] || continue
		grep -q "already exists" "$BUNDLE/dup.$i.err"
	done
	[ "$(brig state dup | jq -r .status)" = created ]
	# exactly one init process
	[ "$(test_pids | wc -l)" -eq 1 ]
	brig delete --force dup
	assert_no_leftovers
}

@test "concurrency: racing state, kill and delete on one container are safe" {
	update_config '.process.args = ["sleep", "100"]'
	create_container ctr
	brig start ctr
	local pid
	pid="$(brig state ctr | jq -r .pid)"

	local jobs=() i rc
	for i in $(seq 10); do
		brig state ctr >"$BUNDLE/state.$i.out" 2>&1 &
		jobs+=($!)
		brig kill ctr KILL >/dev/null 2>&1 &
		jobs+=($!)
		brig delete --force ctr >/dev/null 2>&1 &
		jobs+=($!)
		brig list --format json >"$BUNDLE/list.$i.out" 2>/dev/null &
		jobs+=($!)
	done
	for i in "${jobs[@]}"; do
		rc=0
		wait "$i" || rc=$?
		# 0 or 1: a clean answer or a clean error, never a crash
		echo "job $i: $rc"
		[ "$rc" -le 1 ]
	done
	# every state answer is valid JSON or a clean error
	for i in $(seq 10); do
		jq -e . "$BUNDLE/state.$i.out" >/dev/null 2>&1 ||
			grep -qE "does not exist|not running|stopped" "$BUNDLE/state.$i.out"
		# runc 1.1's list fails when a container vanishes while it lists
		if is_brig; then
			jq -e . "$BUNDLE/list.$i.out" >/dev/null
		fi
	done
	# the final state is consistent: gone
	! process_alive "$pid" || false
	run brig state ctr
	[ "$status" -eq 1 ]
	run brig list -q
	[ -z "$output" ]
	assert_no_leftovers
}

@test "concurrency: list while containers come and go never fails" {
	make_bundles '["true"]'
	local i pids=()
	for i in $(seq "$N"); do
		(cd "$BUNDLE/b$i" && brig run "c$i" </dev/null >/dev/null 2>&1) &
		pids+=($!)
	done
	local fails=0
	for i in $(seq 30); do
		brig list --format json >"$BUNDLE/list.out" || fails=$((fails + 1))
		jq -e . "$BUNDLE/list.out" >/dev/null || fails=$((fails + 1))
	done
	wait_all "${pids[@]}"
	echo "$fails list failures"
	# runc 1.1's list fails when a container vanishes while it lists
	if is_brig; then
		[ "$fails" -eq 0 ]
	fi
	assert_no_leftovers
}
