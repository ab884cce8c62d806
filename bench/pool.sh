#!/bin/bash
# Warm pools (issue #13, "Numbers"): `brig pool claim` against cold starts,
# brig's reset, sandboxes per second and the memory of idle members. In one
# run, alternating the runtimes in every iteration (the order rotates):
#   latency   claim -> the first instruction of the container's process:
#             the process (bench/first_byte.c, static, no libc start-up)
#             writes one byte to a fifo the harness holds (bind-mounted at
#             /bench); timer.c --first-byte times it. "brig" is
#             `brig pool claim` of a warm member; "brig-cold", "runc",
#             "crun" are `create` + `start` of a new container. Also until
#             the command returned, and claim -> the first `exec /bin/true`
#             answer (`claim -- exec {}` against create -- start -- exec),
#             and a second `exec /bin/true` into the same container.
#   reset     `brig pool release` after each claim: the reset's own time
#             (the "ms" of its summary line) and the command's wall time;
#             then how it grows with what the tenant left: a file of 1, 16,
#             64 MiB in the ephemeral layer, 10 and 100 processes.
#   tput      sandboxes/s of claim -> exec `sh -c 'echo hello'` -> release,
#             1 and 2 loops in parallel, against create -> start -> exec ->
#             delete -f of brig (cold), runc and crun.
#   memory    100 idle members in a pool: each waiting init's RSS and PSS
#             (/proc/PID/smaps_rollup) and its cgroup's memory usage (what
#             the kernel charges it: v1 memory.usage_in_bytes, v2
#             memory.current), and MemAvailable before and after the fill;
#             runc's and crun's waiting inits (20 created containers each)
#             for reference.
# Targets (issue #13): claim p50 < 2 ms, p99 < 5 ms and <= 0.15x runc's
# cold create+start; reset p50 < 10 ms for a small tenant; the claim-exec-
# release loop >= 10x the runc loop. The end of the output says which hold.
#
#   claim-tenant  a claim with an egress annotation, two env entries and a
#             mount against a plain claim, alternating; the deadline's kill
#             and release lag (POOL_ONLY=claim-tenant runs only this).
# Usage: bench/pool.sh [-n N] [--brig P] [--runc P] [--crun P | --no-crun]
#   N= (default 200 latency samples; QUICK=1: 20), TPUT_N= cycles per loop
#   (default 40; QUICK: 6), MEM_N= pool size for memory (default 100).
# Writes bench/results/pool.csv and pool-summary.csv.
set -euo pipefail
NAME=pool
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
ITERS="$(iterations 200 20)"
if [ "$QUICK" = 1 ]; then TPUT_N="${TPUT_N:-6}"; else TPUT_N="${TPUT_N:-40}"; fi
MEM_N="${MEM_N:-100}"
GROW_N="$(( ITERS / 10 > 3 ? ITERS / 10 : 3 ))"
"$BRIG" pool --help >/dev/null 2>&1 || die "$BRIG has no pool command"

# "brig" is the warm pool; brig-cold is brig's own create + start.
RUNTIMES=(brig brig-cold "${RUNTIMES[@]:1}")
BIN["brig-cold"]="$BRIG"
t=""

# A rootfs with the first_byte program; a fifo directory per scenario.
gcc -static -nostdlib -O2 -o "$WORK/first_byte" "$HERE/first_byte.c" ||
	die "cannot build bench/first_byte.c"
cp -a "$BRIG_ROOTFS_CACHE" "$WORK/rootfs-fb"
cp "$WORK/first_byte" "$WORK/rootfs-fb/first_byte"
# bundle RT KIND: $WORK/bundle-RT-KIND running /first_byte with its fifo
# directory $WORK/fifo-RT-KIND at /bench; brig's with an ephemeral rootfs.
bundle() {
	local rt="$1" kind="$2" dir="$WORK/fifo-$1-$2" f
	mkdir -p "$dir"
	mkfifo "$dir/fifo"
	f='.process.args = ["/first_byte"] | .mounts += [{"destination": "/bench", "type": "bind",
		"source": "'"$dir"'", "options": ["rbind", "rw"]}]'
	case "$rt" in brig*) f="$f"' | .annotations["run.brig.rootfs.ephemeral"] = "true"' ;; esac
	make_bundle "$rt" "$WORK/bundle-$rt-$kind" "$rt-$kind" "$f" "$WORK/rootfs-fb"
}
for rt in "${RUNTIMES[@]}"; do
	bundle "$rt" lat
	bundle "$rt" exec
	# one bundle per parallel loop: a cold container needs a cgroup of its
	# own (the pool gives each member one)
	for j in 1 2; do
		bundle "$rt" "tput$j"
		jq '.process.args = ["/bin/sleep", "2147483647"]' "$WORK/bundle-$rt-tput$j/config.json" \
			>"$WORK/c.json" && mv "$WORK/c.json" "$WORK/bundle-$rt-tput$j/config.json"
	done
