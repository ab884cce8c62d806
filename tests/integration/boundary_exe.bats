#!/usr/bin/env bats
# The runtime binary is out of the container's reach (issue #11 item 1,
# CVE-2019-5736 class). A container program that executes /proc/self/exe
# (the symlink /bin/evil, or the script /bin/evil.sh whose first line is
# `#!/proc/self/exe ...`) runs whatever file the brig process that execve'd
# it was running; tests/tools/exe_thief in the container takes an O_PATH fd
# of that process's /proc/PID/exe and, once nothing executes the file any
# more, reopens it for writing through /proc/self/fd/N. Each test attacks a
# COPY of the runtime and checks the copy's sha256 afterwards:
#   - exec: `exec ID /bin/evil` / `/bin/evil.sh`, the thief is the
#     container's pid 1 (own pid namespace);
#   - init: process.args = /bin/evil / /bin/evil.sh without a pid namespace,
#     the thief exec'd into the created container before `start`;
#   - where brig cannot make a detached read-only mount of its binary
#     (here: mount_setattr fails with ENOSYS, as on a kernel before 5.12, through
#     tests/tools/enosys), the container's init runs from a sealed memfd
#     copy of the binary; run and exec copy once (strace), state never.
# The attacks above run on brig's default path, the detached read-only
# mount (tests of its own: boundary_exe_mount.bats).
# The runtime started in the container is given --log=FIFO and a command
# word (so it gets as far as opening the log): it blocks opening the FIFO
# until the thief has its fd, which makes the race deterministic.
# Covers any cgroup mode.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
	need_built "$CONFINE_TOOLS/exe_thief"
	cp "$CONFINE_TOOLS/exe_thief" "$BUNDLE/rootfs/bin/exe_thief"
	# Attack a copy of the runtime, so a successful attack breaks nothing.
	RT_COPY="$(mktemp /tmp/brig-test-runtime.XXXXXX)"
	cp "$RUNTIME" "$RT_COPY"
	chmod 0755 "$RT_COPY"
	RT_HASH="$(sha256sum <"$RT_COPY")"
	# Paths inside the container.
	FIFO="/tmp/evil-$$.fifo"
	OUT=/tmp/thief.out
	ln -s /proc/self/exe "$BUNDLE/rootfs/bin/evil"
	printf '#!/proc/self/exe --log=%s\n' "$FIFO" >"$BUNDLE/rootfs/bin/evil.sh"
	chmod 0755 "$BUNDLE/rootfs/bin/evil.sh"
}

teardown() {
	# teardown_bundle kills what is left in the test's cgroups (the thief
	# too) by pid and deletes the containers with the runtime under test.
	teardown_bundle
	[ -n "${RT_NS:-}" ] && kill "$RT_NS" 2>/dev/null
	[ -n "${RT_COPY:-}" ] && rm -f "$RT_COPY"
	return 0
}

# assert_runtime_intact: the thief found the runtime running in the
# container and took its exe (the attack really ran), did not write it, and
# the copy of the runtime on the host is byte for byte what it was.
assert_runtime_intact() {
	local out
	wait_thief done
	out="$(cat "$BUNDLE/rootfs$OUT")"
	echo "thief: $out" >&2
	assert_contains "$out" "target: "
	[[ "$out" != *"target: none"* ]]
	[[ "$out" != *"write: ok"* ]]
	[ "$(sha256sum <"$RT_COPY")" = "$RT_HASH" ]
}

# attack_exec PROGRAM ARGS...: the thief is the container's pid 1; the
# operator runs `exec ID PROGRAM ARGS...` once.
attack_exec() {
	set_args exe_thief "$FIFO" "$OUT" 20
	rt run -d thief </dev/null >/dev/null 2>"$BUNDLE/thief.err" || { cat "$BUNDLE/thief.err" >&2; return 1; }
	wait_thief ready
	# The runtime in the container fails on its arguments: status 1.
	rt exec thief "$@" </dev/null >/dev/null 2>&1 || true
	assert_runtime_intact
}

# attack_init PROGRAM ARGS...: the container's process is PROGRAM ARGS,
# without a pid namespace; the thief is exec'd into the created container
# (so it sees every pid) before `start`.
attack_init() {
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))'
	set_args "$@"
	rt create evil </dev/null >/dev/null 2>"$BUNDLE/evil.err" || { cat "$BUNDLE/evil.err" >&2; return 1; }
	rt exec -d evil exe_thief "$FIFO" "$OUT" 20 </dev/null >/dev/null 2>&1
	wait_thief ready
	rt start evil </dev/null >/dev/null 2>&1 || true
	assert_runtime_intact
}

