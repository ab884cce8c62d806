#!/usr/bin/env bats
# brig pool claim's options (docs/sandbox.md "Pools": claim options, leases
# and the keeper), proved from inside the member:
#   tenant A claims with its own egress policy (an allowlist), env entries
#   and a read-only host directory: A's connections, A's process and exec
#   env and A's files are what A sees; after A's release tenant B (the same
#   member: a pool of one) has the pool's policy back (verified by the
#   reset's egress.policy check), none of A's env and no mount
#   (mounts.exact);
#   a deadline kills every process of the member and releases it within
#   100 ms (measured from the host with a pidfd of the init), and the keeper
#   that waits for it is started by claim, holds none of the caller's fds,
#   is restarted by the next pool command when killed, and renew moves it;
#   symlinks in SRC or DST are refused; other annotation keys, bad input
#   and the node policy refuse before a member is consumed (or put it back);
#   :ro is refused where the bounding set has CAP_SYS_ADMIN;
#   labels show in `pool status` and `state`; a claim killed half way is
#   undone by `pool release`; the reset's egress.policy check fails when a
#   trie is not the pool's policy (a node added by host root).
# The network: two namespaces the test makes (egress_helpers.bash); the
# members join the inside one. Covers any cgroup mode with a cgroup v2
# directory for the programs (hybrid or pure v2).

load helpers
load confine_helpers
load egress_helpers

setup() {
	requires root
	setup_bundle
	# A member's process: records its environment, then waits (run at
	# claim: run.brig.init=false, where pool fill would make it hold).
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" |
		.annotations["run.brig.init"] = "false" |
		.process.args = ["sh", "-c", "env >/tmp/env0; exec sleep 1000"]'
	DATA="$(test_tmpdir claimdata)"
	echo tenant-a-secret >"$DATA/f"
}

teardown() {
	local pid
	for pid in ${KEEPERS:-}; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	egress_net_teardown
	teardown_bundle
	[ -n "${DATA:-}" ] && rm -rf "$DATA"
	[ -n "${LINKS:-}" ] && rm -rf "$LINKS"
	return 0
}

# keeper_of POOL: the pid of the pool's keeper, or nothing.
keeper_of() {
	brig pool status "$1" --format json | jq -r '.keeper | select(. > 0)'
}

# probe ID: A's or B's view of the network, from inside (brig exec).
probe() {
	brig exec "$1" sh -c 'for a in 10.77.0.5 192.0.2.10; do printf "%s " $a; net_probe tcp $a 80; done' </dev/null
}

