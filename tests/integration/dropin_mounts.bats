#!/usr/bin/env bats
# Mounts as runc makes them (#16 items 1, 5, 12, 18), proved from inside the
# container (/proc/self/mountinfo, reads and writes) and from the host:
# - a bind source only the host's root can reach (a 0700 directory) in a
#   user namespace container, opened by brig with its own rights;
# - a bind mount onto "/" replaces the rootfs; other mounts onto "/" are
#   refused with the reason;
# - mounts are applied in order: a bind (also an idmapped one) whose source
#   lies inside the rootfs sees what earlier entries mounted there;
# - a bind that sets attributes without "ro" is read-write (implied rw), and
#   an atime option replaces the source's atime mode.
# Runs on any cgroup mode (v1, hybrid, v2); needs root. The reference is runc:
# RUNTIME=/usr/sbin/runc runs the same tests against it.

load helpers

# The container's ids 0..65535 are host ids 100000..165535.
MAP_HOST=100000

setup() {
	requires root
	setup_bundle
	# mnt DEST prints "OPTIONS TYPE SUPER" of the mount at DEST (mountinfo
	# fields 6, and type and super options after " - "); the last one wins.
	cat >"$BUNDLE/rootfs/bin/mnt" <<-'EOF2'
	#!/bin/sh
	awk -v d="$1" '$5 == d { for (i = 7; $i != "-"; i++); m = $6 " " $(i+1) " " $(i+3) } END { print m }' /proc/self/mountinfo
	EOF2
	chmod 755 "$BUNDLE/rootfs/bin/mnt"
}

teardown() {
	teardown_bundle
	[ -n "${HOST_DIR:-}" ] && rm -rf "$HOST_DIR"
	return 0
}

# bind DEST SOURCE OPTION...: a bind mount entry as JSON.
bind() {
	local dest="$1" src="$2" opts
	shift 2
	opts="$(printf '%s\n' "$@" | jq -R . | jq -sc .)"
	echo "{\"destination\": \"$dest\", \"type\": \"bind\", \"source\": \"$src\", \"options\": $opts}"
}

# lacks_opt "OPTS" OPT: the comma-separated OPTS do not contain OPT.
lacks_opt() {
	[[ ",$1," != *",$2,"* ]] || { echo "'$2' in '$1'" >&2; return 1; }
}

@test "dropin mounts: a bind setting attributes without ro is read-write (implied rw) (#16 item 18)" {
	# /ro is a read-only bind of a tmpfs (the mount is read-only, the
	# filesystem is not); binds of it follow.
	add_mount '{"destination": "/t", "type": "tmpfs", "source": "tmpfs"}'
	add_mount "$(bind /ro "$BUNDLE/rootfs/t" bind ro)"
	add_mount "$(bind /implied "$BUNDLE/rootfs/ro" bind nosuid)"
	add_mount "$(bind /kept "$BUNDLE/rootfs/ro" bind)"
	add_mount "$(bind /still "$BUNDLE/rootfs/ro" bind nodev ro)"
	run_sh 'for d in /ro /implied /kept /still; do echo "$d $(mnt $d)"; done
		touch /implied/w && echo implied-writable
		touch /kept/w || echo kept-readonly
		touch /still/w || echo still-readonly'
	[ "$status" -eq 0 ]
	local line
	line="$(grep '^/implied ' <<<"$output")"
	has_opt "$(cut -d' ' -f2 <<<"$line")" rw
	has_opt "$(cut -d' ' -f2 <<<"$line")" nosuid
	assert_contains "$output" implied-writable
	# Without attribute options a bind keeps the source's flags, as runc.
	has_opt "$(grep '^/kept ' <<<"$output" | cut -d' ' -f2)" ro
	assert_contains "$output" kept-readonly
	has_opt "$(grep '^/still ' <<<"$output" | cut -d' ' -f2)" ro
	assert_contains "$output" still-readonly
}

@test "dropin mounts: an atime option on a bind replaces the source's atime mode and implies rw (#16 item 18)" {
	# read-only binds of a noatime and a strictatime tmpfs are the sources
	add_mount '{"destination": "/n", "type": "tmpfs", "source": "tmpfs", "options": ["noatime"]}'
	add_mount '{"destination": "/s", "type": "tmpfs", "source": "tmpfs", "options": ["strictatime"]}'
	add_mount "$(bind /nro "$BUNDLE/rootfs/n" bind ro)"
	add_mount "$(bind /sro "$BUNDLE/rootfs/s" bind ro)"
	add_mount "$(bind /n2r "$BUNDLE/rootfs/nro" bind relatime)"
	add_mount "$(bind /s2n "$BUNDLE/rootfs/sro" bind noatime)"
	add_mount "$(bind /n2s "$BUNDLE/rootfs/nro" bind strictatime)"
	add_mount "$(bind /nkeep "$BUNDLE/rootfs/nro" bind)"
	run_sh 'for d in /n2r /s2n /n2s /nkeep; do echo "$d $(mnt $d)"; done
		for d in /n2r /s2n /n2s; do touch $d/w && echo "writable $d"; done'
	[ "$status" -eq 0 ]
	local o
	o="$(grep '^/n2r ' <<<"$output" | cut -d' ' -f2)"
	has_opt "$o" relatime; lacks_opt "$o" noatime
	o="$(grep '^/s2n ' <<<"$output" | cut -d' ' -f2)"
	has_opt "$o" noatime; lacks_opt "$o" relatime
	o="$(grep '^/n2s ' <<<"$output" | cut -d' ' -f2)"
	lacks_opt "$o" noatime; lacks_opt "$o" relatime
	# a bind without options keeps both the atime mode and ro
	o="$(grep '^/nkeep ' <<<"$output" | cut -d' ' -f2)"
	has_opt "$o" noatime; has_opt "$o" ro
	assert_contains "$output" "writable /n2r"
	assert_contains "$output" "writable /s2n"
	assert_contains "$output" "writable /n2s"
}

