#!/usr/bin/env bats
# Judge the thing, not its name (issue #22 items 2 and 3, docs/sandbox.md):
#   namespaces  a linux.namespaces path is judged by the namespace it opens,
#               however it is spelt (//, /./, /proc/2, thread-self/../..,
#               a symlink, an `ip netns attach` of the host's), by `brig
#               check` and again by the node policy at create on the very
#               fd the init joins; a path check cannot open is reported as
#               not checked; another container's
#               namespace (a pod's) stays allowed. Proved from inside: on
#               the old brig the container printed the host's network
#               namespace inode and killed a sleep the test started.
#   egress      an allow entry is judged by the ranges it covers, through
#               every translated IPv6 form; the node policy's egress section
#               bounds what a container may allow itself, on the annotation
#               as written (before any name is resolved) and again on the
#               pinned addresses. Proved from inside network namespaces the
#               test makes (a veth pair to an "outside" namespace holding
#               169.254.169.254, 10.77.0.5 and 192.0.2.10 on its loopback,
#               listening on port 80), as sandbox_egress.bats does: on the old
#               brig the container reached the stand-in metadata listener.
# The configs are `brig spec --sandbox` (passes the sandbox profile) and
# `brig spec --hardened` (passes baseline), so the policy refuses only for
# what each test adds. Every policy is a temp file given with --policy.
# Cgroup modes: the egress tests need a cgroup2 directory (v2 or hybrid).

load helpers
load confine_helpers

NET_PROBE="$CONFINE_TOOLS/net_probe"

setup() {
	setup_bundle
	CHK="$(test_tmpdir judge)"
	(cd "$CHK" && "$RUNTIME" spec --sandbox) || return 1
	mkdir "$CHK/f"
}

teardown() {
	[ -n "${SLEEP_PID:-}" ] && kill "$SLEEP_PID" 2>/dev/null
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
	[ -n "${UDP_PID:-}" ] && kill "$UDP_PID" 2>/dev/null
	teardown_bundle
	[ -n "${NS_IN:-}" ] && ip netns del "$NS_IN" 2>/dev/null
	[ -n "${NS_OUT:-}" ] && ip netns del "$NS_OUT" 2>/dev/null
	[ -n "${NS_POD:-}" ] && ip netns del "$NS_POD" 2>/dev/null
	[ -n "${NS_ALIAS:-}" ] && ip netns del "$NS_ALIAS" 2>/dev/null
	[ -n "${CHK:-}" ] && rm -rf "$CHK"
	return 0
}

# check_with JQ [check flags...]: `brig check` (JSON) of the sandbox config
# with JQ applied; $status and $output.
check_with() {
	local filter="$1"
	shift
	jq "$filter" "$CHK/config.json" >"$CHK/f/config.json"
	run brig check --bundle "$CHK/f" --format json "$@"
}

# ns_path TYPE PATH: the jq filter that joins TYPE through PATH.
ns_path() {
	printf '.linux.namespaces |= map(if .type == "%s" then .path = "%s" else . end)' "$1" "$2"
}

# sandbox_bundle ARGS...: the bundle's config becomes `brig spec --sandbox`
# in the test's cgroup, running ARGS.
sandbox_bundle() {
	rm "$BUNDLE/config.json"
	brig spec --sandbox --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\""
	set_args "$@"
}

# make_host_alias: /run/netns/$NS_ALIAS names the host's network namespace
# (`ip netns attach` of the test's shell): a path that looks like a pod's.
make_host_alias() {
	NS_ALIAS="brig-judge-alias-$$-${BATS_TEST_NUMBER}"
	ip netns attach "$NS_ALIAS" $$
}

# make_pod_netns: a network namespace standing for another container's
# (a pod's pause container), in $NS_POD.
make_pod_netns() {
	NS_POD="brig-judge-pod-$$-${BATS_TEST_NUMBER}"
	ip netns add "$NS_POD"
}

HOST_NET="$(readlink /proc/self/ns/net)"

# refused_run ID RAN NEEDLE: `brig --policy $CHK/policy.json run ID` is
# refused naming NEEDLE, leaving nothing, and RAN (what the container
# prints when it runs, as it did on the old brig) is not in its output.
refused_run() {
	run brig --policy "$CHK/policy.json" run "$1"
	echo "$output"
	[[ "$output" != *"$2"* ]]
	[ "$status" -eq 1 ]
	assert_contains "$output" "$3"
	assert_no_leftovers "$1"
}

