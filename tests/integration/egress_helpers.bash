# The network of the egress policy tests (sandbox_egress.bats,
# sandbox_egress_bypass.bats): the container joins a network namespace the
# test made ("inside", NS_IN), with a veth pair to a second one ("outside",
# NS_OUT) holding 169.254.169.254, 10.77.0.5 (private), fd00:ec2::254,
# 192.0.2.10 and 2001:db8::10 (documentation ranges) on its loopback and a
# TCP listener on port 80 for every address. No packet leaves those
# namespaces. Load after helpers.bash and confine_helpers.bash.

NET_PROBE="$CONFINE_TOOLS/net_probe"

# egress_net_setup: the two namespaces, the listener, net_probe in the
# rootfs and the config joining the inside namespace.
egress_net_setup() {
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

# egress_net_teardown: what egress_net_setup, start_dns and in_hosts_ns made.
egress_net_teardown() {
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
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


# A DNS responder for the tests below (UDP, one question per datagram):
#   dns.test    A 192.0.2.10, no AAAA
#   hosts.test  A 10.77.0.5, AAAA 2001:db8::10 (/etc/hosts says 192.0.2.10)
#   alias.test  CNAME real.test; real.test AAAA 2001:db8::10; the A answer
#               carries an out-of-chain other.test A 10.77.0.5
#   spoof.test  first an answer with a wrong id (A 10.77.0.5), then the
#               right one (A 192.0.2.10)
#   meta.test   A 169.254.169.254
#   n64meta.test, siitmeta.test, 6to4meta.test, teredometa.test,
#   n64loop.test: AAAA, the metadata endpoint (127.0.0.1 for n64loop) in the
#               NAT64, SIIT, 6to4, Teredo and NAT64 forms
#   local64.test AAAA 64:ff9b:1::c000:20a (local-use NAT64)
#   n64ok.test  AAAA 64:ff9b::c000:20a (192.0.2.10 through NAT64)
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
for n, a in (("n64meta", "64:ff9b::a9fe:a9fe"), ("siitmeta", "::ffff:0:a9fe:a9fe"),
             ("6to4meta", "2002:a9fe:a9fe::1"), ("teredometa", "2001:0:a00:1::5601:5601"),
             ("n64loop", "64:ff9b::7f00:1"), ("local64", "64:ff9b:1::c000:20a"),
             ("n64ok", "64:ff9b::c000:20a")):
    zone[(n + ".test", AAAA)] = [rr(n + ".test", AAAA, v6(a))]
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

# in_dns_ns CMD: run CMD (a shell string) in the outside network namespace,
# where the responder's address is local (nsenter keeps the host's /sys and
# cgroup mounts, which ip netns exec would replace; the container joins the
# inside one, which is then not brig's: an egress policy in brig's own
# network namespace is refused), and a private mount namespace whose
# /etc/hosts and /etc/resolv.conf are the test's.
in_dns_ns() {
	unshare -m --propagation private nsenter --net="/var/run/netns/$NS_OUT" sh -c \
		"mount --bind '$DNS_DIR/hosts' /etc/hosts &&
		 mount --bind '$DNS_DIR/resolv.conf' /etc/resolv.conf && $1"
}
