#!/usr/bin/env bats
# The runtime binary runs from a detached read-only mount (issue #15 item
# 1, CVE-2019-5736 class; runtime/lib/process/selfexe.c). create, run and exec
# re-execute brig through open_tree(OPEN_TREE_CLONE) + mount_setattr(RDONLY)
# of their own binary; the mount fd is closed by that execve, so the kernel
# dissolves the mount: no mount namespace holds it, only the exe_file of
# brig's processes pins it. Proven here:
#   - the created init's /proc/PID/exe is the runtime's own file (no copy)
#     on a read-only mount that no /proc/*/mountinfo on the host lists, and
#     writing it from the host fails (EROFS);
#   - from inside a container (tests/tools/exe_thief, the CVE-2019-5736
#     attack of boundary_exe.bats, plus attacks on the mount itself:
#     mount_setattr clearing RDONLY, open_tree cloning it), in a user
#     namespace without and with CAP_SYS_ADMIN there, and in a privileged
#     container (CAP_SYS_ADMIN in the initial user namespace, no user
#     namespace): the write gets EROFS, the mount cannot be made writable
#     or cloned, and no mountinfo in the container lists it;
#   - run and exec re-execute once (one open_tree, no memfd), state never;
#   - without CAP_SYS_ADMIN (a rootless brig) brig falls back to the sealed
#     memfd copy (boundary_exe.bats tests that copy).
# Each test attacks a COPY of the runtime and checks its sha256 afterwards.
# Covers any cgroup mode.

load helpers
load confine_helpers

# The container's ids 0..65535 are host ids 100000..165535.
MAP_HOST=100000

setup() {
	requires root
	setup_bundle
	need_built "$CONFINE_TOOLS/exe_thief"
	cp "$CONFINE_TOOLS/exe_thief" "$BUNDLE/rootfs/bin/exe_thief"
	RT_COPY="$(mktemp /tmp/brig-test-runtime.XXXXXX)"
	cp "$RUNTIME" "$RT_COPY"
	chmod 0755 "$RT_COPY"
	RT_HASH="$(sha256sum <"$RT_COPY")"
	FIFO="/tmp/evil-$$.fifo"
	OUT=/tmp/thief.out
	ln -s /proc/self/exe "$BUNDLE/rootfs/bin/evil"
}

teardown() {
	[ -n "${HELD_FD:-}" ] && eval "exec $HELD_FD<&-"
	teardown_bundle
	[ -n "${RT_COPY:-}" ] && rm -f "$RT_COPY"
	return 0
}

# mounted_anywhere ID: print the /proc/PID/mountinfo files on the host that
# list mount ID (empty when none does).
mounted_anywhere() {
	grep -l "^$1 " /proc/[0-9]*/mountinfo 2>/dev/null || true
}

# attack_mount_exec: the thief is the container's pid 1; the operator runs
# `exec ID /bin/evil` once, which runs the runtime's exe in the container;
# the thief takes it and attacks the file and its mount. Then: the write
# failed on the read-only mount, the mount could be neither made writable
# nor cloned, no mountinfo inside lists it, the copy on the host is intact.
attack_mount_exec() {
	set_args exe_thief "$FIFO" "$OUT" 20 mount
	rt run -d thief </dev/null >/dev/null 2>"$BUNDLE/thief.err" || { cat "$BUNDLE/thief.err" >&2; return 1; }
	wait_thief ready
	rt exec thief /bin/evil "--log=$FIFO" pwn </dev/null >/dev/null 2>&1 || true
	wait_thief done
	local out
	out="$(cat "$BUNDLE/rootfs$OUT")"
	echo "thief: $out" >&2
	assert_contains "$out" "target: "
	[[ "$out" != *"target: none"* ]]
	# Not a memfd: the runtime's own file, on the detached mount.
	[[ "$out" != *"memfd:"* ]]
	assert_contains "$out" "reopen: EROFS"
	assert_contains "$out" "mountinfo: absent"
	[[ "$out" =~ setattr:\ (EINVAL|EPERM) ]]
	[[ "$out" =~ clone:\ (EINVAL|EPERM) ]]
	[[ "$out" != *"write: ok"* ]]
	[ "$(sha256sum <"$RT_COPY")" = "$RT_HASH" ]
}

# with_caps CAP...: the container's process holds exactly these (bounding,
# effective, permitted).
with_caps() {
	local json
	json="$(printf '%s\n' "$@" | jq -R . | jq -s -c .)"
	update_config ".process.capabilities = {\"bounding\": $json, \"effective\": $json, \"permitted\": $json}"
}