@test "claim: tenant A's policy, env and files; tenant B, after A's release, has the pool's and none of A's" {
	egress_net_setup
	set_egress public
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]

	run brig pool claim p --annotation run.brig.egress=allowlist \
		--annotation run.brig.egress.allow=10.77.0.5:80 --env A_ONE=1 --env A_TWO=two \
		--mount "$DATA:/data:ro" --label user=alice
	echo "$output"
	[ "$status" -eq 0 ]
	id="$output"
	# the egress policy is A's: the allowed private address works, the
	# public one the pool allows is refused
	run probe "$id"
	echo "$output"
	expect "10.77.0.5 " ok
	expect "192.0.2.10 " EPERM
	# env: the process's own (START) and every exec's
	run brig exec "$id" cat /tmp/env0
	[[ "$output" == *"A_ONE=1"* ]]
	[[ "$output" == *"A_TWO=two"* ]]
	run brig exec "$id" env
	[[ "$output" == *"A_ONE=1"* ]]
	[[ "$output" == *"A_TWO=two"* ]]
	# exec's own --env wins over the claim's
	run brig exec --env A_ONE=mine "$id" env
	[[ "$output" == *"A_ONE=mine"* ]]
	# files: readable, read-only, nosuid, nodev
	run brig exec "$id" cat /data/f
	[ "$output" = tenant-a-secret ]
	run brig exec "$id" sh -c 'echo x >/data/x'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	[ ! -e "$DATA/x" ]
	run brig exec "$id" grep " /data " /proc/self/mountinfo
	[[ "$output" == *" ro,nosuid,nodev"* ]]
	# the record, in state
	[ "$(brig state "$id" | jq -r '.brig.claim.labels.user')" = alice ]
	[ "$(brig state "$id" | jq -r '.brig.claim.egress["run.brig.egress.allow"]')" = 10.77.0.5:80 ]
	[ "$(brig state "$id" | jq -r '.brig.egress.mode')" = allowlist ]
	brig state "$id" | jq -e '.brig.egress.allow | index("10.77.0.5/32:80")' >/dev/null

	run brig pool release "$id"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e -s 'map(select(.check == "egress.policy"))[0].ok' >/dev/null
	echo "$output" | jq -e -s 'map(select(.check == "mounts.exact"))[0].ok' >/dev/null
	[ ! -e "$ROOT/$id/claim.json" ]

	run brig pool claim p
	[ "$status" -eq 0 ]
	[ "$output" = "$id" ]
	run probe "$id"
	echo "$output"
	expect "10.77.0.5 " EPERM
	expect "192.0.2.10 " ok
	run brig exec "$id" sh -c 'cat /tmp/env0; env'
	[ "$status" -eq 0 ]
	[[ "$output" != *"A_ONE"* ]]
	[[ "$output" != *"A_TWO"* ]]
	run brig exec "$id" sh -c 'ls /data; grep " /data " /proc/self/mountinfo'
	[ "$status" -ne 0 ]
	[ -z "$(brig state "$id" | jq -r '.brig.claim // empty')" ]
	[ "$(brig state "$id" | jq -r '.brig.egress.mode')" = public ]
}

# lease_ns ID: the claim's deadline, CLOCK_BOOTTIME ns.
lease_ns() {
	brig state "$1" | jq -r '.brig.claim.deadlineBoottimeNs'
}

# watch_exit DEADLINE_NS PID...: how many ms after DEADLINE_NS (CLOCK_BOOTTIME)
# the last of the PIDs exited, seen through pidfds opened while they still
# ran (a process already gone fails: the watch began too late).
watch_exit() {
	python3 -c '
import os, select, sys, time
dl = int(sys.argv[1]); fds = []
for pid in sys.argv[2:]:
    fds.append(os.pidfd_open(int(pid)))
    with open("/proc/%s/stat" % pid) as f:
        if f.read().rsplit(")", 1)[1].split()[0] in "ZX": print("gone before the watch"); sys.exit(1)
if time.clock_gettime_ns(time.CLOCK_BOOTTIME) >= dl: print("watch began after the deadline"); sys.exit(1)
last = 0
for fd in fds:
    p = select.poll(); p.register(fd, select.POLLIN)
    if not p.poll(20000): print("still running"); sys.exit(1)
    last = max(last, time.clock_gettime_ns(time.CLOCK_BOOTTIME))
print("%.1f" % ((last - dl) / 1e6))' "$@"
}

@test "claim --deadline: every process of the member is killed within 100 ms of the deadline and it comes back" {
	local id pid late i
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	# under command substitution: the keeper holds none of our fds
	id="$(timeout 5 "$BRIG" --root "$ROOT" pool claim p --deadline 6 --label run=deadline)"
	[ -n "$id" ]
	pid="$(brig state "$id" | jq -r .pid)"
	KEEPERS="$(keeper_of p)"
	[ -n "$KEEPERS" ]
	[ "$(cat /proc/$KEEPERS/comm)" = brig-keeper ]
	# a tenant process that ignores SIGTERM and one in a session of its own
	# (watched, not the init: its pidfd waits until the host reaps the
	# exec'd processes, which here is a pid 1 that reaps lazily)
	brig exec -d --pid-file "$DATA/tenant.pid" "$id" \
		sh -c 'trap "" TERM HUP; setsid sleep 1000 & exec sleep 999' </dev/null
	sleep 0.2
	tenant="$(cat "$DATA/tenant.pid")"
	hidden="$(pgrep -x -f "sleep 1000" | while read -r p; do
		[ "$p" = "$pid" ] || [ "$(readlink /proc/$p/ns/pid)" != "$(readlink /proc/$pid/ns/pid)" ] \
			|| echo "$p"; done)"
	[ -n "$hidden" ]
	late="$(watch_exit "$(lease_ns "$id")" "$tenant" $hidden)" || { echo "$late"; false; }
	echo "the tenant's processes gone ${late} ms after the deadline"
	python3 -c 'import sys; v = float(sys.argv[1]); sys.exit(0 if 0 <= v <= 100 else 1)' "$late"
	# released as by pool release: available again, nothing left running
	for i in $(seq 50); do
		[ "$(brig pool status p --format json | jq -r .counts.available)" = 1 ] && break
		sleep 0.1
	done
	[ "$(brig pool status p --format json | jq -r .counts.available)" = 1 ]
	[ "$(brig state "$id" | jq -r .status)" = created ]
	[ ! -e "$ROOT/@pools/p/leases/$id" ]
	for p in $tenant $hidden; do
		! process_alive "$p" || false
	done
}