# Spellings of brig's own (the host's) network namespace that open
# anywhere: each gave 0 findings and joined the host's on the old brig.
HOST_NET_SPELLINGS=(//proc/self/ns/net /proc/./self/ns/net /proc/2/ns/net
	/proc/thread-self/../../ns/net /proc/self/../self/ns/net)

@test "judge: check finds the host's namespaces by what the path opens, however spelt" {
	requires root
	local p t
	ln -s /proc/self/ns/net "$CHK/link-net"
	ln -s /proc/self/ns/pid "$CHK/link-pid"
	make_host_alias
	for p in "${HOST_NET_SPELLINGS[@]}" "$CHK/link-net" "/run/netns/$NS_ALIAS"; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $(rules_of)"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "host-ns-network " ]
		assert_contains "$(jq -r '.findings[0].message' <<<"$output")" "joins the host's network namespace"
		[ "$(jq -r '.findings[0].path' <<<"$output")" = "linux.namespaces[2].path" ]
	done
	# Every type, judged by its own rule.
	for t in "pid /proc/./self/ns/pid host-ns-pid" "ipc //proc/self/ns/ipc host-ns-ipc" \
		"uts /proc/2/ns/uts host-ns-uts" "mount /proc/self/../self/ns/mnt host-ns-mount" \
		"cgroup /proc/thread-self/../../ns/cgroup host-ns-cgroup" \
		"user //proc/self/ns/user no-userns" "pid $CHK/link-pid host-ns-pid"; do
		set -- $t
		check_with "$(ns_path "$1" "$2")" --fail-on info
		echo "$t: $(rules_of)"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "$3 " ]
	done
}

@test "judge: check reports a path it cannot open, or of another type, as not checked" {
	local p
	# Paths that open nowhere (a task 1 of brig's own process; task 1 of
	# brig's task list) or not here (pid 1's, when root may not examine pid
	# 1), and the old spellings of pid 1's: never silently ok.
	for p in /proc/self/task/1/ns/net /proc/thread-self/../1/ns/net /run/netns/brig-judge-none; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $output"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "not-checked " ]
		[ "$(jq -r '.findings[0].severity' <<<"$output")" = high ]
		assert_contains "$(jq -r '.findings[0].message' <<<"$output")" "not checked"
	done
	for p in /proc/1/ns/net /proc/1/task/1/ns/net; do
		check_with "$(ns_path network "$p")" --profile baseline
		echo "$p: $(rules_of)"
		[ "$status" -eq 1 ]
		[[ "$(rules_of)" =~ ^(host-ns-network|not-checked)\ $ ]]
	done
	# As grave as what it may be: a mount namespace is critical.
	check_with "$(ns_path mount /proc/self/task/1/ns/mnt)"
	[ "$(jq -r '.findings[0].rule + " " + .findings[0].severity' <<<"$output")" = "not-checked critical" ]
	# A pid namespace listed as network, a file that is no namespace.
	check_with "$(ns_path network /proc/self/ns/pid)" --profile baseline
	[ "$(rules_of)" = "not-checked " ]
	assert_contains "$output" "is a pid namespace (brig's own, pid:["
	assert_contains "$output" "not network: create refuses it"
	check_with "$(ns_path network /dev/null)" --profile baseline
	[ "$(rules_of)" = "not-checked " ]
	assert_contains "$output" "/dev/null is not a namespace"
}

@test "judge: another container's network namespace stays allowed, also through a symlink" {
	requires root
	make_pod_netns
	ln -s "/var/run/netns/$NS_POD" "$CHK/link-pod"
	for p in "/var/run/netns/$NS_POD" "//run/netns/./$NS_POD" "$CHK/link-pod"; do
		check_with "$(ns_path network "$p")" --fail-on info
		echo "$p: $output"
		[ "$status" -eq 0 ]
		[ -z "$(rules_of)" ]
	done
}

