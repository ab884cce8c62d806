#!/usr/bin/env bats
# Attacks on the fast paths of session 6 (issue #15's cold-start cuts and
# issue #13's reset): each test reproduces an attack that worked on the brig
# before its fix (docs/security.md, "Escape classes"), from inside the
# container or from the host side. Any cgroup mode unless a test says.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	teardown_bundle
	return 0
}

# proc_fds PID: every fd of PID as "N target", one per line (host side).
proc_fds() {
	local f l
	for f in /proc/"$1"/fd/*; do
		l="$(readlink "$f" 2>/dev/null)" && echo "${f##*/} $l"
	done
	return 0
}

# The fds of process PID that name a file under DIR (host side).
fds_under() {
	proc_fds "$1" | awk -v d="$2/" 'index($2, d) == 1'
}

# Since the ownership record's fd stayed open in create for its init line
# (issue #15), the init was cloned holding it: pid 1 of a created container
# kept ROOT/ID/made open for writing until execve. A process of the
# container with CAP_SYS_PTRACE (a debugging container, a pod's sidecar in
# the same pid namespace) reopened /proc/1/fd/N and rewrote the record,
# which tells `delete` which cgroup directories to remove and whose
# processes to kill or spare.
@test "waiting init: holds no fd of the state directory (the ownership record)" {
	local caps='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SYS_PTRACE"]'
	update_config ".process.capabilities.bounding = $caps | .process.capabilities.effective = $caps | .process.capabilities.permitted = $caps"
	create_container wi
	wait_for_status wi created
	local pid before
	pid="$(brig state wi | jq -r .pid)"
	run fds_under "$pid" "$ROOT"
	echo "init fds under the state root: $output"
	[ -z "$output" ]
	# from inside: every regular file pid 1 holds, appended to
	before="$(cat "$ROOT/wi/made")"
	run brig exec wi sh -c 'for f in /proc/1/fd/*; do [ -f "$f" ] || continue; case "$(readlink "$f")" in */made) echo "foreign 1 1" >>"$f" && echo WROTE;; esac; done; true'
	echo "$output"
	[[ "$output" != *WROTE* ]]
	[ "$(cat "$ROOT/wi/made")" = "$before" ]
	brig delete -f wi
	assert_no_leftovers wi
}

# Since reset enters the pinned network namespace around the new init's
# clone (issue #13), the fd brig kept to return to its own namespace, the
# host's, was inherited by the new init (with the pinned namespace's fd,
# opened from ROOT/ID/netns, and the host's /dev/null): pid 1 of the reset
# container held a handle on the host's network namespace until start. A
# process of the container with CAP_SYS_PTRACE took it with pidfd_getfd;
# a process of the container with CAP_SYS_ADMIN (an `exec --cap`, handed
# the fd over a socket) could have joined the host's network with it.
@test "reset: the new init holds no fd of brig's network namespace nor of the state directory" {
	need_built "$CONFINE_TOOLS/fd_thief"
	cp "$CONFINE_TOOLS/fd_thief" "$BUNDLE/rootfs/bin/fd_thief"
	local caps='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SYS_PTRACE"]'
	update_config ".process.capabilities.bounding = $caps | .process.capabilities.effective = $caps | .process.capabilities.permitted = $caps
		| .annotations[\"run.brig.rootfs.ephemeral\"] = \"true\""
	local hostns pid netns
	hostns="$(readlink /proc/self/ns/net)"
	create_container r1
	wait_for_status r1 created
	run brig reset r1 </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(brig state r1 | jq -r .status)" = created ]
	pid="$(brig state r1 | jq -r .pid)"
	netns="$(readlink /proc/$pid/ns/net)"
	# the namespace was kept (else there is nothing to attack)
	[ -e "$ROOT/r1/netns" ]
	[ "$netns" != "$hostns" ]
	run fds_under "$pid" "$ROOT"
	echo "init fds under the state root: $output"
	[ -z "$output" ]
	run sh -c "ls -l /proc/$pid/fd | grep -F 'net:['"
	echo "init namespace fds: $output"
	[ -z "$output" ]
	# from inside: every fd of pid 1, taken
	run brig exec r1 fd_thief 1 </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *done* ]]
	[[ "$output" != *"$hostns"* ]]
	[[ "$output" != *"$ROOT"* ]]
	brig delete -f r1
	assert_no_leftovers r1
}

