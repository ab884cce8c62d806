#!/usr/bin/env bats
# A reusable container's tenancy (docs/sandbox.md "Tenancy", issue 22 items
# 10-12): what an exec was given counts at reset like the config's
# capabilities, and the kept network namespace is judged on its own state;
# an exec belongs to one tenancy and never lands in the next (a real race
# against pool release, and a deterministic one against a plain reset); a
# reset killed half way leaves a container that start, exec and claim
# refuse until a reset completes, and the pool replaces such members.
# Any cgroup mode; tested on hybrid.

load helpers

setup() {
	requires root brig
	setup_bundle
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"
		| .process.args = ["sleep", "1000000"]'
}

teardown() {
	local pid
	for pid in ${STOPPED_PIDS:-}; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	teardown_bundle
	return 0
}

# lo_state ID: what the tenant of ID sees of lo: its addresses, the routes
# of every table on it, its MTU.
lo_state() {
	brig exec "$1" sh -c 'ip -o addr show dev lo | awk "{print \$4}"; ip route show table all dev lo;
		cat /sys/class/net/lo/mtu' </dev/null
}

# tenancy ID: the container's tenancy record ("GEN STATE"), "none" without.
tenancy() {
	cat "$ROOT/$1/tenancy" 2>/dev/null || echo none
}

@test "tenancy: what exec --cap CAP_NET_ADMIN did to lo does not reach the next tenant, through two releases" {
	local id out cycle
	run brig pool fill n --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	# the config alone lets the namespace be kept: no user namespace, no
	# network capability, /proc/sys read-only
	[ -e "$ROOT/$id/netns" ]
	for cycle in 1 2; do
		[ "$(brig pool claim n)" = "$id" ]
		out="$(lo_state "$id")"
		echo "cycle $cycle, the tenant finds: $out"
		[[ "$out" != *192.0.2.77* ]]
		[[ "$out" != *198.51.100.0* ]]
		[ "$(echo "$out" | tail -1)" = 65536 ]
		# the tenant, given CAP_NET_ADMIN by an exec
		brig exec --cap CAP_NET_ADMIN "$id" sh -c 'ip addr add 192.0.2.77/32 dev lo &&
			ip route add 198.51.100.0/24 dev lo && ip link set lo mtu 1300' </dev/null
		out="$(lo_state "$id")"
		[[ "$out" == *192.0.2.77* ]]
		[[ "$out" == *198.51.100.0/24* ]]
		[ "$(echo "$out" | tail -1)" = 1300 ]
		grep -qx CAP_NET_ADMIN "$ROOT/$id/exec.grants"
		run brig pool release "$id"
		echo "$output"
		[ "$status" -eq 0 ]
		# a completed reset starts the next tenancy without grants
		[ ! -e "$ROOT/$id/exec.grants" ]
	done
	[ "$(brig pool claim n)" = "$id" ]
	out="$(lo_state "$id")"
	echo "the last tenant finds: $out"
	[[ "$out" != *192.0.2.77* ]]
	[[ "$out" != *198.51.100.0* ]]
	[ "$(echo "$out" | tail -1)" = 65536 ]
	brig pool drain n
	assert_no_leftovers
}

@test "tenancy: a kept network namespace changed where no capability rule could see it is not reused" {
	local ns1 ns2 out
	update_config '.annotations["run.brig.reset"] = "true"'
	create_container k1
	brig start k1
	ns1="$(readlink /proc/$(brig state k1 | jq .pid)/ns/net)"
	# a change the capability rules cannot know of (made from the host,
	# through the pinned namespace): only the namespace itself shows it
	nsenter --net="$ROOT/k1/netns" ip addr add 192.0.2.78/32 dev lo
	nsenter --net="$ROOT/k1/netns" ip link set lo mtu 1400
	[ ! -e "$ROOT/k1/exec.grants" ]
	run brig --debug reset k1
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "pinned network namespace not reused: "
	ns2="$(readlink /proc/$(brig state k1 | jq .pid)/ns/net)"
	[ "$ns1" != "$ns2" ]
	brig start k1
	out="$(lo_state k1)"
	echo "the next tenant finds: $out"
	[[ "$out" != *192.0.2.78* ]]
	[ "$(echo "$out" | tail -1)" = 65536 ]
	# and a tenant that did nothing leaves a namespace that is reused
	run brig reset k1
	[ "$status" -eq 0 ]
	[ "$(readlink /proc/$(brig state k1 | jq .pid)/ns/net)" = "$ns2" ]
	brig delete -f k1
	assert_no_leftovers
}

# old_tenant_exec ID: what an exec of the old tenant would leave: a file
# and a process.
old_tenant_exec() {
	"$RUNTIME" --root "$ROOT" exec "$1" sh -c 'echo old >/tmp/old-tenant;
		(sleep 1234 </dev/null >/dev/null 2>&1 &)' </dev/null >/dev/null 2>&1
}

