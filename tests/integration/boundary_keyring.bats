#!/usr/bin/env bats
# The session keyring of brig's caller must not reach the container: its
# keys are the host's (a credential cached by the engine or an operator's
# shell). The init leaves it for a keyring of its own at create; `exec`
# must leave it too (on the brig before this test it did not: an exec'd
# process could search, read and link the caller's keys). With
# --no-new-keyring the container shares its caller's on purpose (runc).
# The probe is tests/tools/reset_tenant (`check` reports a key named
# brig-tenant found in the session keyring). Any cgroup mode.

load helpers
load confine_helpers

RESET_TENANT="$CONFINE_TOOLS/reset_tenant"

setup() {
	requires root program:python3
	need_built "$RESET_TENANT"
	setup_bundle
	cp "$RESET_TENANT" "$BUNDLE/rootfs/bin/reset_tenant"
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	teardown_bundle
	planted_clear k5
	planted_clear kp-
}

# with_key CMD...: run CMD in a new session keyring of this test's that
# holds the user key brig-tenant, as a caller with a secret would.
with_key() {
	python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(250, 1, b"brig-test-caller") < 0:   # keyctl JOIN_SESSION_KEYRING
    sys.exit("join keyring: %s" % os.strerror(ctypes.get_errno()))
if libc.syscall(248, b"user", b"brig-tenant", b"secret", 6, -3) < 0:  # add_key to @s
    sys.exit("add_key: %s" % os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

@test "keyring: the caller's key is found by the probe in the caller's own keyring (control)" {
	run with_key "$RESET_TENANT" check
	[ "$status" -eq 1 ]
	assert_contains "$output" "key brig-tenant in the session keyring"
}

@test "keyring: exec does not hand the caller's session keyring to the container" {
	run_detached k1
	run with_key timeout 30 "$RUNTIME" --root "$ROOT" exec k1 reset_tenant check
	[ "$status" -eq 0 ]
	[ "$output" = clean ]
	# also as a non-root user of the container and with a terminal-less -d
	run with_key timeout 30 "$RUNTIME" --root "$ROOT" exec --user 1000:1000 k1 reset_tenant check
	[ "$status" -eq 0 ]
	[ "$output" = clean ]
	brig delete --force k1
}

@test "keyring: run's init does not get the caller's session keyring" {
	update_config '.process.args = ["reset_tenant", "check"]'
	run with_key timeout 30 "$RUNTIME" --root "$ROOT" run k2
	[ "$status" -eq 0 ]
	[ "$output" = clean ]
}

@test "keyring: --no-new-keyring shares the caller's keyring with the init and exec, as asked" {
	update_config '.process.args = ["reset_tenant", "check"]'
	run with_key timeout 30 "$RUNTIME" --root "$ROOT" run --no-new-keyring k3
	[ "$status" -eq 1 ]
	assert_contains "$output" "key brig-tenant"
	update_config '.process.args = ["sleep", "1000"]'
	brig create --no-new-keyring k4 </dev/null
	brig start k4
	run with_key timeout 30 "$RUNTIME" --root "$ROOT" exec k4 reset_tenant check
	[ "$status" -eq 1 ]
	assert_contains "$output" "key brig-tenant"
	brig delete --force k4
}

# One keyring per init (issue 25): exec joins the init's session keyring by
# its name in state.json (keyring) instead of making a key per exec (on
# the brig before, each exec made an anonymous keyring of host root's,
# alive as long as its process: a key per exec); the name is random per
# init, so a keyring a tenant planted under a name it could guess is never
# the next init's (before, every init of a container joined "_ses.ID" and
# found the keyring the previous tenant left under that name).

@test "keyring: exec joins the init's session keyring: no key per exec" {
	local a b c ring before after
	# a user namespace of its own: container root's host uid is its alone
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 1879048192, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 1879048192, "size": 65536}]
		| .annotations["run.brig.userns"] = "auto"'
	run_detached k5
	# three execs at once, alive together: one keyring between them
	brig exec k5 sh -c 'reset_tenant key-serial; sleep 3' >"$BATS_TEST_TMPDIR/a" &
	brig exec k5 sh -c 'reset_tenant key-serial; sleep 3' >"$BATS_TEST_TMPDIR/b" &
	sleep 1
	c="$(brig exec --user 1000:1000 k5 reset_tenant key-serial)"
	wait
	a="$(cat "$BATS_TEST_TMPDIR/a")"
	b="$(cat "$BATS_TEST_TMPDIR/b")"
	echo "serials: $a $b $c"
	[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ]
	ring="$(jq -r .keyring "$ROOT/k5/state.json")"
	[[ "$ring" =~ ^_ses\.k5\.[0-9a-f]{16}$ ]]
	# no key per exec: 20 exec'd processes alive at once leave host root's
	# key count (/proc/key-users) where it was (before: +20; other work on
	# the machine may move it by a few)
	before="$(awk '$1 == "0:" { split($4, q, "/"); print q[1] }' /proc/key-users)"
	for _ in $(seq 20); do brig exec -d k5 sleep 10; done
	after="$(awk '$1 == "0:" { split($4, q, "/"); print q[1] }' /proc/key-users)"
	echo "root's keys: $before -> $after"
	[ $((after - before)) -lt 10 ]
	# the init's own: what a key added by one exec is found by the next
	brig exec k5 reset_tenant key-plant k5-none >/dev/null
	run brig exec k5 reset_tenant check
	assert_contains "$output" "key brig-tenant in the session keyring"
	brig delete --force k5
}