# exec's second child (C2) is forked from brig exec and enters the
# container's pid namespace holding brig's fds until its execve, among
# them the container's state directory (ROOT/ID, a directory of the host).
# A process with CAP_SYS_PTRACE in that pid namespace took it with
# pidfd_getfd and walked up from it to the host's root. The window is as
# long as C2 waits: here a paused container (exec --ignore-paused, C2
# frozen before execve) reached by a container sharing its pid namespace,
# as a pod's are; a spinning thief in the container itself races every
# exec (an engine's exec health check) the same way.
@test "exec: the process entering the container holds no fd of the state directory" {
	need_built "$CONFINE_TOOLS/fd_thief"
	cp "$CONFINE_TOOLS/fd_thief" "$BUNDLE/rootfs/bin/fd_thief"
	local apid c2 inner p
	set_cgroup_path a
	run_detached a
	apid="$(brig state a | jq -r .pid)"
	# b: in a's pid namespace, with CAP_SYS_PTRACE
	local caps='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SYS_PTRACE"]'
	set_cgroup_path b
	update_config ".process.capabilities.bounding = $caps | .process.capabilities.effective = $caps | .process.capabilities.permitted = $caps
		| .linux.namespaces = [.linux.namespaces[] | if .type == \"pid\" then .path = \"/proc/$apid/ns/pid\" else . end]"
	run_detached b
	brig pause a
	# C2 frozen before its execve
	(brig exec --ignore-paused a sleep 5 </dev/null >/dev/null 2>&1 &)
	c2=""
	for _ in $(seq 100); do
		for p in $(test_pids); do
			grep -q -- "$CGROUP_NAME-a\$" "/proc/$p/cgroup" 2>/dev/null || continue
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = brig ] && c2="$p"
		done
		[ -n "$c2" ] && break
		sleep 0.05
	done
	[ -n "$c2" ]
	run fds_under "$c2" "$ROOT"
	echo "exec's process: fds under the state root: $output"
	[ -z "$output" ]
	inner="$(awk '/^NSpid:/ { print $NF }' "/proc/$c2/status")"
	run brig exec b fd_thief "$inner" </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *done* ]]
	[[ "$output" != *"$ROOT"* ]]
	# no directory of the host to walk from
	[[ "$output" != *"walk "* ]]
	brig resume a
	brig delete -f b
	brig delete -f a
	assert_no_leftovers
}

# A create killed between its record (every directory claimed, "marked")
# and mkdir's EEXIST leaves a record that may name another container's
# cgroup (same cgroupsPath); its delete must kill and remove nothing there
# (issue #15's sticky mark). It killed nothing, but removed the other
# container's empty child cgroups on its way to the busy leaf: a
# container's own sub-cgroups (systemd's, or a tenant's with a writable
# cgroupfs) vanished under it.
@test "cgroups: a killed create's record naming another container's cgroup removes none of its child cgroups" {
	requires brig
	create_container a
	local pid dirs d
	pid="$(brig state a | jq -r .pid)"
	dirs="$(grep '^made ' "$ROOT/a/made" | cut -d' ' -f2)"
	[ -n "$dirs" ]
	# a's own sub-cgroups, empty for now
	for d in $dirs; do mkdir "$d/sub"; done
	write_killed_record k $dirs
	brig delete -f k
	[ ! -e "$ROOT/k" ]
	process_alive "$pid"
	for d in $dirs; do
		[ -d "$d/sub" ] || { echo "$d/sub removed" >&2; false; }
	done
	brig delete -f a
	for d in $dirs; do [ ! -d "$d" ]; done
}