@test "tenancy: an exec issued while pool release runs never lands in the next tenant (race, 8 tries)" {
	local id i rel ex found=0 refused=0 ran=0 out
	run brig pool fill r --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	for i in 1 2 3 4 5 6 7 8; do
		[ "$(brig pool claim r)" = "$id" ]
		"$RUNTIME" --root "$ROOT" pool release "$id" </dev/null >"$BUNDLE/release.$i" 2>&1 &
		rel=$!
		sleep "0.00$i"
		ex=0
		old_tenant_exec "$id" || ex=$?
		wait "$rel" || { cat "$BUNDLE/release.$i"; false; }
		[ "$ex" -eq 0 ] && ran=$((ran + 1)) || refused=$((refused + 1))
		# the next tenant
		[ "$(brig pool claim r)" = "$id" ]
		out="$(brig exec "$id" sh -c 'cat /tmp/old-tenant 2>/dev/null; ps -o args | grep "sleep 1234" | grep -v grep' </dev/null || true)"
		[ -z "$out" ] || { echo "try $i: the next tenant found: $out"; found=$((found + 1)); }
		brig pool release "$id" >/dev/null
	done
	echo "8 tries: $refused execs refused, $ran ran before the release (killed by it), $found seen by the next tenant" >&3
	[ "$found" -eq 0 ]
	brig pool drain r
	assert_no_leftovers
}

# wait_flock_waiter PID: PID waits for a flock (/proc/locks "->" line).
wait_flock_waiter() {
	local i
	for i in $(seq 200); do
		grep -qE -- "-> FLOCK +ADVISORY +(READ|WRITE) +$1 " /proc/locks && return 0
		sleep 0.02
	done
	echo "pid $1 never waited for a lock" >&2
	return 1
}

# wait_stopped PID: PID is in the stopped state ("T" in /proc/PID/stat)
# and waits for no lock.
wait_stopped() {
	local i
	for i in $(seq 200); do
		if [ "$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat")" = T ] &&
			! grep -qE -- "-> FLOCK .* $1 " /proc/locks; then
			return 0
		fi
		sleep 0.02
	done
	echo "pid $1 did not stop" >&2
	return 1
}

@test "tenancy: an exec queued behind a plain reset is refused (deterministic); a vacant member refuses exec at once" {
	local ex id out
	create_container d1
	brig start d1
	[ "$(tenancy d1)" = none ]
	# the exec reads the tenancy, then waits for the lock, held here
	exec 9<"$ROOT/d1"
	flock -x 9
	"$RUNTIME" --root "$ROOT" exec d1 sh -c 'echo old >/tmp/old-tenant' </dev/null >"$BUNDLE/exec.out" 2>&1 &
	ex=$!
	STOPPED_PIDS="$ex"
	wait_flock_waiter "$ex"
	# stopped while it waits, so that the reset gets the lock first: once
	# /proc shows it stopped it has left flock(2) (the signal ended the
	# wait; it restarts on SIGCONT), and only then is the lock let go
	kill -STOP "$ex"
	wait_stopped "$ex"
	flock -u 9
	exec 9<&-
	run brig reset d1
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(tenancy d1)" = "1 tenant" ]
	kill -CONT "$ex"
	run wait "$ex"
	STOPPED_PIDS=
	cat "$BUNDLE/exec.out"
	[ "$status" -ne 0 ]
	assert_contains "$(cat "$BUNDLE/exec.out")" "it was reset while this exec waited"
	brig start d1
	run brig exec d1 cat /tmp/old-tenant
	[ "$status" -ne 0 ]
	# an exec issued after the reset is the new tenancy's
	brig exec d1 true
	brig delete -f d1

	# a pool member nobody claimed: vacant, no exec
	run brig pool fill v --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	[ "$(tenancy "$id")" = "1 vacant" ]
	run brig exec "$id" true
	echo "$output"
	[ "$status" -ne 0 ]
	assert_contains "$output" "an available pool member"
	run brig start "$id"
	[ "$status" -eq 1 ]
	assert_contains "$output" "an available pool member"
	[ "$(brig pool claim v)" = "$id" ]
	[ "$(tenancy "$id")" = "2 tenant" ]
	brig exec "$id" true
	brig pool release "$id" >/dev/null
	[ "$(tenancy "$id")" = "3 vacant" ]
	run brig exec "$id" true
	[ "$status" -ne 0 ]
	brig pool drain v
	assert_no_leftovers
}

# kill_reset_midway ID: start `brig reset ID`, SIGSTOP it once the old init
# is seen gone (the reset has marked the container and killed its
# tenant), then SIGKILL it. Returns 1 when the reset had finished before
# it could be stopped.
kill_reset_midway() {
	local id="$1" pid rs i
	pid="$(brig state "$id" | jq .pid)"
	"$RUNTIME" --root "$ROOT" reset "$id" </dev/null >/dev/null 2>&1 &
	rs=$!
	for i in $(seq 2000); do
		process_alive "$pid" || break
	done
	kill -STOP "$rs" 2>/dev/null
	kill -KILL "$rs" 2>/dev/null
	wait "$rs" 2>/dev/null
	[ "$(tenancy "$id" | cut -d' ' -f2)" = resetting ]
}

