#!/usr/bin/env bats
# What the faster warm-pool cycle changed in brig reset (docs/sandbox.md
# "Reset", "Cost"), each proved from the host or from inside:
# - pids.usage counts the killed inits pid 1 has not reaped from
#   reset.zombies, each entry checked with the kernel (a zombie, that start
#   time, in this cgroup); forged or stale entries are not counted and are
#   dropped; a zombie the record does not know is still found (/proc scan);
# - the saved config is parsed once and create's checks run before the
#   kill: a saved config they refuse leaves the container untouched; the
#   bundle's edited config.json is never read;
# - the pinned network namespace is entered around the new init's clone:
#   the new init is in it, loopback up, brig's own is unchanged, nothing
#   of the tenant's sockets is left;
# - the uts/ipc/mqueue probe runs in a thread; mqueue.empty through the
#   config's mqueue mount, and without one (fsopen);
# - claim -> exec -> release cycles through the pool keep every check.
# Hybrid cgroups (v1 pids and memory) or pure v2; tested on hybrid.

load helpers
load confine_helpers

RESET_TENANT="$CONFINE_TOOLS/reset_tenant"

setup() {
	requires root brig
	setup_bundle
	set_args sleep 1000000
	update_config '.linux.resources = {"pids": {"limit": 48}}
		| .annotations["run.brig.rootfs.ephemeral"] = "true"'
}

teardown() {
	teardown_bundle
	return 0
}

# zombies_valid ID [CGROUP]: every line of ROOT/ID/reset.zombies names a
# zombie with that start time, charged to the container's cgroup (named
# CGROUP, default the bundle's; the file may be missing: pid 1 reaped
# them all). An entry whose zombie pid 1 reaped since (no /proc/PID, or a
# new process of another start time under that pid) is skipped: the file
# was true when written.
zombies_valid() {
	local f="$ROOT/$1/reset.zombies" cg="${2:-$CGROUP_NAME}" pid start st
	[ -e "$f" ] || return 0
	cat "$f"
	while read -r pid start; do
		st="$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1,20)"
		[ -n "$st" ] && [ "${st#* }" = "$start" ] || { echo "$pid: reaped meanwhile"; continue; }
		[ "$st" = "Z $start" ] || { echo "not a zombie of that start: $pid $start ($st)"; return 1; }
		grep -q -- "/$cg\$" "/proc/$pid/cgroup" 2>/dev/null || {
			[ -e "/proc/$pid" ] || continue
			echo "$pid not in the cgroup"
			return 1
		}
	done <"$f"
}

start_of() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20
}

@test "pool fast: reset.zombies counts only what the kernel shows; forged entries are dropped" {
	local i
	create_container z1
	brig start z1
	for i in 1 2 3; do
		reset_ok z1
		zombies_valid z1
		brig start z1
	done
	# forged: a live process (this shell) with its real start time, a pid
	# that does not exist, garbage; none is a zombie of the cgroup
	printf '%s %s\n999999999 1\nnot a line\n' "$$" "$(start_of $$)" >>"$ROOT/z1/reset.zombies"
	reset_ok z1
	zombies_valid z1
	! grep -q -e "^$$ " -e '^999999999 ' -e 'not a line' "$ROOT/z1/reset.zombies" 2>/dev/null || false
	brig delete -f z1
	assert_no_leftovers z1
}