# reset reuses a pinned network namespace when nothing of the tenant is
# left in it (sockets, TIME_WAIT, TCP metrics, flow labels). Its traffic
# counters were left: loopback's packets and bytes (/proc/net/dev, sysfs)
# and the SNMP counters (/proc/net/snmp, netstat, snmp6), which no one can
# reset and every process of the namespace reads. A tenant without any
# capability wrote a number of its choice there (here 7 refused
# connections to 127.0.0.1: 14 packets on lo, Tcp AttemptFails 7) and the
# next tenant read it. A namespace whose counters moved is not reused.
@test "reset: a tenant's traffic counters do not reach the next tenant" {
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"'
	local ns1 ns2
	create_container c1
	brig start c1
	ns1="$(readlink /proc/$(brig state c1 | jq -r .pid)/ns/net)"
	brig exec c1 sh -c 'for i in 1 2 3 4 5 6 7; do nc 127.0.0.1 1 </dev/null; done; true' </dev/null >/dev/null 2>&1
	run brig exec c1 sh -c "awk '/lo:/ { print \$3 }' /proc/net/dev" </dev/null
	echo "tenant 1: lo rx packets $output"
	[ "$output" -ge 14 ]
	run brig reset c1 </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	ns2="$(readlink /proc/$(brig state c1 | jq -r .pid)/ns/net)"
	echo "namespace $ns1 -> $ns2"
	brig start c1
	# what the next tenant reads, before it sends anything
	run brig exec c1 sh -c "awk '/lo:/ { print \$3, \$11 }' /proc/net/dev; cat /sys/class/net/lo/statistics/rx_packets; awk '/^Tcp:/ { print \$8 }' /proc/net/snmp | tail -1" </dev/null
	echo "tenant 2: $output"
	[ "$(echo "$output" | head -1)" = "0 0" ]
	[ "$(echo "$output" | sed -n 2p)" = 0 ]
	[ "$(echo "$output" | sed -n 3p)" = 0 ]
	[ "$ns2" != "$ns1" ]
	# a tenant that sent nothing leaves a namespace that is reused
	local ns3
	run brig reset c1 </dev/null
	[ "$status" -eq 0 ]
	ns3="$(readlink /proc/$(brig state c1 | jq -r .pid)/ns/net)"
	[ "$ns3" = "$ns2" ]
	brig delete -f c1
	assert_no_leftovers c1
}

# waiting_init_fds PID: the fds of PID past stdio, one "N -> target" per line,
# that are not sockets. Between clone and execve the init is brig's code
# holding whatever brig held: every such fd is one more host object a
# process of the container with CAP_SYS_PTRACE can take with pidfd_getfd.
# Brig's own are sockets (the exec socket and the sync socket to create).
waiting_init_fds() {
	proc_fds "$1" | awk '$1 > 2 && $2 !~ /^socket:/'
}

# The leaks above were found one by one (the record, namespace fds,
# /dev/null, the state directory); this holds the whole class for the
# waiting init: whatever the config adds (an egress policy's programs, a
# NOTIFY_SOCKET relay, an ephemeral layer, a reset), pid 1 of a created
# container holds nothing past stdio but sockets.
@test "waiting init: holds no fd past stdio but brig's sockets, whatever the config adds" {
	local pid variant lp="" i variants="plain egress ephemeral notify reset"
	# (the NOTIFY_SOCKET listener is python3, as in dropin_notify.bats)
	[ -x /usr/bin/python3 ] || variants="plain egress ephemeral reset"
	cp "$BUNDLE/config.json" "$BUNDLE/config.orig"
	for variant in $variants; do
		cp "$BUNDLE/config.orig" "$BUNDLE/config.json"
		case "$variant" in
		egress) update_config '.annotations["run.brig.egress"] = "none"' ;;
		ephemeral | reset) update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"' ;;
		esac
		if [ "$variant" = notify ]; then
			rm -f "$BUNDLE/notify.sock"
			/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM); s.bind(sys.argv[1]); time.sleep(60)' "$BUNDLE/notify.sock" &
			lp=$!
			for i in $(seq 100); do [ -S "$BUNDLE/notify.sock" ] && break; sleep 0.05; done
			NOTIFY_SOCKET="$BUNDLE/notify.sock" brig create --bundle "$BUNDLE" w-$variant </dev/null >/dev/null 2>"$BUNDLE/err" ||
				{ cat "$BUNDLE/err"; kill "$lp"; false; }
		else
			create_container w-$variant
		fi
		wait_for_status w-$variant created
		if [ "$variant" = reset ]; then
			run brig reset w-$variant </dev/null
			[ "$status" -eq 0 ] || { echo "$output"; brig delete -f w-$variant; false; }
		fi
		pid="$(brig state w-$variant | jq -r .pid)"
		run waiting_init_fds "$pid"
		echo "$variant: $(ls -l /proc/$pid/fd | tail -n +2 | awk '{print $9, $10, $11}' | tr '\n' ';')"
		brig delete -f w-$variant
		[ -z "$lp" ] || { kill "$lp" 2>/dev/null; lp=""; }
		[ -z "$output" ] || { echo "$variant: the waiting init holds: $output"; false; }
		assert_no_leftovers w-$variant
	done
}
