#!/usr/bin/env bats
# Ways around the egress policy found in issue #22 (docs/sandbox.md,
# docs/security.md's escape-class table), each proved from inside the
# container with real sockets (tests/tools/net_probe) on the network of
# egress_helpers.bash:
#   exec      a capability create refuses is refused to exec too, however it
#             is asked for (--cap, --process in any set); the raw frame
#             CAP_NET_RAW would send never leaves
#   forms     an IPv6 address that carries an IPv4 one (NAT64 64:ff9b::/96,
#             local-use 64:ff9b:1::/48, SIIT, 6to4, Teredo, IPv4-compatible)
#             is judged as that IPv4 address: as a destination, as an allow
#             entry and as a DNS answer
#   host      an egress policy in the host's network namespace (brig's own,
#             however the path names it, or pid 1's) is refused unless
#             run.brig.egress.host-network=true: its interface addresses
#             reach the host. The "host" is the test's inside namespace,
#             where brig itself runs for those tests (nsenter)
#   counters  reset starts the denial counters afresh
#   icmp      a denied IPv6 echo request never leaves (sendto returns: the
#             kernel's ICMPv6 path drops the error), an IPv4 one is EPERM
# Cgroup modes: v2 and hybrid (the programs attach to the cgroup2 directory).

load helpers
load confine_helpers
load egress_helpers

setup() {
	requires root
	setup_bundle
	egress_net_setup
}

teardown() {
	[ -n "${UDP_PID:-}" ] && kill "$UDP_PID" 2>/dev/null
	[ -n "${HOST_PID:-}" ] && kill "$HOST_PID" 2>/dev/null
	[ -n "${HOLD_PID:-}" ] && kill "$HOLD_PID" 2>/dev/null
	teardown_bundle
	egress_net_teardown
}

P='p() { printf "%s " "$*"; net_probe "$@"; }'

# ---- exec: the capabilities create refuses ----

# start_udp_listener: net_probe udpserve 5353 in the outside namespace,
# its lines in $BUNDLE/udp.log.
start_udp_listener() {
	ip netns exec "$NS_OUT" "$NET_PROBE" udpserve 5353 >"$BUNDLE/udp.log" 2>&1 &
	UDP_PID=$!
	sleep 0.2
}

@test "egress: exec --cap CAP_NET_RAW is refused; the raw frame to the metadata address never leaves" {
	local mac
	mac="$(ip -n "$NS_OUT" -j link show eg1 | jq -r '.[0].address')"
	start_udp_listener
	set_args sleep 60
	# the control: without a policy the frame arrives, so silence below means something
	create_container ctl
	brig start ctl
	run brig exec --cap CAP_NET_RAW ctl net_probe raw eg0 "$mac" 169.254.169.254 5353
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"raw: ok"* ]]
	sleep 0.2
	grep -q '^got .*10.203.0.2$' "$BUNDLE/udp.log"
	brig delete -f ctl
	: >"$BUNDLE/udp.log"

	set_egress public
	create_container eg
	brig start eg
	run brig exec --cap CAP_NET_RAW eg net_probe raw eg0 "$mac" 169.254.169.254 5353
	echo "$output"
	[ "$status" -eq 255 ]
	[[ "$output" == *"run.brig.egress: exec --cap grants CAP_NET_RAW"* ]]
	[[ "$output" != *"raw:"* ]]
	sleep 0.2
	cat "$BUNDLE/udp.log"
	[ ! -s "$BUNDLE/udp.log" ]
	brig delete -f eg
}

# exec_process ID SET CAP: exec `true` through --process with CAP added to
# the container's capabilities in SET (bounding, effective, permitted,
# inheritable or ambient).
exec_process() {
	jq --arg set "$2" --arg cap "$3" \
		'.process | .args = ["true"] | .capabilities[$set] += [$cap]' \
		"$BUNDLE/config.json" >"$BUNDLE/process.json"
	run brig exec --process "$BUNDLE/process.json" "$1"
}

