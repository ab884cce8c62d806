#!/usr/bin/env bats
# A read-only root shared by the members of a pool (root.readonly=true,
# the bundle's rootfs bound or idmapped into every member) must stay
# read-only against a tenant with CAP_SYS_ADMIN in its own user namespace:
# a bind or idmapped mount made in that namespace has no locked flags, so
# `mount -o remount,bind,rw /`, a new bind of / made writable, and
# mount_setattr clearing MOUNT_ATTR_RDONLY (on / and on a clone of it) all
# succeeded and wrote the shared bundle. Now the root of a container a
# reset hands to other tenants is an overlay without an upper layer,
# read-only in its superblock, its lower in no mount namespace; every
# attempt is made from inside and the bundle is compared before and after.

load helpers
load confine_helpers

setup() {
	requires root
	need_built "$CONFINE_TOOLS/ro_breaker"
	setup_bundle
	cp "$CONFINE_TOOLS/ro_breaker" "$BUNDLE/rootfs/bin/ro_breaker"
	# owned by the ids spec --sandbox maps container root from (its
	# mapping says so): files container root may write once writable
	chown -R 1879048192:1879048192 "$BUNDLE/rootfs"
	rm "$BUNDLE/config.json"
	brig spec --sandbox --bundle "$BUNDLE"
	update_config ".linux.cgroupsPath = \"/$TEST_CGROUP_PARENT/$CGROUP_NAME\" | del(.linux.seccomp) |
		.process.capabilities = {\"bounding\": [\"CAP_SYS_ADMIN\"], \"effective\": [\"CAP_SYS_ADMIN\"], \"permitted\": [\"CAP_SYS_ADMIN\"]}"
	[ "$(jq -r .root.readonly "$BUNDLE/config.json")" = true ]
}

teardown() {
	teardown_bundle
	return 0
}

# manifest: every path of the bundle's rootfs with its type, mode, owner,
# size, mtime and content checksum.
manifest() {
	(cd "$BUNDLE/rootfs" && find . -xdev -printf '%p %y %m %U:%G %s %T@\n' | sort &&
		find . -xdev -type f -exec sha256sum {} + | sort) | sha256sum
}

ATTACK='mount -o remount,bind,rw / && echo remounted; echo x >/pwn1 && echo WROTE1;
	mkdir -p /tmp/m && mount --bind / /tmp/m && mount -o remount,bind,rw /tmp/m && echo bound;
	echo x >/tmp/m/pwn2 && echo WROTE2; ro_breaker / pwn3; echo end'

# attack_ok OUTPUT: every write was refused, the attempts ran
attack_ok() {
	echo "$1"
	[[ "$1" == *end* && "$1" == *done* ]]
	[[ "$1" != *WROTE* ]]
	[[ "$1" == *"write: Read-only file system"* ]]
	[[ "$1" == *"clone-write: Read-only file system"* ]]
}

@test "rootfs ro: a tenant with CAP_SYS_ADMIN cannot make a pool member's read-only root writable" {
	local before id
	before="$(manifest)"
	brig pool fill ro --bundle "$BUNDLE" --size 1
	id="$(brig pool claim ro)"
	run brig exec "$id" sh -c "$ATTACK"
	attack_ok "$output"
	[ "$before" = "$(manifest)" ]
	# the root is an overlay read-only in its superblock (the tenant did
	# clear the mount's own flag), the bundle's tree in no mount table
	run brig exec "$id" cat /proc/self/mountinfo
	[[ "$output" == *" / / "*" - overlay overlay ro,"* ]]
	[[ "$output" != *ext4* ]]
	# and so for the next tenant, after a verified reset
	brig pool release "$id" >/dev/null
	id="$(brig pool claim ro)"
	run brig exec "$id" sh -c "$ATTACK"
	attack_ok "$output"
	[ "$before" = "$(manifest)" ]
}

@test "rootfs ro: the same for a sandbox config run directly (run.brig.sandbox asks for reset)" {
	local before
	before="$(manifest)"
	update_config ".process.args = [\"sh\", \"-c\", $(jq -Rn --arg s "$ATTACK" '$s')]"
	run brig run rodirect </dev/null
	attack_ok "$output"
	[ "$before" = "$(manifest)" ]
	assert_no_leftovers rodirect
}