# assert_unusable ID: start and exec refuse ID, naming the unfinished reset.
assert_unusable() {
	run brig start "$1"
	echo "start: $output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "did not finish"
	run brig exec "$1" true
	echo "exec: $output"
	[ "$status" -ne 0 ]
	assert_contains "$output" "did not finish"
}

@test "tenancy: a reset killed half way leaves the container unusable until a reset completes (SIGSTOP at /proc, then SIGKILL; and a loop of delays)" {
	local caught=0 tries=0 d gen st
	create_container s1
	brig start s1
	brig exec s1 sh -c 'echo t >/tmp/tenant-file' </dev/null
	# stopped where /proc shows the old init gone
	while [ "$caught" -eq 0 ] && [ "$tries" -lt 20 ]; do
		tries=$((tries + 1))
		if kill_reset_midway s1; then
			caught=1
			assert_unusable s1
		fi
		# a completed reset repairs it (also one that ended on its own)
		run brig reset s1
		echo "$output"
		[ "$status" -eq 0 ]
		[ "$(tenancy s1 | cut -d' ' -f2)" = tenant ]
		brig start s1
		brig exec s1 sh -c 'echo t >/tmp/tenant-file' </dev/null
	done
	echo "caught half way after $tries tries" >&3
	[ "$caught" -eq 1 ]
	run brig exec s1 true
	[ "$status" -eq 0 ]

	# SIGKILL after a delay, at many points: the container is never left
	# startable by a reset whose checks did not all hold
	for d in 0 0.002 0.004 0.006 0.008 0.012 0.016 0.025 0.04 0.08; do
		gen="$(tenancy s1 | cut -d' ' -f1)"
		"$RUNTIME" --root "$ROOT" reset s1 </dev/null >"$BUNDLE/reset.out" 2>&1 &
		local rs=$!
		sleep "$d"
		kill -KILL "$rs" 2>/dev/null || true
		wait "$rs" 2>/dev/null || true
		st="$(tenancy s1)"
		echo "delay $d: tenancy $gen -> $st, status $(brig state s1 | jq -r .status)" >&3
		case "$st" in
		*resetting) assert_unusable s1 ;;
		"$gen tenant" | "none")
			# killed before it began: the tenant still runs, untouched
			[ "$(brig state s1 | jq -r .status)" = running ] ;;
		*tenant)
			# it finished (the new tenancy is written only once every
			# check held): its new init waits for start
			[ "$(brig state s1 | jq -r .status)" = created ] ;;
		*) false ;;
		esac
		# repair (or reset again) and give it a tenant
		brig reset s1 >/dev/null
		brig start s1
		brig exec s1 sh -c 'echo t >/tmp/tenant-file' </dev/null
	done
	run brig exec s1 sh -c 'ls /tmp'
	brig delete -f s1
	assert_no_leftovers
}

@test "tenancy: claim skips a member whose reset was killed, fill replaces it and a member left releasing by a killed release" {
	local ids a b id st i out
	run brig pool fill k --bundle "$BUNDLE" --size 2
	[ "$status" -eq 0 ]
	ids="$output"
	a="$(echo "$ids" | head -1)"
	b="$(echo "$ids" | tail -1)"
	# a plain reset of an available member, killed half way
	for i in $(seq 20); do
		kill_reset_midway "$a" && break
		[ "$i" -lt 20 ]
	done
	[ "$(tenancy "$a" | cut -d' ' -f2)" = resetting ]
	# claims until the pool is empty: b is handed out, a never; the claim
	# that tries a deletes it, naming why
	run brig pool claim k
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | tail -1)" = "$b" ]
	out="$output"
	run brig pool claim k
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$out$output" "cannot be started, deleted"
	assert_contains "$out$output" "did not finish"
	[ ! -e "$ROOT/$a" ]
	# a release killed half way: the member stays in releasing/
	for i in $(seq 20); do
		pid="$(brig state "$b" | jq .pid)"
		"$RUNTIME" --root "$ROOT" pool release "$b" </dev/null >/dev/null 2>&1 &
		local rl=$!
		while process_alive "$pid"; do :; done
		kill -STOP "$rl" 2>/dev/null || true
		kill -KILL "$rl" 2>/dev/null || true
		wait "$rl" 2>/dev/null || true
		st="$(brig pool status k --format json | jq -r --arg id "$b" '.members[] | select(.id == $id) | .pool')"
		[ "$st" = releasing ] && break
		# it finished first: claim it again and retry
		[ "$(brig pool claim k)" = "$b" ]
		[ "$i" -lt 20 ]
	done
	[ "$(brig pool status k --format json | jq -c '[.counts.available, .counts.releasing]')" = '[0,1]' ]
	# fill: the left-behind member deleted, two new ones
	run brig pool fill k --size 2
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/$b" ]
	[ "$(brig pool status k --format json | jq -c '[.counts.available, .counts.releasing, .counts.claimed]')" = '[2,0,0]' ]
	brig pool drain k
	assert_no_leftovers
}
