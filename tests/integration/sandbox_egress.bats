#!/usr/bin/env bats
# The egress policy (run.brig.egress annotations, docs/sandbox.md), proved
# from inside the container with real sockets (tests/tools/net_probe):
#   public    metadata, private and link-local destinations fail at once
#             (TCP, connected UDP, sendto, ICMP; IPv4, IPv6, IPv4-mapped),
#             public ones work, the container's own loopback works
#   allowlist only the named CIDR:port and hostnames (pinned at create from
#             /etc/hosts, shown by `brig state`) work
#   hostnames /etc/hosts does not know are asked of the nameserver in
#             /etc/resolv.conf (a python3 responder on 10.203.0.1:53 in the
#             outside namespace; brig runs in the inside one with both
#             files bind-mounted in a private mount namespace): pinned,
#             CNAMEs followed inside the answer only, /etc/hosts wins,
#             NXDOMAIN / silence / a metadata answer fail create by name,
#             an answer with a wrong id is ignored
#   none      nothing leaves but loopback
#   no annotation: nothing changes
#   root in the container cannot detach the programs; capabilities that
#   could bypass them are refused at create
#   denials are counted per destination in `brig events --stats`
#   bad annotations: a named error, exit 1, nothing left behind
# Each test builds its own network: the container joins a network namespace
# the test made, with a veth pair to a second "outside" namespace holding
# 169.254.169.254, 10.77.0.5 (private), fd00:ec2::254, 192.0.2.10 and
# 2001:db8::10 (documentation ranges) on its loopback and a TCP listener on
# port 80. No packet leaves those namespaces.
# Cgroup modes: v2 and hybrid (the programs attach to the cgroup2 directory);
# on a pure v1 host the policy must be refused (tested when the host is v1).

load helpers
load confine_helpers

NET_PROBE="$CONFINE_TOOLS/net_probe"

setup() {
	requires root
	setup_bundle
	need_built "$NET_PROBE"
	cp "$NET_PROBE" "$BUNDLE/rootfs/bin/net_probe"
	NS_IN="brig-egin-$$-${BATS_TEST_NUMBER}"
	NS_OUT="brig-egout-$$-${BATS_TEST_NUMBER}"
	ip netns add "$NS_IN"
	ip netns add "$NS_OUT"
	# made inside the namespaces: the host's network never sees the pair
	ip -n "$NS_IN" link add eg0 type veth peer name eg1 netns "$NS_OUT"
	ip -n "$NS_IN" link set lo up
	ip -n "$NS_IN" link set eg0 up
	ip -n "$NS_IN" addr add 10.203.0.2/24 dev eg0
	ip -n "$NS_IN" -6 addr add fd00:203::2/64 dev eg0 nodad
	ip -n "$NS_IN" route add default via 10.203.0.1
	ip -n "$NS_IN" -6 route add default via fd00:203::1
	ip -n "$NS_OUT" link set lo up
	ip -n "$NS_OUT" link set eg1 up
	ip -n "$NS_OUT" addr add 10.203.0.1/24 dev eg1
	ip -n "$NS_OUT" -6 addr add fd00:203::1/64 dev eg1 nodad
	local a
	for a in 169.254.169.254/32 10.77.0.5/32 192.0.2.10/32; do
		ip -n "$NS_OUT" addr add "$a" dev lo
	done
	for a in fd00:ec2::254/128 2001:db8::10/128; do
		ip -n "$NS_OUT" -6 addr add "$a" dev lo
	done
	# ping sockets for root in the container (no CAP_NET_RAW needed)
	ip netns exec "$NS_IN" sh -c 'echo "0 2147483647" >/proc/sys/net/ipv4/ping_group_range'
	ip netns exec "$NS_OUT" "$NET_PROBE" serve 80 >/dev/null 2>&1 &
	SERVER_PID=$!
	update_config '.linux.namespaces = [.linux.namespaces[] | if .type == "network" then {type: "network", path: "/var/run/netns/'"$NS_IN"'"} else . end]'
	# wait for the listener
	local i
	for i in $(seq 50); do
		ip netns exec "$NS_IN" "$NET_PROBE" tcp 192.0.2.10 80 | grep -q ': ok' && break
		sleep 0.1
	done
}

