#!/usr/bin/env bats
# brig fork SOURCE NEW... (docs/sandbox.md "Forks"): each NEW is created from
# SOURCE's config with a copy of its ephemeral layer taken while SOURCE is
# frozen. Proved from inside: what SOURCE wrote before the fork is in every
# fork (contents, hard links, symlinks, whiteouts, owners through each id
# range, holes); what one writes after is in no other; SOURCE keeps running
# and is thawed, also when the fork fails; each fork has its own egress
# counters, id range and layer (charged to its own memory cgroup). Bad input
# names the id, exits 1 and leaves nothing. A hostile tenant of SOURCE
# (symlinks to host paths, fifos, a terabyte sparse file, a tree deeper
# than the copy goes) makes the fork touch no host file and fail cleanly.
# Covers any cgroup mode (v1 freezer or v2 cgroup.freeze).

load helpers

NET_PROBE="${BUILDDIR:-$SRCDIR}/tests/tools/net_probe"

setup() {
	requires root
	need_built "$NET_PROBE"
	setup_bundle
	cp "$NET_PROBE" "$BUNDLE/rootfs/bin/net_probe"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --ephemeral --bundle "$BUNDLE"
	# The image's files as the sandbox's own range sees them (owned by its
	# root, and one user's home by uid 1000).
	MAP="$(jq '.linux.uidMappings[0].hostID' "$BUNDLE/config.json")"
	mkdir -p "$BUNDLE/rootfs/srv/u"
	echo image >"$BUNDLE/rootfs/srv/u/f"
	chown -R "$MAP:$MAP" "$BUNDLE/rootfs"
	chown -R "$((MAP + 1000)):$((MAP + 1000))" "$BUNDLE/rootfs/srv/u"
	chmod 0777 "$BUNDLE/rootfs/srv/u"
	chmod 0666 "$BUNDLE/rootfs/srv/u/f"
	# the counter is renamed into place: a reader never sees it half written
	update_config '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i >/count.new; mv /count.new /count; sleep 0.02; done"]'
	set_cgroup_path src
	HOST_DIR="$(test_tmpdir host)"
	echo host-secret >"$HOST_DIR/canary"
}

teardown() {
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	return 0
}

# count ID: the counter SOURCE's process writes.
count() {
	brig exec "$1" cat /count
}

# source_running: SOURCE's process counts on, it is not frozen.
source_running() {
	local a b
	a="$(count src)"
	sleep 0.2
	b="$(count src)"
	echo "count $a -> $b"
	[ "$b" -gt "$a" ]
	[ "$(brig state src | jq -r .status)" = running ]
	! cgroup_frozen || false
}

@test "fork: each fork has SOURCE's files as they were; later writes stay apart; owners and ranges are each fork's own; SOURCE runs on" {
	local sum before
	run_detached src
	brig exec src sh -c 'echo before >/before && mkdir -p /d/e &&
		head -c 1048576 /dev/urandom >/d/e/big && ln /before /hl && ln -s /before /sl &&
		rm /bin/true && echo tenant >>/srv/u/f &&
		dd if=/dev/zero of=/sparse bs=1 count=1 seek=1073741824 2>/dev/null'
	sum="$(brig exec src sha256sum /d/e/big)"
	before="$(count src)"
	run brig fork src f1 f2
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(brig state f1 | jq -r .status)" = created ]
	[ "$(brig state f2 | jq -r .status)" = created ]
	# SOURCE was not restarted: its counter went on from where it was
	[ "$(count src)" -ge "$before" ]
	source_running
	brig start f1
	brig start f2
	for f in f1 f2; do
		run brig exec "$f" sh -c 'cat /before; sha256sum /d/e/big; test ! -e /bin/true && echo whiteout-kept
			stat -c "%u:%g %s" /srv/u/f; cat /srv/u/f; stat -c %i /before /hl | uniq | wc -l
			readlink /sl; stat -c %s /sparse; du -k /sparse | cut -f1'
		echo "$f: $output"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = before ]
		[ "${lines[1]}" = "$sum" ]
		[ "${lines[2]}" = whiteout-kept ]
		[ "${lines[3]}" = "1000:1000 13" ]
		[ "${lines[4]}" = image ]
		[ "${lines[5]}" = tenant ]
		[ "${lines[6]}" = 1 ]
		[ "${lines[7]}" = /before ]
		[ "${lines[8]}" = 1073741825 ]
		[ "${lines[9]}" -le 64 ]
	done
	# every fork has its own id range, none SOURCE's
	local u0 u1 u2
	u0="$(brig state src | jq .brig.userns.uid)"
	u1="$(brig state f1 | jq .brig.userns.uid)"
	u2="$(brig state f2 | jq .brig.userns.uid)"
	[ "$u0" != "$u1" ] && [ "$u0" != "$u2" ] && [ "$u1" != "$u2" ]
	# writes after the fork stay where they were made
	brig exec f1 sh -c 'echo one >/mine-f1'
	brig exec f2 sh -c 'echo two >/mine-f2'
	brig exec src sh -c 'echo src >/after-src; echo changed >/before'
	! brig exec f2 test -e /mine-f1 || false
	! brig exec src test -e /mine-f1 || false
	! brig exec f1 test -e /mine-f2 || false
	! brig exec f1 test -e /after-src || false
	! brig exec f2 test -e /after-src || false
	[ "$(brig exec f1 cat /before)" = before ]
	[ "$(brig exec f2 cat /before)" = before ]
	# the copy is charged to the fork: its memory cgroup holds the 1 MiB
	local d usage=0
	for d in /sys/fs/cgroup/memory/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-src-f1 \
		/sys/fs/cgroup/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-src-f1; do
		[ -e "$d/memory.usage_in_bytes" ] && usage="$(cat "$d/memory.usage_in_bytes")"
		[ -e "$d/memory.current" ] && usage="$(cat "$d/memory.current")"
	done
	echo "f1 memory: $usage"
	[ "$usage" -ge 1048576 ]
	source_running
}

