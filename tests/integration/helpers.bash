# Shared setup for brig's bats tests. Every test gets a private state root
# (--root) and bundle; containers go under the test-only cgroup parent
# "brig-test"; teardown deletes whatever the test left, also on failure.
#
# Environment:
#   BRIG     the brig binary (default: the build tree's runtime/brig)
#   RUNTIME  the runtime under test (default $BRIG); RUNTIME=/usr/sbin/runc runs
#            the same tests against runc, the reference behaviour.

HELPERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$HELPERS_DIR/../.." && pwd)}"
BRIG="${BRIG:-${BUILDDIR:-$SRCDIR}/runtime/brig}"
RUNTIME="${RUNTIME:-$BRIG}"
TEST_CGROUP_PARENT="brig-test"
# The busybox rootfs is built once per bats run and copied per bundle.
ROOTFS_CACHE="${BRIG_ROOTFS_CACHE:-${BATS_RUN_TMPDIR:-/tmp}/brig-rootfs}"

# brig [args...]: run the runtime under test with the test's private --root.
brig() {
	"$RUNTIME" --root "$ROOT" "$@"
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

# setup_bundle: create $ROOT (state) and $BUNDLE (config.json + rootfs).
setup_bundle() {
	build_rootfs_template
	ROOT="$(mktemp -d /tmp/brig-test-root.XXXXXX)"
	BUNDLE="$(mktemp -d /tmp/brig-test-bundle.XXXXXX)"
	chmod 0755 "$BUNDLE"
	cp -a "$ROOTFS_CACHE" "$BUNDLE/rootfs"
	write_default_config "$BUNDLE" "$(basename "$BUNDLE")"
	export ROOT BUNDLE
	# Like runc, brig defaults --bundle to the current directory.
	cd "$BUNDLE"
}

# update_config JQ_FILTER [BUNDLE]: edit config.json in place with jq.
update_config() {
	local dir="${2:-$BUNDLE}" tmp
	tmp="$(mktemp "$dir/config.json.XXXXXX")"
	jq "$1" "$dir/config.json" >"$tmp" && mv "$tmp" "$dir/config.json"
}

# Remove the test cgroups (depth first) in every hierarchy.
remove_test_cgroups() {
	local d
	for d in /sys/fs/cgroup/*/"$TEST_CGROUP_PARENT" /sys/fs/cgroup/"$TEST_CGROUP_PARENT"; do
		[ -d "$d" ] || continue
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

# teardown_bundle: delete every container the test left, then its files.
teardown_bundle() {
	local id
	if [ -n "${ROOT:-}" ] && [ -d "$ROOT" ]; then
		for id in $("$RUNTIME" --root "$ROOT" list -q 2>/dev/null); do
			"$RUNTIME" --root "$ROOT" kill "$id" KILL >/dev/null 2>&1 || true
			"$RUNTIME" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 || true
		done
		rm -rf "$ROOT"
	fi
	cd /
	[ -n "${BUNDLE:-}" ] && rm -rf "$BUNDLE"
	remove_test_cgroups
}

# wait_for_status ID STATUS [TRIES]: poll `state` until status matches.
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

# requires CHECK...: skip with a reason unless every check holds.
requires() {
	local c
	for c in "$@"; do
		case "$c" in
		root) [ "$(id -u)" -eq 0 ] || skip "test requires root" ;;
		cgroup_v1) [ -d /sys/fs/cgroup/memory ] || skip "test requires cgroup v1 controllers" ;;
		cgroup_v2) [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "test requires a pure cgroup v2 host" ;;
		runc) [ -x /usr/sbin/runc ] || skip "test requires runc (Debian package) as reference" ;;
		*) echo "requires: unknown check $c" >&2; return 1 ;;
		esac
	done
}
