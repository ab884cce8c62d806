#!/bin/bash
# The Kubernetes CRI suite: brig as a RuntimeClass handler of containerd's
# CRI plugin, driven by a CRI client (cri_test.py), with runc as the
# reference handler. Called by tests/run-tests.sh; by hand:
#   tests/cri/run.sh [PATH-TO-BRIG]
# Environment: BRIG (the brig binary, when no argument; default the build
# tree's runtime/brig), BUILDDIR/SRCDIR as for the other suites, CRI_RUNC
# (the reference runc, default `command -v runc`), CRI_HANDLERS (default
# "brig runc"), CRI_CASES (a regex: only the cases whose name matches),
# CRI_KEEP=1 (leave the temp dir for a post-mortem; everything else is
# still torn down).
#
# It sets up a node as Kubernetes would, every part private to this run:
# - a mount namespace of its own (unshare -m --propagation private): the
#   tmpfs over the fixed paths containerd's shim and the CNI library write
#   (/run/containerd, /var/lib/cni), containerd's overlay, shm and netns
#   mounts and the containers' mounts live and die in it;
# - containerd on its own socket, root and state dirs under /tmp, its CRI
#   plugin with the runtime handlers `brig` (the runc v2 shim with
#   BinaryName = the brig under test, pod_annotations = run.brig.*) and
#   `runc`, the cgroupfs driver, netns mounts under its state dir;
# - the pause image (tests/cri/pause.c, static) and a busybox-static test
#   image, each an OCI image layout written here (tar, sha256sum, JSON) and
#   imported with `ctr images import` (no registry);
# - pod networking with Debian's CNI plugins: bridge (on a bridge this
#   script creates and names, with no address: isGateway and ipMasq false,
#   so no iptables rule, no route and no sysctl of the host changes) with
#   host-local IPAM in 198.18.0.0/24 (benchmarking range, routed nowhere)
#   plus loopback; every pod's cgroups under a test-only parent.
# Then every case runs with both handlers (TAP lines name the handler) and
# everything is torn down, also on failure or on a signal (trap): pods
# removed through CRI, containerd and its shims stopped (by pid), the
# bridge deleted, leftover processes in the test cgroups killed and the
# cgroups removed, the temp dir removed; the namespace's mounts go with it.
# The last line is "N passed, M failed".
set -u
here="$(cd "$(dirname "$0")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$here/../.." && pwd)}"
BUILDDIR="${BUILDDIR:-$SRCDIR}"
BRIG="${1:-${BRIG:-$BUILDDIR/runtime/brig}}"
case "$BRIG" in /*) ;; *) BRIG="$PWD/$BRIG" ;; esac
CRI_RUNC="${CRI_RUNC:-$(command -v runc 2>/dev/null || echo /usr/sbin/runc)}"
CRI_HANDLERS="${CRI_HANDLERS:-brig runc}"
# Debian's python3 with Debian's grpcio and protobuf (not a pyenv shim).
PY=/usr/bin/python3
CNI_BIN=/usr/lib/cni
export SRCDIR BUILDDIR BRIG CRI_RUNC CRI_HANDLERS

# skip_all REASON: the suite cannot run here; one skip line says why.
skip_all() {
	echo "1..1"
	echo "ok 1 - cri suite # skip $1"
	echo "0 passed, 0 failed"
	exit 0
}

# daemon_pids: our containerd and its shims: the processes whose command
# line names our temp dir (containerd's --config, the shims' -address) and
# whose binary is containerd's (not, say, a grep for that name).
daemon_pids() {
	local f pid
	grep -lF -- "$CRI_TMP/" /proc/[0-9]*/cmdline 2>/dev/null | while read -r f; do
		pid="${f#/proc/}" pid="${pid%/cmdline}"
		case "$(readlink "/proc/$pid/exe" 2>/dev/null)" in
		*/containerd | */containerd-shim-runc-v2) echo "$pid" ;;
		esac
	done
	return 0
}