@test "fork: each fork counts its own egress denials" {
	run_detached src
	brig fork src f1 f2
	brig start f1
	brig start f2
	brig exec f1 net_probe tcp 169.254.169.254 80 || true
	local out1 out2 i
	for i in $(seq 50); do
		out1="$(brig events --stats f1)"
		[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out1")" = 1 ] && break
		sleep 0.1
	done
	out2="$(brig events --stats f2)"
	echo "f1: $out1"
	echo "f2: $out2"
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out1")" = 1 ]
	[ "$(jq '.data.brig.egress.deniedTotal' <<<"$out2")" = 0 ]
	[ "$(brig events --stats src | jq '.data.brig.egress.deniedTotal')" = 0 ]
	# each has programs of its own: the enforcement names its own cgroup
	[ "$(brig state f1 | jq -r .brig.egress.enforcement)" != "$(brig state f2 | jq -r .brig.egress.enforcement)" ]
}

# fork_fails NEEDLE... -- ARGS...: brig fork ARGS exits 1 naming every
# NEEDLE; no new container, cgroup or frozen SOURCE is left.
fork_fails() {
	local needles=() n
	while [ "$1" != -- ]; do needles+=("$1"); shift; done
	shift
	run brig fork "$@"
	echo "fork $* -> $status: $output"
	[ "$status" -eq 1 ]
	for n in "${needles[@]}"; do assert_contains "$output" "$n"; done
	only_source
}

# only_source: SOURCE is the one container; no fork's state, cgroup or
# freeze marker is left, and SOURCE is not frozen.
only_source() {
	[ "$(brig list -q | tr '\n' ' ')" = "src " ]
	[ -z "$(ls -d /sys/fs/cgroup/*/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-src-* \
		/sys/fs/cgroup/"$TEST_CGROUP_PARENT"/"$CGROUP_NAME"-src-* 2>/dev/null)" ]
	[ ! -e "$ROOT/src/fork.freezing" ]
	! cgroup_frozen || false
}

@test "fork: bad input names the id, exits 1 and leaves nothing; SOURCE runs on" {
	run_detached src
	fork_fails 'container "src" already exists' -- src src
	fork_fails '"a/b"' -- src ok a/b
	fork_fails '"f1" is named twice' -- src f1 f1
	fork_fails 'at least one' -- src
	fork_fails 'container "nope" does not exist' -- nope f1
	fork_fails 'criu' -- --processes src f1
	brig pause src
	brig resume src
	source_running
	# a NEW that exists: refused before SOURCE is frozen
	set_cgroup_path other
	update_config '.process.args = ["true"]'
	create_container taken
	run brig fork src f1 taken
	echo "$output"
	[ "$status" -eq 1 ]
	assert_contains "$output" 'container "taken" already exists'
	[ ! -e "$ROOT/f1" ]
	source_running
}

@test "fork: a SOURCE without an ephemeral root, or without brig's pid 1, is refused by name" {
	update_config '.annotations["run.brig.init"] = "false"'
	run_detached src
	fork_fails 'run.brig.init' -- src f1
	brig delete -f src
	update_config 'del(.annotations["run.brig.rootfs.ephemeral"]) | .root.readonly = true'
	run_detached src
	fork_fails 'no ephemeral root' 'run.brig.rootfs.ephemeral' -- src f1
}

