#!/usr/bin/env bats
# podman (through conmon) driving the runtime under test. Covers the hybrid
# cgroup host as it is (v1 controllers + cgroup2 with only hugetlb) and any
# other layout podman's cgroupfs manager supports.
# Run through tests/engines/run.sh (private mount namespace).

load helpers
bats_require_minimum_version 1.5.0

IMAGE=localhost/busybox

setup_file() {
	local why
	why="$(engine_skip_reason)"
	if [ -z "$why" ] && ! command -v podman >/dev/null; then
		why="podman is not installed (contrib/install-deps.sh)"
	fi
	if [ -z "$why" ] && ! command -v conmon >/dev/null; then
		why="conmon is not installed (contrib/install-deps.sh)"
	fi
	export ENGINE_SKIP="$why"
	[ -z "$why" ] || return 0
	engine_setup_common podman
	# setup runs only the engine (no container): when it fails, the
	# engine cannot run here, and every test says so with its error
	if ! podman_setup 2>"$ENGINE_TMP/setup.err"; then
		ENGINE_SKIP="podman cannot run here: $(tail -n 3 "$ENGINE_TMP/setup.err" | tr -s '\n\t ' ' ')"
		[ -s "$ENGINE_TMP/setup.err" ] || ENGINE_SKIP+="setup failed without a message"
	fi
}

teardown_file() {
	[ -n "${ENGINE_TMP:-}" ] || return 0
	podman_teardown
	engine_teardown_common
}

setup() {
	[ -z "${ENGINE_SKIP:-}" ] || skip "$ENGINE_SKIP"
}

teardown() {
	[ -n "${ENGINE_SKIP:-}" ] && return 0
	# containers of this test only; the image stays for the next test
	timeout -k 5 60 "$PODMAN" rm --all --force --time 0 >/dev/null 2>&1 || true
}

@test "podman: the runtime under test is the one podman calls" {
	run podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}} {{.Host.CgroupManager}} {{.Store.GraphRoot}}'
	assert_status 0
	[ "$output" = "$RUNTIME_NAME $ENGINE_RUNTIME cgroupfs $ENGINE_TMP/storage" ]
	run podman create --name c1 "$IMAGE" true
	assert_status 0
	run podman inspect --format '{{.OCIRuntime}}' c1
	[ "$output" = "$RUNTIME_NAME" ]
}

@test "podman: run --rm exit codes 0 and 42" {
	run podman run --rm "$IMAGE" sh -c 'echo hello from $(hostname)'
	assert_status 0
	assert_contains "$output" "hello from "
	run podman run --rm "$IMAGE" sh -c 'exit 42'
	assert_status 42
	# nothing left behind: --rm removed the containers
	run podman ps --all --quiet
	[ -z "$output" ]
}

@test "podman: run --rm with a missing command exits 127 with the runtime's message" {
	run -127 podman run --rm "$IMAGE" nosuchcommand
	assert_contains "$output" "Error: $RUNTIME_NAME: "
	assert_contains "$output" "nosuchcommand"
}

@test "podman: run --rm with a non-executable file exits 126" {
	run podman run --rm "$IMAGE" /bin/noexec
	assert_status 126
	assert_contains "$output" "Error: $RUNTIME_NAME: "
	assert_contains "$output" "/bin/noexec"
	assert_contains "${output,,}" "permission denied"
}

@test "podman: --log-level debug shows the runtime's command line and error" {
	run -127 podman --log-level debug run --rm "$IMAGE" /no/such/exe
	# conmon runs the runtime named in containers.conf ...
	assert_contains "$output" "-r $ENGINE_RUNTIME"
	# ... whose JSON log (runtime_supports_json) podman decodes into its error
	assert_contains "$output" 'ExitCode msg:'
	run grep -E '^Error: ' <<<"$output"
	assert_contains "$output" "Error: $RUNTIME_NAME: "
	assert_contains "$output" "/no/such/exe"
}

@test "podman: run -d, exec, stop, start, rm" {
	run podman run -d --name c1 "$IMAGE" sh -c 'echo $$ >/tmp/pid1; exec sleep 1000'
	assert_status 0
	run podman exec c1 sh -c 'cat /tmp/pid1; echo exec-$((6 * 7))'
	assert_status 0
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = exec-42 ]
	run podman exec c1 sh -c 'exit 3'
	assert_status 3
	run -127 podman exec c1 nosuchcommand
	# sleep as PID 1 ignores SIGTERM: stop falls back to SIGKILL
	run podman stop --time 1 c1
	assert_status 0
	run podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' c1
	[ "$output" = "exited 137" ]
	run podman start c1
	assert_status 0
	run podman exec c1 cat /tmp/pid1
	assert_status 0
	[ "$output" = 1 ]
	run podman rm --force --time 0 c1
	assert_status 0
	run podman ps --all --quiet
	[ -z "$output" ]
}