@test "boundary_exe_mount: the created init runs the runtime's own file from a read-only mount no mountinfo lists" {
	requires brig
	set_args true
	rt create ro </dev/null >"$BUNDLE/ro.out" 2>"$BUNDLE/ro.err" || { cat "$BUNDLE/ro.err" >&2; return 1; }
	local pid
	pid="$(rt state ro | jq -r .pid)"
	# Not a memfd copy: the whole file, byte for byte the runtime's.
	local link
	link="$(readlink "/proc/$pid/exe")"
	echo "exe: $link" >&2
	[[ "$link" != /memfd:* ]]
	cmp "/proc/$pid/exe" "$RT_COPY"
	# The mount it lies on (fdinfo of an fd of it) is in no mount table of
	# any process on the host.
	exec {HELD_FD}<"/proc/$pid/exe"
	local id
	id="$(awk '$1 == "mnt_id:" { print $2 }' "/proc/self/fdinfo/$HELD_FD")"
	[ -n "$id" ]
	[ -z "$(mounted_anywhere "$id")" ]
	# The mount of the runtime's own file, in contrast, is listed.
	exec {f}<"$RT_COPY"
	local own
	own="$(awk '$1 == "mnt_id:" { print $2 }' "/proc/self/fdinfo/$f")"
	exec {f}<&-
	[ "$own" != "$id" ]
	[ -n "$(mounted_anywhere "$own")" ]
	# Even host root cannot write it (O_TRUNC asks for the mount's write
	# access before anything else): the read-only detached mount refuses.
	run bash -c ': >"/proc/$1/exe"' _ "$pid"
	[ "$status" -ne 0 ]
	assert_contains "$output" "Read-only file system"
	[ "$(sha256sum <"$RT_COPY")" = "$RT_HASH" ]
	exec {HELD_FD}<&-
	HELD_FD=""
	rt delete -f ro
}

@test "boundary_exe_mount: a container without CAP_SYS_ADMIN (user namespace) cannot write or remount the runtime's mount" {
	requires brig
	with_userns "$RT_COPY"
	attack_mount_exec
}

@test "boundary_exe_mount: a container with CAP_SYS_ADMIN in its user namespace cannot write or remount the runtime's mount" {
	requires brig
	with_userns "$RT_COPY"
	with_caps CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_DAC_OVERRIDE CAP_KILL
	attack_mount_exec
}

@test "boundary_exe_mount: a privileged container (CAP_SYS_ADMIN in the initial user namespace) cannot write or remount it" {
	requires brig
	with_caps CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_DAC_OVERRIDE CAP_KILL
	attack_mount_exec
}

@test "boundary_exe_mount: run and exec re-execute once through the mount, without a copy; state does not pay" {
	requires brig program:strace
	set_args sleep 100
	local trace="$BUNDLE/trace" sys=open_tree,mount_setattr,memfd_create,execveat
	# (Not -f: the re-exec happens in the command's own process.)
	strace -qq -e "trace=$sys" -o "$trace" "$RT_COPY" --root "$ROOT" run -d mnt </dev/null >/dev/null 2>&1
	cat "$trace" >&2
	[ "$(grep -c '^open_tree(.*OPEN_TREE_CLONE.* = [0-9]' "$trace")" -eq 1 ]
	[ "$(grep -c '^mount_setattr(.*MOUNT_ATTR_RDONLY.* = 0' "$trace")" -eq 1 ]
	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
	! grep -q memfd_create "$trace" || false
	strace -qq -e "trace=$sys" -o "$trace" "$RT_COPY" --root "$ROOT" exec mnt true
	[ "$(grep -c '^open_tree(.*OPEN_TREE_CLONE.* = [0-9]' "$trace")" -eq 1 ]
	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
	! grep -q memfd_create "$trace" || false
	strace -qq -e "trace=$sys" -o "$trace" "$RT_COPY" --root "$ROOT" state mnt >/dev/null
	[ ! -s "$trace" ]
	rt delete -f mnt
}

# The re-exec is done by the binary's entry point before glibc starts
# (runtime/entry.c) when it recognises the global options, else by main:
# either way exactly once, through the mount, whatever the spelling.
@test "boundary_exe_mount: every spelling of the global options re-executes exactly once" {
	requires brig program:strace
	set_args sleep 100
	local trace="$BUNDLE/trace" sys=open_tree,mount_setattr,memfd_create,execveat i=0 spelling
	for spelling in "--root $ROOT" "--root=$ROOT" "--debug --root $ROOT --log $BUNDLE/log" \
		"--log-format=json --log $BUNDLE/log --root $ROOT" "-root $ROOT" \
		"--rootless=false --root $ROOT" "--systemd-cgroup=x --root $ROOT" "--root $ROOT --"; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # the spelling is split on purpose
		strace -qq -e "trace=$sys" -o "$trace" "$RT_COPY" $spelling run -d "sp$i" </dev/null >/dev/null 2>&1 || true
		echo "$spelling:" >&2
		cat "$trace" >&2
		[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -le 1 ]
		! grep -q memfd_create "$trace" || false
		case "$spelling" in
		--systemd-cgroup=x*) # not an option that takes a value: refused, nothing made
			[ ! -e "$ROOT/sp$i" ] ;;
		*)	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
			[ "$(grep -c '^mount_setattr(.*MOUNT_ATTR_RDONLY.* = 0' "$trace")" -eq 1 ]
			rt delete -f "sp$i" ;;
		esac
	done
}

@test "boundary_exe_mount: without CAP_SYS_ADMIN brig falls back to the sealed memfd copy" {
	requires brig program:strace program:setpriv
	local trace="$BUNDLE/trace"
	chmod 0777 "$BUNDLE"
	# As nobody (a rootless brig): open_tree is refused, the copy is made.
	# `create --help` stops right after the re-exec.
	setpriv --reuid 65534 --regid 65534 --clear-groups \
		strace -qq -e trace=open_tree,memfd_create,execveat -o "$trace" \
		"$RT_COPY" --root "$ROOT" create --help >/dev/null
	cat "$trace" >&2
	grep -q '^open_tree(.* = -1 EPERM' "$trace"
	[ "$(grep -c 'memfd_create("brig"' "$trace")" -eq 1 ]
	[ "$(grep -c 'execveat(.*AT_EMPTY_PATH) = 0' "$trace")" -eq 1 ]
}