# Without a user namespace of its own, container root is host root, a uid
# every such container shares: a keyring searchable by its owner could be
# joined (and its keys read) by another container that learned its name.
@test "keyring: without its own user namespace, another container cannot join the init's keyring" {
	local name serial other
	run_detached k6
	# a cgroup of its own, next to k6's (as pool members have)
	update_config '.linux.cgroupsPath += "-k7"'
	run_detached k7
	# the host can read the name and serial from /proc/keys (hex serial)
	name="$(awk '$9 ~ /^_ses\.k6[.:]/ { sub(/:$/, "", $9); print $9 }' /proc/keys | head -n1)"
	serial="$(awk '$9 ~ /^_ses\.k6[.:]/ { print $1 }' /proc/keys | head -n1)"
	echo "k6's init keyring: $name ($serial)"
	[ -n "$name" ]
	other="$(brig exec k7 reset_tenant key-join "$name")"
	echo "k7 joined: $other"
	[ -n "$other" ]
	[ "$(printf '%08x' "$other")" != "$serial" ]
	[ "$(jq -r '.keyring // "none"' "$ROOT/k6/state.json")" = none ]
	brig delete --force k6
	brig delete --force k7
}

# planted_clear ID: invalidate what key-plant left in root's persistent
# keyring (it would outlive the test for days).
planted_clear() {
	python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.syscall(250, 1, None)                  # a session keyring of our own
p = libc.syscall(250, 22, -1, -3)          # KEYCTL_GET_PERSISTENT into it
if p < 0:
    sys.exit(0)
buf = ctypes.create_string_buffer(65536)
n = libc.syscall(250, 11, p, buf, 65536)   # KEYCTL_READ: the serials
for i in range(0, max(0, min(n, 65536)) // 4):
    k = int.from_bytes(buf.raw[4*i:4*i+4], "little")
    d = ctypes.create_string_buffer(512)
    if libc.syscall(250, 6, k, d, 512) > 0 and d.value.split(b";")[-1].startswith(b"_ses." + sys.argv[1].encode()):
        libc.syscall(250, 21, k)           # KEYCTL_INVALIDATE
' "$1"
}

@test "keyring: the next tenancy's init never joins a keyring the previous tenant planted" {
	local id id2
	# the member's process runs at claim (run.brig.init=false: pool fill
	# would make brig's pid 1 hold it) and looks at its keyring first
	update_config '.root.readonly = true | .annotations["run.brig.init"] = "false" |
		.process.args = ["sh", "-c", "reset_tenant check >/dev/shm/keys; exec sleep 1000"]'
	brig pool fill kp --bundle "$BUNDLE" --size 1 >/dev/null
	id="$(brig pool claim kp)"
	run brig exec "$id" reset_tenant key-plant "$id"
	echo "$output"
	[ "$output" = "planted 6" ]
	run brig pool release "$id"
	[ "$status" -eq 0 ]
	id2="$(brig pool claim kp)"
	[ "$id2" = "$id" ]
	for _ in $(seq 50); do
		brig exec "$id" test -s /dev/shm/keys && break
		sleep 0.1
	done
	run brig exec "$id" cat /dev/shm/keys
	echo "the new init: $output"
	[ "$output" = clean ]
	brig pool drain kp
}
