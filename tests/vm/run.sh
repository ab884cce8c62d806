#!/bin/bash
# brig's pure cgroup v2 test mode: boot Debian's kernel (linux-image-amd64)
# in qemu-system-x86_64 under TCG with an initramfs that holds brig, its
# shared libraries, busybox, bash, bats, jq, the cgroup bats files and the
# busybox rootfs template; the VM mounts only cgroup2 and prints the TAP of
# the bats run on its serial console; this script prints that TAP.
#
# Then tests/vm/systemd.sh checks the systemd manager in a second VM that
# boots Debian with systemd as PID 1; both TAP streams are printed as one.
#
# Called by tests/run-tests.sh (BRIG, SRCDIR, BUILDDIR set). Prints
# "1..0 # skip REASON" when qemu or a kernel is missing.
#
# Environment:
#   BRIG            the brig binary (default $BUILDDIR/runtime/brig)
#   VM_TESTS        bats files of tests/integration to run (default cgroups.bats
#                   dropin_notify.bats: the conformance harness, isolate.sh,
#                   under a cgroup2 root that delegates controllers)
#   VM_KERNEL       kernel image (default: the newest /boot/vmlinuz-*)
#   VM_TIMEOUT      seconds for the whole VM run (default 900)
#   VM_MEM          guest memory (default 1G)
#   VM_CPU          qemu -cpu model (default qemu64: plain SSE2 code runs
#                   faster under TCG than the AVX paths "max" makes glibc pick)
#   VM_KEEP=1       keep the work directory (initramfs, console log)
#   VM_SYSTEMD=0    leave out the systemd VM
#   VM_CONFORMANCE=1  also run the OCI conformance suite (tests/conformance,
#                   built on the host) in the pure v2 VM, under a cgroup2 root
#                   that delegates its controllers, as systemd's does (about
#                   4 minutes under TCG on 2 cores; give VM_MEM=2G). Not run
#                   by make check: the suite's cgroup checks read v1 files
set -uo pipefail

SRCDIR="${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
BUILDDIR="${BUILDDIR:-$SRCDIR}"
BRIG="${BRIG:-$BUILDDIR/runtime/brig}"
VM_TESTS="${VM_TESTS:-cgroups.bats dropin_notify.bats}"
VM_TIMEOUT="${VM_TIMEOUT:-900}"
VM_MEM="${VM_MEM:-1G}"
VM_CPU="${VM_CPU:-qemu64}"

skip() {
	echo "1..0 # skip $*"
	exit 0
}

fail() {
	echo "1..1"
	echo "not ok 1 - vm: $*"
	exit 1
}

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (package qemu-system-x86)"
KERNEL="${VM_KERNEL:-$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)}"
[ -n "$KERNEL" ] && [ -r "$KERNEL" ] || skip "no kernel image in /boot (package linux-image-amd64)"
[ -x "$BRIG" ] || fail "$BRIG is not built"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || skip "busybox is not installed (package busybox-static)"
for p in bash bats jq cpio; do
	command -v "$p" >/dev/null || skip "$p is not installed"
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/brig-vm.XXXXXX")"
cleanup() {
	if [ "${VM_KEEP:-0}" = 1 ]; then
		echo "# vm: work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
ROOT="$WORK/initramfs"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,proc,sys,dev,newroot,tmp,run,tests/integration}

# copy_with_libs FILE...: FILE at the same path plus every shared library ldd
# names (and the dynamic loader).
copy_with_libs() {
	local f lib
	for f in "$@"; do
		mkdir -p "$ROOT$(dirname "$f")"
		cp -L "$f" "$ROOT$f"
		for lib in $(ldd "$f" 2>/dev/null | grep -oE '/[^ ]+'); do
			[ -e "$ROOT$lib" ] && continue
			mkdir -p "$ROOT$(dirname "$lib")"
			cp -L "$lib" "$ROOT$lib"
		done
	done
}

# busybox for the VM's own tools; real bash, bats and jq for the tests
cp "$BUSYBOX" "$ROOT/bin/busybox"
for a in $("$BUSYBOX" --list-full); do
	[ -e "$ROOT/$a" ] || ln -s /bin/busybox "$ROOT/$a"
