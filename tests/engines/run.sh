#!/bin/bash
# Run the engine tests (podman.bats, containerd.bats) in a private mount
# namespace and print TAP. Called by tests/run-tests.sh; by hand:
#   tests/engines/run.sh [FILE.bats...]
#   ENGINE_RUNTIME=/usr/sbin/runc tests/engines/run.sh    (the reference)
# Environment: BRIG (the brig binary), ENGINE_RUNTIME (the runtime the engines
# call, default $BRIG), BUILDDIR/SRCDIR as for the other suites, BATS_OPTS
# (extra bats options, e.g. BATS_OPTS="-T -f pause").
#
# unshare -m --propagation private: every mount the tests, the engines and
# the containers make (tmpfs over /run/containerd and friends, overlay and
# rootfs mounts) lives and dies in this namespace; nothing propagates to the
# host. BRIG_ENGINES_MNTNS names the namespace so that helpers.bash can
# refuse to run outside it.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
SRCDIR="${SRCDIR:-$(cd "$here/../.." && pwd)}"
BUILDDIR="${BUILDDIR:-$SRCDIR}"
BRIG="${BRIG:-$BUILDDIR/runtime/brig}"
export SRCDIR BUILDDIR BRIG

files=("$@")
[ "${#files[@]}" -gt 0 ] || files=("$here"/podman.bats "$here"/containerd.bats)

skip_all() {
	local f
	echo "1..${#files[@]}"
	for f in "${files[@]}"; do
		echo "ok - $(basename "$f") # skip $1"
	done
	exit 0
}
command -v bats >/dev/null || skip_all "bats is not installed (contrib/install-deps.sh)"
[ "$(id -u)" -eq 0 ] || skip_all "the engine tests need root"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"

cd "$here" || exit 1
exec unshare --mount --propagation private -- \
	sh -c 'BRIG_ENGINES_MNTNS="$(readlink /proc/self/ns/mnt)"; export BRIG_ENGINES_MNTNS; exec bats --tap ${BATS_OPTS:-} "$@"' \
	engines "${files[@]}"