@test "egress: exec judges capabilities as create does, by every way it adds them" {
	set_egress public
	local cap set verdict
	for cap in CAP_NET_RAW CAP_NET_ADMIN CAP_SYS_ADMIN CAP_BPF CAP_SYS_MODULE CAP_SYS_PTRACE \
		CAP_PERFMON CAP_CHOWN; do
		# create's verdict on the config holding it
		cp "$BUNDLE/config.json" "$BUNDLE/config.base"
		update_config ".process.capabilities.bounding += [\"$cap\"] | .process.args = [\"true\"]"
		run brig run "cr-$BATS_TEST_NUMBER"
		echo "create $cap: $status $output"
		mv "$BUNDLE/config.base" "$BUNDLE/config.json"
		verdict=refused
		[ "$status" -eq 0 ] && verdict=accepted
		case "$cap" in
		CAP_PERFMON | CAP_CHOWN) [ "$verdict" = accepted ] ;;
		*) [ "$verdict" = refused ]; [[ "$output" == *"run.brig.egress: process.capabilities grants $cap"* ]] ;;
		esac
		set_args sleep 60
		create_container ex
		brig start ex
		run brig exec --cap "$cap" ex true
		echo "exec --cap $cap: $status $output"
		if [ "$verdict" = refused ]; then
			[ "$status" -eq 255 ]
			[[ "$output" == *"run.brig.egress: exec --cap grants $cap"* ]]
			for set in bounding effective permitted inheritable ambient; do
				exec_process ex "$set" "$cap"
				echo "exec --process $set $cap: $status $output"
				[ "$status" -eq 255 ]
				[[ "$output" == *"run.brig.egress: exec --process $BUNDLE/process.json: process.capabilities grants $cap"* ]]
			done
		else
			[ "$status" -eq 0 ]
			exec_process ex bounding "$cap"
			[ "$status" -eq 0 ]
		fi
		brig delete -f ex
	done
}

@test "egress: with a user namespace exec gets create's verdict too (CAP_NET_ADMIN yes, CAP_NET_RAW no)" {
	set_egress public
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args sleep 60
	create_container un
	brig start un
	# namespaced: it cannot touch the network namespace the container joined
	run brig exec --cap CAP_NET_ADMIN un sh -c "$P"'; p tcp 169.254.169.254 80; ip addr add 10.9.9.9/32 dev lo'
	echo "$output"
	[ "$status" -ne 255 ]
	expect "tcp 169.254.169.254 80" EPERM
	[[ "$output" == *"Operation not permitted"* ]]
	! ip -n "$NS_IN" addr show dev lo | grep -q 10.9.9.9 || false
	run brig exec --cap CAP_SYS_PTRACE un true
	[ "$status" -eq 0 ]
	run brig exec --cap CAP_NET_RAW un true
	echo "$output"
	[ "$status" -eq 255 ]
	[[ "$output" == *"run.brig.egress: exec --cap grants CAP_NET_RAW"* ]]
	brig delete -f un
}

# hold_userns_netns: a user namespace (root mapped to root) and a network
# namespace it owns, held by a sleep ($HOLD_PID), with a veth pair eg5 to
# the outside namespace (10.204.0.2 -> 10.204.0.1, the default route).
hold_userns_netns() {
	unshare -U -r -n sleep 300 &
	HOLD_PID=$!
	local i
	for i in $(seq 50); do
		[ "$(readlink "/proc/$HOLD_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.05
	done
	nsenter -t "$HOLD_PID" -n ip link add eg5 type veth peer name eg6 netns "$NS_OUT"
	nsenter -t "$HOLD_PID" -n sh -c 'ip link set lo up && ip link set eg5 up &&
		ip addr add 10.204.0.2/24 dev eg5 && ip route add default via 10.204.0.1'
	ip -n "$NS_OUT" link set eg6 up
	ip -n "$NS_OUT" addr add 10.204.0.1/24 dev eg6
	# joined namespaces of a user namespace that maps root alone: no devpts
	# (its gid=5 is unmapped)
	update_config '.mounts = [.mounts[] | select(.destination != "/dev/pts")]
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
		+ [{"type": "user", "path": "/proc/'"$HOLD_PID"'/ns/user"},
		   {"type": "network", "path": "/proc/'"$HOLD_PID"'/ns/net"}]'
}

# The tenant's tunnel: a VXLAN device to 10.77.0.5:5353 (private, denied)
# carrying datagrams to 198.51.100.2 (public, allowed).
TUNNEL='net_probe vxlan vx0 42 10.77.0.5 5353 eg5; ip link set vx0 arp off; ip link set vx0 up
	ip addr add 198.51.100.1/24 dev vx0; p sendto 198.51.100.2 9; p sendto 198.51.100.2 9
	p sendto 10.77.0.5 5353'

@test "egress: CAP_NET_ADMIN over a network namespace its user namespace owns is refused; its tunnel would carry packets out unjudged" {
	hold_userns_netns
	start_udp_listener
	set_egress public
	update_config '.process.capabilities.bounding += ["CAP_NET_ADMIN"]
		| .process.capabilities.effective += ["CAP_NET_ADMIN"]
		| .process.capabilities.permitted += ["CAP_NET_ADMIN"]'
	set_args sh -c "$P; $TUNNEL"
	run brig run tn
	echo "$status $output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"run.brig.egress: process.capabilities grants CAP_NET_ADMIN over a network namespace its user namespace owns"* ]]
	[[ "$output" != *"sendto:"* ]]
	# exec: the same verdict
	update_config '.process.capabilities.bounding -= ["CAP_NET_ADMIN"]
		| .process.capabilities.effective -= ["CAP_NET_ADMIN"]
		| .process.capabilities.permitted -= ["CAP_NET_ADMIN"]'
	set_args sleep 60
	create_container tx
	brig start tx
	run brig exec --cap CAP_NET_ADMIN tx sh -c "$P; $TUNNEL"
	echo "$status $output"
	[ "$status" -eq 255 ]
	[[ "$output" == *"run.brig.egress: exec --cap grants CAP_NET_ADMIN over a network namespace its user namespace owns"* ]]
	sleep 0.5
	cat "$BUNDLE/udp.log"
	[ ! -s "$BUNDLE/udp.log" ]
	brig delete -f tx
	# a new user namespace owns the new network namespace made with it
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "user" and .type != "network")]
		+ [{"type": "user"}, {"type": "network"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .process.capabilities.bounding += ["CAP_NET_ADMIN"]'
	set_args true
	run brig run tu
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"grants CAP_NET_ADMIN over a network namespace its user namespace owns"* ]]
	assert_no_leftovers
}