@test "judge: create under a sandbox policy refuses the host's network namespace by any spelling, leaving nothing" {
	requires root
	local p
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	sandbox_bundle sh -c 'echo "inside: $(readlink /proc/self/ns/net)"'
	ln -s /proc/self/ns/net "$CHK/link-net"
	make_host_alias
	for p in "${HOST_NET_SPELLINGS[@]}" "$CHK/link-net" "/run/netns/$NS_ALIAS"; do
		update_config "$(ns_path network "$p")"
		echo "$p:"
		# the old brig ran it: "inside: <the host's net:[...]>"
		refused_run judge-net "inside: $HOST_NET" \
			"host-ns-network at linux.namespaces[2].path: $p joins the host's network namespace"
		assert_contains "$output" "refused by the policy $CHK/policy.json (profile sandbox, fail-on high)"
	done
	# A path of another type is refused whatever the policy.
	update_config "$(ns_path network /proc/self/ns/pid)"
	run brig run judge-net
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "/proc/self/ns/pid is a pid namespace, not network"
	assert_no_leftovers judge-net
	# A pod's namespace runs, in that namespace.
	make_pod_netns
	update_config "$(ns_path network "/var/run/netns/$NS_POD")"
	run brig --policy "$CHK/policy.json" run judge-net
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "inside: $(ip netns exec "$NS_POD" readlink /proc/self/ns/net)" ]
}

@test "judge: the policy judges at create what the path opens then, not what check saw" {
	requires root
	make_pod_netns
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	sandbox_bundle sh -c 'echo "inside: $(readlink /proc/self/ns/net)"'
	ln -s "/var/run/netns/$NS_POD" "$BUNDLE/netns"
	update_config "$(ns_path network "$BUNDLE/netns")"
	run brig --policy "$CHK/policy.json" check --format json
	[ "$status" -eq 0 ]
	[ -z "$(rules_of)" ]
	# The link is swapped between check and create.
	ln -sfn /proc/self/ns/net "$BUNDLE/netns"
	refused_run judge-swap "inside: $HOST_NET" "host-ns-network at linux.namespaces[2].path"
}

@test "judge: create under a baseline policy refuses the host's pid namespace: no host process is signalled" {
	requires root
	local p
	rm "$BUNDLE/config.json"
	brig spec --hardened --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" | .process.terminal = false"
	echo '{"profile":"baseline","failOn":"high"}' >"$CHK/policy.json"
	# the hardened config passes baseline as it is
	run brig --policy "$CHK/policy.json" check --format json
	[ "$status" -eq 0 ]
	sleep 1000 &
	SLEEP_PID=$!
	set_args sh -c "kill $SLEEP_PID && echo killed a host process"
	ln -s /proc/self/ns/pid "$CHK/link-pid"
	for p in /proc/./self/ns/pid //proc/self/ns/pid /proc/thread-self/../../ns/pid "$CHK/link-pid"; do
		update_config "$(ns_path pid "$p")"
		echo "$p:"
		refused_run judge-pid "killed a host process" \
			"host-ns-pid at linux.namespaces[0].path: $p joins the host's pid namespace"
		kill -0 "$SLEEP_PID"
	done
}

# ---- egress allow entries ----

