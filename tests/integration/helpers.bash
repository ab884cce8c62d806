# Shared setup for brig's bats tests. Every test gets a private state root
# (--root) and bundle; containers go under the test-only cgroup parent
# "brig-test"; teardown deletes whatever the test left, also on failure.
#
# Environment:
#   BRIG     the brig binary (default: the build tree's runtime/brig)
#   RUNTIME  the runtime under test (default $BRIG); RUNTIME=/usr/sbin/runc runs
#            the same tests against runc, the reference behaviour.
#   BRIG_CMD_TIMEOUT  seconds before one runtime command is killed (120)
#
# Containers that outlive a command must not hold the test's stdout (bats
# would wait for them): start them with create_container / run_detached.
# Negations: bash's `set -e` ignores `! cmd`, so in a test write
# `! cmd || false` (or `run cmd` and check $status).

HELPERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$HELPERS_DIR/../.." && pwd)}"
BRIG="${BRIG:-${BUILDDIR:-$SRCDIR}/runtime/brig}"
RUNTIME="${RUNTIME:-$BRIG}"
TEST_CGROUP_PARENT="brig-test"
# The busybox rootfs is built once per bats run and copied per bundle.
ROOTFS_CACHE="${BRIG_ROOTFS_CACHE:-${BATS_RUN_TMPDIR:-/tmp}/brig-rootfs}"

# Seconds one runtime command may take before it is killed, so that a hung
# command fails its test instead of blocking the whole suite.
BRIG_CMD_TIMEOUT="${BRIG_CMD_TIMEOUT:-120}"
# Set by setup_bundle, never taken from the environment: teardown deletes
# every container under $ROOT and removes it (packaging tools export ROOT).
unset ROOT BUNDLE CGROUP_NAME CG_PARENTS_BEFORE

# brig [args...]: run the runtime under test with the test's private --root
# (inside the network namespace at $BRIG_NETNS when a test sets it).
brig() {
	${BRIG_NETNS:+nsenter "--net=$BRIG_NETNS" --} \
		timeout -k 5 "$BRIG_CMD_TIMEOUT" "$RUNTIME" --root "$ROOT" "$@"
}

# Build the busybox rootfs template from Debian's busybox-static.
build_rootfs_template() {
	[ -x "$ROOTFS_CACHE/bin/busybox" ] && return 0
	local bb=/bin/busybox tmp
	[ -x "$bb" ] || { echo "busybox-static is not installed" >&2; return 1; }
	file -L "$bb" 2>/dev/null | grep -q 'dynamically linked' &&
		{ echo "$bb is not static (install busybox-static)" >&2; return 1; }
	tmp="$(mktemp -d "${ROOTFS_CACHE}.XXXXXX")"
	mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,home,run,var/tmp}
	chmod 1777 "$tmp/tmp" "$tmp/var/tmp"
	chmod 0755 "$tmp"
	cp "$bb" "$tmp/bin/busybox"
	local applet
	for applet in $("$bb" --list); do
		[ "$applet" = busybox ] && continue
		ln -sf busybox "$tmp/bin/$applet"
	done
	cat >"$tmp/etc/passwd" <<-'P'
		root:x:0:0:root:/root:/bin/sh
		daemon:x:1:1:daemon:/usr/sbin:/bin/false
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
		guest:x:1000:1000:guest:/home:/bin/sh
	P
	cat >"$tmp/etc/group" <<-'G'
		root:x:0:
		daemon:x:1:
		audio:x:29:guest
		nogroup:x:65534:
		guest:x:1000:
	G
	echo "127.0.0.1 localhost" >"$tmp/etc/hosts"
	mv -T "$tmp" "$ROOTFS_CACHE" 2>/dev/null || rm -rf "$tmp"
}

