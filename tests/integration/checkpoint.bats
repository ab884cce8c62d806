#!/usr/bin/env bats
# checkpoint / restore through criu: a busybox container counting into a
# tmpfs (/dev/shm/count) is checkpointed and restored, and the count goes on
# from where it was instead of starting again from 0; --leave-running keeps
# the container running; --image-path/--work-path hold the images and criu's
# log; --pre-dump + --parent-path; the command-line surface podman probes.
# The criu tests skip with criu's own error when criu cannot run on this
# kernel (Debian 12's criu 3.17 does not know the [vvar_vclock] mapping of
# kernels >= 6.13: "vdso: Unexpected rt vDSO area bounds").

load helpers

setup() {
	requires root
	setup_bundle
	IMG="$BUNDLE/images"
	WORK="$BUNDLE/criu-work"
}

teardown() {
	teardown_bundle
}

# requires_criu: skip unless the criu binary works here, quoting criu.
requires_criu() {
	local out
	requires program:criu
	out="$(criu check 2>&1)" && return 0
	out="$(grep -m3 'Error' <<<"$out" | sed ':a;N;$!ba;s/\n/; /g')"
	skip "criu cannot run on this kernel ($(uname -r)), criu check says: ${out:-$(criu check 2>&1 | tail -1)}"
}

# start_counter ID: run a container that writes an increasing count to its
# /dev/shm/count ten times a second; wait until it has counted past 20.
start_counter() {
	update_config '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /dev/shm/count; sleep 0.1; done"]'
	run_detached "$1"
	wait_for_count "$1" 20
}

# count_of ID: the container's current count (from inside it).
count_of() {
	brig exec "$1" cat /dev/shm/count
}

# wait_for_count ID N: poll until the count is greater than N (10s at most).
wait_for_count() {
	local i c
	for i in $(seq 100); do
		c="$(count_of "$1" 2>/dev/null)" || c=0
		[ "${c:-0}" -gt "$2" ] && return 0
		sleep 0.1
	done
	echo "count of $1 stayed at ${c:-?} (wanted > $2)" >&2
	return 1
}

# restore_detached ID [RESTORE FLAGS...]: restore -d with stdio on files.
restore_detached() {
	local id="$1" rc=0
	shift
	brig restore -d "$@" "$id" </dev/null >"$BUNDLE/$id.restore.out" 2>"$BUNDLE/$id.restore.err" || rc=$?
	[ "$rc" -eq 0 ] || { echo "restore $id failed ($rc):" >&2; cat "$BUNDLE/$id.restore.err" >&2; }
	return "$rc"
}

# status ID: the container's status, or "gone" when it no longer exists
# (runc destroys a checkpointed container; brig leaves it stopped).
status_of() {
	local out
	out="$(brig state "$1" 2>/dev/null)" || { echo gone; return 0; }
	jq -r .status <<<"$out"
}

@test "checkpoint --help exits 0 and lists the runc flags" {
	run brig checkpoint --help
	[ "$status" -eq 0 ]
	for f in --image-path --work-path --parent-path --leave-running --tcp-established \
		--ext-unix-sk --shell-job --lazy-pages --file-locks --pre-dump \
		--manage-cgroups-mode --empty-ns --auto-dedup; do
		assert_contains "$output" "$f"
	done
}

@test "restore --help exits 0 and lists the runc flags" {
	run brig restore --help
	[ "$status" -eq 0 ]
	for f in --image-path --work-path --bundle --console-socket --detach --pid-file \
		--no-subreaper --no-pivot --tcp-established --ext-unix-sk --shell-job --file-locks \
		--manage-cgroups-mode --lsm-profile --lsm-mount-context --auto-dedup --lazy-pages \
		--empty-ns; do
		assert_contains "$output" "$f"
	done
}

@test "restore --lsm-mount-context without a value: requires an argument" {
	run brig restore --lsm-mount-context
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" "requires an argument"
	else
		# runc (urfave/cli) words it "flag needs an argument".
		assert_contains "$output" "needs an argument"
	fi
}

@test "checkpoint --manage-cgroups-mode rejects an unknown mode" {
	requires brig
	run brig checkpoint --manage-cgroups-mode bogus nosuch
	[ "$status" -ne 0 ]
	assert_contains "$output" "bogus"
}

@test "checkpoint of a container that does not exist fails" {
	run brig checkpoint --image-path "$IMG" nosuch
	[ "$status" -ne 0 ]
	assert_contains "$output" "does not exist"
}