@test "fork: a hostile SOURCE (symlinks to host paths, fifos, a terabyte hole, links) makes the fork touch no host file" {
	local before
	before="$(stat -c '%s %Y %i' "$HOST_DIR/canary") $(ls -A "$HOST_DIR" | tr '\n' ' ')"
	run_detached src
	brig exec src sh -c "ln -s $HOST_DIR/canary /sl-file && ln -s $HOST_DIR /sl-dir &&
		mkdir /w && ln -s $HOST_DIR/new /w/planted && mkfifo /fifo &&
		dd if=/dev/zero of=/huge bs=1 count=1 seek=1099511627775 2>/dev/null &&
		echo x >/a && ln /a /b && ln /a /w/c"
	run brig fork src f1
	echo "$output"
	[ "$status" -eq 0 ]
	# nothing of the host was read into the fork or written by it
	[ "$(stat -c '%s %Y %i' "$HOST_DIR/canary") $(ls -A "$HOST_DIR" | tr '\n' ' ')" = "$before" ]
	[ "$(cat "$HOST_DIR/canary")" = host-secret ]
	brig start f1
	run brig exec f1 sh -c "readlink /sl-file; readlink /sl-dir; readlink /w/planted; test -L /sl-dir && echo link;
		test -p /fifo && echo fifo; stat -c %s /huge; du -k /huge | cut -f1;
		stat -c %h /a; ls -A /w | sort | tr '\n' ' '"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$HOST_DIR/canary" ]
	[ "${lines[1]}" = "$HOST_DIR" ]
	[ "${lines[2]}" = "$HOST_DIR/new" ]
	[ "${lines[3]}" = link ]
	[ "${lines[4]}" = fifo ]
	[ "${lines[5]}" = 1099511627776 ]
	[ "${lines[6]}" -le 64 ]
	[ "${lines[7]}" = 3 ]
	[ "${lines[8]}" = "c planted " ]
	[ ! -e "$HOST_DIR/new" ]
	source_running
}

@test "fork: a tree deeper than the copy goes fails the fork cleanly: SOURCE thawed, nothing left" {
	run_detached src
	# 6003 levels, each path named below PATH_MAX: three chains of 2000
	# moved into one another
	brig exec src sh -c 'p=; i=0; while [ $i -lt 2000 ]; do p=${p}d/; i=$((i+1)); done
		mkdir -p /a/$p /b/$p /c/$p && mv /c /b/$p && mv /b /a/$p'
	run brig fork src f1 f2
	echo "$output" | cut -c1-400
	[ "$status" -eq 1 ]
	assert_contains "$output" 'deeper than 4096 levels'
	assert_contains "$output" '"f1"'
	only_source
	source_running
}

@test "fork: a fork that died while SOURCE was frozen: the next command on SOURCE thaws it" {
	local dead
	run_detached src
	sh -c 'exit 0' &
	dead=$!
	wait "$dead"
	# what a fork killed between its freeze and its thaw leaves
	brig pause src
	echo "$dead 1" >"$ROOT/src/fork.freezing"
	brig exec src true
	[ ! -e "$ROOT/src/fork.freezing" ]
	source_running
}

@test "fork: a paused SOURCE is forked as it is and stays paused" {
	run_detached src
	brig exec src sh -c 'echo paused-state >/p'
	brig pause src
	run brig fork src f1
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(brig state src | jq -r .status)" = paused ]
	[ ! -e "$ROOT/src/fork.freezing" ]
	brig start f1
	[ "$(brig exec f1 cat /p)" = paused-state ]
	brig resume src
	source_running
}

@test "fork: a claimed pool member (brig's pid 1 in hold) forks into containers of their own" {
	local id
	update_config '.annotations["run.brig.init"] = "hold"'
	brig pool fill p --bundle "$BUNDLE" --size 1
	id="$(brig pool claim p)"
	brig exec "$id" sh -c 'echo tenant-a >/x'
	run brig fork "$id" f1
	echo "$output"
	[ "$status" -eq 0 ]
	brig start f1
	[ "$(brig exec f1 cat /x)" = tenant-a ]
	brig exec f1 sh -c 'echo fork >/x'
	[ "$(brig exec "$id" cat /x)" = tenant-a ]
	# not a member of the pool: its own cgroup, no tenancy record
	run brig pool status p
	echo "$output"
	! grep -q f1 <<<"$output" || false
	[ ! -e "$ROOT/f1/tenancy" ]
	brig pool release "$id" >/dev/null
}

@test "fork: a fork SIGKILLed while SOURCE is frozen leaves the marker; the next command on SOURCE thaws it" {
	local try fpid killed=0 f i
	run_detached src
	# enough to copy that the freeze lasts a while: 4 x 32 MiB
	brig exec src sh -c 'for i in 1 2 3 4 5 6 7 8; do head -c 4194304 /dev/urandom >/f$i; done'
	for try in 1 2 3 4 5; do
		"$BRIG" --root "$ROOT" fork src f1 f2 f3 f4 </dev/null >"$BUNDLE/fork.out" 2>&1 &
		fpid=$!
		# the marker is written right before the freeze
		while kill -0 "$fpid" 2>/dev/null; do
			if [ -e "$ROOT/src/fork.freezing" ]; then
				kill -KILL "$fpid"
				break
			fi
		done
		wait "$fpid" || true
		for i in $(seq 50); do cgroup_frozen && break; sleep 0.02; done
		if [ -e "$ROOT/src/fork.freezing" ] && cgroup_frozen; then
			killed=1
			break
		fi
		# finished before it was seen, or killed before its freeze: again
		cat "$BUNDLE/fork.out"
		brig exec src true
		for f in f1 f2 f3 f4; do brig delete -f "$f" 2>/dev/null || true; done
	done
	[ "$killed" = 1 ]
	# left frozen, with the record naming the dead fork: the next command
	# that takes SOURCE's lock thaws it
	brig exec src true
	[ ! -e "$ROOT/src/fork.freezing" ]
	source_running
}