# Write a default config.json like `runc spec` (but not read-only and without
# a terminal) into $1, with cgroupsPath under the test cgroup parent.
write_default_config() {
	local dir="$1" name="$2"
	cat >"$dir/config.json" <<-EOF
	{
	  "ociVersion": "1.3.0",
	  "process": {
	    "terminal": false,
	    "user": { "uid": 0, "gid": 0 },
	    "args": [ "sh" ],
	    "env": [ "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm" ],
	    "cwd": "/",
	    "capabilities": {
	      "bounding": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
	      "effective": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
	      "permitted": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ]
	    },
	    "rlimits": [ { "type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024 } ],
	    "noNewPrivileges": true
	  },
	  "root": { "path": "rootfs", "readonly": false },
	  "hostname": "brig",
	  "mounts": [
	    { "destination": "/proc", "type": "proc", "source": "proc" },
	    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
	      "options": [ "nosuid", "strictatime", "mode=755", "size=65536k" ] },
	    { "destination": "/dev/pts", "type": "devpts", "source": "devpts",
	      "options": [ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5" ] },
	    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
	      "options": [ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" ] },
	    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
	      "options": [ "nosuid", "noexec", "nodev" ] },
	    { "destination": "/sys", "type": "sysfs", "source": "sysfs",
	      "options": [ "nosuid", "noexec", "nodev", "ro" ] }
	  ],
	  "linux": {
	    "cgroupsPath": "/$TEST_CGROUP_PARENT/$name",
	    "namespaces": [
	      { "type": "pid" }, { "type": "network" }, { "type": "ipc" },
	      { "type": "uts" }, { "type": "mount" }, { "type": "cgroup" }
	    ],
	    "maskedPaths": [ "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
	      "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
	      "/proc/sched_debug", "/sys/firmware", "/proc/scsi" ],
	    "readonlyPaths": [ "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
	      "/proc/sysrq-trigger" ]
	  }
	}
	EOF
}

# test_tmpdir KIND: a new /tmp/brig-test-KIND.* directory. BRIG_TEST_TAG
# (set by tests/run-tests.sh) marks what this run made, so the runner can
# remove it when a killed bats never ran its teardown.
# Inside a test (BATS_TEST_TMPDIR) the directory is also noted, and
# teardown_bundle removes it, also when the test failed before its own rm.
test_tmpdir() {
	local d
	d="$(mktemp -d "/tmp/brig-test-$1.${BRIG_TEST_TAG:+$BRIG_TEST_TAG-}XXXXXX")" || return 1
	[ -z "${BATS_TEST_TMPDIR:-}" ] || echo "$d" >>"$BATS_TEST_TMPDIR/brig-tmpdirs"
	echo "$d"
}

# remove_test_tmpdirs: what test_tmpdir made in this test (never crossing
# into a file system mounted below one).
remove_test_tmpdirs() {
	local d
	[ -n "${BATS_TEST_TMPDIR:-}" ] && [ -f "$BATS_TEST_TMPDIR/brig-tmpdirs" ] || return 0
	while read -r d; do
		case "$d" in /tmp/brig-test-*) rm -rf --one-file-system "$d" 2>/dev/null || true ;; esac
	done <"$BATS_TEST_TMPDIR/brig-tmpdirs"
	rm -f "$BATS_TEST_TMPDIR/brig-tmpdirs"
}

# setup_bundle: create $ROOT (state; kept when the test's setup made one)
# and $BUNDLE (config.json + rootfs).
# The bundle's containers go to the cgroup /brig-test/$CGROUP_NAME (see
# set_cgroup_path to give several containers of one bundle their own).
setup_bundle() {
	build_rootfs_template
	[ -n "${ROOT:-}" ] && [ -d "$ROOT" ] || ROOT="$(test_tmpdir root)"
	CG_PARENTS_BEFORE=" $(test_cgroup_parents | tr '\n' ' ') "
	BUNDLE="$(test_tmpdir bundle)"
	CGROUP_NAME="$(basename "$BUNDLE")"
	chmod 0755 "$BUNDLE"
	cp -a "$ROOTFS_CACHE" "$BUNDLE/rootfs"
	write_default_config "$BUNDLE" "$CGROUP_NAME"
	export ROOT BUNDLE CGROUP_NAME
	# Like runc, brig defaults --bundle to the current directory.
	cd "$BUNDLE" || return 1
}

# update_config JQ_FILTER [BUNDLE]: edit config.json in place with jq.
update_config() {
	local dir="${2:-$BUNDLE}" tmp
	tmp="$(mktemp "$dir/config.json.XXXXXX")"
	jq "$1" "$dir/config.json" >"$tmp" && mv "$tmp" "$dir/config.json"
}

# set_cgroup_path ID [BUNDLE]: point the bundle's cgroupsPath at a cgroup of
# its own for container ID (teardown removes it), for tests that run several
# containers of one bundle at the same time.
set_cgroup_path() {
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME-$1\"" "${2:-}"
}

# test_cgroup_dirs: the cgroup directories of this test's containers, in every
# hierarchy (v1 controllers, the unified mount, or a pure v2 root).
test_cgroup_dirs() {
	local d
	[ -n "${CGROUP_NAME:-}" ] || return 0
	for d in /sys/fs/cgroup/*/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME" \
		/sys/fs/cgroup/*/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-* \
		/sys/fs/cgroup/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME" \
		/sys/fs/cgroup/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-*; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# test_cgroup_parents: the shared parent brig-test in every hierarchy.
test_cgroup_parents() {
	ls -d /sys/fs/cgroup/*/"$TEST_CGROUP_PARENT" /sys/fs/cgroup/"$TEST_CGROUP_PARENT" 2>/dev/null
	return 0
}

# remove_test_cgroups: remove this test's cgroups (depth first), then the
# shared parent where this test made it (setup_bundle noted which were
# there) and no other test file still has a cgroup in it (rmdir refuses).
remove_test_cgroups() {
	local d
	for d in $(test_cgroup_dirs); do
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	[ -n "${CG_PARENTS_BEFORE+set}" ] || return 0
	for d in $(test_cgroup_parents); do
		[[ "$CG_PARENTS_BEFORE" == *" $d "* ]] || rmdir "$d" 2>/dev/null || true
	done
}

# socket_activated LISTEN_PID ARGS...: the runtime with ARGS, as systemd
# starts a socket-activated service: LISTEN_FDS=1 and LISTEN_PID set to the
# runtime's own pid ("self") or to the pid given. No timeout wrapper: the
# runtime must be the process the shell execs, to have that pid.
socket_activated() {
	local pid="$1"
	shift
	sh -c 'if [ "$1" = self ]; then LISTEN_PID=$$; else LISTEN_PID=$1; fi
		export LISTEN_FDS=1 LISTEN_PID; shift; exec "$@"' sh "$pid" "$RUNTIME" --root "$ROOT" "$@"
}

# note_unified_root / restore_unified_root: hugetlb in a hybrid host's
# cgroup2 subtree_control (the root's, and the test parent's) that was not
# there when noted and is still there once the test's containers and
# cgroups are gone: the runtime under test left it (brig before issue #26
# did). Taken back, saying so, where no child cgroup has a hugetlb limit set
# (someone's in use); the kernel refuses while a child cgroup hands it on
# (EBUSY: someone else's). Tests never change it themselves.
note_unified_root() {
	local u=/sys/fs/cgroup/unified
	UNIFIED_ROOT_CTL="$(cat "$u/cgroup.subtree_control" 2>/dev/null || echo none)"
	UNIFIED_PARENT_CTL="$(cat "$u/$TEST_CGROUP_PARENT/cgroup.subtree_control" 2>/dev/null || true)"
}
restore_unified_root() {
	local u=/sys/fs/cgroup/unified
	[ -n "${UNIFIED_ROOT_CTL:-}" ] && [ "$UNIFIED_ROOT_CTL" != none ] || return 0
	restore_unified_dir "$u/$TEST_CGROUP_PARENT" "${UNIFIED_PARENT_CTL:-}"
	restore_unified_dir "$u" "$UNIFIED_ROOT_CTL"
}
restore_unified_dir() {
	local d="$1" f v
	[ -f "$d/cgroup.subtree_control" ] && grep -qw hugetlb "$d/cgroup.subtree_control" &&
		! grep -qw hugetlb <<<"$2" || return 0
	for f in "$d"/*/hugetlb.*.max; do
		[ -f "$f" ] || continue
		v="$(cat "$f")"
		[ "$v" = max ] || [ "$v" -ge 9223372036854771712 ] 2>/dev/null || return 0
	done
	echo "# restoring $d/cgroup.subtree_control (hugetlb was left enabled)" >&3
	echo -hugetlb >"$d/cgroup.subtree_control" 2>/dev/null || true
}

# cgroup_frozen: a cgroup of this test's containers is frozen (the v1
# freezer's freezer.state, or cgroup.freeze of a v2 cgroup).
cgroup_frozen() {
	local d
	for d in $(test_cgroup_dirs); do
		grep -qx FROZEN "$d/freezer.state" 2>/dev/null && return 0
		grep -qx 1 "$d/cgroup.freeze" 2>/dev/null && return 0
	done
	return 1
}

# process_alive PID: the process exists and is not a zombie (kill -0 also
# succeeds on zombies, and this host's PID 1 reaps orphans lazily).
process_alive() {
	local st
	st="$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat" 2>/dev/null)" || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# test_pids: pids of live processes in this test's cgroups (any hierarchy).
# Zombies are left out: they hold nothing, and a container init reparented to
# a PID 1 that reaps lazily may stay a zombie for a while.
test_pids() {
	local f pid st
	[ -n "${CGROUP_NAME:-}" ] || return 0
	grep -l -E ":/$TEST_CGROUP_PARENT/$CGROUP_NAME(-[^/]*)?(/|\$)" /proc/[0-9]*/cgroup 2>/dev/null |
		while read -r f; do
			pid="${f#/proc/}" pid="${pid%/cgroup}"
			process_alive "$pid" && echo "$pid"
		done
	return 0
}

# teardown_bundle: delete every container the test left, then its files.
teardown_bundle() {
	local id pid
	if [ -n "${ROOT:-}" ] && [ -d "$ROOT" ]; then
		for id in $("$RUNTIME" --root "$ROOT" list -q 2>/dev/null); do
			"$RUNTIME" --root "$ROOT" kill "$id" KILL >/dev/null 2>&1 || true
			"$RUNTIME" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 || true
		done
	fi
	# A container the runtime lost track of: kill what is still in our
	# cgroups (only ours, by pid) so the cgroups can be removed.
	for pid in $(test_pids); do
		kill -KILL "$pid" 2>/dev/null || true
	done
	[ -n "$(test_pids)" ] && sleep 0.2
	[ -n "${ROOT:-}" ] && rm -rf "$ROOT"
	cd /
	[ -n "${BUNDLE:-}" ] && rm -rf "$BUNDLE"
	remove_test_cgroups
	remove_test_tmpdirs
	return 0
}

# wait_for_status ID STATUS [TRIES]: poll `state` until status matches
# (every 50ms, 100 tries by default).
wait_for_status() {
	local id="$1" want="$2" tries="${3:-100}" got
	while [ "$tries" -gt 0 ]; do
		got="$(brig state "$id" 2>/dev/null | jq -r .status)"
		[ "$got" = "$want" ] && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	echo "container $id: status '$got', wanted '$want'" >&2
	return 1
}

# is_brig: true when the runtime under test is brig (not runc).
is_brig() {
	[ "$(basename "$RUNTIME")" = brig ]
}

# need_built FILE: FILE (a test tool or the man page, which make builds
# with brig) is there; a missing one fails the test, never skips it.
need_built() {
	[ -e "$1" ] && return 0
	echo "$1 is not built (run make in the build tree)" >&2
	return 1
}

# requires CHECK...: skip with a reason unless every check holds.
#   root, cgroup_v1, cgroup_v2, runc, brig (runtime under test is brig),
#   program:NAME (on the host). Each reason is one of tests/skips.allowed:
#   a host limit, never a feature of brig (a test for a command brig lacks
#   fails; brig's commands are known when it is built).
requires() {
	local c
	for c in "$@"; do
		case "$c" in
		root) [ "$(id -u)" -eq 0 ] || skip "test requires root" ;;
		cgroup_v1) [ -d /sys/fs/cgroup/memory ] || skip "test requires cgroup v1 controllers" ;;
		cgroup_v2) [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "test requires a pure cgroup v2 host" ;;
		runc) [ -x /usr/sbin/runc ] || skip "test requires runc (Debian package) as reference" ;;
		brig) is_brig || skip "brig-only test (RUNTIME=$RUNTIME)" ;;
		program:*) command -v "${c#program:}" >/dev/null ||
			skip "test requires ${c#program:} on the host" ;;
		*) echo "requires: unknown check $c" >&2; return 1 ;;
		esac
	done
}

