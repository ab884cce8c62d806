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
#             outside namespace; brig runs there too with both files
#             bind-mounted in a private mount namespace): pinned,
#             CNAMEs followed inside the answer only, /etc/hosts wins,
#             NXDOMAIN / silence / a metadata answer fail create by name,
#             an answer with a wrong id is ignored
#   none      nothing leaves but loopback
#   no annotation: nothing changes
#   root in the container cannot detach the programs; capabilities that
#   could bypass them are refused at create
#   denials are counted per destination in `brig events --stats`
#   bad annotations: a named error, exit 1, nothing left behind
# Each test builds its own network (egress_helpers.bash): the container
# joins a network namespace the test made, with a veth pair to a second
# "outside" namespace holding 169.254.169.254, 10.77.0.5 (private),
# fd00:ec2::254, 192.0.2.10 and 2001:db8::10 (documentation ranges) on its
# loopback and a TCP listener on port 80. No packet leaves those namespaces.
# Cgroup modes: v2 and hybrid (the programs attach to the cgroup2 directory);
# on a pure v1 host the policy must be refused (tested when the host is v1).

load helpers
load confine_helpers
load egress_helpers

setup() {
	requires root
	setup_bundle
	egress_net_setup
}

teardown() {
	teardown_bundle
	egress_net_teardown
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

@test "egress: allowlist admits only the named CIDR:port and the pinned hostname" {
	set_egress allowlist '192.0.2.10/32:80, api.test:80'
	set_args sh -c 'p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 192.0.2.10 80; p tcp 192.0.2.10 81; p sendto 192.0.2.10 53; p ping 192.0.2.10
		p tcp 2001:db8::10 80; p tcp 2001:db8::10 443; p tcp 169.254.169.254 80
		p tcp 10.77.0.5 80; p tcp 127.0.0.1 9'
	run in_hosts_ns '2001:db8::10 api.test' "timeout 60 '$RUNTIME' --root '$ROOT' run eg-allow"
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
	in_hosts_ns '2001:db8::10 api.test' "timeout 60 '$RUNTIME' --root '$ROOT' create eg-state >/dev/null 2>&1 </dev/null"
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
	jq -e '.annotations["run.brig.egress.host-network"]' <<<"$output"
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
