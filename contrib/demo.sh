#!/bin/bash
# Show brig working: write a default config with `brig spec`, print a few
# features, and run a busybox container that reports what it sees.
#
# Usage: contrib/demo.sh [path/to/brig]      (as root)
set -euo pipefail

BRIG="${1:-$(cd "$(dirname "$0")/.." && pwd)/runtime/brig}"
[ -x "$BRIG" ] || { echo "demo: $BRIG not built (run make first)" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "demo: install busybox-static" >&2; exit 1; }

work="$(mktemp -d /tmp/brig-demo.XXXXXX)"
root="$work/state"
# The container's cgroup goes under brig's default parent /brig; remove that
# parent at the end where this demo made it and it is empty.
parents() { ls -d /sys/fs/cgroup/*/brig /sys/fs/cgroup/brig 2>/dev/null || true; }
parents_before=" $(parents | tr '\n' ' ') "
cleanup() {
	"$BRIG" --root "$root" delete --force demo >/dev/null 2>&1 || true
	for d in $(parents); do
		[[ "$parents_before" == *" $d "* ]] || rmdir "$d" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

# A busybox root filesystem from Debian's busybox-static.
mkdir -p "$work/bundle/rootfs"/{bin,proc,sys,dev,tmp,etc}
cp /bin/busybox "$work/bundle/rootfs/bin/"
for applet in $(/bin/busybox --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$work/bundle/rootfs/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$work/bundle/rootfs/etc/passwd"
echo 'root:x:0:' >"$work/bundle/rootfs/etc/group"

cd "$work/bundle"
"$BRIG" --version
echo
echo "== brig spec: a default config.json =="
"$BRIG" spec
jq -c '{ociVersion, args: .process.args, namespaces: [.linux.namespaces[].type]}' config.json
echo
echo "== brig features (excerpt) =="
"$BRIG" features | jq -c '{ociVersionMax, namespaces: .linux.namespaces, seccomp: .linux.seccomp.enabled}'
echo
echo "== brig run: a busybox container =="
jq '.process.terminal = false | .process.args = ["sh", "-c",
  "echo \"hostname: $(hostname)\"; echo \"pid in container: $$\"; id; grep CapEff /proc/self/status; ps -o pid,comm; if (echo x > /proc/sys/kernel/hostname) 2>/dev/null; then echo \"/proc/sys is writable\"; else echo \"/proc/sys is read-only\"; fi"]' \
	config.json >config.json.new && mv config.json.new config.json
"$BRIG" --root "$root" run demo
echo "container exited with status $?"
