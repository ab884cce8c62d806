#!/bin/bash
# Runs inside the systemd VM (tests/vm/systemd.sh) from a oneshot unit, with
# systemd as PID 1 and pure cgroup v2: brig --systemd-cgroup creates scopes
# over D-Bus; each check reads what systemd says about the unit
# (systemctl show) and what is in the cgroup files. Prints TAP between
# markers.
set -u
DATA=/mnt
BRIG="$DATA/brig"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
n=0 failed=0

ok() {
	local desc="$1"
	shift
	n=$((n + 1))
	if "$@" >/tmp/check.out 2>&1; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		sed 's/^/# /' /tmp/check.out
		failed=$((failed + 1))
	fi
}

eq() { [ "$1" = "$2" ] || { echo "got '$1', wanted '$2'"; return 1; }; }
prop() { systemctl show -p "$2" --value "$1"; }

ROOT=/run/brig-test
BUNDLE=/tmp/bundle
setup() {
	rm -rf "$BUNDLE"
	mkdir -p "$BUNDLE"
	cp -a "$DATA/rootfs" "$BUNDLE/rootfs"
	(cd "$BUNDLE" && "$BRIG" spec >/dev/null 2>&1) || cat >"$BUNDLE/config.json" <<-'E'
	{"ociVersion":"1.3.0","process":{"args":["sh"],"cwd":"/","user":{"uid":0,"gid":0}},"root":{"path":"rootfs"},"linux":{"namespaces":[{"type":"pid"},{"type":"mount"}]}}
	E
	jq --arg cp "$1" --argjson res "$2" \
		'.process.terminal = false | .process.args = ["sleep", "1000"]
		 | .root.readonly = false | .linux.cgroupsPath = $cp | .linux.resources = $res' \
		"$BUNDLE/config.json" >"$BUNDLE/c.json" && mv "$BUNDLE/c.json" "$BUNDLE/config.json"
}

run_d() { "$BRIG" --root "$ROOT" --systemd-cgroup run -d --bundle "$BUNDLE" "$@" </dev/null >/tmp/run.out 2>&1 || { cat /tmp/run.out; return 1; }; }
export BRIG ROOT BUNDLE
export -f run_d

echo "BRIG-VM: systemd $(systemctl --version | head -n 1), $(stat -f -c %T /sys/fs/cgroup)"
echo "BRIG-VM-TAP-BEGIN"
echo "1..16"

UNIT=brig-sd1.scope
CG=/sys/fs/cgroup/system.slice/$UNIT
setup "system.slice:brig:sd1" '{"memory":{"limit":67108864},"pids":{"limit":32},"cpu":{"shares":512,"quota":50000,"period":100000}}'
ok "run --systemd-cgroup starts the container in a transient scope" run_d sd1
ok "the scope is active" eq "$(systemctl is-active $UNIT)" active
ok "the init is in the scope's cgroup" \
	eq "$(cat /proc/"$("$BRIG" --root "$ROOT" state sd1 | jq -r .pid)"/cgroup)" "0::/system.slice/$UNIT"
ok "systemd's MemoryMax is the memory limit" eq "$(prop $UNIT MemoryMax)" 67108864
ok "systemd's TasksMax is the pids limit" eq "$(prop $UNIT TasksMax)" 32
ok "systemd's CPUQuotaPerSecUSec is quota/period" eq "$(prop $UNIT CPUQuotaPerSecUSec)" 500ms
ok "systemd's CPUWeight is the converted shares" eq "$(prop $UNIT CPUWeight)" 59
ok "the cgroup files hold the limits" \
	eq "$(cat $CG/memory.max) $(cat $CG/pids.max) $(cat $CG/cpu.max)" "67108864 32 50000 100000"
