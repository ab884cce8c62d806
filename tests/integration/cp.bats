#!/usr/bin/env bats
# brig cp: files into and out of a container by docker cp's rules, checked
# from inside the container (content, mode, owner as the container sees
# it), with a user namespace; a tenant swapping symlinks while cp runs
# (CVE-2018-15664) never makes it read or write a host file; symlinks that
# point out are kept as symlinks, never followed; bad input fails by name
# with exit 1 and leaves nothing behind. docs/sandbox.md "Copying files".

load helpers

# The container's ids 0..65535 are host ids 100000..165535.
MAP_HOST=100000

setup() {
	requires root
	setup_bundle
	HOST="$(test_tmpdir cp-host)"
	CANARY="$(test_tmpdir cp-canary)"
	echo HOSTSECRET >"$CANARY/marker"
	chmod 0755 "$CANARY"
	CANARY_SUM="$(canary_sum)"
}

teardown() {
	teardown_bundle
	rm -rf "${HOST:-/nonexistent}" "${CANARY:-/nonexistent}"
	return 0
}

# canary_sum: the canary directory as it is (names, modes, owners, mtimes,
# contents): any read-write by cp through a symlink would change it.
canary_sum() {
	(cd "$CANARY" && find . -printf '%p %m %U %G %T@\n' | sort &&
		find . -type f -exec sha256sum {} + | sort) | sha256sum
}

# in_ctr ID SCRIPT: SCRIPT in the container (the container's view).
in_ctr() {
	brig exec "$1" sh -c "$2" </dev/null
}

# a running container with a user namespace, its rootfs owned by its root
start_userns() {
	with_userns "$BUNDLE/rootfs"
	set_args sleep 1000
	run_detached "$1"
}

