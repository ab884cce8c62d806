#!/usr/bin/env bats
# brig pool (docs/sandbox.md "Pools"): fill makes members that are ordinary
# containers (list, state, delete), each in its own cgroup; claim starts
# one; status agrees with what the containers are; 50 parallel claimers
# against 20 members get 20 distinct ids and 30 clear "empty" errors; a
# member whose init died is dropped by claim; release resets what a
# tenant left (files, processes, IPC, a listening socket) and the next
# claimer sees none of it from inside; a release whose reset fails deletes
# the member; fill refuses configs whose members would share a writable
# rootfs or need a terminal, leaving nothing; drain leaves no state dir,
# cgroup, mount or process.
# Covers any cgroup mode (the escape test needs a v1 pids hierarchy or a
# pure v2 host and says so when skipped).

load helpers

setup() {
	requires root
	setup_bundle
	# A process that says, inside its own layer, that it ran: pid 1 by an
	# explicit run.brig.init=false (fill's default, hold, runs none).
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" |
		.annotations["run.brig.init"] = "false" |
		.process.args = ["sh", "-c", "echo $$ >/tmp/started; exec sleep 1000"]'
}

teardown() {
	local pid
	for pid in ${ESCAPED_PIDS:-}; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	teardown_bundle
	return 0
}

# pool_json NAME: status as JSON
pool_json() {
	brig pool status "$1" --format json
}

@test "pool: fill makes ordinary containers in their own cgroups; claim starts one; fill tops up; drain leaves nothing" {
	local ids id claimed n
	run brig pool fill p --bundle "$BUNDLE" --size 3
	echo "$output"
	[ "$status" -eq 0 ]
	ids="$output"
	[ "$(echo "$ids" | wc -l)" -eq 3 ]
	for id in $ids; do
		[[ "$id" =~ ^p-[0-9a-f]{12}$ ]]
		# an ordinary container: state, list
		[ "$(brig state "$id" | jq -r .status)" = created ]
		[ "$(brig state "$id" | jq -r '.annotations["run.brig.reset"]')" = true ]
	done
	[ "$(brig list -q | sort)" = "$(echo "$ids" | sort)" ]
	# one cgroup per member, next to the bundle's
	[ "$(test_cgroup_dirs | xargs -n1 basename | sort -u | wc -l)" -eq 3 ]
	for id in $ids; do
		test_cgroup_dirs | grep -q -- "$CGROUP_NAME-$id\$"
	done
	[ "$(pool_json p | jq -c .counts)" = '{"creating":0,"available":3,"claimed":0,"releasing":0,"total":3}' ]
	[ "$(pool_json p | jq -r .bundle)" = "$BUNDLE" ]

	run brig pool claim p
	echo "$output"
	[ "$status" -eq 0 ]
	claimed="$output"
	[[ " $(echo $ids) " == *" $claimed "* ]]
	[ "$(brig state "$claimed" | jq -r .status)" = running ]
	# the process ran, seen from inside
	run brig exec "$claimed" cat /tmp/started
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	[ "$(pool_json p | jq -r --arg id "$claimed" '.members[] | select(.id == $id) | "\(.pool) \(.status)"')" = "claimed running" ]
	[ "$(pool_json p | jq -c '[.counts.available, .counts.claimed]')" = '[2,1]' ]

	# fill again: back to 3 available, without --bundle (recorded)
	run brig pool fill p --size 3
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | wc -l)" -eq 1 ]
	[ "$(pool_json p | jq -c '[.counts.available, .counts.claimed, .counts.total]')" = '[3,1,4]' ]
	# another bundle for the same pool is refused
	run brig pool fill p --bundle / --size 4
	[ "$status" -eq 1 ]
	assert_contains "$output" "holds members of bundle $BUNDLE"

	# the state root lists only containers; the pool's directory is not one
	n="$(brig list --format json | jq length)"
	[ "$n" -eq 4 ]

	run brig pool drain p
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(brig list -q)" ]
	[ ! -e "$ROOT/@pools" ]
	[ -z "$(host_mounts)" ]
	assert_no_leftovers
	run brig pool status p
	[ "$status" -eq 1 ]
	assert_contains "$output" 'pool "p" does not exist'
}

