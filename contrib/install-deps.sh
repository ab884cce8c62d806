#!/bin/bash
# Install everything needed to build and test brig on Debian 12 (bookworm),
# from Debian packages only. Idempotent: packages already installed are not
# touched, and `apt-get update` runs only when the package lists are missing,
# older than a day, or a package cannot be found.
#
# Usage: contrib/install-deps.sh          (as root, or through sudo)
set -euo pipefail

PACKAGES=(
	# Build: autotools and the C toolchain
	build-essential gcc autoconf automake libtool pkg-config make
	# Libraries brig links against (found through pkg-config)
	libyajl-dev libseccomp-dev libsystemd-dev
	# brig serve (brig-serve, docs/serve.md): libmicrohttpd for HTTP/1.1,
	# crypt_r for the API keys' fingerprints
	libmicrohttpd-dev libcrypt-dev
	# tests/integration/serve.bats: the e2b SDK from the npm registry runs on
	# Node.js (>= 20.18.1), curl sends the hostile requests
	nodejs curl
	# clang: the second compiler checked in CI, and libFuzzer for the
	# config-parser fuzz target (-fsanitize=fuzzer,address needs compiler-rt)
	clang libclang-rt-14-dev
	# Docs: renders docs/brig.8.md into the installed man page (without it
	# the build falls back to docs/md2roff.awk)
	go-md2man
	# Tests: bats harness, JSON tool, busybox rootfs fixtures (no downloads),
	# `file` to check busybox is static
	bats jq busybox-static file
	# Reference runtime: the tests run against runc too; the benchmarks
	# compare brig with it
	runc
	# `brig checkpoint` / `brig restore` run the criu binary (no libcriu in
	# Debian 12); tests/integration/checkpoint.bats
	criu
	# tests/vm/: the pure cgroup v2 test VM boots Debian's kernel in qemu (TCG)
	qemu-system-x86 linux-image-amd64 cpio
	# tests/vm/systemd.sh: the systemd VM's Debian image, made once with
	# debootstrap from the configured mirror (signatures checked with the
	# archive keyring and gpgv) into an ext4 file (mkfs.ext4 -d) and cached
	# in /var/cache/brig-vm; the kernel's initrd comes from initramfs-tools
	debootstrap debian-archive-keyring gpgv e2fsprogs initramfs-tools
	# Tests and benchmarks: /usr/bin/time -f %M (peak RSS), python3 for
	# JSON checks, ip/ps/nsenter/unshare/findmnt/setsid/script, strace to
	# hold or fail one system call of brig (boundary_faults, boundary_exe)
	time python3 iproute2 procps util-linux bsdutils strace
	# OCI conformance (tests/conformance): builds the runtime-tools
	# validation suite offline in GOPATH mode from these Go sources
	golang-go golang-github-opencontainers-specs-dev
	golang-github-opencontainers-selinux-dev golang-github-google-uuid-dev
	golang-github-mrunalp-fileutils-dev golang-github-sirupsen-logrus-dev
	golang-github-hashicorp-go-multierror-dev golang-github-xeipuuv-gojsonschema-dev
	golang-github-blang-semver-dev golang-gocapability-dev golang-golang-x-sys-dev
	golang-github-urfave-cli-dev
	# Engine tests (tests/engines): podman through conmon, containerd
	# through containerd-shim-runc-v2 (ctr), skopeo to write the OCI archive
	podman conmon containerd skopeo
	# Kubernetes CRI suite (tests/cri): containerd's CRI plugin with Debian's
	# CNI plugins (bridge, host-local, loopback), driven by a python gRPC
	# client whose messages protoc compiles at test time
	containernetworking-plugins python3-grpcio python3-protobuf protobuf-compiler
)

# npm: NodeSource's nodejs package brings its own; Debian's nodejs needs
# Debian's npm package (which would conflict with NodeSource's).
command -v npm >/dev/null || PACKAGES+=(npm)

log() { printf 'install-deps: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "run as root (or install sudo)"
	SUDO=sudo
fi
command -v apt-get >/dev/null || die "apt-get not found: this script supports Debian 12 only"

export DEBIAN_FRONTEND=noninteractive

missing_packages() {
	# One dpkg-query for all; names it does not know are simply not listed.
	local -A installed=()
	local p status
	while read -r p status; do
		[ "$status" = installed ] && installed[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
	for p in "${PACKAGES[@]}"; do
		[ -n "${installed[$p]:-}" ] || printf '%s\n' "$p"
	done
}

lists_are_stale() {
	# Fresh when some package index was written within the last day.
	local fresh
	fresh="$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n1)"
	[ -z "$fresh" ]
}

apt_update() {
	log "apt-get update"
	$SUDO apt-get update -qq || die "apt-get update failed"
}

apt_install() {
	$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

mapfile -t missing < <(missing_packages)
if [ "${#missing[@]}" -eq 0 ]; then
	log "all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

log "installing: ${missing[*]}"
updated=0
if lists_are_stale; then
	apt_update
	updated=1
fi
if ! apt_install "${missing[@]}"; then
	# A package not found usually means old lists: refresh once and retry.
	[ "$updated" -eq 1 ] && die "apt-get install ${missing[*]} failed"
	apt_update
	apt_install "${missing[@]}" || die "apt-get install ${missing[*]} failed"
fi

mapfile -t still < <(missing_packages)
[ "${#still[@]}" -eq 0 ] || die "still missing after install: ${still[*]}"
log "done"
