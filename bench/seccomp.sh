#!/bin/bash
# Seccomp cost.
#
#  getpid-PROFILE  ns per getpid(2) of bench/getpid_loop.c (static, in the
#                  container's rootfs; the fastest of 20 rounds) under:
#                    none         no linux.seccomp
#                    hardened     `brig spec --hardened` (allowlist, ERRNO default)
#                    rules300     300 rules (ERRNO on 100 unused syscalls x 3
#                                 argument values), default ALLOW
#                    rules300-arg the same plus one argument-conditional rule
#                                 on getpid itself, so the kernel's per-syscall
#                                 "always allow" cache cannot skip the filter
#                  brig, runc and crun alternately; ratio to none per runtime.
#  create-...      wall time of `create` (then deleted, untimed) with no
#                  profile and with the hardened one: the cost of compiling
#                  the filter on the create path. brig caches compiled BPF in
#                  <root>/@seccomp-cache: "cold" runs use a fresh --root per
#                  create (compiles), "warm" the same root (cache hit).
#
# Usage: bench/seccomp.sh [-n N] [--brig P] [--runc P] [--crun P|--no-crun]
#   (N= and QUICK=1 work too; default N=10 loops and 30 creates)
# Writes bench/results/seccomp.csv, seccomp-summary.csv and seccomp.png.
set -euo pipefail
NAME=seccomp
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 10 2)"
CREATES="$(iterations 30 5)"
LOOPS=500000
[ "$QUICK" != 1 ] || LOOPS=100000
[ -z "${N:-}" ] || CREATES="$N"

note "seccomp: getpid loop ($LOOPS calls, $ITERS runs per profile) and create with/without the hardened profile ($CREATES each)"
versions
host_line

# The rootfs with the workload.
cp -a "$BRIG_ROOTFS_CACHE" "$WORK/rootfs-sc"
gcc -static -O2 -o "$WORK/rootfs-sc/getpid_loop" "$HERE/getpid_loop.c" || die "cannot build getpid_loop"

# Profiles as jq filters on a config.
mkdir -p "$WORK/hardened"
"$BRIG" spec --bundle "$WORK/hardened" --hardened
jq '.linux.seccomp' "$WORK/hardened/config.json" >"$WORK/hardened.json"
# 100 syscalls neither the loop nor a runtime's last steps call.
UNUSED=(acct add_key adjtimex bpf chroot clock_adjtime clock_settime create_module delete_module
	fanotify_init fanotify_mark finit_module fsconfig fsmount fsopen fspick get_kernel_syms
	get_mempolicy getcpu getpgid getpgrp getpriority getsid getxattr idle init_module
	inotify_init inotify_init1 io_cancel io_destroy io_getevents io_setup io_submit ioperm
	iopl ioprio_get ioprio_set kcmp kexec_file_load kexec_load keyctl lgetxattr link linkat
	listxattr llistxattr lookup_dcookie lremovexattr lsetxattr mbind memfd_create migrate_pages
	mincore mknod mknodat mlock mlock2 mlockall modify_ldt mount move_mount move_pages mq_getsetattr
	mq_notify mq_open mq_timedreceive mq_timedsend mq_unlink msgctl msgget msgrcv msgsnd munlock
	munlockall name_to_handle_at nfsservctl open_by_handle_at open_tree perf_event_open pivot_root
	process_vm_readv process_vm_writev quotactl reboot remap_file_pages removexattr request_key
	semctl semget semop semtimedop set_mempolicy setdomainname sethostname setns setxattr swapoff
	swapon sync_file_range syncfs sysfs)
[ "${#UNUSED[@]}" -ge 100 ] || die "need 100 unused syscalls, have ${#UNUSED[@]}"
printf '%s\n' "${UNUSED[@]:0:100}" | jq -R . | jq -s '
	{ defaultAction: "SCMP_ACT_ALLOW",
	  architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
	  syscalls: [ range(0; 3) as $k | .[] | { names: [.], action: "SCMP_ACT_ERRNO", errnoRet: 1,
		args: [ { index: 1, value: (1000 + $k), op: "SCMP_CMP_EQ" } ] } ] }' >"$WORK/rules300.json"
[ "$(jq '.syscalls | length' "$WORK/rules300.json")" = 300 ] || die "rules300 has not 300 rules"
jq '.syscalls += [ { names: ["getpid"], action: "SCMP_ACT_ERRNO", errnoRet: 1,
	args: [ { index: 0, value: 123456789, op: "SCMP_CMP_EQ" } ] } ]' "$WORK/rules300.json" >"$WORK/rules300-arg.json"
PROFILES=(none hardened rules300 rules300-arg)
profile_filter() {
	case "$1" in
	none) echo 'del(.linux.seccomp)' ;;
	*) echo ".linux.seccomp = \$p" ;;
	esac
}