@test "pool fast: without a pid namespace a tenant's orphan left as a zombie is found by the scan and recorded" {
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_args sh -c 'sleep 100000 & exec sleep 1000000'
	create_container z2
	brig start z2
	local child
	sleep 0.3
	child="$(ps -o pid= --ppid "$(brig state z2 | jq .pid)" | tr -d ' ')"
	[ -n "$child" ]
	reset_ok z2
	zombies_valid z2
	# the orphan is dead; while pid 1 has not reaped it, it is charged to
	# the cgroup, was found by the scan (the record knew only the old
	# init) and is recorded for the next reset
	! process_alive "$child" || false
	if [ "$(sed 's/.*) //' "/proc/$child/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; then
		grep -q "^$child " "$ROOT/z2/reset.zombies"
	fi
	brig delete -f z2
	assert_no_leftovers z2
}

@test "pool fast: the bundle's config.json is never read; a saved config create refuses is refused before the kill" {
	local pid1 pid2
	create_container c1
	brig start c1
	# the bundle edited after create: reset takes the saved config
	update_config '.hostname = "edited" | .process.args = ["sh", "-c", "echo edited; sleep 1000000"]'
	reset_ok c1
	brig start c1
	[ "$(brig exec c1 hostname </dev/null)" = brig ]
	run brig exec c1 sh -c 'cat /proc/1/cmdline | tr "\0" " "' </dev/null
	[ "$output" = "sleep 1000000 " ]
	pid1="$(brig state c1 | jq .pid)"
	# the saved config now asks for a hostname without a uts namespace
	jq '.linux.namespaces |= map(select(.type != "uts"))' "$ROOT/c1/config.json" >"$BUNDLE/saved.json"
	cp "$BUNDLE/saved.json" "$ROOT/c1/config.json"
	run brig reset c1
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "hostname needs a uts namespace"
	# untouched: the same init alive and running, no failure mark, exec works
	process_alive "$pid1"
	pid2="$(brig state c1 | jq .pid)"
	[ "$pid2" = "$pid1" ]
	[ "$(brig state c1 | jq -r .status)" = running ]
	[ ! -e "$ROOT/c1/reset.failed" ]
	[ "$(brig exec c1 echo alive </dev/null)" = alive ]
	brig delete -f c1
	assert_no_leftovers c1
}

@test "pool fast: the new init is in the pinned network namespace with loopback up, nothing of the tenant's sockets in it" {
	need_built "$RESET_TENANT"
	cp "$RESET_TENANT" "$BUNDLE/rootfs/bin/reset_tenant"
	local ns0 ns1 ns2 ns3
	ns0="$(readlink /proc/self/ns/net)"
	create_container n1
	brig start n1
	ns1="$(netns_of "$(brig state n1 | jq .pid)")"
	[ "$ns1" != "$ns0" ]
	reset_ok n1
	ns2="$(netns_of "$(brig state n1 | jq .pid)")"
	[ "$ns2" = "$ns1" ]
	brig start n1
	run brig exec n1 cat /sys/class/net/lo/flags </dev/null
	echo "$output"
	# IFF_UP
	[ $(( output & 1 )) -eq 1 ]
	# a listening and an established socket, held by a daemon: they die
	# with it, the namespace is clean again and reused (a TIME_WAIT or a
	# socket still in use would make a new one: sandbox_reset.bats)
	brig exec n1 sh -c 'reset_tenant leave >/dev/null 2>&1' </dev/null
	run brig exec n1 sh -c 'tail -n +2 /proc/net/tcp | wc -l' </dev/null
	[ "$output" -ge 2 ]
	reset_ok n1
	echo "$output" | grep -q '"check":"net.sockets","ok":true'
	ns3="$(netns_of "$(brig state n1 | jq .pid)")"
	brig start n1
	run brig exec n1 sh -c 'tail -n +2 /proc/net/tcp | wc -l; cat /sys/class/net/lo/flags' </dev/null
	echo "$output"
	[ "$(echo "$output" | head -1)" = 0 ]
	[ $(( $(echo "$output" | tail -1) & 1 )) -eq 1 ]
	# the tenant's port is free for the next one
	brig exec n1 sh -c 'reset_tenant leave' </dev/null | grep -q left
	# this shell's namespace is what it was; the new init's is not it
	[ "$(readlink /proc/self/ns/net)" = "$ns0" ]
	[ "$ns3" != "$ns0" ]
	brig delete -f n1
	assert_no_leftovers n1
}

@test "pool fast: mqueue.empty through the config's mqueue mount, and without one" {
	create_container q1
	brig start q1
	# a queue made through the mount, seen inside
	brig exec q1 sh -c 'touch /dev/mqueue/tenantq && ls /dev/mqueue' </dev/null | grep -q tenantq
	reset_ok q1
	echo "$output" | grep -q '"check":"mqueue.empty","ok":true'
	echo "$output" | grep -q '"check":"ipc.empty","ok":true'
	echo "$output" | grep -q '"check":"uts.config","ok":true'
	brig start q1
	[ -z "$(brig exec q1 ls /dev/mqueue </dev/null)" ]
	brig delete -f q1

	update_config '.mounts |= map(select(.type != "mqueue"))'
	create_container q2
	brig start q2
	reset_ok q2
	echo "$output" | grep -q '"check":"mqueue.empty","ok":true'
	brig delete -f q2
	assert_no_leftovers
}

@test "pool fast: claim -> exec -> release cycles keep every check" {
	local i id out
	run brig pool fill f --bundle "$BUNDLE" --size 2
	[ "$status" -eq 0 ]
	for i in $(seq 8); do
		id="$(brig pool claim f)"
		[ "$(brig exec "$id" sh -c 'echo hello; echo x >/tmp/left' </dev/null)" = hello ]
		out="$(brig pool release "$id")"
		echo "$out" | jq -e -s 'length > 5 and (map(.ok) | all)' >/dev/null
		zombies_valid "$id" "$CGROUP_NAME-$id"
	done
	[ "$(brig pool status f --format json | jq -c '[.counts.available, .counts.claimed]')" = '[2,0]' ]
	id="$(brig pool claim f)"
	run brig exec "$id" sh -c 'ls /tmp' </dev/null
	[ -z "$output" ]
	brig pool drain f
	assert_no_leftovers
}

# Many clients (issue 25): 8 loops of claim -> exec -> release at once,
# for a few seconds, against 12 members: no cycle fails, the pool keeps
# its size, no failure is logged. (The 60 s runs are bench/pool_clients.sh.)
@test "pool fast: 8 client loops of claim -> exec -> release at once: zero failed cycles" {
	local c pids="" fails
	run brig pool fill m --bundle "$BUNDLE" --size 12
	[ "$status" -eq 0 ]
	for c in $(seq 8); do
		(
			end=$((SECONDS + 8)) ok=0
			while [ "$SECONDS" -lt "$end" ]; do
				id="$(brig pool claim m 2>>"$BATS_TEST_TMPDIR/fail.$c")" || { echo claim >>"$BATS_TEST_TMPDIR/fail.$c"; continue; }
				[ "$(brig exec "$id" echo hi </dev/null 2>>"$BATS_TEST_TMPDIR/fail.$c")" = hi ] ||
					echo "exec $id" >>"$BATS_TEST_TMPDIR/fail.$c"
				brig pool release "$id" >/dev/null 2>>"$BATS_TEST_TMPDIR/fail.$c" ||
					echo "release $id" >>"$BATS_TEST_TMPDIR/fail.$c"
				ok=$((ok + 1))
			done
			echo "$ok" >"$BATS_TEST_TMPDIR/ok.$c"
		) &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	cat "$BATS_TEST_TMPDIR"/ok.* | paste -sd+ | sed 's/^/cycles: /'
	fails="$(cat "$BATS_TEST_TMPDIR"/fail.* 2>/dev/null || true)"
	echo "$fails"
	[ -z "$fails" ]
	[ "$(cat "$BATS_TEST_TMPDIR"/ok.* | paste -sd+ | bc)" -ge 8 ]
	[ "$(brig pool status m --format json | jq -c '[.counts.available, .counts.total, .failures.count]')" = '[12,12,0]' ]
	brig pool drain m
	assert_no_leftovers
}