# create_container ID [CREATE FLAGS...]: `brig create` with the container's
# stdio on files ($BUNDLE/ID.out, $BUNDLE/ID.err) and stdin from /dev/null, so
# a container that outlives the command does not hold the test's pipes.
# Returns create's status; on failure prints create's stderr.
create_container() {
	local id="$1" rc=0
	shift
	brig create "$@" "$id" </dev/null >"$BUNDLE/$id.out" 2>"$BUNDLE/$id.err" || rc=$?
	[ "$rc" -eq 0 ] || { echo "create $id failed ($rc):" >&2; cat "$BUNDLE/$id.err" >&2; }
	return "$rc"
}

# write_killed_record ID DIR...: the ownership record a create of the test's
# cgroupsPath leaves when killed after claiming DIRs and before its init
# line (marked, every directory "made"), under $ROOT/ID.
write_killed_record() {
	local id="$1" d
	shift
	mkdir -m 0711 "$ROOT/$id"
	{
		printf 'manager cgroupfs\npath /%s/%s\nmarked\n' "$TEST_CGROUP_PARENT" "$CGROUP_NAME"
		for d in "$@"; do echo "made $d"; done
	} >"$ROOT/$id/made"
}

# run_detached ID [RUN FLAGS...]: `brig run -d` like create_container.
run_detached() {
	local id="$1" rc=0
	shift
	brig run -d "$@" "$id" </dev/null >"$BUNDLE/$id.out" 2>"$BUNDLE/$id.err" || rc=$?
	[ "$rc" -eq 0 ] || { echo "run -d $id failed ($rc):" >&2; cat "$BUNDLE/$id.err" >&2; }
	return "$rc"
}