@test "cp: a file in and out: new, overwritten, into a directory (content, mode, owner inside)" {
	start_userns c
	printf 'one\n' >"$HOST/f.txt"
	chmod 0640 "$HOST/f.txt"
	brig cp "$HOST/f.txt" c:/tmp/new
	[ "$(in_ctr c 'cat /tmp/new; stat -c "%a %u %g" /tmp/new')" = "one
640 0 0" ]
	# overwrite an existing file (as container root, whoever owned it)
	echo old >"$BUNDLE/rootfs/tmp/over"
	chown $((MAP_HOST + 1000)):$((MAP_HOST + 1000)) "$BUNDLE/rootfs/tmp/over"
	brig cp "$HOST/f.txt" c:/tmp/over
	[ "$(in_ctr c 'cat /tmp/over; stat -c "%a %u %g" /tmp/over')" = "one
640 0 0" ]
	# into a directory, under its own name
	brig cp "$HOST/f.txt" c:/home
	[ "$(in_ctr c 'cat /home/f.txt')" = one ]
	# out: the caller's owner, the mode kept; into a host directory
	in_ctr c 'echo inside >/root/o.txt; chmod 0604 /root/o.txt'
	chown $((MAP_HOST + 1000)):$((MAP_HOST + 1000)) "$BUNDLE/rootfs/root/o.txt"
	brig cp c:/root/o.txt "$HOST/out.txt"
	[ "$(cat "$HOST/out.txt")" = inside ]
	[ "$(stat -c '%a %u %g' "$HOST/out.txt")" = "604 0 0" ]
	mkdir "$HOST/dir"
	brig cp c:/root/o.txt "$HOST/dir"
	[ "$(cat "$HOST/dir/o.txt")" = inside ]
	# -a keeps the container's view of the owner
	brig cp -a c:/root/o.txt "$HOST/a.txt"
	[ "$(stat -c '%u %g' "$HOST/a.txt")" = "1000 1000" ]
	# no temporary name left on either side
	[ -z "$(in_ctr c 'ls -a /tmp /home /root | grep brig-cp')" ]
	[ -z "$(ls -a "$HOST" "$HOST/dir" | grep brig-cp)" ]
}

@test "cp: without a user namespace; -L follows the source's symlink; a symlink at DST" {
	set_args sleep 1000
	run_detached c
	echo host >"$HOST/f"
	ln -s f "$HOST/lnk"
	brig cp "$HOST/f" c:/tmp/f
	[ "$(in_ctr c 'cat /tmp/f; stat -c "%u %g" /tmp/f')" = "host
0 0" ]
	# without -L the symlink, with -L what it names (both sides)
	brig cp "$HOST/lnk" c:/tmp/l1
	brig cp -L "$HOST/lnk" c:/tmp/l2
	[ "$(in_ctr c 'readlink /tmp/l1; cat /tmp/l2; [ -L /tmp/l2 ] || echo file')" = "f
host
file" ]
	in_ctr c 'ln -s /etc/passwd /tmp/hn'
	brig cp c:/tmp/hn "$HOST/hn1"
	brig cp -L c:/tmp/hn "$HOST/hn2"
	[ "$(readlink "$HOST/hn1")" = /etc/passwd ]
	[ ! -L "$HOST/hn2" ] && [ -f "$HOST/hn2" ]
	# DST a symlink to a directory: into it; to a file: the link is replaced
	in_ctr c 'mkdir /tmp/d && ln -s /tmp/d /tmp/dl && echo keep >/tmp/t && ln -s /tmp/t /tmp/tl'
	brig cp "$HOST/f" c:/tmp/dl
	brig cp "$HOST/f" c:/tmp/tl
	[ "$(in_ctr c 'cat /tmp/d/f /tmp/t /tmp/tl; [ -L /tmp/tl ] || echo replaced')" = "host
keep
host
replaced" ]
}

@test "cp: a directory with and without /.: long names, symlinks, hard links, modes, mtimes" {
	start_userns c
	local long d
	long="$(printf 'n%.0s' $(seq 1 120))"
	d="$HOST/tree"
	mkdir -p "$d/sub/$long/deeper"
	echo deep >"$d/sub/$long/deeper/$long.txt"
	echo x >"$d/x"
	ln "$d/x" "$d/x.hard"
	ln -s ../x "$d/sub/rel"
	ln -s /etc/passwd "$d/abs"
	chmod 0750 "$d/sub"
	chmod 0755 "$d/x"
	touch -h -d '2001-02-03 04:05:06 UTC' "$d/x" "$d/abs"
	# a read-only directory with an entry; a directory's mtime after its entries
	mkdir "$d/ro"
	echo r >"$d/ro/r"
	chmod 0555 "$d/ro"
	touch -d '2002-03-04 05:06:07 UTC' "$d/sub"
	# to a missing DST: DST is created as the directory
	brig cp "$d" c:/made
	# to an existing directory: under its name; with /.: its contents
	brig cp "$d" c:/home
	in_ctr c 'mkdir /into'
	brig cp "$d/." c:/into
	local dir
	for dir in /made /home/tree /into; do
		in_ctr c "cd $dir && cat sub/$long/deeper/$long.txt && readlink sub/rel && readlink abs &&
			stat -c '%a %u %g' sub x && stat -c %Y x &&
			[ \$(stat -c %i x) = \$(stat -c %i x.hard) ] && echo hard" >"$HOST/seen"
		[ "$(cat "$HOST/seen")" = "deep
../x
/etc/passwd
750 0 0
755 0 0
981173106
hard" ]
		[ "$(in_ctr c "cd $dir && stat -c '%a %Y' sub ro && cat ro/r")" = "750 1015218367
555 $(stat -c %Y "$d/ro")
r" ]
	done
	[ -z "$(in_ctr c 'ls /into | grep -x tree')" ]
	# and out again: the same tree
	brig cp c:/home/tree "$HOST/back"
	diff -r --no-dereference "$d" "$HOST/back"
	[ "$(readlink "$HOST/back/abs")" = /etc/passwd ]
	[ "$(stat -c %i "$HOST/back/x")" = "$(stat -c %i "$HOST/back/x.hard")" ]
	[ "$(stat -c '%a %Y' "$HOST/back/sub")" = "750 1015218367" ]
	[ "$(stat -c %a "$HOST/back/ro")" = 555 ]
	mkdir "$HOST/contents"
	brig cp c:/home/tree/. "$HOST/contents"
	[ "$(cat "$HOST/contents/x")" = x ]
	[ ! -e "$HOST/contents/tree" ]
}

@test "cp: a created container, tar streams on stdin and stdout, -a keeps the archive's ids" {
	with_userns "$BUNDLE/rootfs"
	create_container c
	mkdir "$HOST/src"
	echo t >"$HOST/src/t.txt"
	tar -C "$HOST/src" --owner 1000 --group 1000 -cf "$HOST/in.tar" .
	# without -a: container root's
	brig cp - c:/tmp <"$HOST/in.tar"
	[ "$(in_ctr c 'cat /tmp/t.txt; stat -c "%u %g" /tmp/t.txt')" = "t
0 0" ]
	mkdir "$BUNDLE/rootfs/home/a" && chown "$MAP_HOST:$MAP_HOST" "$BUNDLE/rootfs/home/a"
	brig cp -a - c:/home/a <"$HOST/in.tar"
	[ "$(in_ctr c 'stat -c "%u %g" /home/a/t.txt')" = "1000 1000" ]
	# an id the container's user namespace does not map fails by name
	tar -C "$HOST/src" --owner 70000 --group 70000 -cf "$HOST/unmapped.tar" t.txt
	run brig cp -a - c:/home/a <"$HOST/unmapped.tar"
	[ "$status" -eq 1 ]
	assert_contains "$output" "t.txt: owner 70000:70000 (not mapped)"
	# host view: the container's 1000 is the host's MAP_HOST+1000
	[ "$(stat -c %u "$BUNDLE/rootfs/home/a/t.txt")" = $((MAP_HOST + 1000)) ]
	# out as a stream: the entry under the source's name, the container's view of ids
	brig cp c:/home/a/t.txt - >"$HOST/out.tar"
	[ "$(tar -tvf "$HOST/out.tar" | awk '{print $2, $6}')" = "1000/1000 t.txt" ]
	# a tar stream needs a directory
	run brig cp - c:/tmp/t.txt <"$HOST/in.tar"
	[ "$status" -eq 1 ]
	assert_contains "$output" "/tmp/t.txt"
	[ "$(brig state c | jq -r .status)" = created ]
}

@test "cp under a symlink-swapping tenant never reads or writes a host file" {
	start_userns c
	echo inside >"$HOST/in.txt"
	# the tenant: /w flips between a directory of its own, a symlink to
	# the canary's host path, to "/" and to a relative escape
	in_ctr c "mkdir -p /real && echo container >/real/marker && mkdir -p '$CANARY' &&
		echo decoy >'$CANARY/marker'"
	brig exec -d c sh -c "while :; do ln -sfn '$CANARY' /w; ln -sfn /real /w;
		ln -sfn / /w; ln -sfn ../../../../../..'$CANARY' /w; rm -f /w; mkdir /w;
		echo container >/w/marker; rm -rf /w; done" </dev/null >/dev/null 2>&1
	local i ok_in=0 ok_out=0
	mkdir "$HOST/out"
	for i in $(seq 1 100); do
		brig cp "$HOST/in.txt" "c:/w/x$i" 2>/dev/null && ok_in=$((ok_in + 1))
		brig cp c:/w/marker "$HOST/out/m$i" 2>/dev/null && ok_out=$((ok_out + 1))
	done
	echo "in: $ok_in ok, out: $ok_out ok" >&3
	# the host's canary is as it was: nothing written, nothing made there
	[ "$(canary_sum)" = "$CANARY_SUM" ]
	[ "$(ls -A "$CANARY")" = marker ]
	# nothing read from it: what came out is the container's
	! grep -rl HOSTSECRET "$HOST/out" || false
	# and the copies did land (inside the container's own files)
	[ "$((ok_in + ok_out))" -gt 0 ]
}

@test "cp: symlinks that point out, in the container or in an archive, are kept or refused, never followed" {
	start_userns c
	in_ctr c "ln -s '$CANARY' /out && ln -s ../../../../..'$CANARY' /rel &&
		echo s >/suid && chmod 4755 /suid && chmod 2755 /home"
	# out: the link itself comes out, the host path behind it is not read
	brig cp c:/out "$HOST/"
	[ "$(readlink "$HOST/out")" = "$CANARY" ]
	run brig cp c:/out/marker "$HOST/m"
	[ "$status" -eq 1 ]
	assert_contains "$output" /out/marker
	[ ! -e "$HOST/m" ]
	# in through the container's symlink: resolved inside the root, where
	# the canary's path does not exist
	echo evil >"$HOST/evil"
	run brig cp "$HOST/evil" c:/out/evil
	[ "$status" -eq 1 ]
	run brig cp "$HOST/evil" c:/rel/evil
	[ "$status" -eq 1 ]
	# no setuid or setgid bit lands on the host
	brig cp c:/suid "$HOST/suid"
	[ "$(stat -c %a "$HOST/suid")" = 755 ]
	brig cp c:/home "$HOST/home"
	[ "$(stat -c %a "$HOST/home")" = 755 ]
	# a directory that is there keeps its mode
	in_ctr c 'mkdir -p /open && chmod 0777 /open'
	mkdir -m 0700 "$HOST/open"
	brig cp c:/open/. "$HOST/open"
	[ "$(stat -c %a "$HOST/open")" = 700 ]
	# an archive with a symlink out, a file through it, and "../"
	mkdir "$HOST/a" "$HOST/b"
	ln -s "$CANARY" "$HOST/a/l"
	echo evil >"$HOST/b/evil"
	tar -cf "$HOST/bad.tar" -C "$HOST/a" l
	tar -rf "$HOST/bad.tar" --transform 's,^evil$,l/evil,' -C "$HOST/b" evil
	run brig cp - c:/tmp <"$HOST/bad.tar"
	[ "$status" -eq 1 ]
	assert_contains "$output" "l/evil"
	[ "$(in_ctr c 'readlink /tmp/l')" = "$CANARY" ]
	tar -cf "$HOST/dotdot.tar" -P --transform 's,^evil$,../evil,' -C "$HOST/b" evil
	run brig cp - c:/tmp <"$HOST/dotdot.tar"
	[ "$status" -eq 1 ]
	assert_contains "$output" '".."'
	[ -z "$(in_ctr c 'ls /evil 2>/dev/null')" ]
	[ "$(canary_sum)" = "$CANARY_SUM" ]
	[ "$(ls -A "$CANARY")" = marker ]
}

@test "cp: bad input names the path, exits 1 and leaves nothing behind" {
	start_userns c
	echo f >"$HOST/f"
	mkdir "$HOST/empty"
	run brig cp "$HOST/f" nosuch:/tmp
	[ "$status" -eq 1 ]
	assert_contains "$output" '"nosuch"'
	run brig cp c:/no/such/file "$HOST/empty"
	[ "$status" -eq 1 ]
	assert_contains "$output" /no/such/file
	run brig cp "$HOST/nothere" c:/tmp
	[ "$status" -eq 1 ]
	assert_contains "$output" "$HOST/nothere"
	run brig cp "$HOST/f" c:/no/such/dir/f
	[ "$status" -eq 1 ]
	assert_contains "$output" /no/such/dir/f
	run brig cp "$HOST/f" c:/tmp/missing/
	[ "$status" -eq 1 ]
	assert_contains "$output" /tmp/missing/
	run brig cp "$HOST/empty" c:/etc/passwd
	[ "$status" -eq 1 ]
	assert_contains "$output" /etc/passwd
	run brig cp "$HOST/f" "$HOST/g"
	[ "$status" -eq 1 ]
	assert_contains "$output" "$HOST/g"
	run brig cp c:/etc/passwd c:/tmp
	[ "$status" -eq 1 ]
	assert_contains "$output" "between containers"
	[ -z "$(ls -A "$HOST/empty")" ]
	[ ! -e "$HOST/g" ]
	[ -z "$(in_ctr c 'ls -a /tmp /etc; ls -d /no 2>/dev/null' | grep -e brig-cp -e '^/no$')" ]
	# a stopped container: its mount namespace is gone
	brig kill c KILL
	wait_for_status c stopped
	run brig cp "$HOST/f" c:/tmp
	[ "$status" -eq 1 ]
	assert_contains "$output" 'stopped container "c"'
}

@test "cp: writes are charged to the container's memory cgroup; a paused container stays paused" {
	requires cgroup_v1
	add_mount '{"destination":"/data","type":"tmpfs","source":"tmpfs","options":["size=64m"]}'
	start_userns c
	local mem="/sys/fs/cgroup/memory/$TEST_CGROUP_PARENT/$CGROUP_NAME/memory.stat" before after
	before="$(awk '$1 == "shmem" {print $2}' "$mem")"
	head -c $((32 << 20)) /dev/zero >"$HOST/big"
	brig cp "$HOST/big" c:/data/big
	after="$(awk '$1 == "shmem" {print $2}' "$mem")"
	echo "shmem: $before -> $after"
	[ "$((after - before))" -ge $((32 << 20)) ]
	[ "$(in_ctr c 'stat -c %s /data/big')" = $((32 << 20)) ]
	brig pause c
	echo p >"$HOST/p"
	brig cp "$HOST/p" c:/tmp/p
	brig cp c:/tmp/p "$HOST/p.out"
	[ "$(brig state c | jq -r .status)" = paused ]
	brig resume c
	[ "$(in_ctr c 'cat /tmp/p')" = p ]
	[ "$(cat "$HOST/p.out")" = p ]
}

@test "cp: a tar stream longer than the pipe, with the record padding after its end" {
	start_userns c
	mkdir "$HOST/src"
	head -c $((3 << 20)) /dev/urandom >"$HOST/src/r"
	# a 1 MiB record: up to a record of zeros after the archive's end blocks
	tar -C "$HOST/src" -b 2048 -cf "$HOST/big.tar" r
	local i
	for i in 1 2 3; do
		brig cp - c:/tmp <"$HOST/big.tar"
	done
	[ "$(in_ctr c 'sha256sum </tmp/r')" = "$(sha256sum <"$HOST/src/r")" ]
}

@test "cp: a vacant pool member refuses cp by name; a claimed one takes it; the next tenant does not see it" {
	local id
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true"
		| .process.args = ["sleep", "1000000"]'
	run brig pool fill v --bundle "$BUNDLE" --size 1
	[ "$status" -eq 0 ]
	id="$output"
	echo f >"$HOST/f"
	run brig cp "$HOST/f" "$id:/tmp/f"
	[ "$status" -eq 1 ]
	assert_contains "$output" "an available pool member"
	[ "$(brig pool claim v)" = "$id" ]
	brig cp "$HOST/f" "$id:/tmp/f"
	[ "$(in_ctr "$id" 'cat /tmp/f')" = f ]
	brig pool release "$id" >/dev/null
	[ "$(brig pool claim v)" = "$id" ]
	run in_ctr "$id" 'cat /tmp/f'
	[ "$status" -ne 0 ]
	brig pool drain v
	assert_no_leftovers
}

@test "cp's container side: non-dumpable, only its pipe and socket, the container's user and mount namespaces and cgroups, not its pid namespace or freezer" {
	start_userns c
	local fifo="$HOST/fifo" p cpid="" init i fd
	init="$(brig state c | jq -r .pid)"
	mkfifo "$fifo"
	"$RUNTIME" --root "$ROOT" cp - c:/tmp <"$fifo" >"$HOST/cp.out" 2>&1 &
	p=$!
	exec 7>"$fifo"
	# the child, once it has joined (waiting for the stream)
	for i in $(seq 100); do
		cpid="$(pgrep -P "$p" || true)"
		[ -n "$cpid" ] && [ "$(readlink "/proc/$cpid/ns/mnt")" = "$(readlink "/proc/$init/ns/mnt")" ] && break
		sleep 0.05
	done
	echo "cp $p, its child $cpid, the init $init"
	[ -n "$cpid" ]
	[ "$(readlink "/proc/$cpid/ns/user")" = "$(readlink "/proc/$init/ns/user")" ]
	[ "$(readlink "/proc/$cpid/ns/pid")" != "$(readlink "/proc/$init/ns/pid")" ]
	# container root, and not dumpable: its /proc files stay host root's
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$cpid/status")" = "$MAP_HOST" ]
	[ "$(stat -c %u "/proc/$cpid/status")" = 0 ]
	# its fds: the container's "/" (O_PATH), the pipe, the socket; no host file
	ls -l "/proc/$cpid/fd"
	[ "$(ls "/proc/$cpid/fd" | wc -l)" -eq 3 ]
	for fd in /proc/"$cpid"/fd/*; do
		case "$(readlink "$fd")" in
		/ | pipe:* | socket:*) ;;
		*) echo "unexpected fd $fd -> $(readlink "$fd")"; false ;;
		esac
	done
	# the container's memory and pids cgroups, not its freezer
	grep -E ':(memory|pids):' "/proc/$cpid/cgroup"
	[ "$(grep ':memory:' "/proc/$cpid/cgroup")" = "$(grep ':memory:' "/proc/$init/cgroup")" ] ||
		[ ! -d /sys/fs/cgroup/memory ]
	[ "$(grep ':pids:' "/proc/$cpid/cgroup")" = "$(grep ':pids:' "/proc/$init/cgroup")" ] ||
		[ ! -d /sys/fs/cgroup/pids ]
	! grep -q ":freezer:.*$CGROUP_NAME" "/proc/$cpid/cgroup" || false
	exec 7>&-
	wait "$p"
}
