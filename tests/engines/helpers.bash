# Shared setup for the engine tests (podman.bats, containerd.bats): drive the
# runtime under test through Debian's podman (conmon) and containerd
# (containerd-shim-runc-v2), offline, with every path private.
#
# Run through tests/engines/run.sh, which gives the bats process a private
# mount namespace (unshare -m --propagation private): the tmpfs mounts over
# the fixed paths the engines write, the engines' own mounts and the
# container mounts all stay in it.
#
# Environment:
#   BRIG            the brig binary (default: the build tree's runtime/brig)
#   ENGINE_RUNTIME  the OCI runtime the engines call (default $BRIG);
#                   ENGINE_RUNTIME=/usr/sbin/runc runs the same tests
#                   against runc, the reference behaviour
#   ENGINE_CMD_TIMEOUT  seconds before one engine command is killed (90)

ENGINES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$ENGINES_DIR/../.." && pwd)}"
BRIG="${BRIG:-${BUILDDIR:-$SRCDIR}/runtime/brig}"
ENGINE_RUNTIME="${ENGINE_RUNTIME:-$BRIG}"
ENGINE_CMD_TIMEOUT="${ENGINE_CMD_TIMEOUT:-90}"
# The engines know the runtime by this name (podman --runtime, the name in
# runtime_supports_json); a path that ends in /runc is called runc.
RUNTIME_NAME="$(basename "$ENGINE_RUNTIME")"

# The fixed paths podman and the containerd 1.6 shim write whatever their
# configuration says: the image blob-info cache, podman's and the shim's run
# directories (the shim's socket is /run/containerd/s/HASH; ctr's fifos go
# to /run/containerd/fifo), and the runtime's default state directory
# (podman calls the runtime without --root). Each gets a tmpfs in the
# private namespace.
ENGINE_FIXED_PATHS=(/var/lib/containers/cache /run/containers /run/containerd
	"/run/$RUNTIME_NAME")

# in_private_mount_ns: true in the mount namespace run.sh created
# (BRIG_ENGINES_MNTNS names it) when no mount propagates back to the host's.
in_private_mount_ns() {
	[ -n "${BRIG_ENGINES_MNTNS:-}" ] &&
		[ "$(readlink /proc/self/ns/mnt)" = "$BRIG_ENGINES_MNTNS" ] || return 1
	# every mount private: no "shared:N" peer group in mountinfo
	if grep -q ' shared:' /proc/self/mountinfo; then
		return 1
	fi
}