# ---- prerequisites (skip, never fail, when the host lacks them) ----------
if [ -z "${BRIG_CRI_INNER:-}" ]; then
	[ "$(id -u)" -eq 0 ] || skip_all "the CRI suite needs root"
	[ -x "$BRIG" ] || { echo "1..1"; echo "not ok 1 - cri suite: $BRIG is not built"; echo "0 passed, 1 failed"; exit 1; }
	for p in containerd ctr containerd-shim-runc-v2 unshare ip protoc sha256sum tar; do
		command -v "$p" >/dev/null ||
			skip_all "$p is not installed (contrib/install-deps.sh: containerd, protobuf-compiler, iproute2)"
	done
	for p in bridge host-local loopback; do
		[ -x "$CNI_BIN/$p" ] ||
			skip_all "CNI plugin $CNI_BIN/$p is missing (contrib/install-deps.sh: containernetworking-plugins)"
	done
	[ -x "$PY" ] || skip_all "$PY is missing (python3)"
	"$PY" -c 'import grpc, google.protobuf' 2>/dev/null ||
		skip_all "python3 grpc or protobuf is missing (contrib/install-deps.sh: python3-grpcio, python3-protobuf)"
	[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
	[ -x "$CRI_RUNC" ] || skip_all "runc (the reference handler) is not installed"
	if [ ! -x "$BUILDDIR/tests/cri/pause" ] && ! command -v "${CC:-cc}" >/dev/null; then
		skip_all "no C compiler for the pause program (and $BUILDDIR/tests/cri/pause is not built)"
	fi
	[ -d /sys/fs/cgroup ] || skip_all "no cgroup file system"

	# Everything below runs in a private mount namespace (see the top).
	# This outer process stays on the host's and sweeps what the inner one
	# could not remove when it was killed.
	CRI_TMP="$(mktemp -d /tmp/brig-cri.XXXXXX)" || exit 1
	chmod 0755 "$CRI_TMP"
	tag="$(basename "$CRI_TMP" | tr -dc 'a-zA-Z0-9' | tail -c 6)"
	CRI_BRIDGE="brigcri${tag}"
	CRI_CGROUP_PARENT="/brig-cri-${tag}"
	export CRI_TMP CRI_BRIDGE CRI_CGROUP_PARENT

	# outer_sweep: the inner run's teardown, again, from outside (it is a
	# no-op when that teardown ran): processes in our cgroups and our
	# shims and containerd by pid, the bridge, the cgroups, the temp dir.
	outer_sweep() {
		local pid d
		for pid in $(daemon_pids); do kill -KILL "$pid" 2>/dev/null; done
		for d in /sys/fs/cgroup/*"$CRI_CGROUP_PARENT" /sys/fs/cgroup"$CRI_CGROUP_PARENT"; do
			[ -d "$d" ] || continue
			find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		done
		sleep 0.2
		for d in /sys/fs/cgroup/*"$CRI_CGROUP_PARENT" /sys/fs/cgroup"$CRI_CGROUP_PARENT"; do
			[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		done
		ip link show "$CRI_BRIDGE" >/dev/null 2>&1 && ip link delete "$CRI_BRIDGE" 2>/dev/null
		[ "${CRI_KEEP:-0}" = 1 ] || rm -rf "$CRI_TMP" 2>/dev/null
		return 0
	}
	trap 'outer_sweep' EXIT
	trap 'exit 143' TERM INT HUP

	BRIG_CRI_INNER=1 unshare --mount --propagation private -- bash "$here/run.sh" "$BRIG"
	rc=$?
	exit "$rc"
fi

# ---- inside the private mount namespace ----------------------------------
T="$CRI_TMP"
SOCK="$T/containerd.sock"
NS=k8s.io
PAUSE_IMAGE=localhost/brig-cri/pause:1
TEST_IMAGE=localhost/brig-cri/busybox:1
SUBNET=198.18.0.0/24
# The fixed paths the 1.6 shim (/run/containerd/s, /run/containerd/fifo) and
# the CNI library (/var/lib/cni cache) write whatever the configuration
# says: a tmpfs over each, in this namespace only.
FIXED_PATHS=(/run/containerd /var/lib/cni)
CONTAINERD_PID=

log() { printf '# %s\n' "$*"; }

# teardown: everything setup made, in reverse; each step tolerates what is
# already gone, so it is safe on any failure.
teardown() {
	local pid p
	set +e
	if [ -n "$CONTAINERD_PID" ] && kill -0 "$CONTAINERD_PID" 2>/dev/null && [ -f "$T/gen/runtime_pb2.py" ]; then
		# pods first, through CRI, so that CNI releases their addresses and
		# veths and the shims delete their containers
		# (short: run-tests.sh's timeout leaves 30 s after its TERM)
		timeout -k 2 15 "$PY" "$here/cri_test.py" --cleanup >>"$T/cleanup.log" 2>&1
	fi
	if [ -n "$CONTAINERD_PID" ]; then
		kill -TERM "$CONTAINERD_PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$CONTAINERD_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$CONTAINERD_PID" 2>/dev/null
		wait "$CONTAINERD_PID" 2>/dev/null
	fi
	# our shims (and containerd, if it did not stop)
	for pid in $(daemon_pids); do kill -KILL "$pid" 2>/dev/null; done
	for p in /sys/fs/cgroup/*"$CRI_CGROUP_PARENT" /sys/fs/cgroup"$CRI_CGROUP_PARENT"; do
		[ -d "$p" ] || continue
		find "$p" -name freezer.state 2>/dev/null | while read -r f; do echo THAWED >"$f"; done
		find "$p" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	done
	sleep 0.2
	for p in /sys/fs/cgroup/*"$CRI_CGROUP_PARENT" /sys/fs/cgroup"$CRI_CGROUP_PARENT"; do
		[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	ip link delete "$CRI_BRIDGE" 2>/dev/null
	# every mount under the temp dir (overlays, shm, netns), deepest first
	awk -v t="$T" '$5 == t || index($5, t "/") == 1 { print $5 }' /proc/self/mountinfo |
		sort -r | while read -r p; do umount -l "$p" 2>/dev/null; done
	for p in "${FIXED_PATHS[@]}"; do
		mountpoint -q "$p" && umount -l "$p" 2>/dev/null
	done
	return 0
}

# oci_image DIR NAME ROOTFS-DIR ENTRYPOINT-JSON: an OCI image layout in DIR
# with one layer (a tar of ROOTFS-DIR), a config and a manifest, the index
# naming it NAME (io.containerd.image.name, which ctr import uses as is).
oci_image() {
	local lay="$1" name="$2" rootfs="$3" entry="$4" ld ls cd cs md ms
	mkdir -p "$lay/blobs/sha256"
	tar -C "$rootfs" --numeric-owner --owner=0 --group=0 --sort=name \
		--mtime=@0 -cf "$lay/layer.tar" .
	ld="$(sha256sum "$lay/layer.tar" | cut -d' ' -f1)"
	ls="$(stat -c %s "$lay/layer.tar")"
	mv "$lay/layer.tar" "$lay/blobs/sha256/$ld"
	printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$entry" "$ld" >"$lay/config.json"
	cd="$(sha256sum "$lay/config.json" | cut -d' ' -f1)"
	cs="$(stat -c %s "$lay/config.json")"
	mv "$lay/config.json" "$lay/blobs/sha256/$cd"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cd" "$cs" "$ld" "$ls" >"$lay/manifest.json"
	md="$(sha256sum "$lay/manifest.json" | cut -d' ' -f1)"
	ms="$(stat -c %s "$lay/manifest.json")"
	mv "$lay/manifest.json" "$lay/blobs/sha256/$md"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$md" "$ms" "$name" "${name##*:}" >"$lay/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
}

# build_images: the pause image and the busybox test image, imported into
# containerd's k8s.io namespace (the CRI plugin's).
build_images() {
	local r="$T/img" pause="$BUILDDIR/tests/cri/pause" bb
	mkdir -p "$r/pause-root" "$r/bb-root"
	if [ ! -x "$pause" ]; then
		pause="$T/pause"
		"${CC:-cc}" -O2 -static -o "$pause" "$here/pause.c" || return 1
	fi
	cp "$pause" "$r/pause-root/pause"
	oci_image "$r/pause" "$PAUSE_IMAGE" "$r/pause-root" '["/pause"]'

	bb="$(readlink -f /bin/busybox)"
	mkdir -p "$r/bb-root"/{bin,etc,proc,sys,dev,tmp,root,www}
	cp "$bb" "$r/bb-root/bin/busybox"
	/bin/busybox --install -s "$r/bb-root/bin" 2>/dev/null
	# --install links to the host path of busybox: point them at ours
	find "$r/bb-root/bin" -type l -exec ln -sfn busybox {} \;
	chmod 1777 "$r/bb-root/tmp"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/bb-root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/bb-root/etc/group"
	oci_image "$r/bb" "$TEST_IMAGE" "$r/bb-root" '["/bin/sh"]'

	local img
	for img in pause bb; do
		tar -C "$r/$img" -cf "$r/$img.tar" . || return 1
		timeout -k 5 60 ctr -a "$SOCK" -n "$NS" images import "$r/$img.tar" >"$r/$img.import.log" 2>&1 ||
			{ cat "$r/$img.import.log"; return 1; }
	done
	rm -rf "$r"
}

# write_config: containerd's config and the CNI network.
write_config() {
	mkdir -p "$T"/{root,state,opt,cni,ipam,pods,brig-root,runc-root}
	cat >"$T/cni/10-brigcri.conflist" <<-EOF
	{
	  "cniVersion": "0.4.0",
	  "name": "brigcri",
	  "plugins": [
	    {
	      "type": "bridge",
	      "bridge": "$CRI_BRIDGE",
	      "isGateway": false,
	      "isDefaultGateway": false,
	      "ipMasq": false,
	      "hairpinMode": false,
	      "ipam": {
	        "type": "host-local",
	        "dataDir": "$T/ipam",
	        "ranges": [[{ "subnet": "$SUBNET" }]]
	      }
	    }
	  ]
	}
	EOF
	cat >"$T/cni/99-loopback.conf" <<-EOF
	{ "cniVersion": "0.4.0", "name": "lo", "type": "loopback" }
	EOF
	cat >"$T/containerd.toml" <<-EOF
	version = 2
	root = "$T/root"
	state = "$T/state"
	disabled_plugins = [
	  "io.containerd.snapshotter.v1.aufs",
	  "io.containerd.snapshotter.v1.btrfs",
	  "io.containerd.snapshotter.v1.devmapper",
	  "io.containerd.snapshotter.v1.zfs",
	  "io.containerd.internal.v1.tracing",
	  "io.containerd.tracing.processor.v1.otlp",
	]
	[grpc]
	  address = "$SOCK"
	[ttrpc]
	  address = "$SOCK.ttrpc"
	[debug]
	  level = "info"
	[plugins."io.containerd.internal.v1.opt"]
	  path = "$T/opt"
	[plugins."io.containerd.runtime.v1.linux"]
	  runtime_root = "$T/runtime-v1"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "$PAUSE_IMAGE"
	  # the host's cgroup driver here: no systemd as PID 1
	  systemd_cgroup = false
	  stream_server_address = "127.0.0.1"
	  stream_server_port = "0"
	  enable_unprivileged_ports = false
	  enable_unprivileged_icmp = false
	  netns_mounts_under_state_dir = true
	  enable_selinux = false
	  disable_apparmor = true
	  # no lower oom_score_adj than containerd's own: raising a process's
	  # protection needs CAP_SYS_RESOURCE, which CI sandboxes and nested
	  # containers leave out (the pause container asks for -998)
	  restrict_oom_score_adj = true
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "$CNI_BIN"
	    conf_dir = "$T/cni"
	    max_conf_num = 1
	  [plugins."io.containerd.grpc.v1.cri".containerd]
	    snapshotter = "overlayfs"
	    default_runtime_name = "runc"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	      runtime_type = "io.containerd.runc.v2"
	      pod_annotations = ["run.brig.*"]
	      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	        BinaryName = "$CRI_RUNC"
	        Root = "$T/runc-root"
	        SystemdCgroup = false
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.brig]
	      runtime_type = "io.containerd.runc.v2"
	      pod_annotations = ["run.brig.*"]
	      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.brig.options]
	        BinaryName = "$BRIG"
	        Root = "$T/brig-root"
	        SystemdCgroup = false
	EOF
}

# start_containerd: containerd in the background; waits for its CRI plugin.
start_containerd() {
	containerd --config "$T/containerd.toml" </dev/null >"$T/containerd.log" 2>&1 &
	CONTAINERD_PID=$!
	echo "$CONTAINERD_PID" >"$T/containerd.pid"
	for _ in $(seq 300); do
		if [ -S "$SOCK" ] && ctr -a "$SOCK" version >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$CONTAINERD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "containerd did not start:"
	tail -n 20 "$T/containerd.log"
	return 1
}

trap 'teardown' EXIT
trap 'exit 143' TERM INT HUP

setup_failed() {
	echo "1..1"
	echo "not ok 1 - cri suite setup: $1"
	[ -f "$T/containerd.log" ] && tail -n 30 "$T/containerd.log" | sed 's/^/# /'
	echo "0 passed, 1 failed"
	exit 1
}

for p in "${FIXED_PATHS[@]}"; do
	mkdir -p "$p"
	mount -t tmpfs -o mode=0755,size=64m tmpfs "$p" || setup_failed "mount tmpfs on $p"
done
ip link add "$CRI_BRIDGE" type bridge || setup_failed "ip link add $CRI_BRIDGE type bridge"
ip link set "$CRI_BRIDGE" up || setup_failed "ip link set $CRI_BRIDGE up"
mkdir -p "$T/gen"
protoc -I"$here" --python_out="$T/gen" "$here/runtime.proto" || setup_failed "protoc runtime.proto"
write_config
start_containerd >"$T/start.log" 2>&1 || setup_failed "$(tr '\n' ' ' <"$T/start.log")"
build_images >"$T/images.log" 2>&1 || setup_failed "images: $(tail -n 5 "$T/images.log" | tr '\n' ' ')"
log "containerd $(containerd --version | awk '{print $3}'), brig $BRIG, runc $CRI_RUNC, bridge $CRI_BRIDGE, cgroup parent $CRI_CGROUP_PARENT"

export CRI_SOCK="$SOCK" CRI_GEN="$T/gen" CRI_TEST_IMAGE="$TEST_IMAGE" CRI_PAUSE_IMAGE="$PAUSE_IMAGE" \
	CRI_STATE="$T/state" CRI_PODS_DIR="$T/pods" CRI_BRIG_ROOT="$T/brig-root" CRI_RUNC_ROOT="$T/runc-root" \
	CRI_SUBNET="$SUBNET"

# The client prints "ok - ..." / "not ok - ..." lines; they are numbered here.
n=0 pass=0 fail=0 skip=0 client_rc=
while IFS= read -r line; do
	case "$line" in
	"ok "*)
		n=$((n + 1))
		if [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
			skip=$((skip + 1))
		else
			pass=$((pass + 1))
		fi
		echo "ok $n ${line#ok }" ;;
	"not ok "*)
		n=$((n + 1)); fail=$((fail + 1))
		echo "not ok $n ${line#not ok }" ;;
	"client exit status "*) client_rc="${line##* }" ;;
	*) echo "$line" ;;
	esac
done < <(timeout -k 10 "${CRI_CLIENT_TIMEOUT:-600}" "$PY" -u "$here/cri_test.py" 2>&1; echo "client exit status $?")
# a client that died without reporting a failure is one
if [ "${client_rc:-1}" -ne 0 ] && [ "$fail" -eq 0 ]; then
	n=$((n + 1)); fail=$((fail + 1))
	echo "not ok $n - cri client exited with status ${client_rc:-unknown}"
fi
echo "1..$n"
[ "$skip" -eq 0 ] || echo "# $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