@test "judge: check flags allow entries by the ranges they cover, through translated forms" {
	local c
	# entry -> rule, severity
	for c in "169.254.169.254 egress-allow-metadata critical" \
		"169.254.169.254:80 egress-allow-metadata critical" \
		"169.254.0.0/16 egress-allow-metadata critical" \
		"0.0.0.0/0 egress-allow-metadata critical" \
		"::/0 egress-allow-metadata critical" \
		"::ffff:0:0/96 egress-allow-metadata critical" \
		"::ffff:169.254.169.254 egress-allow-metadata critical" \
		"64:ff9b::a9fe:a9fe egress-allow-metadata critical" \
		"64:ff9b::/96 egress-allow-metadata critical" \
		"64:ff9b:1::a9fe:a9fe egress-allow-metadata critical" \
		"::ffff:0:a9fe:a9fe egress-allow-metadata critical" \
		"2002:a9fe:a9fe::/48 egress-allow-metadata critical" \
		"[fd00:ec2::254]:80 egress-allow-metadata critical" \
		"10.0.0.0/8 egress-allow-private high" \
		"10.1.2.3:5432 egress-allow-private high" \
		"172.20.0.0/16 egress-allow-private high" \
		"192.168.1.1 egress-allow-private high" \
		"100.64.0.1 egress-allow-private high" \
		"169.254.1.1 egress-allow-private high" \
		"[::ffff:10.1.2.3]:443 egress-allow-private high" \
		"64:ff9b::a00:1 egress-allow-private high" \
		"2002:c0a8:101::/48 egress-allow-private high" \
		"fd12::/16 egress-allow-private high" \
		"fe80::1 egress-allow-private high"; do
		set -- $c
		check_with ".annotations[\"run.brig.egress\"] = \"allowlist\" | .annotations[\"run.brig.egress.allow\"] = \"$1\""
		echo "$c: $(jq -c '[.findings[] | .rule, .severity, .message]' <<<"$output")"
		[ "$status" -eq 1 ]
		[ "$(rules_of)" = "$2 " ]
		[ "$(jq -r '.findings[0].severity' <<<"$output")" = "$3" ]
		[ "$(jq -r '.findings[0].path' <<<"$output")" = 'annotations["run.brig.egress.allow"]' ]
	done
	# Both of 0.0.0.0/0,::/0; public and documentation ranges, and the
	# container's own loopback, are no finding.
	check_with '.annotations["run.brig.egress"] = "allowlist" | .annotations["run.brig.egress.allow"] = "0.0.0.0/0,::/0"'
	[ "$(jq '[.findings[] | select(.rule == "egress-allow-metadata")] | length' <<<"$output")" -eq 2 ]
	check_with '.annotations["run.brig.egress"] = "allowlist" | .annotations["run.brig.egress.allow"] = "192.0.2.10:80, 203.0.113.0/24, [2001:db8::10]:443, 127.0.0.1:8080, ::1, 64:ff9b::c000:20a"' --fail-on info
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(rules_of)" ]
	# Without a network namespace of its own, loopback is the host's.
	check_with 'del(.linux.namespaces[] | select(.type == "network")) | .annotations["run.brig.egress"] = "allowlist" | .annotations["run.brig.egress.allow"] = "127.0.0.1:8080"'
	[ "$(rules_of)" = "egress-allow-private host-ns-network " ]
	# A hostname is judged at create, once pinned: not checked here.
	check_with '.annotations["run.brig.egress"] = "allowlist" | .annotations["run.brig.egress.allow"] = "api.example:443"' --fail-on info
	[ "$(rules_of)" = "not-checked " ]
	[ "$(jq -r '.findings[0].severity' <<<"$output")" = medium ]
}

# make_nets: the container's network namespace $NS_IN, with a veth pair to
# $NS_OUT, which holds the stand-in metadata endpoint 169.254.169.254, the
# private 10.77.0.5 and the public 192.0.2.10 on its loopback, a TCP
# listener on port 80 (as sandbox_egress.bats builds them). The bundle
# becomes the sandbox config joined to $NS_IN, running net_probe.
make_nets() {
	requires root
	need_built "$NET_PROBE"
	NS_IN="brig-judge-in-$$-${BATS_TEST_NUMBER}"
	NS_OUT="brig-judge-out-$$-${BATS_TEST_NUMBER}"
	ip netns add "$NS_IN"
	ip netns add "$NS_OUT"
	ip -n "$NS_IN" link add jg0 type veth peer name jg1 netns "$NS_OUT"
	ip -n "$NS_IN" link set lo up
	ip -n "$NS_IN" link set jg0 up
	ip -n "$NS_IN" addr add 10.203.0.2/24 dev jg0
	ip -n "$NS_IN" route add default via 10.203.0.1
	ip -n "$NS_OUT" link set lo up
	ip -n "$NS_OUT" link set jg1 up
	ip -n "$NS_OUT" addr add 10.203.0.1/24 dev jg1
	local a i
	for a in 169.254.169.254/32 10.77.0.5/32 192.0.2.10/32; do
		ip -n "$NS_OUT" addr add "$a" dev lo
	done
	ip netns exec "$NS_OUT" "$NET_PROBE" serve 80 >/dev/null 2>&1 &
	SERVER_PID=$!
	for i in $(seq 50); do
		ip netns exec "$NS_IN" "$NET_PROBE" tcp 192.0.2.10 80 | grep -q ': ok' && break
		sleep 0.1
	done
	sandbox_bundle sh -c 'p() { printf "%s " "$*"; net_probe "$@"; }
		p tcp 169.254.169.254 80; p tcp 10.77.0.5 80; p tcp 192.0.2.10 80'
	cp "$NET_PROBE" "$BUNDLE/rootfs/bin/net_probe"
	update_config "$(ns_path network "/var/run/netns/$NS_IN")"
}