teardown() {
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
	teardown_bundle
	[ -n "${NS_IN:-}" ] && ip netns del "$NS_IN" 2>/dev/null
	[ -n "${NS_OUT:-}" ] && ip netns del "$NS_OUT" 2>/dev/null
	[ -n "${DNS_PID:-}" ] && kill "$DNS_PID" 2>/dev/null
	[ -n "${HOSTS_DIR:-}" ] && rm -rf "$HOSTS_DIR"
	[ -n "${DNS_DIR:-}" ] && rm -rf "$DNS_DIR"
	return 0
}

# set_egress MODE [ALLOW] [DENY]: the run.brig.egress annotations.
set_egress() {
	update_config ".annotations[\"run.brig.egress\"] = \"$1\""
	[ -z "${2:-}" ] || update_config ".annotations[\"run.brig.egress.allow\"] = \"$2\""
	[ -z "${3:-}" ] || update_config ".annotations[\"run.brig.egress.deny\"] = \"$3\""
}

# probe_script: one shell script of net_probe calls, run in the container.
run_probes() {
	set_args sh -c "$1"
	run brig run "eg-$BATS_TEST_NUMBER"
	echo "$output"
}

# expect LINE_PREFIX VERDICT: the probe's line for the call says VERDICT
# (a denial must also be quick: under 500 ms).
expect() {
	local line
	line="$(printf '%s\n' "$output" | grep -F -- "$1" | head -1)"
	[ -n "$line" ] || { echo "no line for $1"; return 1; }
	[[ "$line" == *": $2 "* ]] || { echo "expected $2: $line"; return 1; }
	if [ "$2" = EPERM ]; then
		local ms="${line##* }"
		ms="${ms%ms}"
		[ "$ms" -lt 500 ] || { echo "denial too slow: $line"; return 1; }
	fi
}

PROBES='
p() { printf "%s " "$*"; net_probe "$@"; }
p tcp 169.254.169.254 80; p tcp 10.77.0.5 80; p tcp 10.203.0.1 80
p tcp fd00:ec2::254 80; p tcp ::ffff:169.254.169.254 80
p tcp 192.0.2.10 80; p tcp 2001:db8::10 80; p tcp ::ffff:192.0.2.10 80
p udp 169.254.169.254 53; p sendto 169.254.169.254 53; p sendto fd00:ec2::254 53
p udp 192.0.2.10 53; p sendto 192.0.2.10 53
p ping 169.254.169.254; p ping 10.77.0.5; p ping 192.0.2.10
p tcp 127.0.0.1 9; p tcp ::1 9
'

@test "egress: without the annotation nothing is filtered" {
	run_probes "$PROBES"
	[ "$status" -eq 0 ]
	expect "tcp 169.254.169.254 80" ok
	expect "tcp 10.77.0.5 80" ok
	expect "tcp fd00:ec2::254 80" ok
	expect "sendto 169.254.169.254 53" ok
	expect "ping 169.254.169.254" ok
}

@test "egress: public denies metadata, private and link-local; allows public and own loopback" {
	set_egress public
	run_probes "$PROBES"
	[ "$status" -eq 0 ]
	expect "tcp 169.254.169.254 80" EPERM
	expect "tcp 10.77.0.5 80" EPERM
	expect "tcp 10.203.0.1 80" EPERM
	expect "tcp fd00:ec2::254 80" EPERM
	expect "tcp ::ffff:169.254.169.254 80" EPERM
	expect "udp 169.254.169.254 53" EPERM
	expect "sendto 169.254.169.254 53" EPERM
	expect "sendto fd00:ec2::254 53" EPERM
	expect "ping 169.254.169.254" EPERM
	expect "ping 10.77.0.5" EPERM
	expect "tcp 192.0.2.10 80" ok
	expect "tcp 2001:db8::10 80" ok
	expect "tcp ::ffff:192.0.2.10 80" ok
	expect "udp 192.0.2.10 53" ok
	expect "sendto 192.0.2.10 53" ok
	expect "ping 192.0.2.10" ok
	# the container's own loopback: reached (refused by no listener), not denied
	expect "tcp 127.0.0.1 9" ECONNREFUSED
	expect "tcp ::1 9" ECONNREFUSED
}

