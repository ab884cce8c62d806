#!/usr/bin/env bats
# The cheaper cgroup work of issue #15 (docs/cgroups.md "Ownership" and
# "Joining"), proved from the host:
# - create records every directory as made before the first mkdir and
#   learns from mkdir's EEXIST which existed; the leaves it makes carry the
#   sticky bit, so the delete of a create killed between the record and
#   the mkdirs removes only what it made (the kill is provoked with
#   strace's syscall fault injection at a chosen mkdir);
# - a v1 cpuset leaf gets its parent's cpus and mems;
# - the init opens its v1 `tasks` files itself and has closed them before
#   the container's process runs.
# Modes: cgroup v1 and hybrid hosts (the v1 tests skip on pure v2, where
# there is one hierarchy joined by clone3); the ownership tests run on all.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

is_v2() {
	[ -f /sys/fs/cgroup/cgroup.controllers ]
}

requires_v1() {
	is_v2 && skip "needs cgroup v1 hierarchies (pure v2 host: one hierarchy, joined by clone3)"
	[ -d /sys/fs/cgroup/cpuset ] || skip "needs the v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
	return 0
}

# hier_dirs PATH: PATH (below the test parent) in every visible cgroup
# hierarchy under /sys/fs/cgroup, whether it exists or not.
hier_dirs() {
	local mp
	for mp in $(grep -E ' - cgroup2? ' /proc/self/mountinfo | awk '{print $5}' | grep '^/sys/fs/cgroup'); do
		echo "$mp/$TEST_CGROUP_PARENT/$1"
	done
}

existing() {
	local d
	for d in "$@"; do [ -d "$d" ] && echo "$d"; done
	return 0
}

# strace_kill_at_mkdir N ARGS...: brig ARGS, killed by SIGKILL on entering
# its Nth mkdir(2) (the call is not made).
strace_kill_at_mkdir() {
	local n="$1"
	shift
	strace -o /dev/null -e trace=mkdir -e inject=mkdir:signal=KILL:when="$n" \
		"$RUNTIME" --root "$ROOT" "$@" </dev/null >/dev/null 2>&1 || true
}