@test "pool: 50 parallel claimers against 20 members: 20 distinct ids, 30 clear empty errors, status agrees" {
	local d i ok=0 empty=0 other=0 ids
	run brig pool fill p --bundle "$BUNDLE" --size 20
	[ "$status" -eq 0 ]
	d="$(test_tmpdir claims)"
	for i in $(seq 50); do
		(
			rc=0
			brig pool claim p >"$d/out.$i" 2>"$d/err.$i" </dev/null || rc=$?
			echo "$rc" >"$d/rc.$i"
		) &
	done
	wait
	for i in $(seq 50); do
		case "$(cat "$d/rc.$i")" in
		0)
			ok=$((ok + 1))
			[ -s "$d/out.$i" ]
			;;
		1)
			if grep -q 'pool "p" is empty' "$d/err.$i"; then empty=$((empty + 1)); else
				other=$((other + 1)); cat "$d/err.$i"; fi
			;;
		*) other=$((other + 1)); cat "$d/err.$i" ;;
		esac
	done
	ids="$(cat "$d"/out.*)"
	rm -rf "$d"
	echo "ok=$ok empty=$empty other=$other"
	[ "$ok" -eq 20 ]
	[ "$empty" -eq 30 ]
	[ "$other" -eq 0 ]
	# no id twice
	[ "$(echo "$ids" | sort | uniq -d)" = "" ]
	[ "$(echo "$ids" | sort -u | wc -l)" -eq 20 ]
	# status agrees: 20 claimed, all running, exactly the ids handed out
	[ "$(pool_json p | jq -c .counts)" = '{"creating":0,"available":0,"claimed":20,"releasing":0,"total":20}' ]
	[ "$(pool_json p | jq -r '.members[] | select(.pool == "claimed" and .status == "running") | .id' | sort)" = "$(echo "$ids" | sort)" ]
	for i in $ids; do
		[ "$(brig state "$i" | jq -r .status)" = running ]
	done
	run brig pool drain p
	[ "$status" -eq 0 ]
	assert_no_leftovers
}

@test "pool: claim of an empty or missing pool fails clearly; release refuses what is not claimed" {
	local id
	run brig pool claim nope
	[ "$status" -eq 1 ]
	assert_contains "$output" 'pool "nope" does not exist'
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	run brig pool release "$id"
	[ "$status" -eq 1 ]
	assert_contains "$output" "is not a claimed member of pool \"p\""
	[ "$(brig state "$id" | jq -r .status)" = created ]
	run brig pool release notapoolmember
	[ "$status" -eq 1 ]
	assert_contains "$output" "is not the id of a pool member"
	run brig pool claim p
	[ "$status" -eq 0 ]
	run brig pool claim p
	[ "$status" -eq 1 ]
	assert_contains "$output" 'pool "p" is empty'
	# names that are not container ids are refused before anything exists
	run brig pool fill ../x --bundle "$BUNDLE" --size 1
	[ "$status" -eq 1 ]
	assert_contains "$output" "invalid pool name"
	run brig pool fill p --size x
	[ "$status" -eq 1 ]
	run brig pool frob p
	[ "$status" -eq 1 ]
	assert_contains "$output" 'unknown subcommand "frob"'
	[ "$(brig list -q | wc -l)" -eq 1 ]
}