@test "dropin mounts: userns: a bind source only the host's root can reach is mounted (#16 item 1)" {
	with_userns "$BUNDLE/rootfs"
	# 0700 root:root on the host: the container's root (host uid 100000)
	# cannot enter it; brig, which makes the container, can.
	HOST_DIR="$(test_tmpdir vol)"
	chmod 0700 "$HOST_DIR"
	mkdir "$HOST_DIR/data"
	echo from-host >"$HOST_DIR/data/f"
	chmod 0755 "$HOST_DIR/data"
	chmod 0644 "$HOST_DIR/data/f"
	# a symlink in the source is resolved as on the host
	ln -s data "$HOST_DIR/link"
	add_mount "$(bind /vol "$HOST_DIR/link" bind nosuid)"
	add_mount "$(bind /vol-file "$HOST_DIR/data/f" bind ro)"
	run_sh 'cat /vol/f /vol-file; echo "vol $(mnt /vol)"
		for f in /proc/1/fd/*; do echo "fd $f $(readlink $f)"; done
		cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = from-host ]
	[ "${lines[1]}" = from-host ]
	has_opt "$(grep '^vol ' <<<"$output" | cut -d' ' -f2)" nosuid
	# no fd of the host directory reached the container's process
	[[ "$output" != *"$HOST_DIR"* ]]
	[ "$(grep -c '^fd ' <<<"$output")" -le 4 ]
	assert_contains "$output" "$MAP_HOST"
	# the host directory is unchanged and still closed to others
	[ "$(stat -c %a "$HOST_DIR")" = 700 ]
}

@test "dropin mounts: a bind mount onto / replaces the rootfs (#16 item 5)" {
	HOST_DIR="$(test_tmpdir newroot)"
	cp -a "$BUNDLE/rootfs/." "$HOST_DIR/"
	echo other-root >"$HOST_DIR/marker"
	# first in the list, so that /proc, /dev ... are mounted on the new root
	update_config ".mounts = [$(bind / "$HOST_DIR" rbind)] + .mounts"
	run_sh 'cat /marker; echo "root $(mnt /)"; touch /written; ls /proc/self/fd >/dev/null && echo proc-ok'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = other-root ]
	assert_contains "$output" proc-ok
	# the container wrote into the bound directory, not into root.path
	[ -e "$HOST_DIR/written" ]
	[ ! -e "$BUNDLE/rootfs/written" ]
	[ ! -e "$BUNDLE/rootfs/marker" ]
}

@test "dropin mounts: a mount onto / that is not a bind is refused with the reason (#16 item 5)" {
	requires brig
	update_config '.mounts = [{"destination": "/", "type": "tmpfs", "source": "tmpfs"}] + .mounts'
	run brig run ctr
	[ "$status" -ne 0 ]
	assert_contains "$output" 'mounts[0]'
	assert_contains "$output" 'only a bind mount'
	assert_no_leftovers
}

@test "dropin mounts: a bind whose source is in the rootfs sees earlier mounts, also idmapped in a userns (#16 item 12)" {
	with_userns "$BUNDLE/rootfs"
	HOST_DIR="$(test_tmpdir vol)"
	chmod 0755 "$HOST_DIR"
	echo from-host >"$HOST_DIR/f"
	chmod 0644 "$HOST_DIR/f"
	# /t is a tmpfs made by an earlier entry, /t/vol a bind on it; both later
	# binds take their source from inside the rootfs, below that tmpfs.
	add_mount '{"destination": "/t", "type": "tmpfs", "source": "tmpfs"}'
	add_mount "$(bind /t/vol "$HOST_DIR" bind)"
	add_mount "$(bind /plain "$BUNDLE/rootfs/t" rbind)"
	add_mount "$(bind /mapped "rootfs/t" rbind ridmap)"
	run_sh 'cat /plain/vol/f /mapped/vol/f
		echo "plain $(mnt /plain) $(stat -c %u /plain/vol/f)"
		echo "mapped $(mnt /mapped) $(stat -c %u /mapped/vol/f)"
		echo "mappedvol $(mnt /mapped/vol)"'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = from-host ]
	[ "${lines[1]}" = from-host ]
	# both show the tmpfs with the bind below it, not the image's empty /t
	[[ "$(grep '^plain ' <<<"$output")" == *" tmpfs "* ]]
	[[ "$(grep '^mapped ' <<<"$output")" == *" tmpfs "* ]]
	[[ "$(grep '^mappedvol ' <<<"$output")" == *"idmapped"* ]]
	# the host file (host uid 0) is unmapped in the plain bind, and the
	# idmapped one shows it as the container's root
	[[ "$(grep '^plain ' <<<"$output")" == *" 65534" ]]
	[[ "$(grep '^mapped ' <<<"$output")" == *" 0" ]]
}
