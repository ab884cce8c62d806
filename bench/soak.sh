#!/bin/bash
# Soak (issue 25 item 3): CYCLES cycles of claim -> `exec /bin/true` ->
# release over a pool of SIZE members of the default `brig spec --sandbox
# --ephemeral` config, in LOOPS client loops; a snapshot of what could grow
# before, after, and after settling (polled every 2 s, up to 60 s, until
# the kernel's background frees stop moving: network namespaces, keys,
# dying cgroups); and the p99 of the first and the last 1,000 claims
# (target: the last within 1.2x of the first). What is the bench's own is
# counted exactly (its cgroups, its mount namespace, its state root and
# registry, the keys of its uid range, the BPF programs attached to its
# members' cgroups and their maps); the host-wide figures (memory, slab,
# open files, brig_* BPF objects) include the rest of the machine.
# See bench/pool_common.sh for the private mount namespace and tmpfs.
#
# Usage: bench/soak.sh [CYCLES]   (BRIG=PATH, SIZE=200, LOOPS=2;
#   CYCLES default 10000)
# Writes bench/results/soak.txt.
NAME=soak
# shellcheck source=bench/pool_common.sh
source "$(dirname "$0")/pool_common.sh"
CYCLES="${1:-${CYCLES:-10000}}"
SIZE="${SIZE:-200}"
LOOPS="${LOOPS:-2}"
OUT="$RESULTS/soak.txt"
gcc -O2 -o "$WORK/bpf_count" "$HERE/bpf_count.c" || die "cannot build bench/bpf_count.c"
RANGE_FIRST=1610612736
RANGE_END=$((RANGE_FIRST + 4096 * 65536))

meminfo() { awk -v k="$1" '$1 == k ":" { print $2 }' /proc/meminfo; }
slab() { awk -v k="$1" '$1 == k { print $2 }' /proc/slabinfo; }
cg_dirs() { find /sys/fs/cgroup/*/"$CG_PARENT" -mindepth 1 -type d 2>/dev/null | wc -l; }
member_pids() { cat /sys/fs/cgroup/pids/"$CG_PARENT"/*/cgroup.procs 2>/dev/null || true; }

# snapshot LABEL: KEY VALUE lines into $WORK/snap.LABEL
snapshot() {
	local f="$WORK/snap.$1" p v
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	{
		echo "load $(load)"
		echo "host.open_files $(cut -f1 /proc/sys/fs/file-nr)"
		v=0
		for p in $(member_pids); do v=$((v + $(ls "/proc/$p/fd" 2>/dev/null | wc -l))); done
		echo "members.fds $v"
		echo "members.processes $(member_pids | wc -l)"
		echo "members.zombies $(for p in $(member_pids); do awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null; done | grep -c Z || true)"
		echo "members.pss_kib $(for p in $(member_pids); do awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null; done | awk '{ s += $1 } END { print s + 0 }')"
		for k in MemAvailable AnonPages Slab SUnreclaim KernelStack PageTables VmallocUsed Percpu; do
			echo "host.$k $(meminfo "$k")"
		done
		echo "pool.memory_bytes $(cat /sys/fs/cgroup/memory/"$CG_PARENT"/memory.usage_in_bytes 2>/dev/null || echo NA)"
		echo "keys.range_keys $(awk -v a="$RANGE_FIRST" -v b="$RANGE_END" '{ u = $1 + 0 } u >= a && u < b { split($4, q, "/"); n += q[1] } END { print n + 0 }' /proc/key-users)"
		echo "keys.range_uids $(awk -v a="$RANGE_FIRST" -v b="$RANGE_END" '{ u = $1 + 0 } u >= a && u < b { n++ } END { print n + 0 }' /proc/key-users)"
		echo "keys.root $(awk '$1 == "0:" { split($4, q, "/"); print q[1] }' /proc/key-users)"
		echo "cgroups.dirs $(cg_dirs)"
		echo "cgroups.dying $(awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/unified/"$CG_PARENT"/cgroup.stat 2>/dev/null || echo NA)"
		echo "mounts $(wc -l </proc/self/mountinfo)"
		echo "netns.pinned $(grep -c ' nsfs ' /proc/self/mountinfo || true)"
		echo "netns.members $(for p in $(member_pids); do stat -L -c %i "/proc/$p/ns/net" 2>/dev/null; done | sort -u | wc -l)"
		echo "host.slab.net_namespace $(slab net_namespace)"
		echo "host.slab.user_namespace $(slab user_namespace)"
		echo "host.slab.pid_namespace $(slab pid_namespace)"
		echo "host.slab.mnt_cache $(slab mnt_cache)"
		"$WORK/bpf_count" /sys/fs/cgroup/unified/"$CG_PARENT"/* | awk '{ for (i = 1; i < NF; i += 2) print "bpf." $i, $(i + 1) }'
		echo "state.containers $(find "$STATE_ROOT" -mindepth 1 -maxdepth 1 ! -name '@*' | wc -l)"
		echo "state.pool_entries $(find "$STATE_ROOT/@pools/p" -mindepth 2 -maxdepth 2 | wc -l)"
		echo "state.tmp_leftovers $(find "$STATE_ROOT" -name '*.tmp*' | wc -l)"
		echo "state.files $(find "$STATE_ROOT" | wc -l)"
		echo "state.reset_zombies $(cat "$STATE_ROOT"/*/reset.zombies 2>/dev/null | wc -l || true)"
		echo "registry.entries $(find /run/brig-userns -mindepth 1 | wc -l)"
		echo "pool.failures $("${B[@]}" pool status p --format json | jq .failures.count)"
	} >"$f"
}

