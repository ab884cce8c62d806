# Helpers for the confinement tests (seccomp, caps, userns, security).
# Load after helpers.bash.

# The build tree's test tools (tests/tools/), next to the brig binary.
CONFINE_TOOLS="${BUILDDIR:+$BUILDDIR/tests/tools}"
CONFINE_TOOLS="${CONFINE_TOOLS:-$(cd "$(dirname "$BRIG")/.." 2>/dev/null && pwd)/tests/tools}"
CONFINE_PROBE="$CONFINE_TOOLS/confine_probe"
SECCOMP_LISTENER="$CONFINE_TOOLS/seccomp_listener"

# install_probe [MODE]: copy the static confine_probe into the rootfs
# (/bin/confine_probe), optionally chmod'ed (e.g. 4755 for setuid root).
install_probe() {
	need_built "$CONFINE_PROBE"
	cp "$CONFINE_PROBE" "$BUNDLE/rootfs/bin/confine_probe"
	chown 0:0 "$BUNDLE/rootfs/bin/confine_probe"
	chmod "${1:-0755}" "$BUNDLE/rootfs/bin/confine_probe"
}

# set_seccomp JSON: linux.seccomp = JSON.
set_seccomp() {
	update_config ".linux.seccomp = $1"
}

# cap_mask NAME...: the /proc/PID/status hex mask (16 digits) of the named
# capabilities.
cap_mask() {
	local n mask=0 bit
	for n in "$@"; do
		case "$n" in
		CAP_CHOWN) bit=0 ;; CAP_DAC_OVERRIDE) bit=1 ;; CAP_FOWNER) bit=3 ;;
		CAP_KILL) bit=5 ;; CAP_SETGID) bit=6 ;; CAP_SETUID) bit=7 ;;
		CAP_SETPCAP) bit=8 ;; CAP_NET_BIND_SERVICE) bit=10 ;; CAP_NET_RAW) bit=13 ;;
		CAP_SYS_CHROOT) bit=18 ;; CAP_SYS_PTRACE) bit=19 ;; CAP_SYS_ADMIN) bit=21 ;;
		CAP_MKNOD) bit=27 ;; CAP_AUDIT_WRITE) bit=29 ;;
		*) echo "cap_mask: unknown $n" >&2; return 1 ;;
		esac
		mask=$((mask | (1 << bit)))
	done
	printf '%016x\n' "$mask"
}

# wait_thief LINE: wait (up to 30s) until tests/tools/exe_thief's output
# ($BUNDLE/rootfs$OUT, boundary_exe*.bats) has LINE.
wait_thief() {
	local i
	for i in $(seq 300); do
		grep -qx "$1" "$BUNDLE/rootfs$OUT" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the thief never said '$1':" >&2
	cat "$BUNDLE/rootfs$OUT" >&2 2>/dev/null
	return 1
}