@test "claim --deadline: renew extends and shortens; release ends the lease; a killed keeper is restarted by the next pool command" {
	local id pid late
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$(brig pool claim p --deadline 1)"
	run brig pool renew "$id" --deadline 30
	[ "$status" -eq 0 ]
	sleep 1.5
	[ "$(brig state "$id" | jq -r .status)" = running ]
	# a killed keeper: the lease waits for the next pool command, which
	# starts a new one
	old="$(keeper_of p)"
	kill -KILL "$old"
	while process_alive "$old"; do sleep 0.05; done
	[ -e "$ROOT/@pools/p/leases/$id" ]
	run brig pool renew "$id" --deadline 4
	[ "$status" -eq 0 ]
	KEEPERS="$(keeper_of p)"
	[ -n "$KEEPERS" ]
	[ "$KEEPERS" != "$old" ]
	[ "$(cat /proc/$KEEPERS/comm)" = brig-keeper ]
	pid="$(brig state "$id" | jq -r .pid)"
	late="$(watch_exit "$(lease_ns "$id")" "$pid")" || { echo "$late"; false; }
	echo "init gone ${late} ms after the shortened deadline"
	python3 -c 'import sys; v = float(sys.argv[1]); sys.exit(0 if -5 < v <= 100 else 1)' "$late"
	# bad input names the option
	run brig pool renew "$id" --deadline soon
	[ "$status" -eq 1 ]
	assert_contains "$output" "--deadline"
	# a release before the deadline ends the lease: the keeper leaves the
	# next tenant alone
	sleep 1
	id="$(brig pool claim p --deadline 1)"
	run brig pool release "$id"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/@pools/p/leases/$id" ]
	id="$(brig pool claim p)"
	sleep 1.5
	[ "$(brig state "$id" | jq -r .status)" = running ]
}

@test "claim: labels in pool status and state" {
	run brig pool fill p --bundle "$BUNDLE" --size 2
	id="$(brig pool claim p --label user=alice --label job=build-7)"
	[ "$(brig pool status p --format json | jq -r --arg id "$id" '.members[] | select(.id == $id) | .labels.user')" = alice ]
	[ "$(brig pool status p --format json | jq -r --arg id "$id" '.members[] | select(.id == $id) | .claimedAt')" != null ]
	run brig pool status p
	echo "$output"
	assert_contains "$output" "user=alice,job=build-7"
	[ "$(brig state "$id" | jq -c .brig.claim.labels)" = '{"user":"alice","job":"build-7"}' ]
	run brig pool claim p --label 'bad key=1'
	[ "$status" -eq 1 ]
	assert_contains "$output" "--label"
}