# the counts the kernel frees in the background
moving() { echo "$(slab net_namespace) $(awk '{ n += $2 } END { print n }' /proc/key-users) $(awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/unified/"$CG_PARENT"/cgroup.stat 2>/dev/null)"; }

soak_loop() {
	local dir="$1" n="$2" k
	mkdir -p "$dir"
	for ((k = 0; k < n; k++)); do
		cycle p "$dir" || echo "$k" >>"$dir/failed-cycles"
	done
}

{
	note "soak: $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), brig $BRIG"
	note "$CYCLES cycles over a pool of $SIZE in $LOOPS loops; state root and registry on tmpfs"
	t="$("$TIMER" "${B[@]}" pool fill p --bundle "$BUNDLE" --size "$SIZE")" || die "fill failed"
	note "fill of $SIZE: $(ms "$t") ms (load $(load))"
	# one cycle per member first, so that "before" sees members that ran
	soak_loop "$WORK/warm" "$SIZE"
	sleep 5
	snapshot before
	start=$EPOCHSECONDS
	pids=()
	for k in $(seq "$LOOPS"); do
		soak_loop "$WORK/l$k" $(( CYCLES / LOOPS + (k <= CYCLES % LOOPS ? 1 : 0) )) &
		pids+=("$!")
	done
	tick=0
	while sleep 5; do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 1 ] || break
		tick=$((tick + 1))
		[ $((tick % 12)) -eq 0 ] || continue
		done_n="$(cat "$WORK"/l*/claim 2>/dev/null | wc -l || true)"
		note "$((EPOCHSECONDS - start)) s: $done_n cycles, load $(loads), net_namespace slab $(slab net_namespace)"
	done
	wait "${pids[@]}"
	elapsed=$((EPOCHSECONDS - start))
	snapshot after
	prev="" n=0
	while [ "$n" -lt 30 ]; do
		cur="$(moving)"
		[ "$cur" = "$prev" ] && break
		prev="$cur"
		sleep 2
		n=$((n + 1))
	done
	note "settled after $((n * 2)) s"
	snapshot settled
	printf '%-26s %14s %14s %14s %10s\n' what before after settled "growth"
	while read -r k v; do
		a="$(awk -v k="$k" '$1 == k { print $2 }' "$WORK/snap.after")"
		s="$(awk -v k="$k" '$1 == k { print $2 }' "$WORK/snap.settled")"
		printf '%-26s %14s %14s %14s %10s\n' "$k" "$v" "$a" "$s" \
			"$(awk -v a="$v" -v b="$s" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) printf "%+g", b - a; else print "NA" }')"
	done <"$WORK/snap.before"
	cat "$WORK"/l*/claim.ts | sort -n | awk '{ print $2 }' >"$WORK/claims"
	total="$(wc -l <"$WORK/claims")"
	failed="$(cat "$WORK"/l*/failed-cycles 2>/dev/null | wc -l || true)"
	head -n 1000 "$WORK/claims" >"$WORK/first"
	tail -n 1000 "$WORK/claims" >"$WORK/last"
	p1="$(pctl "$WORK/first" 99)" p2="$(pctl "$WORK/last" 99)"
	echo "cycles: $total claims in $elapsed s ($(awk -v n="$total" -v t="$elapsed" 'BEGIN { printf "%.1f", n / t }')/s), failed cycles: $failed"
	echo "claim p50 first 1000: $(ms "$(pctl "$WORK/first" 50)") ms, last 1000: $(ms "$(pctl "$WORK/last" 50)") ms"
	echo "claim p99 first 1000: $(ms "$p1") ms, last 1000: $(ms "$p2") ms, ratio $(awk -v a="$p2" -v b="$p1" 'BEGIN { printf "%.2f", a / b }') (target <= 1.2)"
	if [ "$failed" -gt 0 ]; then
		note "failures (first lines):"
		cat "$WORK"/l*/failed "$WORK"/l*/err 2>/dev/null | head -n 5 | sed 's/^/#   /'
	fi
	note "end: load $(loads)"
} 2>&1 | tee "$OUT"