@test "pool: fill refuses a writable rootfs the members would share, a terminal, a missing bundle; nothing is left" {
	update_config 'del(.annotations["run.brig.rootfs.ephemeral"])'
	run brig pool fill p --bundle "$BUNDLE" --size 2
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "root.readonly"
	assert_contains "$output" "run.brig.rootfs.ephemeral=true"
	[ -z "$(brig list -q)" ]
	# a first fill that made nothing leaves no pool
	[ ! -e "$ROOT/@pools" ]
	[ -z "$(test_cgroup_dirs)" ]
	[ -z "$(test_pids)" ]

	update_config '.root.readonly = true | .process.terminal = true'
	run brig pool fill p --bundle "$BUNDLE" --size 2
	[ "$status" -eq 1 ]
	assert_contains "$output" "process.terminal"
	[ -z "$(brig list -q)" ]
	run brig pool fill p --bundle "$BUNDLE/nonexistent" --size 2
	[ "$status" -eq 1 ]
	assert_contains "$output" "nonexistent"
	[ ! -e "$ROOT/@pools" ]

	# a read-only root alone is fine
	update_config '.process.terminal = false | .process.args = ["sleep", "1000"]'
	run brig pool fill p --bundle "$BUNDLE" --size 1
	echo "$output"
	[ "$status" -eq 0 ]
	run brig pool drain p
	[ "$status" -eq 0 ]
	assert_no_leftovers
}

@test "pool: claim drops a member whose init died and hands out a live one" {
	local ids dead pid claimed
	run brig pool fill p --bundle "$BUNDLE" --size 2
	[ "$status" -eq 0 ]
	ids="$output"
	# kill the init of every member but one
	for dead in $ids; do
		pid="$(brig state "$dead" | jq -r .pid)"
		kill -KILL "$pid"
		break
	done
	while process_alive "$pid"; do sleep 0.05; done
	# whichever order claim tries them in, it hands out the live one
	run brig pool claim p
	echo "$output"
	[ "$status" -eq 0 ]
	claimed="$(echo "$output" | tail -1)"
	[ "$claimed" != "$dead" ]
	[ "$(brig state "$claimed" | jq -r .status)" = running ]
	# the dead one is gone, from the pool and from the state root, once
	# claim tried it (now or on the next claim, which finds nothing else)
	run brig pool claim p
	[ "$status" -eq 1 ]
	assert_contains "$output" 'is empty'
	[ ! -e "$ROOT/$dead" ]
	[ "$(pool_json p | jq -r '.members[].id')" = "$claimed" ]
}

@test "pool: drain deletes claimed and available members alike, and a member deleted behind its back" {
	local ids id
	run brig pool fill p --bundle "$BUNDLE" --size 4
	[ "$status" -eq 0 ]
	ids="$output"
	run brig pool claim p
	[ "$status" -eq 0 ]
	run brig pool claim p
	[ "$status" -eq 0 ]
	# an operator deleted one directly
	id="$(echo "$ids" | head -1)"
	brig delete --force "$id"
	run brig pool status p
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "$id"
	assert_contains "$output" "missing"
	run brig pool drain p
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(brig list -q)" ]
	[ -z "$(host_mounts)" ]
	assert_no_leftovers
}

# reset_lines_ok OUTPUT: every check line of a release says ok, and the
# summary line says ok.
reset_lines_ok() {
	local bad
	echo "$1" | jq -e -s 'length > 1' >/dev/null
	bad="$(echo "$1" | jq -c 'select(.check and .ok != true)')"
	[ -z "$bad" ] || { echo "failed checks: $bad" >&2; return 1; }
	echo "$1" | jq -e -s 'last | .reset and .ok == true' >/dev/null
}