# ---- translated IPv6 forms ----

# Every form of the metadata endpoint, of 10.77.0.5 (private) and of
# 192.0.2.10 (public), on the outside namespace's loopback with the
# listener on port 80: reachable unless the policy stops them.
META6="64:ff9b::a9fe:a9fe 64:ff9b:1::a9fe:a9fe 64:ff9b:1:a9fe:a9:fe00:: ::ffff:0:a9fe:a9fe
	2002:a9fe:a9fe::1 2001:0:a00:1::5601:5601 ::a9fe:a9fe"
PRIV6="64:ff9b::a4d:5 2002:a4d:5::1 2001:0:a00:1::f5b2:fffa ::ffff:0:a4d:5"
PUB6="64:ff9b::c000:20a ::ffff:0:c000:20a 2002:c000:20a::1 2001:0:a00:1::3fff:fdf5"

add_forms() {
	local a
	for a in $META6 $PRIV6 $PUB6; do
		ip -n "$NS_OUT" -6 addr add "$a/128" dev lo nodad
	done
}

@test "egress: every translated form of a denied IPv4 address is denied as a destination" {
	add_forms
	set_egress public '' '192.0.2.0/24'
	local script="$P" a
	for a in $META6 $PRIV6 $PUB6; do
		script="$script; p tcp $a 80"
	done
	run_probes "$script; p ping 2002:a9fe:a9fe::1; p ping 2002:c000:20a::1; p tcp 2001:db8::10 80
		p tcp 64:ff9b::7f00:1 9; p tcp 2002:7f00:1::1 9; p tcp ::ffff:127.0.0.1 9"
	[ "$status" -eq 0 ]
	for a in $META6 $PRIV6 $PUB6; do
		expect "tcp $a 80" EPERM
	done
	# the container's own loopback is its own only as IPv4 (or mapped, which
	# the socket sends as IPv4): translated, 127/8 leaves for a translator
	expect "tcp 64:ff9b::7f00:1 9" EPERM
	expect "tcp 2002:7f00:1::1 9" EPERM
	expect "tcp ::ffff:127.0.0.1 9" ECONNREFUSED
	# the skb program holds packets of any kind to them (ICMPv6 here)
	expect "ping 2002:a9fe:a9fe::1" ETIMEDOUT
	expect "ping 2002:c000:20a::1" ETIMEDOUT
	expect "tcp 2001:db8::10 80" ok
	[ "$(ip netns exec "$NS_OUT" awk '$1 == "Icmp6InEchos" {print $2}' /proc/net/snmp6)" = 0 ]
}

@test "egress: translated forms of an allowed IPv4 address are allowed, with its ports" {
	add_forms
	set_egress allowlist '192.0.2.10:80'
	local script="$P" a
	for a in $PUB6; do
		script="$script; p tcp $a 80; p tcp $a 81"
	done
	run_probes "$script"
	[ "$status" -eq 0 ]
	# NAT64 and SIIT keep the port; 6to4 and Teredo reach the IPv4 address
	# as protocol 41 or UDP to the relay's port: judged portless, denied
	expect "tcp 64:ff9b::c000:20a 80" ok
	expect "tcp ::ffff:0:c000:20a 80" ok
	expect "tcp 64:ff9b::c000:20a 81" EPERM
	expect "tcp 2002:c000:20a::1 80" EPERM
	expect "tcp 2001:0:a00:1::3fff:fdf5 80" EPERM
}