# pid_alive PID: true while PID exists and is not a zombie (kill -0 succeeds
# on a zombie, which is dead but not yet reaped).
pid_alive() {
	local stat state
	stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
	# the state follows the command name, which may contain spaces and ")"
	state="${stat##*) }"
	state="${state%% *}"
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# engine_skip_reason: why the engine tests cannot run here, or nothing.
engine_skip_reason() {
	[ "$(id -u)" -eq 0 ] || { echo "engine tests need root"; return; }
	in_private_mount_ns ||
		{ echo "not in a private mount namespace: run tests/engines/run.sh"; return; }
	[ -x "$ENGINE_RUNTIME" ] || { echo "runtime $ENGINE_RUNTIME is not built"; return; }
	[ -x /bin/busybox ] || { echo "busybox-static is not installed"; return; }
}

# engine_setup_common NAME: the per-file private environment: a temp dir
# ($ENGINE_TMP), tmpfs over the fixed paths, a test-only cgroup parent
# ($CGROUP_PARENT, e.g. /brig-engines-podman-XXXX).
engine_setup_common() {
	local p
	ENGINE_TMP="$(mktemp -d "/tmp/brig-engines-$1.XXXXXX")"
	chmod 0755 "$ENGINE_TMP"
	CGROUP_PARENT="/$(basename "$ENGINE_TMP" | tr . -)"
	: >"$ENGINE_TMP/mounts"
	for p in "${ENGINE_FIXED_PATHS[@]}"; do
		# The mount point itself is created on the host when missing (an
		# empty directory, left in place: another run may be using it).
		mkdir -p "$p"
		mount -t tmpfs -o mode=0700,size=256m tmpfs "$p"
		echo "$p" >>"$ENGINE_TMP/mounts"
	done
	export ENGINE_TMP CGROUP_PARENT
}

# cgroup_dirs: our cgroup parent in every hierarchy (v1 controllers and the
# unified mount of this hybrid host, or a pure v2 root).
cgroup_dirs() {
	local d
	[ -n "${CGROUP_PARENT:-}" ] || return 0
	for d in /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT"; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# cgroup_pids: live processes in our cgroups (the containers, conmon and the
# runtime's helpers: only processes this test started live there).
cgroup_pids() {
	local d
	for d in $(cgroup_dirs); do
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -un
}

# kill_cgroup_pids: kill what is left in our cgroups (by pid), thawing
# frozen cgroups first; up to 2s.
kill_cgroup_pids() {
	local pid pids tries p f
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		pids="$(cgroup_pids)"
		[ -n "$pids" ] || break
		# frozen processes cannot die: thaw first (v1 freezer)
		for p in $(cgroup_dirs); do
			find "$p" -name freezer.state 2>/dev/null | while read -r f; do
				echo THAWED >"$f" 2>/dev/null || true
			done
		done
		for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
		sleep 0.2
	done
	return 0
}

# engine_teardown_common: kill what is left in our cgroups (by pid), remove
# the cgroups, unmount what setup mounted and remove the temp dir.
engine_teardown_common() {
	local p
	kill_cgroup_pids
	for p in $(cgroup_dirs); do
		find "$p" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [ -n "${ENGINE_TMP:-}" ] && [ -d "$ENGINE_TMP" ]; then
		# whatever the engines mounted under the temp dir (overlay, shm,
		# bundles' rootfs), deepest first, then the fixed-path tmpfs
		awk -v t="$ENGINE_TMP" '$5 == t || index($5, t "/") == 1 { print $5 }' /proc/self/mountinfo |
			sort -r | while read -r p; do umount -l "$p" 2>/dev/null || true; done
		if [ -f "$ENGINE_TMP/mounts" ]; then
			while read -r p; do umount -l "$p" 2>/dev/null || true; done <"$ENGINE_TMP/mounts"
		fi
		rm -rf "$ENGINE_TMP"
	fi
	return 0
}

# build_rootfs DIR: a busybox rootfs from Debian's busybox-static.
build_rootfs() {
	local dir="$1"
	local bb
	bb="$(readlink -f /bin/busybox)"
	mkdir -p "$dir"/{usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,home,run,var/tmp}
	# merged /usr like Debian: /bin and /sbin are links into /usr
	ln -s usr/bin "$dir/bin"
	ln -s usr/sbin "$dir/sbin"
	chmod 1777 "$dir/tmp" "$dir/var/tmp"
	chmod 0755 "$dir"
	mkdir -p "$dir$(dirname "$bb")"
	cp "$bb" "$dir$bb"
	[ -e "$dir/usr/bin/busybox" ] || ln -s "$bb" "$dir/usr/bin/busybox"
	# one symlink per applet to "$bb" (busybox's own path, which exists
	# in the rootfs too), made by one process: a loop of ln forks takes
	# seconds on a loaded host
	"$bb" --install -s "$dir/usr/bin"
	cat >"$dir/etc/passwd" <<-'P'
		root:x:0:0:root:/root:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
		guest:x:1000:1000:guest:/home:/bin/sh
	P
	cat >"$dir/etc/group" <<-'G'
		root:x:0:
		nogroup:x:65534:
		guest:x:1000:
	G
	# 126 test: a file that is there but not executable
	printf '#!/bin/sh\necho should not run\n' >"$dir/bin/noexec"
	chmod 0644 "$dir/bin/noexec"
}

# build_rootfs_tar TAR: the busybox rootfs as a tar (podman import, image layer).
build_rootfs_tar() {
	local tmp
	tmp="$(mktemp -d "$ENGINE_TMP/rootfs.XXXXXX")"
	build_rootfs "$tmp"
	tar -C "$tmp" --numeric-owner --owner=0 --group=0 -cf "$1" .
	rm -rf "$tmp"
}

# ulimits_hard: "NOFILE NPROC": the hard nofile limit and min(hard nproc,
# pid_max). Without CAP_SYS_RESOURCE in the bounding set, no runtime may set
# a limit above these, and podman's defaults (1048576) are above them.
ulimits_hard() {
	local nofile nproc pidmax
	nofile="$(ulimit -Hn)"
	nproc="$(ulimit -Hu)"
	pidmax="$(cat /proc/sys/kernel/pid_max)"
	[ "$nproc" = unlimited ] && nproc="$pidmax"
	[ "$nofile" = unlimited ] && nofile=1048576
	[ "$nproc" -gt "$pidmax" ] && nproc="$pidmax"
	echo "$nofile $nproc"
}

# in_timeout CMD...: run CMD, killed after ENGINE_CMD_TIMEOUT seconds.
in_timeout() {
	timeout -k 5 "$ENGINE_CMD_TIMEOUT" "$@"
}

# assert_contains HAYSTACK NEEDLE
assert_contains() {
	[[ "$1" == *"$2"* ]] && return 0
	printf 'expected to find: %s\nin: %s\n' "$2" "$1" >&2
	return 1
}

# assert_status WANT: $status (from bats' run) is WANT, else show $output.
assert_status() {
	[ "$status" -eq "$1" ] && return 0
	printf 'exit status %s, wanted %s; output:\n%s\n' "$status" "$1" "$output" >&2
	return 1
}

# is_brig: the runtime under test is brig.
is_brig() {
	[ "$RUNTIME_NAME" = brig ]
}

# ---- podman -----------------------------------------------------------------

PODMAN="${PODMAN:-/usr/bin/podman}"

# podman_setup: private containers.conf, storage.conf and registries.conf in
# $ENGINE_TMP, exported through CONTAINERS_CONF and friends (podman then reads
# no system configuration), and the busybox image imported as
# localhost/busybox.
podman_setup() {
	local t="$ENGINE_TMP" nofile nproc
	read -r nofile nproc <<<"$(ulimits_hard)"
	mkdir -p "$t"/{storage,runroot,tmp,netconf,volumes,cni,conf,work}
	cat >"$t/conf/containers.conf" <<-EOF2
	[containers]
	netns = "none"
	default_ulimits = [ "nofile=$nofile:$nofile", "nproc=$nproc:$nproc" ]
	log_driver = "k8s-file"
	[network]
	network_backend = "cni"
	network_config_dir = "$t/netconf"
	default_network = "podman"
	[engine]
	runtime = "$RUNTIME_NAME"
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	events_logfile_path = "$t/events.log"
	lock_type = "file"
	tmp_dir = "$t/tmp"
	volume_path = "$t/volumes"
	static_dir = "$t/storage/libpod"
	image_copy_tmp_dir = "$t/tmp"
	runtime_supports_json = [ "$RUNTIME_NAME" ]
	[engine.runtimes]
	$RUNTIME_NAME = [ "$ENGINE_RUNTIME" ]
	EOF2
	cat >"$t/conf/storage.conf" <<-EOF2
	[storage]
	driver = "vfs"
	graphroot = "$t/storage"
	runroot = "$t/runroot"
	EOF2
	cat >"$t/conf/registries.conf" <<-EOF2
	unqualified-search-registries = []
	EOF2
	echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$t/conf/policy.json"
	export CONTAINERS_CONF="$t/conf/containers.conf"
	export CONTAINERS_STORAGE_CONF="$t/conf/storage.conf"
	export CONTAINERS_REGISTRIES_CONF="$t/conf/registries.conf"
	export TMPDIR="$t/tmp"
	build_rootfs_tar "$t/busybox.tar"
	in_timeout "$PODMAN" import --quiet "$t/busybox.tar" localhost/busybox:latest >/dev/null
}

# podman ARGS...: podman with the private configuration; `run` and `create`
# get our cgroup parent so containers and conmon land in test-only cgroups
# (also when global options come before the command).
podman() {
	local pre=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--log-level | --runtime | --runtime-flag | --root | --runroot | --tmpdir | \
		--cgroup-manager | --storage-driver | --storage-opt | --events-backend | \
		--conmon | --network-config-dir | --volumepath | --hooks-dir)
			pre+=("$1" "$2")
			shift 2 ;;
		-*)
			pre+=("$1")
			shift ;;
		*) break ;;
		esac
	done
	# conmon writes a file "oom" into its working directory when the
	# container is OOM-killed: keep it out of the source tree
	case "${1:-}" in
	run | create)
		local sub="$1"
		shift
		(cd "$ENGINE_TMP/work" &&
			exec timeout -k 5 "$ENGINE_CMD_TIMEOUT" "$PODMAN" "${pre[@]}" "$sub" --cgroup-parent "$CGROUP_PARENT" "$@") ;;
	*)
		(cd "$ENGINE_TMP/work" && exec timeout -k 5 "$ENGINE_CMD_TIMEOUT" "$PODMAN" "${pre[@]}" "$@") ;;
	esac
}