done
# util-linux's unshare: busybox's has no -C (cgroup namespace), which the
# conformance harness (tests/conformance/isolate.sh) needs
rm -f "$ROOT/bin/bash" "$ROOT/usr/bin/jq" "$ROOT/usr/bin/unshare"
copy_with_libs "$(command -v bash)" "$(command -v jq)" /usr/bin/unshare
[ -e "$ROOT/bin/bash" ] || ln -s "$(command -v bash)" "$ROOT/bin/bash"
copy_with_libs "$BRIG"
mv "$ROOT$BRIG" "$ROOT/usr/local/bin/brig"
BATS_BIN="$(readlink -f "$(command -v bats)")"
mkdir -p "$ROOT/usr/lib" "$ROOT/usr/libexec"
cp -a /usr/lib/bats-core "$ROOT/usr/lib/" 2>/dev/null
cp -a /usr/libexec/bats-core "$ROOT/usr/libexec/" 2>/dev/null
rm -f "$ROOT/usr/bin/bats"
cp -a "$(command -v bats)" "$ROOT/usr/bin/bats"
[ -e "$ROOT$BATS_BIN" ] || { mkdir -p "$ROOT$(dirname "$BATS_BIN")"; cp -a "$BATS_BIN" "$ROOT$BATS_BIN"; }

cat >"$ROOT/etc/passwd" <<'E'
root:x:0:0:root:/root:/bin/sh
E
echo "root:x:0:" >"$ROOT/etc/group"

# the tests and the busybox rootfs template (built here, as the tests do)
cp "$SRCDIR/tests/integration/helpers.bash" "$SRCDIR/tests/integration/confine_helpers.bash" \
	"$ROOT/tests/integration/"
mkdir -p "$ROOT/tests/conformance" "$ROOT/usr/local/tests/tools"
cp "$SRCDIR/tests/conformance/isolate.sh" "$ROOT/tests/conformance/"
# static test tools, where confine_helpers.bash looks for them next to
# /usr/local/bin/brig (tests that need a missing one skip)
for t in sdnotify confine_probe; do
	[ -x "$BUILDDIR/tests/tools/$t" ] && cp "$BUILDDIR/tests/tools/$t" "$ROOT/usr/local/tests/tools/"
done
for t in $VM_TESTS; do
	[ -f "$SRCDIR/tests/integration/$t" ] || fail "no such test file: tests/integration/$t"
	cp "$SRCDIR/tests/integration/$t" "$ROOT/tests/integration/"
done
(
	# shellcheck source=/dev/null
	BRIG_ROOTFS_CACHE="$ROOT/rootfs-template" BATS_RUN_TMPDIR="$WORK" \
		source "$SRCDIR/tests/integration/helpers.bash" && build_rootfs_template
) || fail "could not build the busybox rootfs template"
printf 'VM_TESTS=%q\n' "$VM_TESTS" >"$ROOT/vm.env"
if [ "${VM_CONFORMANCE:-0}" = 1 ]; then
	(
		# shellcheck source=/dev/null
		. "$SRCDIR/tests/conformance/build.sh"
		cache="${CONFORMANCE_CACHE:-/var/cache/brig-conformance}"
		conformance_build "$cache" >&2 || { echo "$SKIP_REASON" >&2; exit 1; }
		rootfs="$(conformance_rootfs_path "$cache")"
		[ -f "$rootfs" ] || conformance_rootfs "$rootfs" || exit 1
		mkdir -p "$ROOT/conformance-suite"
		cp -a "$SUITE_DIR/runtimetest" "$SUITE_DIR/bin" "$ROOT/conformance-suite/"
		cp "$rootfs" "$ROOT/conformance-suite/rootfs.tar.gz"
		cp "$SRCDIR"/tests/conformance/{run.sh,build.sh,EXPECTED} "$ROOT/tests/conformance/"
	) || fail "could not build the conformance suite for the VM"
	# GNU tar: the suite unpacks its gzipped rootfs with plain `tar -xf`,
	# which busybox's tar cannot
	rm -f "$ROOT/bin/tar" "$ROOT/usr/bin/tar"
	copy_with_libs "$(readlink -f "$(command -v tar)")"
	[ -e "$ROOT/usr/bin/tar" ] || ln -s "$(readlink -f "$(command -v tar)")" "$ROOT/usr/bin/tar"
	echo "VM_CONFORMANCE=1" >>"$ROOT/vm.env"
