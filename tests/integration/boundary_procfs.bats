#!/usr/bin/env bats
# A second procfs (issue #22 item 1): linux.maskedPaths and readonlyPaths are
# written for /proc, but a "proc" mount elsewhere, a bind of the host's or of
# the container's own /proc, a bind of one procfs file or an rbind that
# carries a procfs showed the same files unmasked; without a user namespace
# its sys/kernel/core_pattern is the host's ("|/prog" runs a program as host
# root at the next core dump). The runtime gives every procfs it mounts the
# config's /proc masks relative to its own mount point, `brig check` reports
# every such mount (procfs-mount, critical without a user namespace) in every
# profile, and a node policy refuses it at create.
#
# Never writes a file under any /proc/sys: a path is probed with an
# open(O_WRONLY|O_APPEND) that writes nothing (the shell's `true >>PATH`),
# which a read-only mount refuses with EROFS; a masked path is a character
# device (the container's /dev/null) in place of the procfs file.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
	return 0
}

# probe PATH...: for each path, "PATH writable" when it opens for writing
# (nothing is written) or "PATH refused".
PROBE='for p in "$@"; do if (true >>"$p") 2>/dev/null; then echo "$p writable"; else echo "$p refused"; fi; done'
# masked PATH...: "PATH masked" when it is a character device, else "PATH open".
MASKED='for p in "$@"; do if [ -c "$p" ]; then echo "$p masked"; else echo "$p open"; fi; done'

# run_procfs_probes ID 'PATHS TO OPEN' 'PATHS THAT MUST BE MASKED': run the
# container with both probes; $output holds their lines.
run_procfs_probes() {
	local q
	q="$(jq -Rn --arg s "set -- $2; $PROBE; set -- $3; $MASKED" '$s')"
	update_config ".process.args = [\"sh\", \"-c\", $q]"
	run brig run "$1" </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "procfs: a second proc mount (/p2, //p3/, /proc/../p4) gets /proc's read-only and masked paths" {
	update_config '.mounts += [
		{"destination":"/p2","type":"proc","source":"proc"},
		{"destination":"//p3/","type":"proc","source":"proc"},
		{"destination":"/proc/../p4","type":"proc","source":"proc"}]'
	run_procfs_probes p1 "/proc/sys/kernel/core_pattern /p2/sys/kernel/core_pattern /p3/sys/kernel/core_pattern /p4/sys/kernel/core_pattern" \
		"/proc/keys /p2/keys /p3/keys /p4/keys /p2/timer_list"
	# /proc as the config wrote it (held before too)
	assert_contains "$output" "/proc/sys/kernel/core_pattern refused"
	assert_contains "$output" "/proc/keys masked"
	# the old brig: "/p2/sys/kernel/core_pattern writable", "/p2/keys open"
	local p
	for p in /p2 /p3 /p4; do
		assert_contains "$output" "$p/sys/kernel/core_pattern refused"
		assert_contains "$output" "$p/keys masked"
	done
	assert_contains "$output" "/p2/timer_list masked"
}

@test "procfs: binds of a procfs get the masks too: the host's /proc, the container's own, one procfs file, an rbind that carries one" {
	touch "$BUNDLE/rootfs/cp"
	update_config '.mounts += [
		{"destination":"/h","type":"none","source":"/proc","options":["rbind"]},
		{"destination":"/own","type":"bind","source":"rootfs/proc","options":["rbind"]},
		{"destination":"/cp","type":"bind","source":"/proc/sys/kernel/core_pattern","options":["bind"]},
		{"destination":"/r","type":"bind","source":"rootfs","options":["rbind"]}]'
	run_procfs_probes p2 "/h/sys/kernel/core_pattern /own/sys/kernel/core_pattern /cp /r/proc/sys/kernel/core_pattern /r/own/sys/kernel/core_pattern" \
		"/h/keys /own/keys /r/proc/keys /r/own/keys /r/h/keys"
	local p
	for p in /h/sys/kernel/core_pattern /own/sys/kernel/core_pattern /cp /r/proc/sys/kernel/core_pattern /r/own/sys/kernel/core_pattern; do
		assert_contains "$output" "$p refused"
	done
	for p in /h/keys /own/keys /r/proc/keys /r/own/keys /r/h/keys; do
		assert_contains "$output" "$p masked"
	done
}