# in_hosts_ns CMD: run CMD (a shell string) with a private /etc/hosts that
# names api.test, in a mount namespace of its own (the host's file stays).
in_hosts_ns() {
	HOSTS_DIR="${HOSTS_DIR:-$(test_tmpdir hosts)}"
	printf '127.0.0.1 localhost\n2001:db8::10 api.test\n' >"$HOSTS_DIR/hosts"
	unshare -m --propagation private sh -c "mount --bind '$HOSTS_DIR/hosts' /etc/hosts && $1"
}

@test "egress: allowlist admits only the named CIDR:port and the pinned hostname" {
	set_egress allowlist '192.0.2.10/32:80, api.test:80'
	set_args sh -c 'p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 192.0.2.10 80; p tcp 192.0.2.10 81; p sendto 192.0.2.10 53; p ping 192.0.2.10
		p tcp 2001:db8::10 80; p tcp 2001:db8::10 443; p tcp 169.254.169.254 80
		p tcp 10.77.0.5 80; p tcp 127.0.0.1 9'
	run in_hosts_ns "timeout 60 '$RUNTIME' --root '$ROOT' run eg-allow"
	echo "$output"
	[ "$status" -eq 0 ]
	expect "tcp 192.0.2.10 80" ok
	expect "tcp 192.0.2.10 81" EPERM
	expect "sendto 192.0.2.10 53" EPERM
	expect "ping 192.0.2.10" EPERM
	expect "tcp 2001:db8::10 80" ok
	expect "tcp 2001:db8::10 443" EPERM
	expect "tcp 169.254.169.254 80" EPERM
	expect "tcp 10.77.0.5 80" EPERM
	expect "tcp 127.0.0.1 9" ECONNREFUSED
}

@test "egress: brig state shows the policy and the pinned addresses" {
	set_egress allowlist 'api.test:80' '192.0.2.0/24'
	set_args sleep 60
	in_hosts_ns "timeout 60 '$RUNTIME' --root '$ROOT' create eg-state >/dev/null 2>&1 </dev/null"
	run brig state eg-state
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r .brig.egress.mode <<<"$output")" = allowlist ]
	[ "$(jq -r '.brig.egress.pinned["api.test"]' <<<"$output")" = "2001:db8::10" ]
	jq -e '.brig.egress.allow | index("[2001:db8::10/128]:80")' <<<"$output"
	jq -e '.brig.egress.deny | index("192.0.2.0/24")' <<<"$output"
	jq -e '.brig.egress.deny | index("169.254.169.254/32")' <<<"$output"
	# the programs sit on the container's cgroup2 directory
	local dir
	dir="$(jq -r .brig.egress.enforcement <<<"$output")"
	dir="${dir#cgroup-bpf }"
	[ -d "$dir" ]
	brig delete -f eg-state
	[ ! -d "$dir" ]
}

@test "egress: none lets nothing out but the container's own loopback" {
	set_egress none
	run_probes 'p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 192.0.2.10 80; p tcp 2001:db8::10 80; p sendto 192.0.2.10 53
		p ping 192.0.2.10; p tcp 169.254.169.254 80; p tcp 127.0.0.1 9'
	[ "$status" -eq 0 ]
	expect "tcp 192.0.2.10 80" EPERM
	expect "tcp 2001:db8::10 80" EPERM
	expect "sendto 192.0.2.10 53" EPERM
	expect "ping 192.0.2.10" EPERM
	expect "tcp 169.254.169.254 80" EPERM
	expect "tcp 127.0.0.1 9" ECONNREFUSED
}

@test "egress: an allow entry naming a metadata address exactly admits it; a wider one does not" {
	set_egress public '169.254.0.0/16'
	run_probes 'p() { printf "%s " "$*"; net_probe "$@"; }; p tcp 169.254.169.254 80'
	expect "tcp 169.254.169.254 80" EPERM
	update_config '.annotations["run.brig.egress.allow"] = "169.254.169.254:80"'
	run_probes 'p() { printf "%s " "$*"; net_probe "$@"; }; p tcp 169.254.169.254 80'
	expect "tcp 169.254.169.254 80" ok
}