# podman_teardown: remove every container (podman stops them through the
# runtime), then the common teardown.
podman_teardown() {
	if [ -n "${CONTAINERS_CONF:-}" ]; then
		timeout -k 5 60 "$PODMAN" rm --all --force --time 0 >/dev/null 2>&1 || true
	fi
}

# ---- containerd -------------------------------------------------------------

CONTAINERD="${CONTAINERD:-/usr/bin/containerd}"
CTR_NAMESPACE=brig-test
CTR_IMAGE=localhost/busybox:latest

# build_oci_archive ARCHIVE: an OCI image layout made by hand from the
# busybox rootfs tar (one layer, a config, a manifest), copied by skopeo into
# an oci-archive, which checks it and writes the ref-name annotation that
# `ctr images import` names the image by.
build_oci_archive() {
	local out="$1" lay="$ENGINE_TMP/oci-layout" ld ls cd cs md ms
	mkdir -p "$lay/blobs/sha256"
	build_rootfs_tar "$ENGINE_TMP/layer.tar"
	ld="$(sha256sum "$ENGINE_TMP/layer.tar" | cut -d' ' -f1)"
	ls="$(stat -c %s "$ENGINE_TMP/layer.tar")"
	mv "$ENGINE_TMP/layer.tar" "$lay/blobs/sha256/$ld"
	jq -cn --arg d "sha256:$ld" '{
		architecture: "amd64", os: "linux",
		config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
			Cmd: ["sh"], WorkingDir: "/" },
		rootfs: { type: "layers", diff_ids: [$d] } }' >"$lay/config.json"
	cd="$(sha256sum "$lay/config.json" | cut -d' ' -f1)"
	cs="$(stat -c %s "$lay/config.json")"
	mv "$lay/config.json" "$lay/blobs/sha256/$cd"
	jq -cn --arg cd "sha256:$cd" --argjson cs "$cs" --arg ld "sha256:$ld" --argjson ls "$ls" '{
		schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs },
		layers: [ { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls } ] }' \
		>"$lay/manifest.json"
	md="$(sha256sum "$lay/manifest.json" | cut -d' ' -f1)"
	ms="$(stat -c %s "$lay/manifest.json")"
	mv "$lay/manifest.json" "$lay/blobs/sha256/$md"
	jq -cn --arg md "sha256:$md" --argjson ms "$ms" '{
		schemaVersion: 2,
		manifests: [ { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
			annotations: { "org.opencontainers.image.ref.name": "latest" } } ] }' >"$lay/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
	in_timeout skopeo --policy "$ENGINE_TMP/policy.json" copy --quiet \
		"oci:$lay:latest" "oci-archive:$out:$CTR_IMAGE"
	rm -rf "$lay"
}