@test "podman: exec -t gets a terminal" {
	podman run -d --name c1 "$IMAGE" sleep 1000
	run podman exec -t c1 sh -c 'tty; stty size'
	assert_status 0
	assert_contains "$output" "/dev/pts/"
	run podman exec c1 tty
	[ "$status" -ne 0 ]
	assert_contains "$output" "not a tty"
}

@test "podman: run -t and -it" {
	run podman run --rm -t "$IMAGE" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-tty'
	assert_status 0
	assert_contains "$output" "/dev/pts/0"
	assert_contains "$output" "both-tty"
	# -it: input typed on podman's terminal reaches the container's shell
	cd "$ENGINE_TMP/work"
	run timeout 60 script -qec "$PODMAN run --rm -it --cgroup-parent $CGROUP_PARENT $IMAGE sh -c 'read line; echo got-\$line; exit 5'" /dev/null \
		< <(sleep 2; echo hello-it; sleep 5)
	assert_contains "$output" "got-hello-it"
	assert_status 5
}

@test "podman: pause and unpause freeze the container" {
	podman run -d --name c1 "$IMAGE" sh -c 'i=0; while :; do i=$((i + 1)); echo $i >/count.new; mv /count.new /count; sleep 0.05; done'
	local root
	root="$(podman mount c1)"
	sleep 0.5
	run podman pause c1
	assert_status 0
	run podman inspect --format '{{.State.Status}}' c1
	[ "$output" = paused ]
	local a b
	a="$(cat "$root/count")"
	sleep 0.5
	b="$(cat "$root/count")"
	[ "$a" = "$b" ] || { echo "counter moved while paused: $a -> $b" >&2; false; }
	run podman unpause c1
	assert_status 0
	sleep 0.5
	b="$(cat "$root/count")"
	[ "$b" -gt "$a" ] || { echo "counter stuck after unpause: $a -> $b" >&2; false; }
	run podman inspect --format '{{.State.Status}}' c1
	[ "$output" = running ]
}

@test "podman: top lists the container's processes" {
	podman run -d --name c1 "$IMAGE" sh -c 'sleep 1000 & exec sleep 999'
	sleep 0.5
	run podman top c1 pid args
	assert_status 0
	assert_contains "$output" "sleep 999"
	assert_contains "$output" "sleep 1000"
}

@test "podman: kill with a signal reaches the container's trap" {
	podman run -d --name c1 "$IMAGE" sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.1; done'
	for _ in $(seq 50); do
		[[ "$(podman logs c1)" == *ready* ]] && break
		sleep 0.1
	done
	run podman kill --signal USR1 c1
	assert_status 0
	run podman wait c1
	[ "$output" = 7 ]
	run podman logs c1
	assert_contains "$output" "got-usr1"
}

@test "podman: --memory limit and an OOM kill give 137" {
	run podman run --rm --memory 32m "$IMAGE" cat /sys/fs/cgroup/memory/memory.limit_in_bytes
	if [ -d /sys/fs/cgroup/memory ]; then
		assert_status 0
		[ "$output" = 33554432 ]
	fi
	# tail keeps the "line" it reads from /dev/zero in memory until OOM
	run podman run --rm --memory 32m --memory-swap 32m "$IMAGE" tail /dev/zero
	assert_status 137
}

@test "podman: --pids-limit" {
	# the forks beyond the limit fail (and end the inner shell)
	run podman run --rm --pids-limit 10 "$IMAGE" sh -c 'cat /sys/fs/cgroup/pids/pids.max; sh -c "for i in \$(seq 20); do sleep 2 & done; wait" 2>&1; echo inner=$?'
	assert_status 0
	[ "${lines[0]}" = 10 ]
	assert_contains "$output" "can't fork"
	assert_contains "$output" "inner=2"
}

@test "podman: update changes the limits of a running container" {
	# podman update came with podman 4.3 (by version, not by help text)
	local v
	v="$("$PODMAN" version --format '{{.Client.Version}}')"
	printf '4.3\n%s\n' "$v" | sort -C -V || skip "podman $v has no update command"
	podman run -d --name c1 --memory 32m "$IMAGE" sleep 1000
	run podman exec c1 cat /sys/fs/cgroup/memory/memory.limit_in_bytes
	if [ -d /sys/fs/cgroup/memory ]; then
		[ "$output" = 33554432 ]
	fi
	# podman writes the new resources to a file: update --resources=FILE
	run podman update --memory 64m --memory-swap 64m c1
	assert_status 0
	local pid
	pid="$(podman inspect --format '{{.State.Pid}}' c1)"
	if [ -d /sys/fs/cgroup/memory ]; then
		local cg
		cg="$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$pid/cgroup")"
		[ "$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes")" = 67108864 ]
	else
		local cg
		cg="$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")"
		[ "$(cat "/sys/fs/cgroup$cg/memory.max")" = 67108864 ]
	fi
}