# set_allow MODE ALLOW: the egress annotations.
set_allow() {
	update_config ".annotations[\"run.brig.egress\"] = \"$1\" | .annotations[\"run.brig.egress.allow\"] = \"$2\""
}

@test "judge: create under a sandbox policy refuses allow entries that re-open metadata or private ranges" {
	make_nets
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	local c
	for c in "169.254.169.254 egress-allow-metadata" "169.254.169.254:80 egress-allow-metadata" \
		"10.0.0.0/8 egress-allow-private" "0.0.0.0/0,::/0 egress-allow-metadata" \
		"::ffff:169.254.169.254 egress-allow-metadata" "64:ff9b::a4d:5 egress-allow-private"; do
		set -- $c
		set_allow allowlist "$1"
		echo "$1:"
		# The old brig ran it: "tcp 169.254.169.254 80 tcp: ok" (or 10.77.0.5).
		refused_run judge-eg ": ok" "$2 at annotations[\"run.brig.egress.allow\"]"
	done
	# The same network with a public entry runs: the listeners answer what
	# the policy lets through, and nothing else.
	set_allow allowlist "192.0.2.10:80"
	run brig --policy "$CHK/policy.json" run judge-eg
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tcp 192.0.2.10 80 tcp: ok"
	assert_contains "$output" "tcp 169.254.169.254 80 tcp: EPERM"
	assert_contains "$output" "tcp 10.77.0.5 80 tcp: EPERM"
}

@test "judge: the policy's egress section bounds what a container may allow itself" {
	make_nets
	# The node's operator admits one private service and public addresses.
	echo '{"profile":"sandbox","failOn":"high","egress":{"allow":["public","10.77.0.5:80"]}}' >"$CHK/policy.json"
	set_allow allowlist "10.77.0.5:80, 192.0.2.0/24"
	run brig --policy "$CHK/policy.json" run judge-eg
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tcp 10.77.0.5 80 tcp: ok"
	assert_contains "$output" "tcp 192.0.2.10 80 tcp: ok"
	assert_contains "$output" "tcp 169.254.169.254 80 tcp: EPERM"
	# Wider than what it admits: refused whatever the profile, nothing runs.
	local a
	for a in 10.77.0.5 10.77.0.0/16:80 "[::ffff:10.77.0.5]:443" 169.254.169.254:80 "0.0.0.0/0"; do
		set_allow allowlist "$a"
		echo "$a:"
		refused_run judge-eg ": ok" \
			"critical egress-allow-policy at annotations[\"run.brig.egress.allow\"]: $a is not inside the node policy's egress.allow"
	done
	# A section without "public": the mode public and no egress policy at
	# all reach beyond it, even under the baseline profile.
	echo '{"profile":"baseline","failOn":"critical","egress":{"allow":["10.77.0.5:80"]}}' >"$CHK/policy.json"
	update_config '.annotations = {"run.brig.egress": "public"}'
	refused_run judge-eg ": ok" \
		"egress-allow-policy at annotations[\"run.brig.egress\"]: public reaches every public address"
	update_config 'del(.annotations["run.brig.egress"])'
	refused_run judge-eg ": ok" "egress-allow-policy at annotations[\"run.brig.egress\"]: no egress policy"
	# brig check answers as create does.
	run brig --policy "$CHK/policy.json" check --format json
	[ "$status" -eq 1 ]
	[ "$(rules_of)" = "egress-allow-policy " ]
}

