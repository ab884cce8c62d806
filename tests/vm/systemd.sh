#!/bin/bash
# The systemd cgroup manager against a real systemd: a Debian 12 image made
# with debootstrap (minbase + systemd + dbus + brig's shared libraries),
# booted in qemu (TCG) with systemd as PID 1 on pure cgroup v2. A oneshot
# unit runs tests/vm/systemd-tests.sh, which drives brig --systemd-cgroup and
# checks the scopes and the limits systemd applied; its TAP goes to the
# serial console, and this script prints it. Prints "1..0 # skip REASON"
# when qemu, a kernel, its initrd or debootstrap is missing, or the Debian
# mirror cannot be reached.
#
# The image (without brig) is cached in $VM_CACHE (default
# /var/cache/brig-vm) and booted with snapshot=on, so it stays pristine;
# brig and the tests go in on a second small disk.
#
# Environment: BRIG, SRCDIR, VM_KERNEL, VM_TIMEOUT (default 900),
# VM_BOOT_TIMEOUT (seconds until the tests must have begun, default 420; a
# stalled 2-vCPU boot is retried once with one vCPU), VM_CACHE,
# VM_MIRROR (default: the bookworm mirror of /etc/apt/sources.list*; no
# other host is ever used).
set -uo pipefail

SRCDIR="${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
BUILDDIR="${BUILDDIR:-$SRCDIR}"
BRIG="${BRIG:-$BUILDDIR/runtime/brig}"
VM_TIMEOUT="${VM_TIMEOUT:-900}"
VM_CACHE="${VM_CACHE:-/var/cache/brig-vm}"