@test "podman: --cap-drop and --cap-add" {
	run podman run --rm --cap-drop all --cap-add NET_RAW "$IMAGE" grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status
	assert_status 0
	assert_contains "$output" "CapEff:	0000000000002000"
	assert_contains "$output" "CapBnd:	0000000000002000"
	run podman run --rm --cap-drop CHOWN "$IMAGE" sh -c 'touch /f; chown 1000 /f'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Operation not permitted"
	run podman run --rm "$IMAGE" sh -c 'touch /f; chown 1000 /f && echo chown-ok'
	assert_status 0
	assert_contains "$output" "chown-ok"
}

@test "podman: --read-only" {
	run podman run --rm --read-only "$IMAGE" sh -c 'touch /f'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Read-only file system"
	# podman mounts writable tmpfs on /tmp, /var/tmp, /run
	run podman run --rm --read-only "$IMAGE" sh -c 'touch /tmp/f && echo tmp-ok'
	assert_status 0
	assert_contains "$output" "tmp-ok"
}

@test "podman: --user" {
	run podman run --rm --user 1000:1000 "$IMAGE" sh -c 'id -u; id -g; touch /root/x'
	assert_status 1
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	assert_contains "$output" "Permission denied"
	run podman run --rm --user nobody "$IMAGE" id
	assert_status 0
	assert_contains "$output" "uid=65534(nobody)"
}

@test "podman: --security-opt seccomp=FILE and seccomp=unconfined" {
	cat >"$ENGINE_TMP/no-mkdir.json" <<-'EOF2'
	{
	  "defaultAction": "SCMP_ACT_ALLOW",
	  "syscalls": [
	    { "names": [ "mkdir", "mkdirat" ], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 }
	  ]
	}
	EOF2
	run podman run --rm --security-opt seccomp="$ENGINE_TMP/no-mkdir.json" "$IMAGE" sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/d'
	[ "$status" -ne 0 ]
	assert_contains "$output" "Seccomp:	2"
	assert_contains "$output" "Operation not permitted"
	run podman run --rm --security-opt seccomp=unconfined "$IMAGE" sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/d && echo mkdir-ok'
	assert_status 0
	assert_contains "$output" "Seccomp:	0"
	assert_contains "$output" "mkdir-ok"
	# podman's default profile: a filter that allows mkdir
	run podman run --rm "$IMAGE" sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/d && echo mkdir-ok'
	assert_status 0
	assert_contains "$output" "Seccomp:	2"
	assert_contains "$output" "mkdir-ok"
}

@test "podman: --security-opt no-new-privileges" {
	run podman run --rm --security-opt no-new-privileges "$IMAGE" grep NoNewPrivs: /proc/self/status
	assert_status 0
	assert_contains "$output" "NoNewPrivs:	1"
	run podman run --rm "$IMAGE" grep NoNewPrivs: /proc/self/status
	assert_status 0
	assert_contains "$output" "NoNewPrivs:	0"
}

@test "podman: --rootfs runs a directory as the root filesystem" {
	local dir="$ENGINE_TMP/rootfs-dir"
	build_rootfs "$dir"
	echo "marker-$$" >"$dir/etc/marker"
	run podman run --rm --rootfs "$dir" cat /etc/marker
	assert_status 0
	[ "$output" = "marker-$$" ]
	run podman run --rm --rootfs "$dir" sh -c 'echo written >/etc/written'
	assert_status 0
	[ "$(cat "$dir/etc/written")" = written ]
}

@test "podman: --sdnotify=container relays the container's READY=1 through the runtime (#16 item 8)" {
	local tool="${BUILDDIR:-$SRCDIR}/tests/tools/sdnotify"
	# built by make with the rest: missing is a failure, not a skip
	[ -x "$tool" ] || { echo "$tool is not built (make tests/tools/sdnotify)" >&2; false; }
	# A systemd-style NOTIFY_SOCKET for podman: every datagram is one JSON
	# string per line in $got (fds sent with BARRIER=1 are closed unread).
	local sock="$ENGINE_TMP/notify.sock" got="$ENGINE_TMP/notify.got"
	rm -f "$sock" "$got"
	/usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(json.dumps(s.recv(65536).decode("utf-8", "replace")) + "\n")
        out.flush()
' "$sock" "$got" &
	local lpid=$! i
	for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	# Debian's podman 4.3 binds its own proxy socket at /run/notify in the
	# spec and relays READY=1 (with conmon's pid) itself, so this passes with
	# a runtime that ignores NOTIFY_SOCKET too: it checks that brig's relay
	# (dropin_notify.bats) leaves podman's working.
	ENGINE_CMD_TIMEOUT=30 NOTIFY_SOCKET="$sock" run podman run -d --name sdn --sdnotify=container \
		-v "$tool:/sdnotify:ro" "$IMAGE" sh -c '/sdnotify STATUS=podman-ok READY=1; exec sleep 1000'
	kill "$lpid" 2>/dev/null
	assert_status 0
	run jq -r . "$got"
	echo "$output"
	assert_contains "$output" "READY=1"
	assert_contains "$output" "MAINPID="
	run podman inspect --format '{{.State.Status}}' sdn
	[ "$output" = running ]
}