@test "where criu cannot run, checkpoint and restore fail with criu's own error" {
	requires program:criu
	criu check >/dev/null 2>&1 && skip "criu works here (criu check passed)"
	local criu_err
	criu_err="$(criu check 2>&1 | grep -m1 'Error' | sed 's/^.*Error ([^)]*): //')"
	start_counter ct
	run brig checkpoint --image-path "$IMG" --work-path "$WORK" ct
	echo "$output"
	[ "$status" -ne 0 ]
	# criu's log in --work-path says why; brig quotes it, runc points to it
	grep -qF -- "$criu_err" "$WORK/dump.log"
	if is_brig; then
		assert_contains "$output" "criu dump failed"
		assert_contains "$output" "$criu_err"
	else
		assert_contains "$output" "criu failed"
	fi
	# the failed dump left the container running and counting
	[ "$(status_of ct)" = running ]
	wait_for_count ct "$(count_of ct)"

	set_cgroup_path copy
	run brig restore -d --image-path "$IMG" --work-path "$WORK" copy </dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	if is_brig; then
		assert_contains "$output" "criu restore failed"
		assert_contains "$output" "$criu_err"
	fi
	[ ! -e "$ROOT/copy" ]
	[ "$(status_of copy)" = gone ]
	[ "$(status_of ct)" = running ]
}

@test "checkpoint stops the container; restore continues the count" {
	requires_criu
	start_counter ct
	local before after
	before="$(count_of ct)"
	run brig checkpoint --image-path "$IMG" --work-path "$WORK" ct
	echo "$output"
	[ "$status" -eq 0 ]
	# the images went to --image-path, criu's log to --work-path
	[ -f "$IMG/inventory.img" ]
	ls "$IMG"/core-*.img >/dev/null
	[ -f "$WORK/dump.log" ]
	local st
	st="$(status_of ct)"
	[ "$st" = stopped ] || [ "$st" = gone ]
	[ "$st" = gone ] || brig delete ct

	restore_detached ct --image-path "$IMG" --work-path "$WORK"
	[ -f "$WORK/restore.log" ]
	[ "$(status_of ct)" = running ]
	# The count goes on above its value at checkpoint time; a restart
	# would be back near 0 after this short wait.
	sleep 0.3
	after="$(count_of ct)"
	echo "count before checkpoint: $before, after restore: $after"
	[ "$after" -gt "$before" ]
	wait_for_count ct "$after"

	brig kill ct KILL
	wait_for_status ct stopped
	brig delete ct
	assert_no_leftovers ct
}

@test "checkpoint --leave-running keeps it running; restore under a new id" {
	requires_criu
	start_counter ct
	local before after
	run brig checkpoint --leave-running --image-path "$IMG" --work-path "$WORK" ct
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(status_of ct)" = running ]
	before="$(count_of ct)"
	wait_for_count ct "$before"

	brig kill ct KILL
	wait_for_status ct stopped
	brig delete ct
	set_cgroup_path copy
	restore_detached copy --image-path "$IMG" --work-path "$WORK"
	[ "$(status_of copy)" = running ]
	after="$(count_of copy)"
	echo "count at checkpoint >= ${before}, after restore: $after"
	[ "$after" -ge "$before" ]
	wait_for_count copy "$after"
	[ "$(brig state copy | jq -r .id)" = copy ]
}

@test "checkpoint --pre-dump then --parent-path; restore continues the count" {
	requires_criu
	criu check --feature mem_dirty_track >/dev/null 2>&1 ||
		skip "criu check --feature mem_dirty_track: $(criu check --feature mem_dirty_track 2>&1 | tail -1)"
	start_counter ct
	local before after
	run brig checkpoint --pre-dump --image-path "$IMG/pre" --work-path "$WORK/pre" ct
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$WORK/pre/pre-dump.log" ] || [ -f "$WORK/pre/dump.log" ]
	[ "$(status_of ct)" = running ]
	wait_for_count ct "$(count_of ct)"

	before="$(count_of ct)"
	run brig checkpoint --parent-path ../pre --image-path "$IMG/final" --work-path "$WORK/final" ct
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(status_of ct)" != running ]
	[ "$(status_of ct)" = gone ] || brig delete ct

	restore_detached ct --image-path "$IMG/final" --work-path "$WORK/final"
	sleep 0.3
	after="$(count_of ct)"
	echo "count before checkpoint: $before, after restore: $after"
	[ "$after" -gt "$before" ]
}