@test "egress: brig events --stats counts denials per destination" {
	set_egress public
	set_args sh -c 'for i in 1 2 3; do net_probe tcp 169.254.169.254 80; done
		net_probe sendto fd00:ec2::254 53; net_probe tcp 192.0.2.10 80; sleep 60'
	create_container eg-stats
	brig start eg-stats
	local out i
	for i in $(seq 50); do
		out="$(brig events --stats eg-stats)"
		[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 4 ] && break
		sleep 0.1
	done
	echo "$out"
	[ "$(jq '.data.brig.egress.denied[] | select(.destination == "169.254.169.254" and .port == 80 and .protocol == "tcp") | .count' <<<"$out")" = 3 ]
	[ "$(jq '.data.brig.egress.denied[] | select(.destination == "fd00:ec2::254" and .port == 53 and .protocol == "udp") | .count' <<<"$out")" = 1 ]
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out")" = 4 ]
	# the runc fields are still there
	jq -e '.data.memory' <<<"$out"
	brig delete -f eg-stats
}

@test "egress: root in the container cannot detach the programs, even with the cgroup2 mounted" {
	set_egress public
	# the cgroup mount engines give containers (read-only, in its own
	# cgroup namespace): the container's cgroup is its root
	update_config '.mounts += [{"destination": "/cg2", "type": "cgroup2", "source": "cgroup2", "options": ["nosuid", "noexec", "nodev", "ro"]}]'
	run_probes 'net_probe detach /cg2
		p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 169.254.169.254 80'
	[ "$status" -eq 0 ]
	# without an fd of the program the kernel will not detach it; the ids
	# that would give one are not even listed to it
	[[ "$output" == *"detach connect4: EINVAL"* ]]
	[[ "$output" == *"detach egress: EINVAL"* ]]
	[[ "$output" == *"query connect4: EPERM"* ]]
	! grep -E '^(detach|query|getfd|detach-fd) [a-z0-9]+: ok' <<<"$output" || false
	expect "tcp 169.254.169.254 80" EPERM
}

@test "egress: capabilities that could bypass or detach the policy are refused at create" {
	set_egress public
	update_config '.process.capabilities.bounding += ["CAP_NET_RAW"]'
	run brig run eg-raw
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"run.brig.egress"*"CAP_NET_RAW"* ]]
	update_config '.process.capabilities.bounding -= ["CAP_NET_RAW"] | .process.capabilities.bounding += ["CAP_NET_ADMIN"]'
	run brig run eg-admin
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"run.brig.egress"*"CAP_NET_ADMIN"*"user namespace"* ]]
	assert_no_leftovers
}

@test "egress: bad annotations give a named error, exit 1 and leave nothing" {
	local bad
	for bad in \
		'{"run.brig.egress": "open"}' \
		'{"run.brig.egress": "allowlist", "run.brig.egress.allow": "10.0.0.0/33"}' \
		'{"run.brig.egress": "allowlist", "run.brig.egress.allow": "192.0.2.1:0"}' \
		'{"run.brig.egress": "allowlist", "run.brig.egress.allow": "no-such-host.invalid"}' \
		'{"run.brig.egress": "public", "run.brig.egress.deny": "192.0.2.0/24:80"}' \
		'{"run.brig.egress": "none", "run.brig.egress.allow": "192.0.2.1"}' \
		'{"run.brig.egress": "public", "run.brig.egress.alow": "192.0.2.1"}' \
		'{"run.brig.egress.allow": "192.0.2.1"}' \
		'{"run.brig.egress": "public", "run.brig.cgroup.shared": "true"}'; do
		update_config ".annotations = $bad"
		run brig run eg-bad
		echo "$bad -> $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"run.brig.egress"* ]]
		assert_no_leftovers
	done
}

@test "egress: brig features lists the annotations" {
	run brig features
	[ "$status" -eq 0 ]
	jq -e '.annotations["run.brig.egress"]' <<<"$output"
	jq -e '.annotations["run.brig.egress.allow"]' <<<"$output"
	jq -e '.annotations["run.brig.egress.deny"]' <<<"$output"
}