# containerd_setup: containerd on its own socket, root, state and opt dirs
# (config in $ENGINE_TMP/containerd.toml), without the CRI and the snapshot
# plugins that need other file systems; the busybox image imported.
containerd_setup() {
	local t="$ENGINE_TMP" i
	mkdir -p "$t"/{root,state,opt}
	echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$t/policy.json"
	CTR_SOCK="$t/containerd.sock"
	cat >"$t/containerd.toml" <<-EOF2
	version = 2
	root = "$t/root"
	state = "$t/state"
	disabled_plugins = [
	  "io.containerd.grpc.v1.cri",
	  "io.containerd.snapshotter.v1.aufs",
	  "io.containerd.snapshotter.v1.btrfs",
	  "io.containerd.snapshotter.v1.devmapper",
	  "io.containerd.snapshotter.v1.zfs",
	  "io.containerd.internal.v1.tracing",
	  "io.containerd.tracing.processor.v1.otlp",
	]
	[grpc]
	  address = "$CTR_SOCK"
	[ttrpc]
	  address = "$CTR_SOCK.ttrpc"
	[debug]
	  level = "debug"
	[plugins."io.containerd.internal.v1.opt"]
	  path = "$t/opt"
	# the v1 runtime is unused but the tasks service needs it loaded
	[plugins."io.containerd.runtime.v1.linux"]
	  runtime_root = "$t/runtime-v1"
	EOF2
	# fd 3 is bats' output: a daemon holding it would keep bats waiting
	"$CONTAINERD" --config "$t/containerd.toml" </dev/null >"$t/containerd.log" 2>&1 3>&- &
	CONTAINERD_PID=$!
	echo "$CONTAINERD_PID" >"$t/containerd.pid"
	export CTR_SOCK CONTAINERD_PID
	for i in $(seq 100); do
		[ -S "$CTR_SOCK" ] && ctr version >/dev/null 2>&1 && break
		kill -0 "$CONTAINERD_PID" 2>/dev/null ||
			{ echo "containerd exited:" >&2; tail -20 "$t/containerd.log" >&2; return 1; }
		sleep 0.1
	done
	build_oci_archive "$t/busybox-oci.tar"
	ctr images import "$t/busybox-oci.tar" >/dev/null
}

