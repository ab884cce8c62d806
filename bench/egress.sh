#!/bin/bash
# bench/egress.sh: the cost of an egress policy (run.brig.egress, issue #12).
#   create_ms   `brig create` of the same bundle without and with
#               run.brig.egress=public (alternating, same run), median ms
#   connect_ns  connect() to the container's own loopback inside it
#               (the connect4 and skb programs run on every call), median
#   tcp_mib_s   TCP throughput over that loopback (the skb program runs on
#               every packet), median of the runs
# Writes results/egress.csv and prints ratios (policy / none).
# Env: BRIG=path (default the build tree's), N=iterations (default 40).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BRIG="${BRIG:-$HERE/../runtime/brig}"
N="${N:-40}"
RESULTS="${RESULTS:-$HERE/results}"
[ "$(id -u)" -eq 0 ] || { echo "egress.sh: run as root" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "egress.sh: needs busybox-static" >&2; exit 1; }
WORK="$(mktemp -d /tmp/brig-bench-egress.XXXXXX)"
ROOT="$WORK/root"
NETNS="brig-bench-egress-$$"
cleanup() {
	ip netns del "$NETNS" 2>/dev/null || true
	for id in $("$BRIG" --root "$ROOT" list -q 2>/dev/null); do
		"$BRIG" --root "$ROOT" delete -f "$id" >/dev/null 2>&1 || true
	done
	for d in /sys/fs/cgroup/*/brig-bench-egress /sys/fs/cgroup/brig-bench-egress; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# a network namespace with its loopback up (the container has no
# CAP_NET_ADMIN to do it), joined by the containers
ip netns add "$NETNS"
ip -n "$NETNS" link set lo up
gcc -O2 -static -o "$WORK/connect_loop" "$HERE/connect_loop.c"
mkdir -p "$WORK/b/rootfs/bin" "$WORK/b/rootfs/proc" "$WORK/b/rootfs/dev"
cp /bin/busybox "$WORK/b/rootfs/bin/busybox"
ln -s busybox "$WORK/b/rootfs/bin/sh"
ln -s busybox "$WORK/b/rootfs/bin/sleep"
cp "$WORK/connect_loop" "$WORK/b/rootfs/bin/"
(cd "$WORK/b" && "$BRIG" spec && jq '.root.readonly = false | .process.terminal = false
	| .process.args = ["sleep", "0"] | .linux.cgroupsPath = "/brig-bench-egress/c"
	| .linux.namespaces = [.linux.namespaces[] | if .type == "network"
		then {type: "network", path: "/var/run/netns/'"$NETNS"'"} else . end]' \
	config.json >c && mv c config.json)
jq '.annotations["run.brig.egress"] = "public"' "$WORK/b/config.json" >"$WORK/pol.json"
cp "$WORK/b/config.json" "$WORK/none.json"

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m}'; }
ms() { date +%s%N; }

# create: alternate with and without, so drift hits both alike
: >"$WORK/create.none"; : >"$WORK/create.pol"
for i in $(seq "$N"); do
	for kind in none pol; do
		cp "$WORK/$kind.json" "$WORK/b/config.json"
		t0=$(ms)
		"$BRIG" --root "$ROOT" create --bundle "$WORK/b" c >/dev/null
		t1=$(ms)
		"$BRIG" --root "$ROOT" delete -f c
		echo "scale=3; ($t1 - $t0) / 1000000" | bc >>"$WORK/create.$kind"
	done
done

# connect() and throughput inside the container
: >"$WORK/conn.none"; : >"$WORK/conn.pol"; : >"$WORK/tput.none"; : >"$WORK/tput.pol"
runs=$(( N / 8 > 3 ? N / 8 : 3 ))
for i in $(seq "$runs"); do
	for kind in none pol; do
		jq '.process.args = ["sh", "-c", "connect_loop 2000; connect_loop -t 512"]' \
			"$WORK/$kind.json" >"$WORK/b/config.json"
		out="$("$BRIG" --root "$ROOT" run --bundle "$WORK/b" c)"
		awk '/^connect_ns/ {print $2}' <<<"$out" >>"$WORK/conn.$kind"
		awk '/^tcp_mib_s/ {print $2}' <<<"$out" >>"$WORK/tput.$kind"
	done
done

cn=$(median <"$WORK/create.none"); cp_=$(median <"$WORK/create.pol")
kn=$(median <"$WORK/conn.none"); kp=$(median <"$WORK/conn.pol")
tn=$(median <"$WORK/tput.none"); tp=$(median <"$WORK/tput.pol")
mkdir -p "$RESULTS"
{
	echo "metric,none,public,ratio"
	echo "create_ms,$cn,$cp_,$(echo "scale=3; $cp_ / $cn" | bc)"
	echo "connect_ns,$kn,$kp,$(echo "scale=3; $kp / $kn" | bc)"
	echo "tcp_mib_s,$tn,$tp,$(echo "scale=3; $tp / $tn" | bc)"
} | tee "$RESULTS/egress.csv"