# A DNS responder for the tests below (UDP, one question per datagram):
#   dns.test    A 192.0.2.10, no AAAA
#   hosts.test  A 10.77.0.5, AAAA 2001:db8::10 (/etc/hosts says 192.0.2.10)
#   alias.test  CNAME real.test; real.test AAAA 2001:db8::10; the A answer
#               carries an out-of-chain other.test A 10.77.0.5
#   spoof.test  first an answer with a wrong id (A 10.77.0.5), then the
#               right one (A 192.0.2.10)
#   meta.test   A 169.254.169.254
#   silent.test never answered; anything else NXDOMAIN
# Each question is logged as "name type".
DNS_PY='
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
open(sys.argv[3], "w").close()
A, CNAME, AAAA = 1, 5, 28
def enc(n): return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\0"
def rr(o, t, d): return enc(o) + struct.pack(">HHIH", t, 1, 60, len(d)) + d
v4 = lambda a: socket.inet_pton(socket.AF_INET, a)
v6 = lambda a: socket.inet_pton(socket.AF_INET6, a)
zone = {
    ("dns.test", A): [rr("dns.test", A, v4("192.0.2.10"))],
    ("hosts.test", A): [rr("hosts.test", A, v4("10.77.0.5"))],
    ("hosts.test", AAAA): [rr("hosts.test", AAAA, v6("2001:db8::10"))],
    ("alias.test", A): [rr("alias.test", CNAME, enc("real.test")), rr("other.test", A, v4("10.77.0.5"))],
    ("alias.test", AAAA): [rr("alias.test", CNAME, enc("real.test")), rr("real.test", AAAA, v6("2001:db8::10"))],
    ("spoof.test", A): [rr("spoof.test", A, v4("192.0.2.10"))],
    ("meta.test", A): [rr("meta.test", A, v4("169.254.169.254"))],
}
known = {n for n, _ in zone} | {"real.test"}
while True:
    q, peer = s.recvfrom(1500)
    o, labels = 12, []
    while q[o]:
        labels.append(q[o + 1:o + 1 + q[o]].decode()); o += 1 + q[o]
    name = ".".join(labels).lower()
    qtype = struct.unpack(">H", q[o + 1:o + 3])[0]
    with open(sys.argv[2], "a") as f:
        f.write("%s %d\n" % (name, qtype))
    if name == "silent.test":
        continue
    def reply(i, ans):
        return struct.pack(">HHHHHH", i, 0x8180 | (0 if name in known else 3), 1, len(ans), 0, 0) + q[12:o + 5] + b"".join(ans)
    qid = struct.unpack(">H", q[:2])[0]
    if name == "spoof.test":
        s.sendto(reply(qid ^ 0x5a5a, [rr("spoof.test", A, v4("10.77.0.5"))] if qtype == A else []), peer)
    s.sendto(reply(qid, zone.get((name, qtype), [])), peer)
'

# start_dns: the responder on 10.203.0.1:53 in the outside namespace.
start_dns() {
	DNS_DIR="$(test_tmpdir dns)"
	printf '%s' "$DNS_PY" >"$DNS_DIR/dns.py"
	printf 'nameserver 10.203.0.1\noptions timeout:2 attempts:1\n' >"$DNS_DIR/resolv.conf"
	printf '127.0.0.1 localhost\n192.0.2.10 hosts.test\n' >"$DNS_DIR/hosts"
	: >"$DNS_DIR/queries"
	ip netns exec "$NS_OUT" python3 "$DNS_DIR/dns.py" 10.203.0.1 "$DNS_DIR/queries" \
		"$DNS_DIR/ready" >/dev/null 2>&1 &
	DNS_PID=$!
	local i
	for i in $(seq 50); do
		[ -e "$DNS_DIR/ready" ] && return 0
		sleep 0.1
	done
	echo "DNS responder did not start"
	return 1
}