@test "judge: a hostname is judged by the addresses it is pinned to" {
	make_nets
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	set_allow allowlist "private.test:80"
	run in_hosts_ns $'10.77.0.5 private.test\n192.0.2.10 public.test' "timeout 60 '$RUNTIME' --root '$ROOT' --policy '$CHK/policy.json' run judge-eg"
	echo "$output"
	# the old brig: "tcp 10.77.0.5 80 tcp: ok"
	[[ "$output" != *": ok"* ]]
	[ "$status" -eq 1 ]
	assert_contains "$output" "egress-allow-private at annotations[\"run.brig.egress.allow\"]: host \"private.test\" (pinned to 10.77.0.5) covers 10.0.0.0/8 (private)"
	assert_no_leftovers judge-eg
	# A name pinned to a public address runs; under a section admitting
	# 10.77.0.5:80 the private one does too.
	set_allow allowlist "public.test:80"
	run in_hosts_ns $'10.77.0.5 private.test\n192.0.2.10 public.test' "timeout 60 '$RUNTIME' --root '$ROOT' --policy '$CHK/policy.json' run judge-eg"
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tcp 192.0.2.10 80 tcp: ok"
	assert_contains "$output" "tcp 10.77.0.5 80 tcp: EPERM"
	echo '{"profile":"sandbox","failOn":"high","egress":{"allow":["10.77.0.5:80"]}}' >"$CHK/policy.json"
	set_allow allowlist "private.test:80"
	run in_hosts_ns $'10.77.0.5 private.test\n192.0.2.10 public.test' "timeout 60 '$RUNTIME' --root '$ROOT' --policy '$CHK/policy.json' run judge-eg"
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "tcp 10.77.0.5 80 tcp: ok"
	assert_contains "$output" "tcp 192.0.2.10 80 tcp: EPERM"
	set_allow allowlist "public.test:80"
	run in_hosts_ns $'10.77.0.5 private.test\n192.0.2.10 public.test' "timeout 60 '$RUNTIME' --root '$ROOT' --policy '$CHK/policy.json' run judge-eg"
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "host \"public.test\" (pinned to 192.0.2.10) is not inside the node policy's egress.allow"
	assert_no_leftovers judge-eg
}

@test "judge: a config refused as written sends no DNS query" {
	make_nets
	requires program:python3
	# Any datagram to the nameserver is logged. brig runs in the outside
	# namespace, where 10.203.0.1 is its own address (in the container's it
	# would be the namespace brig runs in, the host's to the policy).
	ip netns exec "$NS_OUT" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.203.0.1", 53))
open(sys.argv[1], "w").close()
while True:
    q = s.recv(1500)
    open(sys.argv[2], "a").write("query\n")
' "$CHK/ready" "$CHK/queries" >/dev/null 2>&1 &
	UDP_PID=$!
	for _ in $(seq 50); do [ -e "$CHK/ready" ] && break; sleep 0.1; done
	printf 'nameserver 10.203.0.1\noptions timeout:1 attempts:1\n' >"$CHK/resolv.conf"
	printf '127.0.0.1 localhost\n' >"$CHK/hosts"
	echo '{"profile":"sandbox","failOn":"high"}' >"$CHK/policy.json"
	set_allow allowlist "10.0.0.0/8, dns.test:80"
	run_outside
	[ "$status" -eq 1 ]
	assert_contains "$output" "egress-allow-private"
	[ ! -s "$CHK/queries" ]
	# the same without the private entry asks (and fails: no answer)
	set_allow allowlist "dns.test:80"
	run_outside
	[ "$status" -eq 1 ]
	[ -s "$CHK/queries" ]
	assert_no_leftovers judge-eg
}

# run_outside: `brig --policy run judge-eg` in the outside namespace, with
# the test's /etc/hosts and /etc/resolv.conf in a mount namespace of its own.
run_outside() {
	run unshare -m --propagation private nsenter --net="/var/run/netns/$NS_OUT" sh -c \
		"mount --bind '$CHK/hosts' /etc/hosts && mount --bind '$CHK/resolv.conf' /etc/resolv.conf &&
		 timeout 60 '$RUNTIME' --root '$ROOT' --policy '$CHK/policy.json' run judge-eg"
	echo "$output"
}

@test "judge: a malformed egress section refuses every create (fail closed)" {
	requires root
	set_args true
	local bad
	for bad in '{"profile":"baseline","egress":{"allow":"public"}}' \
		'{"profile":"baseline","egress":{"alow":["public"]}}' \
		'{"profile":"baseline","egress":{}}' \
		'{"profile":"baseline","egress":{"allow":["api.example:443"]}}' \
		'{"profile":"baseline","egress":{"allow":["10.0.0.0/33"]}}' \
		'{"profile":"baseline","egress":["public"]}'; do
		printf '%s' "$bad" >"$CHK/policy.json"
		run brig --policy "$CHK/policy.json" run judge-bad
		echo "$bad: $output"
		[ "$status" -eq 1 ]
		assert_contains "$output" "policy $CHK/policy.json: egress"
		assert_no_leftovers judge-bad
	done
}