done
pool() { rt_cmd brig pool "$@"; }
# tm VAR TIMER-ARGS...: bench/timer.c with options (--out, --first-byte, {}),
# its output into VAR; returns 1 when a command failed.
tm() {
	local __v="$1" __out __rc=0
	shift
	__out="$("$WORK/timer" "$@" 2>>"$WORK/err")" || __rc=$?
	printf -v "$__v" '%s' "$__out"
	return $__rc
}

note "pool: N=$ITERS latency samples, TPUT_N=$TPUT_N cycles per loop, MEM_N=$MEM_N; runtimes alternate, the order rotates"
note "\"brig\" = brig pool claim of a warm member; \"brig-cold\" = brig create + start"
host_line
versions


# release_member ID: release it, recording the reset's own ms and the wall
# time; a failed release is counted (and leaves the pool one member short).
release_member() {
	local id="$1" i="$2" ms
	: >"$WORK/release.out"
	if tm t --out "$WORK/release.out" "$BRIG" --root "$WORK/root-brig" pool release "$id"; then
		ms="$(jq -r 'select(.reset) | .ms' "$WORK/release.out")"
		record brig reset-wall "$i" "$t" us
		record brig reset-ms "$i" "$(awk -v m="$ms" 'BEGIN { printf "%d", m * 1000 }')" us
	else
		fail brig reset-wall
		note "release $id failed: $(tail -n1 "$WORK/err")"
		pool fill "$3" --size 4 >/dev/null 2>>"$WORK/err" || true
	fi
}

# one_latency RT I: first byte (and return) of claim or create+start; then
# claim/create+start+exec; cleans up after itself.
one_latency() {
	local rt="$1" i="$2" out id
	if [ "$rt" = brig ]; then
		: >"$WORK/claimed"
		if out="$("$WORK/timer" --first-byte "$WORK/fifo-brig-lat/fifo" --out "$WORK/claimed" \
			"$BRIG" --root "$WORK/root-brig" pool claim lat 2>>"$WORK/err")"; then
			record brig returned "$i" "${out% *}" us
			record brig first-byte "$i" "${out#* }" us
		else fail brig first-byte; fi
		id="$(tail -n1 "$WORK/claimed")"
		[ -z "$id" ] || release_member "$id" "$i" lat
		: >"$WORK/claimed"
		if tm t --out "$WORK/claimed" "$BRIG" --root "$WORK/root-brig" pool claim exec \
			-- "$BRIG" --root "$WORK/root-brig" exec "{}" /bin/true; then
			record brig exec-answer "$i" "$t" us
		else fail brig exec-answer; fi
		id="$(tail -n1 "$WORK/claimed")"
		# the same exec again: what the first one paid beyond it
		if [ -n "$id" ] && timed t rt_cmd brig exec "$id" /bin/true; then record brig exec-again "$i" "$t" us
		else fail brig exec-again; fi
		[ -z "$id" ] || release_member "$id" "$i" exec
		return 0
	fi
	local b="$WORK/bundle-$rt-lat" r="$WORK/root-$rt"
	if out="$("$WORK/timer" --first-byte "$WORK/fifo-$rt-lat/fifo" \
		"${BIN[$rt]}" --root "$r" create --bundle "$b" "l$i" -- "${BIN[$rt]}" --root "$r" start "l$i" \
		2>>"$WORK/err")"; then
		record "$rt" returned "$i" "${out% *}" us
		record "$rt" first-byte "$i" "${out#* }" us
	else fail "$rt" first-byte; fi
	rt_cmd "$rt" delete -f "l$i" >/dev/null 2>&1 || true
	b="$WORK/bundle-$rt-exec"
	if timed t "${BIN[$rt]}" --root "$r" create --bundle "$b" "e$i" -- "${BIN[$rt]}" --root "$r" start "e$i" \
		-- "${BIN[$rt]}" --root "$r" exec "e$i" /bin/true; then
		record "$rt" exec-answer "$i" "$t" us
	else fail "$rt" exec-answer; fi
	if timed t rt_cmd "$rt" exec "e$i" /bin/true; then record "$rt" exec-again "$i" "$t" us
	else fail "$rt" exec-again; fi
	rt_cmd "$rt" delete -f "e$i" >/dev/null 2>&1 || true
}

