#!/usr/bin/env bats
# brig's own pid 1 (run.brig.init, docs/sandbox.md "brig's pid 1") and the
# pool flow it makes work: the README's pool example run literally (its
# lines taken from README.md); a member of an image without a shell;
# pid 1 seen from inside (scrubbed cmdline, non-dumpable: no fd, environ,
# exe or ptrace for the tenant, its own filter, SIGKILL from inside does
# nothing); orphans reaped; run.brig.init=true forwards signals and passes
# the exit code (or 128+signal); hold forwards to the exec'd work and
# stays; a bad value is refused by name.

load helpers
load confine_helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
	return 0
}

# sandbox_bundle [INIT]: the bundle's config is `spec --sandbox --ephemeral`'s
# (in the test's cgroup parent), with run.brig.init=INIT when given.
sandbox_bundle() {
	rm "$BUNDLE/config.json"
	brig spec --sandbox --ephemeral --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" |
		if \"${1:-}\" != \"\" then .annotations[\"run.brig.init\"] = \"${1:-}\" else . end"
}

# readme_pool_lines: the lines of README.md's ```sh block that has
# `brig pool fill`, comments dropped.
readme_pool_lines() {
	awk '/^```sh$/ { inb = 1; n = 0; next }
	     /^```$/ { if (inb && has) { for (i = 1; i <= n; i++) print l[i]; exit } inb = 0; next }
	     inb { sub(/[ \t]+#.*$/, ""); l[++n] = $0; if ($0 ~ /brig pool fill/) has = 1 }' \
		"$SRCDIR/README.md"
}

@test "init: the README's pool flow, run literally, gives a running member that serves exec" {
	local readme line id
	readme="$(readme_pool_lines)"
	echo "$readme"
	[[ "$readme" == *"brig spec --sandbox --ephemeral"* ]]
	[[ "$readme" == *'id=$(brig pool claim py)'* ]]
	[[ "$readme" == *'brig exec "$id"'* ]]
	rm "$BUNDLE/config.json"
	# the README's `brig`, with the test's --root and cgroup parent
	brig() {
		timeout -k 5 "$BRIG_CMD_TIMEOUT" "$RUNTIME" --root "$ROOT" "$@" || return
		if [ "$1" = spec ]; then
			update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\""
		fi
	}
	# every line up to the release, in this shell, stopping at a failure
	while IFS= read -r line; do
		[[ "$line" == *"pool release"* ]] && break
		echo "+ $line"
		eval "$line"
	done <<<"$readme"
	[ -n "$id" ]
	[ "$(brig state "$id" | jq -r .status)" = running ]
	[ "$(brig state "$id" | jq -r '.annotations["run.brig.init"]')" = hold ]
	[ "$(brig pool status py --format json | jq -r --arg id "$id" '.members[] | select(.id == $id) | "\(.pool) \(.status)"')" = "claimed running" ]
	# pid 1 is brig's, the work runs beside it
	run brig exec "$id" sh -c 'cat /proc/1/comm; echo hi >/tmp/x && cat /tmp/x'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'brig-init\nhi')" ]
	# the rest of the README's lines (the release) work too
	line="$(grep 'pool release' <<<"$readme")"
	echo "+ $line"
	eval "$line"
	[ "$(brig pool status py --format json | jq -c '[.counts.available, .counts.claimed]')" = '[2,0]' ]
}

@test "init: a member of an image without a shell serves exec, nothing of the image runs before" {
	local id
	rm -rf "$BUNDLE/rootfs"
	mkdir -p "$BUNDLE/rootfs"/{proc,dev,sys,tmp,home}
	# busybox as /true only: runs as the applet "true"; there is no sh
	cp "$ROOTFS_CACHE/bin/busybox" "$BUNDLE/rootfs/true"
	sandbox_bundle
	brig pool fill ns --bundle "$BUNDLE" --size 2
	id="$(brig pool claim ns)"
	[ "$(brig state "$id" | jq -r .status)" = running ]
	brig exec "$id" /true
	run brig exec "$id" sh -c true
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *sh* ]]
	# the member is still there for the next exec
	[ "$(brig state "$id" | jq -r .status)" = running ]
	brig exec "$id" /true
}

@test "init: claim never hands out a member whose process exited: it is released and claim says why" {
	local avail
	# the config's process as pid 1 (explicit false), one that exits at
	# once; the poststart hook gives it the time to, before the hand-out
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" |
		.annotations["run.brig.init"] = "false" | .process.args = ["true"] |
		.hooks.poststart = [{"path": "/bin/sleep", "args": ["sleep", "0.5"]}]'
	brig pool fill ex --bundle "$BUNDLE" --size 2
	local out rc=0 err
	out="$(brig pool claim ex 2>"$BUNDLE/claim.err")" || rc=$?
	err="$(cat "$BUNDLE/claim.err")"
	echo "out: $out"
	echo "err: $err"
	[ "$rc" -eq 1 ]
	[ -z "$out" ]
	[[ "$err" == *"its process exited at once"*"run.brig.init=hold"* ]]
	# released (reset, available again), not lost
	avail="$(brig pool status ex --format json | jq -c '[.counts.available, .counts.claimed, .counts.total]')"
	[ "$avail" = '[2,0,2]' ]
	# fill's default (hold) serves the same bundle
	update_config 'del(.annotations["run.brig.init"])'
	brig pool drain ex
	brig pool fill ex --bundle "$BUNDLE" --size 1
	[ "$(brig state "$(brig pool claim ex)" | jq -r .status)" = running ]
}

@test "init: brig's pid 1 from inside: scrubbed, non-dumpable, filtered, unkillable from inside; it keeps the upper layer" {
	local pid out
	need_built "$CONFINE_TOOLS/fd_thief"
	cp "$CONFINE_TOOLS/fd_thief" "$BUNDLE/rootfs/bin/fd_thief"
	sandbox_bundle hold
	brig create h1 </dev/null
	brig start h1
	pid="$(brig state h1 | jq -r .pid)"
	# the upper directory, at the fd state names (for brig fork)
	[ "$(brig state h1 | jq -r .brig.rootfs.upperFd)" = 3 ]
	[ "$(readlink "/proc/$pid/fd/3")" = /upper ]
	[ "$(ls "/proc/$pid/fd" | wc -l)" -eq 1 ]
	run brig exec h1 sh -c 'tr "\0" "\n" </proc/1/cmdline | grep -v "^$"; echo ---;
		grep -E "^(NoNewPrivs|Seccomp|CapEff):" /proc/1/status; echo ---;
		ls /proc/1/fd 2>&1; cat /proc/1/environ 2>&1; readlink /proc/1/exe || echo noexe;
		kill -9 1; sleep 0.2; cat /proc/1/comm'
	echo "$output"
	[ "$status" -eq 0 ]
	out="$output"
	# no host path of the create command, no variable of its caller
	[ "$(sed -n 1p <<<"$out")" = brig-init ]
	[ "$(sed -n 2p <<<"$out")" = --- ]
	[[ "$out" == *"NoNewPrivs:	1"* ]]
	[[ "$out" == *"Seccomp:	2"* ]]
	[[ "$out" == *"CapEff:	0000000000000000"* ]]
	[[ "$out" == *"/proc/1/fd': Permission denied"* ]]
	[[ "$out" == *"/proc/1/environ': Permission denied"* ]]
	[[ "$out" == *noexe* ]]
	[[ "$out" != *"$ROOT"* && "$out" != *"$BUNDLE"* ]]
	# still pid 1 after a SIGKILL from inside
	[ "$(tail -n1 <<<"$out")" = brig-init ]
	# brig's binary behind pid 1 is out of reach (CVE-2019-5736): neither
	# run through /proc/1/exe nor as a #! interpreter
	run brig exec h1 sh -c '/proc/1/exe --version; echo rc=$?;
		printf "#!/proc/1/exe\\n" >/tmp/s; chmod +x /tmp/s; /tmp/s; echo rc=$?'
	echo "$output"
	[[ "$output" != *"rc=0"* && "$output" != *brig* ]]
	# pidfd_getfd (ptrace rights) on pid 1 from inside: refused
	run brig exec h1 fd_thief 1
	echo "$output"
	[[ "$output" == *"fd 3: getfd Operation not permitted"* ]]
	[[ "$output" != *upper* && "$output" != *walk* ]]
	[ "$(brig state h1 | jq -r .status)" = running ]
	[ "$(brig state h1 | jq -r .pid)" = "$pid" ]
}

@test "init: pid 1 reaps the orphans of exec'd work" {
	sandbox_bundle hold
	brig create h2 </dev/null
	brig start h2
	brig exec h2 sh -c 'sleep 0.2 & sleep 0.1 & exit 0'
	sleep 1
	run brig exec h2 sh -c 'cat /proc/[0-9]*/stat | cut -d" " -f1-3'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *" Z"* ]]
	# pid 1, and the sh, cat and cut of this exec
	[ "$(grep -c . <<<"$output")" -eq 4 ]
	[[ "$output" == *"1 (brig-init) S"* ]]
}

@test "init: run.brig.init=true forwards signals, passes the exit code or 128+signal, refuses bad values" {
	update_config '.annotations["run.brig.init"] = "true" |
		.process.args = ["sh", "-c", "trap \"exit 7\" TERM; echo $$ >/tmp/pid; sleep 100 & wait"]'
	brig run r1 </dev/null >"$BUNDLE/r1.out" 2>&1 &
	local runpid=$! rc=0 i
	for i in $(seq 100); do brig exec r1 cat /tmp/pid >/dev/null 2>&1 && break; sleep 0.05; done
	# pid 1 is brig's, the process its child (pid 2)
	[ "$(brig exec r1 cat /tmp/pid)" = 2 ]
	[ "$(brig exec r1 cat /proc/1/comm)" = brig-init ]
	brig kill r1 TERM
	wait "$runpid" || rc=$?
	[ "$rc" -eq 7 ]
	# a child killed by a signal: 128+signal
	update_config '.process.args = ["sh", "-c", "kill -9 $$"]'
	run brig run r2 </dev/null
	[ "$status" -eq 137 ]
	# an exec error of the child reaches run (found at the lookup, and one
	# only execve sees: a file without a #! line)
	update_config '.process.args = ["/nonexistent"]'
	run brig run r3 </dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"/nonexistent"* ]]
	printf 'garbage\n' >"$BUNDLE/rootfs/noexec" && chmod 755 "$BUNDLE/rootfs/noexec"
	update_config '.process.args = ["/noexec"]'
	run brig run r5 </dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"exec /noexec: "* ]]
	update_config '.annotations["run.brig.init"] = "yes" | .process.args = ["true"]'
	run brig run r4 </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'run.brig.init: "yes" is not true, false or hold'* ]]
	[ -z "$(brig list -q)" ]
}

@test "init: hold forwards a signal to the exec'd work and keeps holding" {
	update_config '.annotations["run.brig.init"] = "hold"'
	brig create h3 </dev/null
	brig start h3
	brig exec -d h3 sh -c 'trap "echo got >/tmp/got; exit 0" TERM; while :; do sleep 0.05; done'
	sleep 0.3
	brig kill h3 TERM
	local i
	for i in $(seq 50); do brig exec h3 cat /tmp/got 2>/dev/null && break; sleep 0.1; done
	[ "$(brig exec h3 cat /tmp/got)" = got ]
	[ "$(brig state h3 | jq -r .status)" = running ]
	brig kill h3 KILL
	wait_for_status h3 stopped
}