@test "cgroups_fast: brig's leaf has the sticky mark; delete removes it in every hierarchy" {
	requires brig
	update_config '.process.args = ["sleep", "100"]'
	create_container c1
	local d n=0
	for d in $(existing $(hier_dirs "$CGROUP_NAME")); do
		# skipped hierarchies (cgroups_scope.bats) have no directory at all
		[ "$(stat -c %a "$d")" = 1755 ] || { echo "$d: mode $(stat -c %a "$d")" >&2; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
	# the record lists what was made, and says the directories carry the mark
	grep -qx marked "$ROOT/c1/made"
	brig delete -f c1
	[ -z "$(existing $(hier_dirs "$CGROUP_NAME"))" ]
}

@test "cgroups_fast: a cgroup that existed is used, recorded as found, and not removed by delete" {
	requires brig
	update_config '.process.args = ["sleep", "100"]'
	local pre d pid
	# the memory one (or the v2 directory), made by the test before create
	if is_v2; then pre="/sys/fs/cgroup/$TEST_CGROUP_PARENT/$CGROUP_NAME"; else
		pre="/sys/fs/cgroup/memory/$TEST_CGROUP_PARENT/$CGROUP_NAME"; fi
	mkdir -p "$pre"
	create_container c1
	pid="$(brig state c1 | jq -r .pid)"
	# the init is in it, and the record does not claim it
	grep -qx "$pid" "$pre/cgroup.procs"
	! grep -qx "made $pre" "$ROOT/c1/made" || false
	[ "$(stat -c %a "$pre")" = 755 ]
	brig delete -f c1
	[ -d "$pre" ] || { echo "$pre (made by the test) was removed" >&2; false; }
	for d in $(existing $(hier_dirs "$CGROUP_NAME")); do
		[ "$d" = "$pre" ] || { echo "$d (made by brig) left" >&2; false; }
	done
	rmdir "$pre"
}

@test "cgroups_fast: create killed between the record and its mkdirs: delete -f removes only brig's" {
	# strace injects the kill
	requires brig program:strace
	update_config '.process.args = ["sleep", "100"]'
	local pre d n
	# the parent exists, so that every hierarchy takes one mkdir
	create_container warm
	brig delete -f warm
	if is_v2; then pre="/sys/fs/cgroup/$TEST_CGROUP_PARENT/$CGROUP_NAME"; else
		pre="/sys/fs/cgroup/memory/$TEST_CGROUP_PARENT/$CGROUP_NAME"; fi
	# the 1st, 2nd, 4th and 6th mkdir of the v1 hierarchies (pure v2: the
	# only one)
	local kills="1 2 4 6"
	is_v2 && kills=1
	for n in $kills; do
		mkdir -p "$pre"
		strace_kill_at_mkdir "$n" create k
		# killed: the record is there and lists every directory as made
		[ -f "$ROOT/k/made" ] || { echo "mkdir $n: no record" >&2; cat "$ROOT/k/made"; false; }
		grep -qx marked "$ROOT/k/made"
		[ ! -f "$ROOT/k/state.json" ]
		grep -q "^made " "$ROOT/k/made"
		! grep -q '^init ' "$ROOT/k/made" || false
		brig delete -f k
		[ ! -e "$ROOT/k" ]
		# the test's own directory survives, every directory brig made is gone
		[ -d "$pre" ] || { echo "mkdir $n: $pre (not brig's) was removed" >&2; false; }
		for d in $(existing $(hier_dirs "$CGROUP_NAME")); do
			[ "$d" = "$pre" ] || { echo "mkdir $n: $d left" >&2; false; }
		done
		rmdir "$pre"
		# without a directory of someone else's: everything goes
		strace_kill_at_mkdir "$n" create k
		[ -f "$ROOT/k/made" ]
		brig delete -f k
		[ -z "$(existing $(hier_dirs "$CGROUP_NAME"))" ] || { echo "mkdir $n: left $(existing $(hier_dirs "$CGROUP_NAME"))" >&2; false; }
	done
	# the id and its cgroup work again
	create_container k
	[ "$(brig state k | jq -r .status)" = created ]
}

@test "cgroups_fast: a killed create's 'made' line for a directory without the mark is not removed" {
	requires brig
	update_config '.process.args = ["sleep", "100"]'
	local pre
	if is_v2; then pre="/sys/fs/cgroup/$TEST_CGROUP_PARENT/$CGROUP_NAME"; else
		pre="/sys/fs/cgroup/pids/$TEST_CGROUP_PARENT/$CGROUP_NAME"; fi
	mkdir -p "$pre"
	# A record as create writes it before its first mkdir, left by a create
	# killed there: it claims the test's directory too.
	mkdir -m 0711 "$ROOT/k"
	printf 'manager cgroupfs\npath /%s/%s\nmarked\nmade %s\n' "$TEST_CGROUP_PARENT" \
		"$CGROUP_NAME" "$pre" >"$ROOT/k/made"
	brig delete -f k
	[ -d "$pre" ]
	# once create got to its init line, the record is the truth (made lines
	# were corrected before the clone): the same line removes the directory
	mkdir -m 0711 "$ROOT/k"
	printf 'manager cgroupfs\npath /%s/%s\nmarked\nmade %s\ninit 1 1\n' "$TEST_CGROUP_PARENT" \
		"$CGROUP_NAME" "$pre" >"$ROOT/k/made"
	brig delete -f k
	[ ! -d "$pre" ]
}

@test "cgroups_fast: a killed create's record naming another container's marked cgroup: delete -f signals and removes nothing there" {
	requires brig
	update_config '.process.args = ["sleep", "100"]'
	create_container a
	local pid dirs d
	pid="$(brig state a | jq -r .pid)"
	dirs="$(grep '^made ' "$ROOT/a/made" | cut -d' ' -f2)"
	[ -n "$dirs" ]
	# What a create of the same cgroupsPath, killed before mkdir's EEXIST
	# was written down, leaves: every directory claimed, no init line.
	write_killed_record k $dirs
	brig delete -f k
	[ ! -e "$ROOT/k" ]
	# a's process lives on, in every one of its directories
	kill -0 "$pid"
	for d in $dirs; do
		[ -d "$d" ] || { echo "$d removed" >&2; false; }
	done
	[ "$(brig state a | jq -r .status)" = created ]
	brig delete -f a
	# dead (a zombie until the host's init reaps it) and its cgroups gone
	[ ! -e "/proc/$pid" ] || [ "$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$pid/stat" 2>/dev/null || echo Z)" = Z ]
	for d in $dirs; do [ ! -d "$d" ]; done
}

@test "cgroups_fast: a new container's cpuset has its parent's cpus and mems" {
	requires brig
	requires_v1
	update_config '.process.args = ["sleep", "100"]'
	local base="/sys/fs/cgroup/cpuset/$TEST_CGROUP_PARENT" parent leaf flag
	# 1. a parent brig makes: filled from its own parent, like the leaf
	# (mems in the config, the machine's: without cpus or mems a container
	# whose ancestors have every cpu is left out of cpuset, cgroups_scope.bats)
	parent="$base/$CGROUP_NAME-p"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME-p/c\" |
		.linux.resources.cpu.mems = \"$(cat /sys/fs/cgroup/cpuset/cpuset.mems)\""
	create_container c1
	# (the test parent exists once a container is in it)
	flag="$(cat "$base/cgroup.clone_children")"
	leaf="$parent/c"
	[ "$(cat "$parent/cpuset.cpus")" = "$(cat "$base/cpuset.cpus")" ]
	[ "$(cat "$parent/cpuset.mems")" = "$(cat "$base/cpuset.mems")" ]
	[ "$(cat "$leaf/cpuset.cpus")" = "$(cat "$parent/cpuset.cpus")" ]
	[ "$(cat "$leaf/cpuset.mems")" = "$(cat "$parent/cpuset.mems")" ]
	grep -qx "$(brig state c1 | jq -r .pid)" "$leaf/tasks"
	# brig sets no flag of its own (new cgroups inherit their parent's)
	[ "$(cat "$parent/cgroup.clone_children")" = "$flag" ]
	brig delete -f c1
	[ ! -d "$leaf" ]
	# 2. a parent of someone else's with a narrower cpus list: the leaf
	# gets that list (0: every machine has cpu 0)
	parent="$base/$CGROUP_NAME-q"
	mkdir "$parent"
	cp "$base/cpuset.mems" "$parent/cpuset.mems"
	echo 0 >"$parent/cpuset.cpus"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME-q/c\""
	create_container c2
	leaf="$parent/c"
	[ "$(cat "$leaf/cpuset.cpus")" = 0 ]
	[ "$(cat "$leaf/cpuset.mems")" = "$(cat "$parent/cpuset.mems")" ]
	grep -qx "$(brig state c2 | jq -r .pid)" "$leaf/tasks"
	[ "$(cat "$parent/cpuset.cpus")" = 0 ]
	brig delete -f c2
	[ ! -d "$leaf" ]
	# 3. a parent with cgroup.clone_children: the kernel filled the leaf,
	# and brig's values are the same
	echo 1 >"$parent/cgroup.clone_children"
	create_container c3
	[ "$(cat "$leaf/cpuset.cpus")" = 0 ]
	[ "$(cat "$leaf/cpuset.mems")" = "$(cat "$parent/cpuset.mems")" ]
	grep -qx "$(brig state c3 | jq -r .pid)" "$leaf/tasks"
	brig delete -f c3
	[ ! -d "$leaf" ]
	rmdir "$parent" "$base/$CGROUP_NAME-p"
}

@test "cgroups_fast: the init has closed its tasks files before the container's process runs" {
	requires brig
	requires_v1
	update_config '.process.args = ["sleep", "100"]'
	create_container c1
	local pid fds
	pid="$(brig state c1 | jq -r .pid)"
	# created, waiting for start: no fd of the init names a cgroup file
	fds="$(ls -l "/proc/$pid/fd/")"
	echo "$fds"
	! grep -q /sys/fs/cgroup <<<"$fds" || false
	# and it joined every v1 hierarchy it is recorded in
	local d
	for d in $(grep '^made ' "$ROOT/c1/made" | cut -d' ' -f2); do
		case "$d" in /sys/fs/cgroup/unified/*) continue ;; esac
		grep -qx "$pid" "$d/tasks" || { echo "$pid not in $d" >&2; false; }
	done
}

@test "cgroups_fast: a cgroup mount shows the host's v1 hierarchies, each rooted at the container's cgroup" {
	requires_v1
	update_config '.mounts += [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "ro"]}]'
	update_config '.process.args = ["sh", "-c", "ls /sys/fs/cgroup; echo --; cat /sys/fs/cgroup/memory/tasks; echo --; cat /proc/self/cgroup"]'
	run brig run c1
	echo "$output"
	[ "$status" -eq 0 ]
	local want got
	want="$(grep -E ' - cgroup ' /proc/self/mountinfo | awk '{print $5}' | grep '^/sys/fs/cgroup/' | xargs -n1 basename | sort | tr '\n' ' ')"
	got="$(sed -n '1,/^--$/p' <<<"$output" | grep -v '^--$' | grep -v '^unified$' | sort | tr '\n' ' ')"
	# co-mounted controllers also get a symlink per controller
	for w in $want; do [[ " $got " == *" $w "* ]] || { echo "missing $w in: $got" >&2; false; }; done
	# the memory hierarchy's root inside is the container's cgroup: only
	# the container's own processes are listed there
	[ "$(sed -n '/^--$/,/^--$/p' <<<"$output" | grep -vc '^--$')" -le 2 ]
}

@test "cgroups_fast: a process exec'd into a created container finds no host directory among the init's fds" {
	requires brig
	is_v2 || [ -d /sys/fs/cgroup/unified ] || skip "no cgroup2 hierarchy: the init is cloned into no cgroup2 directory"
	# hybrid: a parent that exists in cgroup2 keeps the container there
	# (cgroups_scope.bats), so the init is cloned into it with
	# CLONE_INTO_CGROUP from a directory fd of the parent
	is_v2 || mkdir -p "/sys/fs/cgroup/unified/$TEST_CGROUP_PARENT"
	update_config '.process.args = ["sleep", "100"]'
	create_container c1
	local pid
	pid="$(brig state c1 | jq -r .pid)"
	grep -qx "0::/$TEST_CGROUP_PARENT/$CGROUP_NAME" "/proc/$pid/cgroup"
	# Until `start`, the init holds no fd of a host directory: from one, a
	# process of the container could walk up (/proc/1/fd/N/../..) to the
	# host's root.
	# (its stdio are the caller's files, as with runc: not directories)
	run brig exec c1 sh -c 'for f in /proc/1/fd/*; do echo "$f $(readlink "$f")"; [ -d "$f" ] && echo "DIRECTORY $f"; done; ls /proc/1/fd/*/.. 2>/dev/null'
	echo "$output"
	[ "$status" -eq 1 ]   # ls found nothing to list
	! grep -q DIRECTORY <<<"$output" || false
	local f
	for f in /proc/"$pid"/fd/*; do
		[ ! -d "$f" ] || { echo "init holds the directory $(readlink "$f")" >&2; false; }
	done
}

@test "cgroups_fast: a cgroup mount without a cgroup namespace binds the container's own cgroups, read-only, nosuid, nodev, noexec" {
	requires_v1
	update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
	update_config '.mounts += [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}]'
	update_config '.process.args = ["sh", "-c", "grep \" /sys/fs/cgroup\" /proc/self/mountinfo; echo --; cat /sys/fs/cgroup/pids/tasks; echo --; mkdir /sys/fs/cgroup/pids/x 2>&1 || echo refused"]'
	run brig run c1
	echo "$output"
	[ "$status" -eq 0 ]
	local mi n=0 line
	mi="$(sed -n '1,/^--$/p' <<<"$output" | grep -v '^--$')"
	# the tmpfs and one bind per v1 hierarchy, each with every attribute
	while IFS= read -r line; do
		local opts="${line#* * * * * }"
		opts="${opts%% *}"
		for a in ro nosuid nodev noexec; do
			[[ ",$opts," == *",$a,"* ]] || { echo "missing $a: $line" >&2; false; }
		done
		n=$((n + 1))
	done <<<"$mi"
	[ "$n" -ge 2 ]
	# the bind's root is the container's own cgroup
	grep -q " /$TEST_CGROUP_PARENT/$CGROUP_NAME /sys/fs/cgroup/pids " <<<"$mi"
	[ "$(sed -n '/^--$/,/^--$/p' <<<"$output" | grep -vc '^--$')" -le 3 ]
	grep -q refused <<<"$output"
}