@test "boundary_exe: exec of a /proc/self/exe symlink cannot overwrite the runtime binary" {
	attack_exec /bin/evil "--log=$FIFO" pwn
}

@test "boundary_exe: exec of a #!/proc/self/exe script cannot overwrite the runtime binary" {
	attack_exec /bin/evil.sh
}

@test "boundary_exe: an init that is a /proc/self/exe symlink cannot overwrite the runtime binary" {
	attack_init /bin/evil "--log=$FIFO" pwn
}

@test "boundary_exe: an init that is a #!/proc/self/exe script cannot overwrite the runtime binary" {
	attack_init /bin/evil.sh
}

# old_kernel CMD...: CMD as on a kernel without mount_setattr (ENOSYS; 5.2-5.11).
old_kernel() {
	"$CONFINE_TOOLS/enosys" mount_setattr "$@"
}

@test "boundary_exe: without mount_setattr the created init runs from a sealed copy, not from the runtime's file" {
	requires brig
	need_built "$CONFINE_TOOLS/enosys"
	set_args true
	old_kernel "$RUNTIME" --root "$ROOT" create sealed </dev/null >"$BUNDLE/sealed.out" 2>"$BUNDLE/sealed.err" ||
		{ cat "$BUNDLE/sealed.err" >&2; return 1; }
	local pid
	pid="$(brig state sealed | jq -r .pid)"
	# The init (blocked until start) runs a memfd, no file the host can
	# name, holding the runtime's bytes (up to the end of its last ELF
	# segment: symbols and debug info are not copied).
	[[ "$(readlink "/proc/$pid/exe")" == /memfd:brig* ]]
	local size
	size="$(stat -L -c %s "/proc/$pid/exe")"
	[ "$size" -gt 100000 ]
	cmp -n "$size" "/proc/$pid/exe" "$RUNTIME"
}

@test "boundary_exe: without mount_setattr run and exec copy and re-execute once; state does not pay" {
	requires brig program:strace
	need_built "$CONFINE_TOOLS/enosys"
	set_args sleep 100
	local trace="$BUNDLE/trace"
	old_kernel strace -qq -e trace=memfd_create,execveat -o "$trace" \
		"$RUNTIME" --root "$ROOT" run -d sealed </dev/null >/dev/null 2>&1
	# (Not -f: the copy and re-exec happen in the command's own process.)
	# One copy and one re-exec; the re-executed copy does not copy again.
	[ "$(grep -c 'memfd_create("brig"' "$trace")" -eq 1 ]
	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
	old_kernel strace -qq -e trace=memfd_create,execveat -o "$trace" \
		"$RUNTIME" --root "$ROOT" exec sealed true
	[ "$(grep -c 'memfd_create("brig"' "$trace")" -eq 1 ]
	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
	strace -qq -e trace=memfd_create,execveat -o "$trace" \
		"$RUNTIME" --root "$ROOT" state sealed >/dev/null
	! grep -q 'memfd_create\|execveat' "$trace" || false
}

@test "boundary_exe: a runtime on a read-only mount runs in place and still cannot be overwritten" {
	requires brig program:strace program:nsenter program:unshare
	# A private mount namespace of the test's own (held by a sleep) in which
	# the attacked copy is bound read-only over itself, as an operator would
	# do with `mount --bind -o ro` on the installed binary.
	unshare -m --propagation private sleep 1000 </dev/null >/dev/null 2>&1 &
	RT_NS=$!
	local i
	for i in $(seq 50); do
		[ "$(readlink "/proc/$RT_NS/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.1
	done
	nsenter -t "$RT_NS" -m -- mount --bind -o ro "$RT_COPY" "$RT_COPY"
	# No copy, no re-exec: the runtime runs from its read-only file.
	local trace="$BUNDLE/trace"
	set_args true
	nsenter -t "$RT_NS" -m "--wd=$PWD" -- strace -qq -e trace=memfd_create,execveat -o "$trace" \
		"$RT_COPY" --root "$ROOT" run ro-in-place </dev/null >/dev/null 2>&1
	! grep -q 'memfd_create\|execveat' "$trace" || false
	# And the attack finds the runtime's own file, which it cannot write.
	attack_exec /bin/evil "--log=$FIFO" pwn
	assert_contains "$(cat "$BUNDLE/rootfs$OUT")" "reopen: EROFS"
}