ok "update changes systemd's property and the file" \
	bash -c "'$BRIG' --root $ROOT update --memory 128m sd1 &&
		[ \"\$(systemctl show -p MemoryMax --value $UNIT)\" = 134217728 ] &&
		[ \"\$(cat $CG/memory.max)\" = 134217728 ]"
ok "pause and resume work on the scope" \
	bash -c "'$BRIG' --root $ROOT pause sd1 && [ \"\$(cat $CG/cgroup.freeze)\" = 1 ] &&
		'$BRIG' --root $ROOT resume sd1 && [ \"\$(cat $CG/cgroup.freeze)\" = 0 ]"
ok "delete --force without --systemd-cgroup stops the unit and removes the cgroup" \
	bash -c "'$BRIG' --root $ROOT delete --force sd1 && [ ! -d $CG ] &&
		! systemctl is-active -q $UNIT"

setup "" '{}'
ok "an empty cgroupsPath gives system.slice/brig-ID.scope" \
	bash -c "run_d sd2 &&
		[ -d /sys/fs/cgroup/system.slice/brig-sd2.scope ] &&
		'$BRIG' --root $ROOT delete --force sd2 && [ ! -d /sys/fs/cgroup/system.slice/brig-sd2.scope ]"

setup "machine.slice:tst:sd3" '{"pids":{"limit":7}}'
jq '.annotations = {"org.systemd.property.TimeoutStopUSec": "uint64 7000000"}' "$BUNDLE/config.json" >"$BUNDLE/c.json" &&
	mv "$BUNDLE/c.json" "$BUNDLE/config.json"
ok "another slice and org.systemd.property annotations" \
	bash -c "run_d sd3 &&
		[ \"\$(systemctl show -p Slice --value tst-sd3.scope)\" = machine.slice ] &&
		[ \"\$(systemctl show -p TimeoutStopUSec --value tst-sd3.scope)\" = 7s ] &&
		[ \"\$(cat /sys/fs/cgroup/machine.slice/tst-sd3.scope/pids.max)\" = 7 ] &&
		'$BRIG' --root $ROOT delete --force sd3"

setup "/plain/path" '{}'
ok "a plain path is refused by the systemd manager, naming the form" \
	bash -c "! '$BRIG' --root $ROOT --systemd-cgroup run -d --bundle $BUNDLE sd4 </dev/null >/tmp/o 2>&1 &&
		grep -q 'slice:prefix:name' /tmp/o && [ ! -e $ROOT/sd4 ]"

# NOTIFY_SOCKET (#16 item 8) against systemd itself: a Type=notify service
# whose ExecStart is `brig run -d`; systemd's start job ends when the
# container says READY=1 (brig relays it), and the service's main pid is
# then the container's init (MAINPID from brig, a privileged sender).
if [ -x "$DATA/rootfs/bin/sdnotify" ]; then
	setup "/brig-notify" '{}'
	jq '.process.args = ["sh", "-c", "sdnotify STATUS=container-up READY=1; exec sleep 1000"]' \
		"$BUNDLE/config.json" >"$BUNDLE/c.json" && mv "$BUNDLE/c.json" "$BUNDLE/config.json"
	ok "a Type=notify service running brig run -d becomes active on the container's READY=1" \
		systemd-run --unit=brig-notify -p Type=notify -p TimeoutStartSec=60 -p RemainAfterExit=no \
		"$BRIG" --root "$ROOT" run -d --bundle "$BUNDLE" sdn
	ok "its main pid is the container's init, its status the container's" \
		bash -c "pid=\$('$BRIG' --root $ROOT state sdn | jq -r .pid) &&
			[ \"\$(systemctl show -p MainPID --value brig-notify.service)\" = \"\$pid\" ] &&
			[ \"\$(systemctl show -p StatusText --value brig-notify.service)\" = container-up ] &&
			systemctl is-active -q brig-notify.service"
	systemctl stop brig-notify.service >/dev/null 2>&1
	"$BRIG" --root "$ROOT" delete --force sdn >/dev/null 2>&1
else
	# make builds it with brig: missing is a failure, never a skip
	ok "a Type=notify service running brig run -d becomes active on the container's READY=1" \
		sh -c 'echo "tests/tools/sdnotify is not built (make tests/tools/sdnotify)"; false'
	ok "its main pid is the container's init, its status the container's" false
fi

echo "BRIG-VM-TAP-END rc=$failed"