@test "egress: an allow entry in a translated form stands for its IPv4 address; a wide IPv6 one opens no translated form" {
	add_forms
	set_egress allowlist '[64:ff9b::c000:20a]:80, ::/0'
	run_probes "$P; p tcp 192.0.2.10 80; p tcp 64:ff9b::c000:20a 80; p tcp 192.0.2.10 81
		p tcp 2001:db8::10 80; p tcp 2002:a9fe:a9fe::1 80; p tcp 2002:a4d:5::1 80
		p tcp ::ffff:0:a9fe:a9fe 80; p tcp 64:ff9b:1::a9fe:a9fe 80"
	[ "$status" -eq 0 ]
	expect "tcp 192.0.2.10 80" ok
	expect "tcp 64:ff9b::c000:20a 80" ok
	expect "tcp 192.0.2.10 81" EPERM
	expect "tcp 2001:db8::10 80" ok
	expect "tcp 2002:a9fe:a9fe::1 80" EPERM
	expect "tcp 2002:a4d:5::1 80" EPERM
	expect "tcp ::ffff:0:a9fe:a9fe 80" EPERM
	expect "tcp 64:ff9b:1::a9fe:a9fe 80" EPERM
	set_args sleep 60
	create_container st
	run brig state st
	jq -e '.brig.egress.allow | index("192.0.2.10/32:80")' <<<"$output"
	jq -e '.brig.egress.deny | index("64:ff9b::/32") and index("::/96")' <<<"$output"
	brig delete -f st
	# local-use NAT64 carries no IPv4 brig can read: allowing it is refused
	update_config '.annotations["run.brig.egress.allow"] = "64:ff9b:1::c000:20a"'
	run brig run eg-local
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'run.brig.egress.allow: "64:ff9b:1::c000:20a" is in 64:ff9b::/32 outside 64:ff9b::/96'* ]]
	assert_no_leftovers
}

@test "egress: a DNS answer in a translated form is judged by its IPv4 address" {
	start_dns
	local name want
	for name in n64meta siitmeta 6to4meta teredometa n64loop local64; do
		case "$name" in
		n64meta) want='64:ff9b::a9fe:a9fe (NAT64 form)' ;;
		siitmeta) want='::ffff:0:a9fe:a9fe (SIIT form)' ;;
		6to4meta) want='2002:a9fe:a9fe::1 (6to4 form)' ;;
		teredometa) want='2001:0:a00:1::5601:5601 (Teredo form)' ;;
		n64loop) want='64:ff9b::7f00:1 (NAT64 form)' ;;
		local64) want='64:ff9b:1::c000:20a (local-use NAT64 form)' ;;
		esac
		update_config ".annotations = {\"run.brig.egress\": \"allowlist\", \"run.brig.egress.allow\": \"$name.test:80\"}"
		set_args sh -c "$P; p tcp 64:ff9b::a9fe:a9fe 80"
		run in_dns_ns "timeout 60 '$RUNTIME' --root '$ROOT' run eg-dns </dev/null"
		echo "$name -> $status: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"run.brig.egress.allow: host \"$name.test\" resolves through DNS to $want"* ]]
		assert_no_leftovers
	done
	# a permitted one is pinned as the IPv4 address it stands for
	ip -n "$NS_OUT" -6 addr add 64:ff9b::c000:20a/128 dev lo nodad
	update_config '.annotations = {"run.brig.egress": "allowlist", "run.brig.egress.allow": "n64ok.test:80"}'
	set_args sleep 60
	in_dns_ns "timeout 60 '$RUNTIME' --root '$ROOT' create eg-ok >/dev/null 2>&1 </dev/null"
	run brig state eg-ok
	echo "$output"
	[ "$(jq -r '.brig.egress.pinned["n64ok.test"]' <<<"$output")" = "64:ff9b::c000:20a" ]
	jq -e '.brig.egress.allow | index("192.0.2.10/32:80")' <<<"$output"
	brig start eg-ok
	run brig exec eg-ok sh -c "$P; p tcp 64:ff9b::c000:20a 80; p tcp 192.0.2.10 80; p tcp 10.77.0.5 80"
	echo "$output"
	expect "tcp 64:ff9b::c000:20a 80" ok
	expect "tcp 192.0.2.10 80" ok
	expect "tcp 10.77.0.5 80" EPERM
	brig delete -f eg-ok
}

# ---- the host's network namespace ----