# claim_refused ARGS...: the claim fails (exit 1), nothing on stdout, and
# the pool's one member is still available, vacant, without a record.
claim_refused() {
	local out
	run brig pool claim p "$@"
	echo "$output"
	[ "$status" -eq 1 ]
	out="$(brig pool claim p "$@" 2>/dev/null || true)"
	[ -z "$out" ]
	run brig pool claim p "$@"
	[ "$(brig pool status p --format json | jq -c '[.counts.available, .counts.claimed, .counts.releasing]')" = '[1,0,0]' ]
	local id
	id="$(brig pool status p --format json | jq -r '.members[0].id')"
	[ ! -e "$ROOT/$id/claim.json" ]
	grep -q vacant "$ROOT/$id/tenancy"
}

@test "claim: other annotation keys and bad input are refused by name, consuming nothing" {
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	claim_refused --annotation run.brig.rootfs.ephemeral=false
	assert_contains "$output" "--annotation run.brig.rootfs.ephemeral: only run.brig.egress"
	claim_refused --annotation run.brig.egress.host-network=true
	assert_contains "$output" "--annotation run.brig.egress.host-network"
	claim_refused --annotation run.brig.egress=everything
	assert_contains "$output" "--annotation run.brig.egress"
	claim_refused --annotation run.brig.egress.allow=300.1.2.3/8
	assert_contains "$output" "--annotation"
	claim_refused --env =x
	assert_contains "$output" "--env"
	claim_refused --env NOVALUE
	assert_contains "$output" "--env"
	claim_refused --mount "$DATA"
	assert_contains "$output" "--mount"
	claim_refused --mount "relative:/data"
	assert_contains "$output" "--mount"
	claim_refused --mount "$DATA:/a/../etc"
	assert_contains "$output" "--mount"
	claim_refused --mount "$DATA:/data:rx"
	assert_contains "$output" "--mount"
	claim_refused --mount "$DATA/nonexistent:/data"
	assert_contains "$output" "--mount $DATA/nonexistent"
	claim_refused --deadline 0
	assert_contains "$output" "--deadline"
	claim_refused --deadline abc
	assert_contains "$output" "--deadline"
	claim_refused --label "k=$(printf 'a\tb')"
	assert_contains "$output" "--label"
	# a policy annotation on a pool without egress programs
	claim_refused --annotation run.brig.egress=allowlist
	assert_contains "$output" "no egress programs"
	run brig pool claim p
	[ "$status" -eq 0 ]
}

@test "claim --mount: a symlink in SRC or DST is refused; nothing reaches the host" {
	LINKS="$(test_tmpdir claimlinks)"
	ln -s /etc "$LINKS/etc"
	mkdir "$LINKS/real"
	ln -s real "$LINKS/via"
	# the image's own symlink, towards a host path that exists
	ln -s /etc "$BUNDLE/rootfs/hostetc"
	mkdir -p "$BUNDLE/rootfs/srv"
	ln -s ../../../../../../tmp "$BUNDLE/rootfs/srv/up"
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	claim_refused --mount "$LINKS/etc:/data"
	assert_contains "$output" "symlink"
	claim_refused --mount "$LINKS/via/:/data"
	assert_contains "$output" "symlink"
	# DST through the image's symlinks: refused; the member was released
	# (reset), so it is available again and holds nothing of the claim
	claim_refused --mount "$DATA:/hostetc"
	assert_contains "$output" "symlink"
	claim_refused --mount "$DATA:/srv/up/x"
	assert_contains "$output" "symlink"
	[ ! -e /tmp/x ] || [ "$(stat -c %Y /tmp/x)" -lt "$(date +%s -d '-1 min')" ]
	# the real path works, read-write without :ro
	id="$(brig pool claim p --mount "$LINKS/real:/work")"
	brig exec "$id" sh -c 'echo hi >/work/out' </dev/null
	[ "$(cat "$LINKS/real/out")" = hi ]
	run brig exec "$id" grep " /work " /proc/self/mountinfo
	[[ "$output" == *" rw,nosuid,nodev"* ]]
}

