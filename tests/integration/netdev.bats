#!/usr/bin/env bats
# linux.netDevices (runtime-spec 1.3): a host interface moved into the
# container's network namespace, renamed, up, with its permanent global
# addresses; never moved back by delete (the spec forbids it: the kernel
# destroys virtual devices with the namespace, a joined namespace keeps
# them); errors that name the field and leave nothing behind.
#
# Host safety: the host's network is never touched. Each test owns a
# throwaway network namespace (held by a sleep it started) that serves as
# brig's "host" namespace: every runtime command of this file runs in it,
# and the test's interfaces (veth pairs: this kernel may lack dummy) are
# made there. Killing the holder destroys the namespace and what is in it.
# brig-only: runc 1.1 ignores linux.netDevices. Covers any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root brig program:nsenter program:unshare program:ip
	setup_bundle
	NS_PID="$(hold_netns)"
	BRIG_NETNS="/proc/$NS_PID/ns/net"
	JOIN_PID=
}

teardown() {
	teardown_bundle
	local p
	for p in "${JOIN_PID:-}" "${NS_PID:-}"; do
		[ -n "$p" ] || continue
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	return 0
}

# hold_netns [NSENTER ARGS...]: start a sleep in a new network namespace and
# print its pid once it is in there.
hold_netns() {
	local pid tries=100
	"$@" unshare --net sleep 3600 </dev/null >/dev/null 2>&1 &
	pid=$!
	while [ "$(readlink "/proc/$pid/ns/net")" = "$(readlink /proc/self/ns/net)" ] ||
		[ "$(readlink "/proc/$pid/exe")" != "$(readlink -f "$(command -v sleep)")" ]; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || { echo "no network namespace holder" >&2; return 1; }
		sleep 0.05
	done
	echo "$pid"
}

# nip ARGS...: ip(8) in the throwaway namespace.
nip() {
	nsenter --net="/proc/$NS_PID/ns/net" -- ip "$@"
}

# make_if NAME ADDR...: a veth pair NAME / NAMEp, NAME up with the addresses.
make_if() {
	local name="$1" a
	shift
	nip link add "$name" type veth peer name "${name}p"
	nip link set "$name" up
	for a in "$@"; do
		nip addr add $a dev "$name"
	done
}

# assert_given_back NAME TEXT...: NAME is back in the test's namespace under
# its host name, up, and `ip addr` shows every TEXT (its addresses).
assert_given_back() {
	local t
	run nip addr show dev "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ \<[A-Z,_-]*UP ]]
	shift
	for t in "$@"; do
		assert_contains "$output" "$t"
	done
}

netdevs() {
	update_config ".linux.netDevices = $1"
}

@test "netdev: moved and renamed, up, with its permanent global addresses only" {
	make_if nd0 10.200.0.1/24 "10.200.1.1/24 scope link" "fd00:200::1/64 nodad" \
		"fd00:200::2/64 nodad valid_lft 100 preferred_lft 100"
	netdevs '{"nd0": {"name": "ctr0"}}'
	set_args sleep 100
	create_container nd
	# Inside: under its new name, up, the permanent global addresses kept,
	# the link-scope and the dynamic ones not (the spec's rule).
	run brig exec nd ip addr show dev ctr0
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "ctr0"
	[[ "$output" =~ \<[A-Z,_-]*UP ]]
	assert_contains "$output" "inet 10.200.0.1/24 scope global ctr0"
	assert_contains "$output" "inet6 fd00:200::1/64 scope global"
	[[ "$output" != *10.200.1.1* ]]
	[[ "$output" != *fd00:200::2* ]]
	run brig exec nd ls /sys/class/net
	[ "$status" -eq 0 ]
	assert_contains "$output" ctr0
	[[ "$output" != *nd0* ]]
	# Host side: gone while the container has it; its peer stays.
	! nip link show nd0 || false
	nip link show nd0p
	# delete does not move it back: a virtual device dies with the
	# container's namespace, and takes its peer along.
	brig kill nd KILL
	wait_for_status nd stopped
	brig delete nd
	local tries=100
	while nip link show nd0p >/dev/null 2>&1 && [ "$tries" -gt 0 ]; do
		sleep 0.05
		tries=$((tries - 1))
	done
	! nip link show nd0 || false
	! nip link show nd0p || false
	assert_no_leftovers
}

@test "netdev: without a name the host name is kept; a %d template is numbered by the kernel" {
	make_if nd0 10.200.0.1/24
	make_if nd1 10.200.2.1/24
	netdevs '{"nd0": {}, "nd1": {"name": "eth%d"}}'
	set_args sh -c 'ls /sys/class/net; ip addr show dev eth0'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" nd0
	assert_contains "$output" "inet 10.200.2.1/24 scope global eth0"
}