# in_host CMD...: run brig's command with the inside namespace as brig's
# own: the "host" of these tests.
in_host() {
	nsenter --net="/var/run/netns/$NS_IN" timeout 60 "$RUNTIME" --root "$ROOT" "$@" </dev/null
}

@test "egress: the host's network namespace, however named, refuses a policy unless host-network=true" {
	# the host's service on all its addresses, and an interface address
	# that is not loopback
	ip -n "$NS_IN" addr add 192.0.2.2/32 dev eg0
	ip netns exec "$NS_IN" "$NET_PROBE" serve 8080 >/dev/null 2>&1 &
	HOST_PID=$!
	ln -s "/var/run/netns/$NS_IN" "$BUNDLE/hostnet"
	set_egress public
	set_args sh -c "$P; p tcp 192.0.2.2 8080; p tcp 127.0.0.1 8080"
	local path pid1=/proc/1/ns/net
	# pid 1's namespace (the real host's) where this runner may look at it
	readlink "$pid1" >/dev/null 2>&1 || { echo "pid 1's namespaces are closed to this runner"; pid1=; }
	for path in none "/var/run/netns/$NS_IN" /proc/self/ns/net //proc/./self/ns/net \
		/proc/thread-self/ns/net "$BUNDLE/hostnet" $pid1; do
		if [ "$path" = none ]; then
			update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")]'
		else
			update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")] + [{"type": "network", "path": "'"$path"'"}]'
		fi
		# pid 1's namespace is the real host's: nothing may run there
		[ "$path" = /proc/1/ns/net ] && set_args true
		run in_host run eg-host
		echo "$path -> $status: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"run.brig.egress: the container would run in the host's network namespace"* ]]
		assert_no_leftovers
	done
	# opted in: the host's loopback is still denied, its other addresses are
	# judged by the rules alone (192.0.2.2 is public here)
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
		| .annotations["run.brig.egress.host-network"] = "true"'
	set_args sh -c "$P; p tcp 192.0.2.2 8080; p tcp 127.0.0.1 8080"
	run in_host run eg-host
	echo "$output"
	[ "$status" -eq 0 ]
	expect "tcp 127.0.0.1 8080" EPERM
	expect "tcp 192.0.2.2 8080" ok
	update_config '.annotations["run.brig.egress.host-network"] = "yes"'
	run in_host run eg-host
	[ "$status" -eq 1 ]
	[[ "$output" == *'run.brig.egress.host-network: "yes" is not true or false'* ]]
}

# ---- counters and ICMP ----

@test "egress: reset starts the denial counters afresh" {
	set_egress public
	# reset refuses a writable root without an ephemeral layer
	update_config '.annotations["run.brig.reset"] = "true" | .root.readonly = true'
	set_args sh -c 'for i in 1 2 3; do net_probe tcp 169.254.169.254 80; done; sleep 60'
	create_container rc
	brig start rc
	local out i
	for i in $(seq 50); do
		out="$(brig events --stats rc)"
		[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 3 ] && break
		sleep 0.1
	done
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 3 ]
	run brig reset rc
	echo "$output"
	[ "$status" -eq 0 ]
	out="$(brig events --stats rc)"
	echo "$out"
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 0 ]
	# the next tenant's own denials count from there
	brig start rc
	for i in $(seq 50); do
		out="$(brig events --stats rc)"
		[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 3 ] && break
		sleep 0.1
	done
	echo "$out"
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 3 ]
	brig delete -f rc
}

@test "egress: a denied ICMP echo is EPERM over IPv4; over IPv6 sendto returns but nothing leaves" {
	set_egress public
	set_args sh -c "$P; p ping 169.254.169.254; p ping fd00:ec2::254; sleep 60"
	create_container ic
	brig start ic
	local out i
	for i in $(seq 50); do
		grep -q '^ping fd00:ec2::254 ping:' "$BUNDLE/ic.out" && break
		sleep 0.1
	done
	out="$(brig events --stats ic)"
	echo "$out"
	cat "$BUNDLE/ic.out"
	output="$(cat "$BUNDLE/ic.out")"
	expect "ping 169.254.169.254" EPERM
	# sendto returned (the kernel drops the ICMPv6 error), the echo was
	# dropped and counted, and never arrived
	expect "ping fd00:ec2::254" ETIMEDOUT
	[ "$(jq '.data.brig.egress.denied[] | select(.destination == "fd00:ec2::254" and .protocol == "icmpv6") | .count' <<<"$out")" = 1 ]
	[ "$(ip netns exec "$NS_OUT" awk '$1 == "Icmp6InEchos" {print $2}' /proc/net/snmp6)" = 0 ]
	brig delete -f ic
}