@test "procfs: many read-only and masked paths all hold (a full fd batch closed the cached /dev/null)" {
	# 60 more masked files after the first (which opens /dev/null) take more
	# fds than one batch holds: the old brig closed the cached /dev/null with
	# the full batch, then bound the closed fd and create failed ("mask
	# ...: No such file or directory"), or had the number reused by a target.
	update_config '.linux.maskedPaths += ([range(0;60)] | map("/proc/sys/kernel/ns_last_pid"))
		+ ["/proc/timer_list", "/proc/keys"]'
	run_procfs_probes p3 "/proc/sys/kernel/core_pattern" "/proc/keys /proc/timer_list"
	assert_contains "$output" "/proc/sys/kernel/core_pattern refused"
	assert_contains "$output" "/proc/keys masked"
	assert_contains "$output" "/proc/timer_list masked"
}

@test "procfs: check flags every procfs outside /proc in every profile, however spelt; a node policy refuses it at create" {
	local chk
	chk="$(test_tmpdir procchk)"
	(cd "$chk" && "$RUNTIME" spec --hardened)
	mkdir "$chk/f" "$chk/f/rootfs"
	local m
	for m in '{"destination":"/p2","type":"proc","source":"proc"}' \
		'{"destination":"/proc/../p2","type":"proc","source":"proc"}' \
		'{"destination":"//p2","type":"PROC","source":"proc"}' \
		'{"destination":"/p2","type":"none","source":"/proc","options":["rbind"]}' \
		'{"destination":"/p2","type":"bind","source":"//proc/./sys/","options":["bind","ro"]}' \
		'{"destination":"/p2","type":"bind","source":"rootfs/proc","options":["rbind"]}' \
		'{"destination":"/p2","type":"bind","source":"./rootfs//proc/sys","options":["rbind"]}' \
		'{"destination":"/p2","type":"bind","source":"/","options":["rbind","ro"]}'; do
		jq ".mounts += [$m]" "$chk/config.json" >"$chk/f/config.json"
		for p in baseline restricted sandbox; do
			run brig check --bundle "$chk/f" --profile "$p" --format json
			echo "$p $m: $output"
			[ "$status" -eq 1 ]
			jq -e '[.findings[] | select(.rule == "procfs-mount" and .severity == "critical"
				and (.path | test("^mounts\\[7\\]\\.")))] | length >= 1' <<<"$output" >/dev/null
		done
	done
	# The container's /proc itself, and a bind of its /proc made before
	# /proc is mounted (the image's empty directory), are no finding.
	jq '.mounts = [{"destination":"/p2","type":"bind","source":"rootfs/proc","options":["rbind"]}] + .mounts' \
		"$chk/config.json" >"$chk/f/config.json"
	run brig check --bundle "$chk/f" --profile baseline --format json
	[ "$(jq '[.findings[] | select(.rule == "procfs-mount")] | length' <<<"$output")" -eq 0 ]
	# In a user namespace the host refuses its root the sysctls: medium.
	jq '.mounts += [{"destination":"/p2","type":"proc","source":"proc"}] | .linux.namespaces += [{"type":"user"}]' \
		"$chk/config.json" >"$chk/f/config.json"
	run brig check --bundle "$chk/f" --profile baseline --format json --fail-on info
	[ "$(jq -r '.findings[] | select(.rule == "procfs-mount") | .severity' <<<"$output")" = medium ]
	rm -rf "$chk"

	# Under a baseline node policy create refuses the second procfs and
	# leaves nothing (the old brig ran it).
	echo '{"profile":"baseline","failOn":"high"}' >"$BUNDLE/policy.json"
	update_config '.mounts += [{"destination":"/p2","type":"proc","source":"proc"}]
		| .linux.seccomp = {"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_ALLOW"}]}
		| .process.args = ["touch", "/ran"]'
	run brig --policy "$BUNDLE/policy.json" run pol </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" "critical procfs-mount at mounts[6].destination: a procfs is mounted at /p2, outside /proc"
	assert_no_leftovers pol
	[ ! -e "$BUNDLE/rootfs/ran" ]
}