# make_sc_bundle RT PROFILE DIR CG ARGS_JSON
make_sc_bundle() {
	local rt="$1" p="$2" dir="$3"
	make_bundle "$rt" "$dir" "$4" ".process.args = $5" "$WORK/rootfs-sc"
	if [ "$p" != none ]; then
		jq --slurpfile p "$WORK/$p.json" '.linux.seccomp = $p[0]' "$dir/config.json" >"$dir/c.json"
	else
		jq 'del(.linux.seccomp)' "$dir/config.json" >"$dir/c.json"
	fi
	mv "$dir/c.json" "$dir/config.json"
}
for rt in "${RUNTIMES[@]}"; do
	for p in "${PROFILES[@]}"; do
		make_sc_bundle "$rt" "$p" "$WORK/loop-$rt-$p" "$rt-loop-$p" "[\"/getpid_loop\", \"$LOOPS\"]"
		make_sc_bundle "$rt" "$p" "$WORK/true-$rt-$p" "$rt-true-$p" '["/bin/true"]'
	done
done

# The filters must really be in force: the container's init reports
# seccomp mode 2 (filter) with a profile and 0 without.
for rt in "${RUNTIMES[@]}"; do
	for p in none hardened; do
		make_sc_bundle "$rt" "$p" "$WORK/chk-$rt-$p" "$rt-chk-$p" '["/bin/sh", "-c", "grep ^Seccomp: /proc/self/status"]'
		out="$(rt_cmd "$rt" run --bundle "$WORK/chk-$rt-$p" "chk-$p" </dev/null 2>>"$WORK/err")" ||
			die "$rt: profile $p does not run: $(tail -n3 "$WORK/err")"
		note "$rt, profile $p: $(echo $out)"
	done
done

for i in $(seq "$ITERS"); do
	for p in "${PROFILES[@]}"; do
		for rt in "${RUNTIMES[@]}"; do
			if v="$(rt_cmd "$rt" run --bundle "$WORK/loop-$rt-$p" "l$i-$p" </dev/null 2>>"$WORK/err")" && [ -n "$v" ]; then
				record "$rt" "getpid-$p" "$i" "$v" ns
			else
				fail "$rt" "getpid-$p"
				recover "$rt"
			fi
		done
	done
done

# create_once RT PROFILE ID ROOT: create (timed) then delete (untimed).
create_once() {
	local rt="$1" p="$2" id="$3" root="$4" t
	timed t "${BIN[$rt]}" --root "$root" create --bundle "$WORK/true-$rt-$p" "$id" || { echo fail; return 1; }
	"${BIN[$rt]}" --root "$root" delete --force "$id" >/dev/null 2>>"$WORK/err" || true
	echo "$t"
}
for rt in "${RUNTIMES[@]}"; do
	for p in none hardened; do create_once "$rt" "$p" "w-$p" "$WORK/root-$rt" >/dev/null || true; done
done
for i in $(seq "$CREATES"); do
	for p in none hardened; do
		for rt in "${RUNTIMES[@]}"; do
			if v="$(create_once "$rt" "$p" "c$i-$p" "$WORK/root-$rt")"; then
				record "$rt" "create-$p-warm" "$i" "$v" us
			else fail "$rt" "create-$p-warm"; recover "$rt"; fi
		done
		# brig with an empty root: no compiled filter in the cache.
		fresh="$WORK/root-brig-fresh$i$p"
		if v="$(create_once brig "$p" "f$i-$p" "$fresh")"; then
			record brig "create-$p-cold" "$i" "$v" us
		else fail brig "create-$p-cold"; fi
		rm -rf "$fresh"
	done
done

for p in "${PROFILES[@]}"; do
	summary_row "getpid-$p" "getpid ns/call $p" ns 1
done
for s in create-none-warm create-hardened-warm create-none-cold create-hardened-cold; do
	summary_row "$s" "$s (median)" ms 1000
done
print_summary
for rt in "${RUNTIMES[@]}"; do
	base="$(stat_of "$rt" getpid-none)"
	line="$rt getpid vs no filter:"
	for p in hardened rules300 rules300-arg; do
		line="$line $p $(ratio "$(stat_of "$rt" "getpid-$p")" "$base")x"
	done
	note "$line"
done
hc="$(stat_of brig create-hardened-cold)"; hw="$(stat_of brig create-hardened-warm)"
nc="$(stat_of brig create-none-cold)"; nw="$(stat_of brig create-none-warm)"
note "brig filter compile on create (cold - warm with hardened, minus the same for no profile): $(awk -v a="$hc" -v b="$hw" -v c="$nc" -v d="$nw" 'BEGIN { printf "%.2f ms", ((a - b) - (c - d)) / 1000 }')"
for rt in "${RUNTIMES[@]}"; do
	note "$rt create: hardened - none (warm root) = $(awk -v a="$(stat_of "$rt" create-hardened-warm)" -v b="$(stat_of "$rt" create-none-warm)" 'BEGIN { printf "%.2f ms", (a - b) / 1000 }')"
done
r="$(ratio "$(stat_of brig getpid-hardened)" "$(stat_of brig getpid-none)")"
note "target: brig's hardened profile costs < 5% on getpid: $(awk -v r="$r" 'BEGIN { print (r != "NA" && r < 1.05) ? "met" : "NOT met" }') ($r)"
plot_summary "getpid(2) in a container under seccomp profiles (ns per call)" "ns/call" getpid
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