# in_dns_ns CMD: run CMD (a shell string) in the inside network namespace
# (nsenter keeps the host's /sys and cgroup mounts, which ip netns exec
# would replace) and a private mount namespace whose /etc/hosts and
# /etc/resolv.conf are the test's.
in_dns_ns() {
	unshare -m --propagation private nsenter --net="/var/run/netns/$NS_IN" sh -c \
		"mount --bind '$DNS_DIR/hosts' /etc/hosts &&
		 mount --bind '$DNS_DIR/resolv.conf' /etc/resolv.conf && $1"
}

@test "egress: a hostname only in DNS is pinned and allowed, CNAMEs followed; /etc/hosts wins" {
	start_dns
	set_egress allowlist 'dns.test:80, hosts.test:80, alias.test:80'
	set_args sleep 60
	in_dns_ns "timeout 60 '$RUNTIME' --root '$ROOT' create eg-dns >/dev/null 2>&1 </dev/null"
	run brig state eg-dns
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.brig.egress.pinned["dns.test"]' <<<"$output")" = "192.0.2.10" ]
	[ "$(jq -r '.brig.egress.pinned["alias.test"]' <<<"$output")" = "2001:db8::10" ]
	# /etc/hosts first: its address only, and DNS was not asked
	[ "$(jq -r '.brig.egress.pinned["hosts.test"]' <<<"$output")" = "192.0.2.10" ]
	cat "$DNS_DIR/queries"
	! grep -q '^hosts.test' "$DNS_DIR/queries" || false
	grep -qx 'dns.test 1' "$DNS_DIR/queries"
	grep -qx 'dns.test 28' "$DNS_DIR/queries"
	# the CNAME target was read from the answer, not asked separately
	! grep -qE '^(real|other).test' "$DNS_DIR/queries" || false
	run brig exec eg-dns sh -c 'p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 192.0.2.10 80; p tcp 2001:db8::10 80; p tcp 192.0.2.10 81
		p tcp 10.77.0.5 80; p tcp 169.254.169.254 80'
	echo "$output"
	expect "tcp 192.0.2.10 80" ok
	expect "tcp 2001:db8::10 80" ok
	expect "tcp 192.0.2.10 81" EPERM
	# reachable, but only DNS records brig did not trust named it
	expect "tcp 10.77.0.5 80" EPERM
	expect "tcp 169.254.169.254 80" EPERM
	brig delete -f eg-dns
}

@test "egress: a DNS answer with a wrong id is ignored" {
	start_dns
	set_egress allowlist 'spoof.test:80'
	set_args sleep 60
	in_dns_ns "timeout 60 '$RUNTIME' --root '$ROOT' create eg-spoof >/dev/null 2>&1 </dev/null"
	run brig state eg-spoof
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.brig.egress.pinned["spoof.test"]' <<<"$output")" = "192.0.2.10" ]
	jq -e '.brig.egress.allow | index("10.77.0.5/32:80") | not' <<<"$output"
	brig delete -f eg-spoof
}

@test "egress: NXDOMAIN, a silent nameserver and a metadata answer fail create by name, in time" {
	start_dns
	set_args true
	local name want t0 t1
	for name in nx.test silent.test meta.test; do
		case "$name" in
		nx.test) want='host "nx.test" does not exist (nameserver 10.203.0.1: NXDOMAIN)' ;;
		silent.test) want='host "silent.test": no usable answer from nameserver 10.203.0.1' ;;
		meta.test) want='host "meta.test" resolves through DNS to 169.254.169.254' ;;
		esac
		update_config ".annotations = {\"run.brig.egress\": \"allowlist\", \"run.brig.egress.allow\": \"$name:443\"}"
		t0=$(date +%s%N)
		run in_dns_ns "timeout 60 '$RUNTIME' --root '$ROOT' run eg-fail </dev/null"
		t1=$(date +%s%N)
		echo "$name -> $status: $output ($(((t1 - t0) / 1000000)) ms)"
		[ "$status" -eq 1 ]
		[[ "$output" == *"run.brig.egress.allow: $want"* ]]
		# one server, timeout:2, attempts:1
		[ $(((t1 - t0) / 1000000)) -lt 5000 ]
		assert_no_leftovers
	done
	grep -qx 'silent.test 1' "$DNS_DIR/queries"
}