# ---- claim-tenant (issue #24 item 3): a claim that binds an egress annotation,
# two env entries and one read-only mount, against a plain claim of the same
# pool, alternating (the order swaps every sample), each followed by an
# untimed release; then the deadline's accuracy: leases of 1 s, the kill lag
# (deadline -> the init's pidfd readable) and the release lag (deadline ->
# the member back in available/). Addresses only: DNS is not the runtime's.
claim_tenant() {
	local i id kind t lag
	make_bundle brig "$WORK/bundle-tenant" tenant '.process.args = ["/bin/sleep", "2147483647"]
		| .annotations["run.brig.rootfs.ephemeral"] = "true" | .annotations["run.brig.egress"] = "public"'
	mkdir -p "$WORK/tenant-data"
	echo data >"$WORK/tenant-data/f"
	pool fill tenant --bundle "$WORK/bundle-tenant" --size 2 >/dev/null
	local opts=(--annotation run.brig.egress=allowlist --annotation run.brig.egress.allow=203.0.113.7:443
		--env A=1 --env B=2 --mount "$WORK/tenant-data:/data:ro")
	for i in $(seq -2 "$ITERS"); do
		for kind in $( ((i % 2)) && echo plain tenant || echo tenant plain); do
			: >"$WORK/claimed"
			if [ "$kind" = plain ]; then
				tm t --out "$WORK/claimed" "$BRIG" --root "$WORK/root-brig" pool claim tenant || { fail brig "claim-$kind"; continue; }
			else
				tm t --out "$WORK/claimed" "$BRIG" --root "$WORK/root-brig" pool claim tenant "${opts[@]}" ||
					{ fail brig "claim-$kind"; continue; }
			fi
			[ "$i" -le 0 ] || record brig "claim-$kind" "$i" "$t" us
			id="$(tail -n1 "$WORK/claimed")"
			pool release "$id" >/dev/null 2>>"$WORK/err" || { fail brig "release-$kind"; pool fill tenant --size 2 >/dev/null; }
		done
	done
	for i in $(seq "$(( ITERS / 10 > 5 ? 20 : 5 ))"); do
		id="$("$BRIG" --root "$WORK/root-brig" pool claim tenant --deadline 1 2>>"$WORK/err")" || { fail brig lease-kill; continue; }
		lag="$(python3 -c '
import os, select, sys, time
pid, dl, avail = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
p = select.poll(); p.register(os.pidfd_open(pid), select.POLLIN)
p.poll(10000); kill = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
while not os.path.exists(avail): time.sleep(0.0005)
back = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
print((kill - dl) // 1000, (back - dl) // 1000)' "$(rt_cmd brig state "$id" | jq -r .pid)" \
			"$(rt_cmd brig state "$id" | jq -r .brig.claim.deadlineBoottimeNs)" \
			"$WORK/root-brig/@pools/tenant/available/$id")" || { fail brig lease-kill; continue; }
		record brig lease-kill "$i" "${lag% *}" us
		record brig lease-release "$i" "${lag#* }" us
	done
	pool drain tenant >/dev/null
	local p="$(pct brig claim-plain 50)" q="$(pct brig claim-tenant 50)"
	note "claim-tenant: plain claim p50 $(scaled "$p" 1000) ms p99 $(scaled "$(pct brig claim-plain 99)" 1000) ms;" \
		"with egress+2 env+1 mount p50 $(scaled "$q" 1000) ms p99 $(scaled "$(pct brig claim-tenant 99)" 1000) ms;" \
		"ratio $(ratio "$q" "$p")"
	note "target claim-tenant p50 <= 2 ms: $(awk -v v="$q" 'BEGIN { print (v <= 2000) ? "met" : "NOT met" }');" \
		"<= 1.5x plain: $(awk -v a="$q" -v b="$p" 'BEGIN { print (a <= 1.5 * b) ? "met" : "NOT met" }')"
	note "deadline (leases of 1 s): kill lag p50 $(scaled "$(pct brig lease-kill 50)" 1000) ms" \
		"p99 $(scaled "$(pct brig lease-kill 99)" 1000) ms max $(scaled "$(stat_of brig lease-kill max)" 1000) ms;" \
		"release lag p50 $(scaled "$(pct brig lease-release 50)" 1000) ms max $(scaled "$(stat_of brig lease-release max)" 1000) ms"
}
# pct RT SCENARIO P: the P-th percentile (nearest rank) of the samples.
pct() {
	awk -F, -v rt="$1" -v sc="$2" '$1 == rt && $2 == sc { print $4 }' "$CSV" | sort -g |
		awk -v p="$3" '{ v[++n] = $1 } END { if (!n) { print "NA"; exit } k = int((p * n + 99) / 100); if (k < 1) k = 1; print v[k] }'
}
if [ "${POOL_ONLY:-}" = claim-tenant ]; then
	FAILS=()
	claim_tenant
	note "failures: $(for k in "${!FAILS[@]}"; do printf '%s=%s ' "$k" "${FAILS[$k]}"; done)"
	exit 0
