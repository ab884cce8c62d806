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