# run_sh SCRIPT: run the container with `sh -c SCRIPT`; $status/$output.
run_sh() {
	local q
	q="$(jq -Rn --arg s "$1" '$s')"
	update_config ".process.args = [\"sh\", \"-c\", $q]"
	run brig run "ctr$BATS_TEST_NUMBER"
	echo "$output"
}

# add_mount JSON: append a mount entry to config.json.
add_mount() {
	update_config ".mounts += [$1]"
}

# assert_contains HAYSTACK NEEDLE: fail, showing both, unless HAYSTACK
# contains NEEDLE.
assert_contains() {
	[[ "$1" == *"$2"* ]] && return 0
	printf 'expected to find: %s\nin: %s\n' "$2" "$1" >&2
	return 1
}

# assert_no_leftovers [ID]: nothing of the test's containers remains: no
# state entry (for ID, or any when no ID), no cgroup, no process.
assert_no_leftovers() {
	local left
	if [ -n "${1:-}" ]; then
		[ ! -e "$ROOT/$1" ] || { echo "state dir $ROOT/$1 left behind" >&2; return 1; }
	else
		left="$(ls -A "$ROOT" 2>/dev/null)"
		[ -z "$left" ] || { echo "state left under $ROOT: $left" >&2; return 1; }
	fi
	left="$(test_pids)"
	[ -z "$left" ] || { echo "processes left in test cgroups: $left" >&2; ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ,)" >&2; return 1; }
	left="$(test_cgroup_dirs)"
	[ -z "$left" ] || { echo "cgroups left: $left" >&2; return 1; }
	return 0
}