fi

pool fill lat --bundle "$WORK/bundle-brig-lat" --size 4 >/dev/null
pool fill exec --bundle "$WORK/bundle-brig-exec" --size 4 >/dev/null

# warm-up: page cache, binaries, the seccomp cache
for i in -1 0; do for rt in "${RUNTIMES[@]}"; do one_latency "$rt" "$i"; done; done
head -n1 "$CSV" >"$CSV.tmp" && mv "$CSV.tmp" "$CSV"
FAILS=()
for i in $(seq "$ITERS"); do
	n=${#RUNTIMES[@]}
	for k in $(seq 0 $((n - 1))); do
		one_latency "${RUNTIMES[$(( (i + k) % n ))]}" "$i"
	done
done
note "latency done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
claim_tenant

# ---- reset growth: what the tenant leaves ----
# tenant SIZE_MIB PROCS: an exec that writes the file and leaves processes.
grow() {
	local label="$1" mib="$2" procs="$3" i id
	for i in $(seq "$GROW_N"); do
		: >"$WORK/claimed"
		tm t --out "$WORK/claimed" "$BRIG" --root "$WORK/root-brig" pool claim lat ||
			{ fail brig "$label"; continue; }
		id="$(tail -n1 "$WORK/claimed")"
		rt_cmd brig exec "$id" /bin/sh -c "
			[ $mib -eq 0 ] || dd if=/dev/zero of=/fill bs=1M count=$mib 2>/dev/null
			i=0; while [ \$i -lt $procs ]; do sleep 100000 </dev/null >/dev/null 2>&1 & i=\$((i+1)); done" \
			</dev/null >/dev/null 2>>"$WORK/err" || { fail brig "$label"; }
		: >"$WORK/release.out"
		if tm t --out "$WORK/release.out" "$BRIG" --root "$WORK/root-brig" pool release "$id"; then
			record brig "$label" "$i" "$(jq -r 'select(.reset) | .ms * 1000 | floor' "$WORK/release.out")" us
			record brig "$label-wall" "$i" "$t" us
		else
			fail brig "$label"
			pool fill lat --size 4 >/dev/null 2>>"$WORK/err" || true
		fi
	done
}
grow grow-small 0 0
grow grow-1m 1 0
grow grow-16m 16 0
grow grow-64m 64 0
grow grow-10p 0 10
grow grow-100p 0 100
note "reset growth done; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- sandboxes per second ----
# loop RT M W: W loops of M cycles each, in parallel; records the rate.
cycle() {
	local rt="$1" id="$2" j="$3" r="$WORK/root-$1"
	if [ "$rt" = brig ]; then
		"$WORK/timer" "$BRIG" --root "$r" pool claim tput -- "$BRIG" --root "$r" exec "{}" /bin/sh -c 'echo hello' \
			-- "$BRIG" --root "$r" pool release "{}"
	else
		"$WORK/timer" "${BIN[$rt]}" --root "$r" create --bundle "$WORK/bundle-$rt-tput$j" "$id" \
			-- "${BIN[$rt]}" --root "$r" start "$id" -- "${BIN[$rt]}" --root "$r" exec "$id" /bin/sh -c 'echo hello' \
			-- "${BIN[$rt]}" --root "$r" delete -f "$id"
	fi
}
tput_loop() {
	local rt="$1" m="$2" w="$3" round="$4" t0 t1 j k pids=()
	now_us t0
	for j in $(seq "$w"); do
		(
			for k in $(seq "$m"); do
				if c="$(cycle "$rt" "t$round-$w-$j-$k" "$j" 2>>"$WORK/err")"; then echo "$c"
				else
					echo fail
					if [ "$rt" = brig ]; then pool fill tput --size 4 >/dev/null 2>&1 || true
					else rt_cmd "$rt" delete -f "t$round-$w-$j-$k" >/dev/null 2>&1 || true; fi
				fi
			done >"$WORK/tput-$rt-$j"
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
	now_us t1
	for j in $(seq "$w"); do
		while read -r c; do
			if [ "$c" = fail ]; then fail "$rt" "tput-$w"; else record "$rt" "cycle-$w" "$round" "$c" us; fi
		done <"$WORK/tput-$rt-$j"
	done
	record "$rt" "tput-$w" "$round" "$(awk -v n=$((m * w)) -v us=$((t1 - t0)) 'BEGIN { printf "%.2f", n * 1e6 / us }')" per-s
}
pool fill tput --bundle "$WORK/bundle-brig-tput1" --size 4 >/dev/null
for round in 1 2; do
	n=${#RUNTIMES[@]}
	for k in $(seq 0 $((n - 1))); do
		rt="${RUNTIMES[$(( (round + k) % n ))]}"
		tput_loop "$rt" "$TPUT_N" 1 "$round"
		tput_loop "$rt" "$TPUT_N" 2 "$round"
	done
done
note "throughput done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for rt in "${RUNTIMES[@]}"; do
	[ "$rt" = brig ] || recover "$rt"
done
pool drain lat >/dev/null
pool drain exec >/dev/null
pool drain tput >/dev/null

# ---- memory of idle warm containers ----
mem_avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
# mem_of RT PID I: the waiting init's RSS, PSS and its cgroup's usage (KiB).
mem_of() {
	local rt="$1" pid="$2" i="$3" cg f
	record "$rt" mem-rss "$i" "$(awk '/^Rss:/ { print $2 }' "/proc/$pid/smaps_rollup")" KiB
	record "$rt" mem-pss "$i" "$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")" KiB
	cg="$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$pid/cgroup")"
	if [ -n "$cg" ]; then f="/sys/fs/cgroup/memory$cg/memory.usage_in_bytes"
	else f="/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' "/proc/$pid/cgroup")/memory.current"; fi
	[ -r "$f" ] && record "$rt" mem-cgroup "$i" "$(( $(cat "$f") / 1024 ))" KiB
	return 0
}
jq '.process.args = ["/bin/sleep", "2147483647"]' "$WORK/bundle-brig-lat/config.json" >"$WORK/c.json"
mkdir -p "$WORK/bundle-mem" && mv "$WORK/c.json" "$WORK/bundle-mem/config.json"
sync
before="$(mem_avail)"
pool fill mem --bundle "$WORK/bundle-mem" --size "$MEM_N" >"$WORK/mem-ids"
sleep 1
after="$(mem_avail)"
record brig mem-host 1 "$(( (before - after) / MEM_N ))" KiB
i=0
while read -r id; do
	i=$((i + 1))
	mem_of brig "$(rt_cmd brig state "$id" | jq -r .pid)" "$i"
done <"$WORK/mem-ids"
pool drain mem
for rt in "${RUNTIMES[@]:2}"; do
	mkdir -p "$WORK/bundle-$rt-mem"
	for i in $(seq 20); do
		# a cgroup of its own each, or the usage would be everyone's
		jq --arg cg "/$CG_PARENT/$rt-mem-$i" '.process.args = ["/bin/sleep", "2147483647"]
			| .linux.cgroupsPath = $cg' "$WORK/bundle-$rt-lat/config.json" >"$WORK/bundle-$rt-mem/config.json"
		rt_cmd "$rt" create --bundle "$WORK/bundle-$rt-mem" "m$i" </dev/null >/dev/null 2>>"$WORK/err" ||
			{ fail "$rt" mem-rss; continue; }
		mem_of "$rt" "$(rt_cmd "$rt" state "m$i" | jq -r .pid)" "$i"
	done
	recover "$rt"
done
note "memory done; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- summary ----
p99_row() {
	local sc="$1" label="$2" rt line=""
	line="$NAME,$label,ms"
	declare -A v=()
	for rt in "${RUNTIMES[@]}"; do v[$rt]="$(pct "$rt" "$sc" 99)"; line="$line,$(scaled "${v[$rt]}" 1000)"; done
	for rt in "${RUNTIMES[@]}"; do [ "$rt" = brig ] || line="$line,$(ratio "${v[brig]}" "${v[$rt]}")"; done
	echo "$line," >>"$SUMMARY"
}
summary_row first-byte "claim/create+start -> first instruction p50" ms 1000
p99_row first-byte "claim/create+start -> first instruction p99"
summary_row returned "claim/create+start command returned p50" ms 1000
summary_row exec-answer "claim/create+start -> first exec answer p50" ms 1000
p99_row exec-answer "claim/create+start -> first exec answer p99"
summary_row exec-again "a second exec /bin/true into the same container p50" ms 1000
summary_row reset-ms "reset (release's own ms) p50" ms 1000
p99_row reset-ms "reset (release's own ms) p99"
summary_row reset-wall "pool release command p50" ms 1000
for g in small 1m 16m 64m 10p 100p; do
	summary_row "grow-$g" "reset after tenant $g p50" ms 1000
done
summary_row cycle-1 "claim-exec-release (cold: create-start-exec-delete) cycle p50 1 loop" ms 1000
summary_row tput-1 "sandboxes/s 1 loop" per-s 1
summary_row tput-2 "sandboxes/s 2 loops" per-s 1
summary_row mem-rss "idle warm init RSS p50" KiB 1
summary_row mem-pss "idle warm init PSS p50" KiB 1
summary_row mem-cgroup "idle warm container cgroup memory p50" KiB 1
summary_row mem-host "host MemAvailable drop per member ($MEM_N)" KiB 1
print_summary

# ---- targets ----
p50() { stat_of "$1" "$2"; }
verdict() {
	case "$1" in *NA*) echo "no samples" ;; *) if awk "BEGIN { exit !($1) }"; then echo met; else echo "NOT met"; fi ;; esac
}
c50="$(p50 brig first-byte)"; c99="$(pct brig first-byte 99)"; r50="$(p50 runc first-byte)"
s50="$(p50 brig grow-small)"; tb="$(p50 brig tput-1)"; tr="$(p50 runc tput-1)"
note "target claim p50 < 2 ms: $(scaled "$c50" 1000) ms: $(verdict "$c50 < 2000")"
note "target claim p99 < 5 ms: $(scaled "$c99" 1000) ms: $(verdict "$c99 < 5000")"
note "target claim <= 0.15x runc create+start: $(ratio "$c50" "$r50"): $(verdict "$c50 <= 0.15 * $r50")"
note "target reset p50 < 10 ms (small tenant, release's own ms): $(scaled "$s50" 1000) ms: $(verdict "$s50 < 10000")"
note "target claim-exec-release >= 10x runc's loop: $(ratio "$tb" "$tr")x: $(verdict "$tb >= 10 * $tr")"
note "failures: $(for k in "${!FAILS[@]}"; do printf '%s=%s ' "$k" "${FAILS[$k]}"; done)"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