@test "pool: release after a tenant left things behind; the next claimer sees none of it from inside" {
	local id again out
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$(brig pool claim p)"
	# The tenant: files in every writable place, processes that try to
	# outlive it (double-forked, a new session, ignoring SIGTERM), a POSIX
	# mqueue, a listening TCP socket.
	brig exec "$id" sh -c '
		echo t >/tmp/left; echo t >/root/left; echo t >/left; echo t >/dev/shm/left
		touch /dev/mqueue/leftq
		(setsid sh -c "trap \"\" TERM; sleep 1001" </dev/null >/dev/null 2>&1 &) &
		(sh -c "sleep 1002 &" </dev/null >/dev/null 2>&1 &)
		nc -l -p 8080 </dev/null >/dev/null 2>&1 &
		exit 0' </dev/null
	# it really left them
	out="$(brig exec "$id" sh -c 'ls /tmp/left /root/left /left /dev/shm/left /dev/mqueue/leftq; ps -o args; netstat -ltn')"
	echo "$out"
	assert_contains "$out" "sleep 1001"
	assert_contains "$out" ":8080"
	assert_contains "$out" "/dev/mqueue/leftq"

	run brig pool release "$id"
	echo "$output"
	[ "$status" -eq 0 ]
	reset_lines_ok "$output"
	[ "$(pool_json p | jq -c '[.counts.available, .counts.claimed]')" = '[1,0]' ]
	[ "$(brig state "$id" | jq -r .status)" = created ]

	again="$(brig pool claim p)"
	[ "$again" = "$id" ]
	# the next tenant, from inside: none of it
	out="$(brig exec "$id" sh -c '
		for f in /tmp/left /root/left /left /dev/shm/left /dev/mqueue/leftq; do
			[ ! -e "$f" ] || echo "LEFT $f"; done
		ls -A /dev/shm | sed "s/^/LEFT shm /"
		ls -A /dev/mqueue | sed "s/^/LEFT mqueue /"
		ps -o args | grep -e "sleep 100[12]" -e "nc -l" | grep -v grep | sed "s/^/LEFT /"
		netstat -ltn | grep ":8080" | sed "s/^/LEFT /"
		echo started=$(cat /tmp/started)
		echo done')"
	echo "$out"
	[[ "$out" != *LEFT* ]]
	assert_contains "$out" "started=1"
	assert_contains "$out" "done"
	run brig pool drain p
	[ "$status" -eq 0 ]
	# nothing left, also not the network namespace reset kept pinned
	[ -z "$(host_mounts)" ]
	assert_no_leftovers
}

@test "pool: a release whose reset fails deletes the member (a tenant process escaped the cgroup)" {
	local id pid d e out
	# Without a pid namespace an escaped process outlives the init, and
	# the reset must find it (in the old namespaces) and fail.
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$(brig pool claim p)"
	brig exec -d "$id" sleep 1003
	pid=""
	for _ in $(seq 50); do
		pid="$(pgrep -f -x 'sleep 1003' | while read -r p; do
			grep -q -- "$CGROUP_NAME-$id" "/proc/$p/cgroup" && echo "$p"; done | head -1)"
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ]
	ESCAPED_PIDS="$pid"
	# The host moves it out, to a sibling cgroup of the test's (every
	# hierarchy), as a tenant that escaped would be.
	for d in $(test_cgroup_dirs | grep -- "-$id\$"); do
		e="${d%-"$id"}-escape"
		mkdir -p "$e"
		# a new v1 cpuset cgroup has no cpus and mems: attaching fails
		if [ -f "$e/cpuset.cpus" ]; then
			cat "${d%/*}/cpuset.cpus" >"$e/cpuset.cpus"
			cat "${d%/*}/cpuset.mems" >"$e/cpuset.mems"
		fi
		echo "$pid" >"$e/cgroup.procs"
	done
	! grep -q -- "$CGROUP_NAME-$id" "/proc/$pid/cgroup" || false

	run brig pool release "$id"
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "member deleted"
	# the checks say which one failed
	out="$(echo "$output" | grep '^{' | jq -c 'select(.check and .ok == false)')"
	[ -n "$out" ]
	[ ! -e "$ROOT/$id" ]
	[ "$(pool_json p | jq .counts.total)" -eq 0 ]
	[ -z "$(test_cgroup_dirs | grep -- "-$id\$")" ]
	run brig pool claim p
	[ "$status" -eq 1 ]
	assert_contains "$output" "is empty"
	kill -KILL "$pid"
	while process_alive "$pid"; do sleep 0.05; done
	ESCAPED_PIDS=""
}