# ---- helpers shared by several test files (one definition each) ----

# with_userns [PATH...]: a new user namespace mapping container ids 0-65535
# to $MAP_HOST...; each PATH is given to the container's root (chown -R), so
# that its permissions, not the mapping, decide what the test probes.
with_userns() {
	update_config ".linux.namespaces += [{\"type\":\"user\"}] |
		.linux.uidMappings = [{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}] |
		.linux.gidMappings = [{\"containerID\":0,\"hostID\":$MAP_HOST,\"size\":65536}]"
	[ $# -eq 0 ] || chown -R "$MAP_HOST:$MAP_HOST" "$@"
}

# cmd_fails CMD ID NEEDLE...: `CMD ID` (create or run) exits 1 with a
# message holding every NEEDLE, and nothing is left behind. Its output goes
# through a file: a container that a broken runtime let through must not
# hold the test's pipe.
cmd_fails() {
	local cmd="$1" id="$2" n
	shift 2
	status=0
	brig "$cmd" "$id" </dev/null >"$BUNDLE/$id.log" 2>&1 || status=$?
	output="$(cat "$BUNDLE/$id.log")"
	echo "$cmd $id -> $status: $output"
	[ "$status" -eq 1 ]
	[ -n "$output" ]
	for n in "$@"; do
		assert_contains "$output" "$n"
	done
	assert_no_leftovers
}

# create_fails ID NEEDLE..., run_fails ID NEEDLE...: cmd_fails create/run.
create_fails() {
	cmd_fails create "$@"
}

run_fails() {
	cmd_fails run "$@"
}

# reset_ok ID: brig reset ID succeeds, every check of its report is true,
# its summary names ID, and the container waits for start again.
reset_ok() {
	run brig reset "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	# one object per line: every check true, then the summary
	echo "$output" | jq -e -s 'length > 5 and (map(.ok) | all)' >/dev/null
	echo "$output" | tail -1 | jq -e --arg id "$1" '.reset == $id and .ok and .ms > 0' >/dev/null
	! echo "$output" | grep -q '"ok":false' || false
	[ "$(brig state "$1" | jq -r .status)" = created ]
}

# tenant_x ID SCRIPT: the tenant runs SCRIPT in container ID (brig exec).
tenant_x() {
	brig exec "$1" sh -c "$2" </dev/null
}

# netns_of PID: the network namespace of PID (nsfs link text).
netns_of() {
	readlink "/proc/$1/ns/net"
}

# rules_of: the rules of the findings in $output (brig check --format json).
rules_of() {
	jq -r '.findings[].rule' <<<"$output" | sort -u | tr '\n' ' '
}

# has_opt OPTS OPT: OPT is one of the comma-separated OPTS.
has_opt() {
	[[ ",$1," == *",$2,"* ]] || { echo "'$2' not in '$1'" >&2; return 1; }
}

# as_user CMD...: CMD as $user (uid and gid, no groups) with a clean
# environment at home in $RL_DIR (the rootless tests set both).
as_user() {
	setpriv --reuid="$user" --regid="$user" --clear-groups \
		env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$RL_DIR/xdg" HOME="$RL_DIR" "$@"
}

# set_args ARG...: process.args of the bundle's config.
set_args() {
	local json="" a
	for a in "$@"; do
		json="$json${json:+,}$(printf '%s' "$a" | jq -R -s .)"
	done
	json="[$json]"
	update_config ".process.args = $json"
}

# rt ARGS...: the copy of the runtime at $RT_COPY with the test's --root
# (in the mount namespace of $RT_NS when set).
rt() {
	timeout -k 5 "$BRIG_CMD_TIMEOUT" ${RT_NS:+nsenter -t "$RT_NS" -m "--wd=$PWD" --} \
		"$RT_COPY" --root "$ROOT" "$@"
}

# in_hosts_ns LINES CMD: CMD (a shell string) with a private /etc/hosts
# holding localhost and LINES, bound over it in a mount namespace of its own
# (removed again once CMD is done); CMD's exit status.
in_hosts_ns() {
	local d rc=0
	d="$(test_tmpdir hosts)"
	printf '127.0.0.1 localhost\n%s\n' "$1" >"$d/hosts"
	unshare -m --propagation private sh -c "mount --bind '$d/hosts' /etc/hosts && $2" || rc=$?
	rm -rf "$d"
	return "$rc"
}

# host_mounts: anything of the test's state root or bundle in the host's
# mount table.
host_mounts() {
	grep -E " ($BUNDLE|$ROOT)[/ ]" /proc/self/mountinfo || true
}