skip() { echo "1..0 # skip $*"; exit 0; }
fail() { echo "1..1"; echo "not ok 1 - systemd vm: $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (package qemu-system-x86)"
KERNEL="${VM_KERNEL:-$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)}"
[ -n "$KERNEL" ] && [ -r "$KERNEL" ] || skip "no kernel image in /boot (package linux-image-amd64)"
INITRD="/boot/initrd.img-${KERNEL#/boot/vmlinuz-}"
[ -r "$INITRD" ] || skip "no $INITRD for $KERNEL (initramfs-tools)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is not installed (e2fsprogs)"
[ "$(id -u)" -eq 0 ] || skip "building the image needs root"
[ -x "$BRIG" ] || fail "$BRIG is not built"
[[ "$("$BRIG" --version 2>/dev/null)" == *+SYSTEMD* ]] || skip "$BRIG was built without the systemd manager"

# The Debian mirror apt is configured with for bookworm (never another
# host): a deb822 stanza of /etc/apt/sources.list.d/*.sources whose Suites
# has bookworm, else a "deb URI bookworm ..." line of sources.list.
apt_mirror() {
	awk 'FNR == 1 { uri = ""; suites = "" }
		/^URIs:/ { uri = $2 }
		/^Suites:/ { suites = " " substr($0, 8) " " }
		uri != "" && suites ~ / bookworm / { print uri; exit }
		/^$/ { uri = ""; suites = "" }' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1
	awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }
		$1 == "deb" && $2 ~ /^\[/ && $4 == "bookworm" { print $3; exit }' \
		/etc/apt/sources.list 2>/dev/null | head -n 1
}
MIRROR="${VM_MIRROR:-$(apt_mirror | head -n 1)}"
[ -n "$MIRROR" ] || skip "no Debian bookworm mirror in /etc/apt/sources.list* (set VM_MIRROR)"
PACKAGES="systemd,systemd-sysv,dbus,udev,kmod,libyajl2,libseccomp2,libcap2,libsystemd0,jq,busybox-static,procps"
IMAGE="$VM_CACHE/debian12-systemd-$(printf '%s' "$PACKAGES" | md5sum | cut -c1-8).img"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/brig-vm-systemd.XXXXXX")"
trap '[ "${VM_KEEP:-0}" = 1 ] && echo "# kept $WORK" >&2 || rm -rf "$WORK"' EXIT

if [ ! -s "$IMAGE" ]; then
	mkdir -p "$VM_CACHE"
	ROOTDIR="$WORK/root"
	if ! debootstrap --variant=minbase --include="$PACKAGES" bookworm "$ROOTDIR" "$MIRROR" \
		>"$WORK/debootstrap.log" 2>&1; then
		grep -qiE 'resolve|connect|unable to fetch|Failed getting release' "$WORK/debootstrap.log" &&
			skip "debootstrap cannot reach $MIRROR"
		tail -n 20 "$WORK/debootstrap.log" | sed 's/^/# /'
		fail "debootstrap failed"
	fi
	echo brig-systemd-vm >"$ROOTDIR/etc/hostname"
	: >"$ROOTDIR/etc/fstab"
	# the test unit: run the tests once, then power off whatever happened
	cat >"$ROOTDIR/etc/systemd/system/brig-tests.service" <<-'U'
	[Unit]
	Description=brig systemd cgroup manager tests
	After=dbus.service systemd-udev-settle.service
	Requires=dbus.service
	SuccessAction=poweroff-force
	FailureAction=poweroff-force
	[Service]
	Type=oneshot
	ExecStartPre=/bin/mount /dev/vdb /mnt
	ExecStart=/bin/bash /mnt/systemd-tests.sh
	StandardOutput=tty
	StandardError=tty
	TTYPath=/dev/ttyS0
	TimeoutStartSec=600
	[Install]
	WantedBy=multi-user.target
	U
	ln -s /etc/systemd/system/brig-tests.service \
		"$ROOTDIR/etc/systemd/system/multi-user.target.wants/brig-tests.service"
	# nothing else on the console
	ln -sf /dev/null "$ROOTDIR/etc/systemd/system/serial-getty@ttyS0.service"
	ln -sf /dev/null "$ROOTDIR/etc/systemd/system/getty@tty1.service"
	rm -rf "$ROOTDIR/var/cache/apt/archives/"*.deb
	truncate -s 1G "$WORK/image.img"
	mkfs.ext4 -q -F -L root -d "$ROOTDIR" "$WORK/image.img" || fail "mkfs.ext4 of the image failed"
	mv "$WORK/image.img" "$IMAGE"
	rm -rf "$ROOTDIR"
fi

# the second disk: brig, the tests and the busybox rootfs template
DATA="$WORK/data"
mkdir -p "$DATA"
cp "$BRIG" "$DATA/brig"
cp "$SRCDIR/tests/vm/systemd-tests.sh" "$DATA/"
(
	# shellcheck source=/dev/null
	BRIG_ROOTFS_CACHE="$DATA/rootfs" BATS_RUN_TMPDIR="$WORK" \
		source "$SRCDIR/tests/integration/helpers.bash" && build_rootfs_template
) || fail "could not build the busybox rootfs template"
# the sd_notify client of the NOTIFY_SOCKET checks (static)
[ -x "$BUILDDIR/tests/tools/sdnotify" ] && cp "$BUILDDIR/tests/tools/sdnotify" "$DATA/rootfs/bin/"
truncate -s 64M "$WORK/data.img"
mkfs.ext4 -q -F -d "$DATA" "$WORK/data.img" || fail "mkfs.ext4 of the data disk failed"

LOG="$WORK/console.log"
# boot SMP: one boot of the VM with SMP vCPUs; the console goes to $LOG.
# Under TCG on a loaded 2-core host, a 2-vCPU guest now and then stalls in
# early boot (soft lockups in systemd-udevd): when the kernel reports one,
# or the tests have not begun after VM_BOOT_TIMEOUT seconds, the boot is
# abandoned (status 125) so the caller can retry.
boot() {
	local smp="$1" pid t=0
	timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
		-machine q35,accel=tcg -cpu qemu64 -smp "$smp" -m 1G \
		-nographic -no-reboot -monitor none -serial stdio \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-drive file="$IMAGE",if=virtio,format=raw,snapshot=on \
		-drive file="$WORK/data.img",if=virtio,format=raw \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 quiet loglevel=3 systemd.unified_cgroup_hierarchy=1 systemd.show_status=0" \
		</dev/null >"$LOG" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if ! grep -qa 'BRIG-VM-TAP-BEGIN' "$LOG" &&
			{ grep -qa 'soft lockup' "$LOG" || [ "$t" -ge "$VM_BOOT_TIMEOUT" ]; }; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 125
		fi
		sleep 2
		t=$((t + 2))
	done
	wait "$pid"
}
VM_BOOT_TIMEOUT="${VM_BOOT_TIMEOUT:-420}"
start=$SECONDS
boot 2
qrc=$?
if [ "$qrc" -eq 125 ]; then
	echo "# systemd vm: the 2-vCPU boot stalled after $((SECONDS - start))s; console tail:"
	tr -d '\r' <"$LOG" | tail -n 5 | sed 's/^/#   /'
	echo "# systemd vm: booting again with one vCPU"
	start=$SECONDS
	boot 1
	qrc=$?
fi
elapsed=$((SECONDS - start))
tr -d '\r' <"$LOG" >"$LOG.txt"
if ! grep -q '^BRIG-VM-TAP-BEGIN' "$LOG.txt"; then
	echo "# systemd vm: no TAP (qemu exit $qrc after ${elapsed}s); console tail:"
	tail -n 40 "$LOG.txt" | sed 's/^/#   /'
	fail "the systemd VM did not run the tests"
fi
grep '^BRIG-VM:' "$LOG.txt" | sed 's/^/# /'
sed -n '/^BRIG-VM-TAP-BEGIN/,/^BRIG-VM-TAP-END/p' "$LOG.txt" | sed '1d;$d'
echo "# systemd vm: whole run ${elapsed}s (qemu exit $qrc)"
grep -q '^BRIG-VM-TAP-END rc=0' "$LOG.txt"