fi
cp "$SRCDIR/tests/vm/init" "$ROOT/init"
chmod 0755 "$ROOT/init"

(cd "$ROOT" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz" ||
	fail "could not pack the initramfs"

# -no-reboot + panic=-1: a crash ends qemu instead of looping
LOG="$WORK/console.log"
start=$SECONDS
timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
	-machine q35,accel=tcg -cpu "$VM_CPU" -smp 2 -m "$VM_MEM" \
	-nographic -no-reboot -monitor none -serial stdio \
	-kernel "$KERNEL" -initrd "$WORK/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3 cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1" \
	</dev/null >"$LOG" 2>&1
qrc=$?
elapsed=$((SECONDS - start))

tr -d '\r' <"$LOG" >"$LOG.txt"
if ! grep -q '^BRIG-VM-TAP-BEGIN' "$LOG.txt"; then
	echo "# vm: no TAP from the VM (qemu exit $qrc after ${elapsed}s); console tail:"
	tail -n 40 "$LOG.txt" | sed 's/^/#   /'
	fail "the VM did not run the tests"
fi
grep '^BRIG-VM:' "$LOG.txt" | sed 's/^/# /'
sed -n '/^BRIG-VM-TAP-BEGIN/,/^BRIG-VM-TAP-END/p' "$LOG.txt" | sed '1d;$d' >"$WORK/v2.tap"
echo "# vm: $KERNEL, whole run ${elapsed}s (qemu exit $qrc)"
rc=0
grep -q '^BRIG-VM-TAP-END rc=0' "$LOG.txt" || rc=1
: >"$WORK/conf.tap"
if [ "${VM_CONFORMANCE:-0}" = 1 ]; then
	if grep -q '^BRIG-VM-CONF-END' "$LOG.txt"; then
		sed -n '/^BRIG-VM-CONF-BEGIN/,/^BRIG-VM-CONF-END/p' "$LOG.txt" | sed '1d;$d' |
			sed -E 's/^([0-9]+ passed, [0-9]+ failed.*)/# conformance in the v2 vm: \1/' >"$WORK/conf.tap"
		grep -q '^BRIG-VM-CONF-END rc=0' "$LOG.txt" || rc=1
	else
		echo "not ok 998 - vm: the conformance suite did not finish in the VM" >"$WORK/conf.tap"
		rc=1
	fi
fi
if ! grep -q '^BRIG-VM-TAP-END' "$LOG.txt"; then
	# count the tests that never ran as one failure, and show why
	echo "not ok 999 - vm: the VM stopped before the tests ended (qemu exit $qrc); console tail:" >>"$WORK/v2.tap"
	tail -n 30 "$LOG.txt" | sed 's/^/#   /' >>"$WORK/v2.tap"
fi

# The systemd manager against a real systemd (VM_SYSTEMD=0 leaves it out).
: >"$WORK/sd.tap"
if [ "${VM_SYSTEMD:-1}" != 0 ]; then
	bash "$SRCDIR/tests/vm/systemd.sh" >"$WORK/sd.tap" 2>&1 || rc=1
fi

# One TAP stream: the v2 tests, then the systemd ones, renumbered.
n=0
out=()
while IFS= read -r line; do
	case "$line" in
	"ok "* | "not ok "*)
		n=$((n + 1))
		out+=("$(sed -E "s/^(not ok|ok) [0-9]+/\\1 $n/" <<<"$line")") ;;
	"1..0 # skip"*)
		n=$((n + 1))
		out+=("ok $n # skip systemd vm:${line#1..0 # skip}") ;;
	1..*) ;;
	*) out+=("$line") ;;
	esac
done < <(cat "$WORK/v2.tap"; sed -E 's/^((not )?ok [0-9]+) (- )?/\1 conformance vm: /' "$WORK/conf.tap"; sed -E 's/^((not )?ok [0-9]+) (- )?/\1 systemd vm: /' "$WORK/sd.tap")
echo "1..$n"
printf '%s\n' "${out[@]}"
exit "$rc"