@test "netdev: a joined network namespace keeps the device after delete" {
	JOIN_PID="$(hold_netns nsenter --net="/proc/$NS_PID/ns/net" --)"
	make_if nd0 10.200.0.1/24
	update_config '.linux.namespaces |= map(select(.type != "network")) |
		.linux.namespaces += [{"type": "network", "path": "/proc/'"$JOIN_PID"'/ns/net"}]'
	netdevs '{"nd0": {"name": "j0"}}'
	set_args sh -c 'ip addr show dev j0'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "inet 10.200.0.1/24 scope global j0"
	# run deleted the container: the device stays where the spec leaves it.
	run nsenter --net="/proc/$JOIN_PID/ns/net" -- ip addr show dev j0
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "10.200.0.1/24"
	! nip link show nd0 || false
	assert_no_leftovers
}

@test "netdev: works with a user namespace" {
	make_if nd0 10.200.0.1/24
	update_config '.linux.namespaces += [{"type":"user"}] |
		.linux.uidMappings = [{"containerID":0,"hostID":100000,"size":65536}] |
		.linux.gidMappings = [{"containerID":0,"hostID":100000,"size":65536}]'
	netdevs '{"nd0": {"name": "u0"}}'
	set_args sh -c 'ip addr show dev u0'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "inet 10.200.0.1/24 scope global u0"
}

@test "netdev: a missing host interface fails create and leaves nothing" {
	make_if nd0 10.200.0.1/24
	netdevs '{"nd0": {}, "nd9": {}}'
	run brig create nd </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = 'invalid configuration: linux.netDevices: host interface "nd9": No such device' ]
	run brig list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	assert_no_leftovers
	# Nothing moved: nd0 is still here with its address.
	run nip addr show dev nd0
	assert_contains "$output" "10.200.0.1/24"
}

@test "netdev: a create failing after the move gives the device back" {
	make_if nd0 10.200.0.1/24 "fd00:200::1/64 nodad"
	netdevs '{"nd0": {"name": "ctr0"}}'
	# A createRuntime hook runs (in brig's namespaces) after the move: it
	# notes whether nd0 has left, then fails the create.
	update_config '.hooks.createRuntime = [{"path": "/bin/sh",
		"args": ["sh", "-c", "if ip link show nd0 >/dev/null 2>&1; then echo here; else echo moved; fi >'"$BUNDLE/seen"'; exit 3"],
		"env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]'
	run create_container nd
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "createRuntime"
	[ "$(cat "$BUNDLE/seen")" = moved ]
	assert_no_leftovers
	assert_given_back nd0 "inet 10.200.0.1/24" "fd00:200::1/64"
}

@test "netdev: a device that cannot move gives back the ones moved before it" {
	# nd0 moves first; the loopback device cannot leave its namespace, so
	# the second move fails after the first succeeded.
	make_if nd0 10.200.0.1/24
	netdevs '{"nd0": {"name": "c0"}, "lo": {"name": "x0"}}'
	run create_container nd
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.netDevices.lo"
	assert_no_leftovers
	assert_given_back nd0 "inet 10.200.0.1/24"
	nip link show lo
}

@test "netdev: a name already in the container's namespace is an error" {
	make_if nd0 10.200.0.1/24
	netdevs '{"nd0": {"name": "lo"}}'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" 'linux.netDevices.nd0: interface "lo"'
	assert_contains "$output" "File exists"
	assert_no_leftovers
	nip link show nd0
}

@test "netdev: the container needs a network namespace of its own" {
	make_if nd0
	netdevs '{"nd0": {}}'
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.netDevices.nd0: needs a network namespace"
	assert_no_leftovers
	# Joining brig's own namespace is no better.
	update_config '.linux.namespaces += [{"type": "network", "path": "/proc/'"$NS_PID"'/ns/net"}]'
	run brig run nd </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "linux.netDevices.nd0: the network namespace to join is the host's"
	assert_no_leftovers
	nip link show nd0
}

@test "netdev: invalid interface names are errors naming the field" {
	local cfg want
	while IFS='|' read -r cfg want; do
		netdevs "$cfg"
		run brig run nd </dev/null
		echo "$cfg -> $status: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" "$want"
		assert_no_leftovers
	done <<-'EOF'
		{"a/b": {}}|linux.netDevices.a/b: host interface name "a/b": must not contain '/'
		{"": {}}|host interface name "": must not be empty
		{"nd%d": {}}|linux.netDevices.nd%d: host interface name "nd%d": must not contain '%'
		{"nd0": {"name": ""}}|linux.netDevices.nd0.name: "": must not be empty
		{"nd0": {"name": "0123456789abcdef"}}|linux.netDevices.nd0.name: "0123456789abcdef": longer than 15
		{"nd0": {"name": "a b"}}|linux.netDevices.nd0.name: "a b": must not contain
		{"nd0": {"name": "x%s"}}|linux.netDevices.nd0.name: "x%s": a name template
		{"nd0": {"name": "c0"}, "nd1": {"name": "c0"}}|linux.netDevices.nd1: name "c0" is also the name of linux.netDevices.nd0
	EOF
}

@test "netdev: features reports linux.netDevices" {
	run brig features
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .linux.netDevices.enabled)" = true ]
}