@test "claim --mount :ro is refused where the bounding set holds CAP_SYS_ADMIN; the node policy judges what a claim adds" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	claim_refused --mount "$DATA:/data:ro"
	assert_contains "$output" "CAP_SYS_ADMIN"
	run brig pool drain p
	[ "$status" -eq 0 ]

	update_config '.process.capabilities.bounding -= ["CAP_SYS_ADMIN"]'
	egress_net_setup
	set_egress public
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	echo '{"profile":"baseline","failOn":"high","egress":{"allow":["192.0.2.0/24"]}}' >"$DATA/policy.json"
	POLICY=(--policy "$DATA/policy.json")
	run brig "${POLICY[@]}" pool claim p --annotation run.brig.egress=allowlist \
		--annotation run.brig.egress.allow=10.77.0.5:80
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "the claim refused by the policy"
	run brig "${POLICY[@]}" pool claim p --mount /etc:/hostetc:ro
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "the claim refused by the policy"
	assert_contains "$output" "sensitive-mount"
	[ "$(brig pool status p --format json | jq -c '[.counts.available, .counts.claimed]')" = '[1,0]' ]
	# what the policy admits passes
	run brig "${POLICY[@]}" pool claim p --annotation run.brig.egress=allowlist \
		--annotation run.brig.egress.allow=192.0.2.10:80
	echo "$output"
	[ "$status" -eq 0 ]
	run probe "$output"
	expect "192.0.2.10 " ok
	expect "10.77.0.5 " EPERM
}

@test "claim: a claim killed after it applied its policy, at its mount, is undone by pool release" {
	local id
	requires program:strace
	egress_net_setup
	set_egress public
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	# SIGKILL at the mount: the record and A's egress rules are in place
	# (not -f: the claim itself, at the open_tree of the source, which
	# comes after the record and the egress rules)
	run strace -o /dev/null -e trace=open_tree -e inject=open_tree:signal=KILL \
		"$BRIG" --root "$ROOT" pool claim p --annotation run.brig.egress=allowlist \
		--annotation run.brig.egress.allow=10.77.0.5:80 --env A_ONE=1 --mount "$DATA:/data:ro"
	echo "$output"
	[ "$status" -ne 0 ]
	[ -z "$(echo "$output" | grep "^p-" || true)" ]
	[ -e "$ROOT/$id/claim.json" ]
	[ "$(brig pool status p --format json | jq -c '[.counts.available, .counts.claimed]')" = '[0,1]' ]
	run brig pool release "$id"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e -s 'map(select(.check == "egress.policy"))[0].ok' >/dev/null
	[ ! -e "$ROOT/$id/claim.json" ]
	run brig pool claim p
	[ "$output" = "$id" ]
	run probe "$id"
	echo "$output"
	expect "10.77.0.5 " EPERM
	expect "192.0.2.10 " ok
	run brig exec "$id" sh -c 'cat /tmp/env0; env; ls /data'
	[[ "$output" != *"A_ONE"* ]]
	[[ "$output" == *"No such file"* ]]
}

@test "claim: egress.policy fails a release whose tries are not the pool's policy (changed behind brig's back)" {
	local id dir
	need_built "$NET_PROBE"
	set_egress public
	run brig pool fill p --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$(brig pool claim p)"
	dir="$(brig state "$id" | jq -r '.brig.egress.enforcement' | sed 's/^cgroup-bpf //')"
	[ -d "$dir" ]
	# what only host root can do: a node the pool's policy does not have
	run "$NET_PROBE" trie-add "$dir"
	[ "$output" = "trie-add: ok" ]
	run brig pool release "$id"
	echo "$output"
	[ "$status" -eq 1 ]
	echo "$output" | grep '"check":"egress.policy"' | jq -e '.ok == false' >/dev/null
	assert_contains "$output" "brig_egress_v4"
	# never handed out again: the member is deleted and a new one takes its
	# place (the pool keeps its size), and status counts the failure
	run brig pool status p --format json
	[ "$(echo "$output" | jq -r .counts.total)" = 1 ]
	[ "$(echo "$output" | jq -r '.members[0].id')" != "$id" ]
	[ "$(echo "$output" | jq -r .failures.count)" = 1 ]
	[ ! -e "$ROOT/$id" ]
}