# ctr ARGS...: ctr talking to our containerd, in our namespace.
ctr() {
	in_timeout /usr/bin/ctr --address "$CTR_SOCK" --namespace "$CTR_NAMESPACE" "$@"
}

# ctr_run [CTR RUN OPTIONS...] ID [COMMAND...]: `ctr run` of the busybox image
# through the runc v2 shim with the runtime under test as its runc binary,
# in our cgroup parent (cgroupfs: no --systemd-cgroup). Options that take a
# value are written --name=value.
ctr_run() {
	local opts=()
	while [ $# -gt 0 ] && [[ "$1" == -* ]]; do
		opts+=("$1")
		shift
	done
	local id="$1"
	shift
	ctr run --runtime io.containerd.runc.v2 --runc-binary "$ENGINE_RUNTIME" \
		--cgroup "$CGROUP_PARENT/$id" "${opts[@]}" "$CTR_IMAGE" "$id" "$@"
}

# shim_pids: our shims (containerd-shim-runc-v2 started for our socket).
shim_pids() {
	local f pid
	grep -lF -- "$CTR_SOCK" /proc/[0-9]*/cmdline 2>/dev/null | while read -r f; do
		pid="${f#/proc/}" pid="${pid%/cmdline}"
		[[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == */containerd-shim-runc-v2 ]] && echo "$pid"
	done
	return 0
}

# ctr_remove_all: kill and delete every task and container of our namespace.
# A shim stuck in a runtime call (a test that timed out) is released by
# killing the container processes in our cgroups, then removal is retried.
ctr_remove_all() {
	ctr_remove_all_once
	[ -z "$(ctr containers list --quiet 2>/dev/null)" ] && return 0
	kill_cgroup_pids
	ctr_remove_all_once
}

ctr_remove_all_once() {
	local c
	for c in $(ctr tasks list --quiet 2>/dev/null); do
		ctr tasks kill --signal SIGKILL "$c" >/dev/null 2>&1 || true
	done
	for c in $(ctr tasks list --quiet 2>/dev/null); do
		ctr tasks delete --force "$c" >/dev/null 2>&1 || true
	done
	for c in $(ctr containers list --quiet 2>/dev/null); do
		ctr containers delete "$c" >/dev/null 2>&1 || true
	done
}

# containerd_teardown: containers, then our shims and containerd (by pid).
containerd_teardown() {
	local pid
	[ -n "${CTR_SOCK:-}" ] || return 0
	ctr_remove_all
	for pid in $(shim_pids); do kill -KILL "$pid" 2>/dev/null || true; done
	if [ -n "${CONTAINERD_PID:-}" ]; then
		kill -TERM "$CONTAINERD_PID" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$CONTAINERD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$CONTAINERD_PID" 2>/dev/null || true
		wait "$CONTAINERD_PID" 2>/dev/null || true
	fi
}
