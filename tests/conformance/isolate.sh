#!/bin/bash
# Run one validation test in its own namespaces, for tests/conformance/run.sh.
#
#   isolate.sh run NAME TIMEOUT RUNTIME STATE_ROOT -- CMD...
#       Create the test-only cgroup <current>/brig-conformance/NAME in every
#       cgroup hierarchy, move this process there, and run CMD (under
#       `timeout TIMEOUT`) in a private mount namespace and a new cgroup
#       namespace rooted at that cgroup, with every cgroup file system
#       mounted again inside the mount namespace. The suite's absolute
#       cgroupsPath ("/cgrouptest") and the runtime's default cgroups then
#       land under the test-only cgroup, never at the host's hierarchy roots,
#       and the paths the runtime records are valid only inside the
#       namespaces. So, still inside them, containers the test left behind
#       in STATE_ROOT are removed with `RUNTIME --root STATE_ROOT delete
#       --force`. The exit status is CMD's (124 when it timed out).
#   isolate.sh cleanup NAME
#       Kill the processes still in NAME's cgroups (only those: they were
#       started by the test) and remove the cgroups, deepest first. Prints
#       what it had to clean up, one "# ..." line each.
#   isolate.sh cleanup-parent
#       Remove the (empty) test-only parent cgroups.
#   isolate.sh check
#       Exit 0 when tests can have their cgroup namespace here; else say why.
#
# CONFORMANCE_CGROUPNS=0 skips the cgroup part (mount namespace only).
set -u

PARENT=brig-conformance

# same_set A B: true when the comma-separated lists A and B hold the same
# items (in any order). Pure bash: this runs for every test.
same_set() {
	local a b x
	IFS=, read -r -a a <<<"$1"
	IFS=, read -r -a b <<<"$2"
	[ "${#a[@]}" = "${#b[@]}" ] || return 1
	for x in "${a[@]}"; do
		[[ ",$2," == *",$x,"* ]] || return 1
	done
}

# cgroup_mounts: one line per cgroup file system mounted here:
# "MOUNTPOINT FSTYPE SUPEROPTS CGROUPDIR", CGROUPDIR being the directory of
# this process's cgroup in that hierarchy (first mount of each hierarchy).
cgroup_mounts() {
	local line rest fields root mp fstype superopts key path cg opt seen=" "
	local -a cgroups opts
	mapfile -t cgroups </proc/self/cgroup
	while IFS= read -r line; do
		rest="${line#* - }"
		read -r -a fields <<<"${line%% - *}"
		root="${fields[3]}" mp="${fields[4]}"
		read -r fstype _ superopts <<<"$rest"
		case "$fstype" in
		cgroup2) key="" ;;
		cgroup)
			# The hierarchy's controllers (and name=) as /proc/self/cgroup
			# lists them.
			key=""
			IFS=, read -r -a opts <<<"$superopts"
			for opt in "${opts[@]}"; do
				case "$opt" in
				rw | ro | clone_children | noprefix | xattr | cpuset_v2_mode | release_agent=* | none) ;;
				*) key+="${key:+,}$opt" ;;
				esac
			done ;;
		*) continue ;;
		esac
		case "$seen" in *" $fstype:$key "*) continue ;; esac
		seen+="$fstype:$key "
		path=
		for cg in "${cgroups[@]}"; do
			rest="${cg#*:}"
			cg="${rest%%:*}"
			rest="${rest#*:}"
			if [ "$fstype" = cgroup2 ] && [ -z "$cg" ]; then
				path="$rest"
				break
			fi
			if [ "$fstype" = cgroup ] && [ -n "$cg" ] && same_set "$cg" "$key"; then
				path="$rest"
				break
			fi
		done
		[ -n "$path" ] || continue
		# The mount shows the hierarchy from $root down.
		case "$path" in
		"$root"*) path="${path#"$root"}" ;;
		*) continue ;;
		esac
		path="${path#/}"
		printf '%s %s %s %s\n' "$mp" "$fstype" "$superopts" "${mp%/}${path:+/$path}"
	done </proc/self/mountinfo
}

# enable_controllers DIR: hand the controllers DIR has down to its children.
# cgroup2 allows it only while DIR holds no process (the no-internal-process
# rule: EBUSY), so never on a cgroup a process is about to join.
enable_controllers() {
	local dir="$1" c
	[ -f "$dir/cgroup.subtree_control" ] && [ -f "$dir/cgroup.controllers" ] || return 0
	for c in $(cat "$dir/cgroup.controllers"); do
		echo "+$c" >"$dir/cgroup.subtree_control" 2>/dev/null
	done
	return 0
}

# make_cgroup DIR [leaf]: create DIR (a cgroup) so that processes can join
# it; unless "leaf", also hand its controllers down (cgroup2).
make_cgroup() {
	local dir="$1" parent
	parent="$(dirname "$dir")"
	mkdir -p "$dir" 2>/dev/null || [ -d "$dir" ] || return 1
	# cpuset (v1) children start with no cpus or mems. (A cgroup2 child's
	# empty cpuset.cpus means "the parent's", and the root has none.)
	if [ ! -f "$dir/cgroup.controllers" ] && [ -f "$dir/cpuset.cpus" ] &&
		[ -z "$(cat "$dir/cpuset.cpus")" ]; then
		cat "$parent/cpuset.cpus" >"$dir/cpuset.cpus" &&
			cat "$parent/cpuset.mems" >"$dir/cpuset.mems" || return 1
	fi
	[ "${2:-}" = leaf ] || enable_controllers "$dir"
	return 0
}

do_run() {
	local name="$1" timeout="$2" runtime="$3" state_root="$4"
	shift 5 # NAME TIMEOUT RUNTIME STATE_ROOT --
	if [ "${CONFORMANCE_CGROUPNS:-1}" = 0 ]; then
		exec unshare -m --propagation private "$0" inner-nocg "$timeout" "$runtime" "$state_root" "$@"
	fi
	local mp fstype opts dir
	# NAME stays a leaf while this process joins it: when the cgroup2 root
	# delegates controllers (systemd does on every pure v2 host), PARENT
	# gets them and NAME could hand them on, but a cgroup with controllers
	# enabled for its children takes no process (EBUSY). do_inner enables
	# them once this process has moved on into NAME's harness leaf.
	while read -r mp fstype opts dir; do
		make_cgroup "$dir/$PARENT" && make_cgroup "$dir/$PARENT/$name" leaf ||
			{ echo "isolate: cannot create cgroup $dir/$PARENT/$name" >&2; exit 125; }
		echo $$ >"$dir/$PARENT/$name/cgroup.procs" ||
			{ echo "isolate: cannot join cgroup $dir/$PARENT/$name" >&2; exit 125; }
	done < <(cgroup_mounts)
	exec unshare -m -C --propagation private "$0" inner "$timeout" "$runtime" "$state_root" "$@"
}

# Inside the namespaces: mount the cgroup file systems again so they show
# the namespace's root, run the test, remove what it left.
do_inner() {
	local mode="$1" timeout="$2" runtime="$3" state_root="$4" rc id
	shift 4
	if [ "$mode" = inner ]; then
		local mp fstype opts
		# Read every mount first: remounting changes mountinfo.
		local mounts
		mounts="$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^cgroup2?$/) print $5, $(i + 1), $(i + 3); break } }' /proc/self/mountinfo)"
		while read -r mp fstype opts; do
			[ -n "$mp" ] || continue
			umount -l "$mp" &&
				mount -t "$fstype" -o "$opts" "$fstype" "$mp" ||
				{ echo "isolate: cannot mount $fstype on $mp" >&2; exit 125; }
			# cgroup2 allows no process in a cgroup whose controllers are
			# delegated: the test waits in a leaf, leaving the namespace's
			# root to the containers.
			if [ "$fstype" = cgroup2 ]; then
				mkdir -p "$mp/conformance-harness" &&
					echo $$ >"$mp/conformance-harness/cgroup.procs" ||
					{ echo "isolate: cannot join $mp/conformance-harness" >&2; exit 125; }
				# The namespace's root (NAME) is empty now: hand the
				# controllers we were given down to the containers.
				enable_controllers "$mp"
			fi
		done <<<"$mounts"
	fi
	timeout -k 10 "$timeout" "$@"
	rc=$?
	# The runtime's own list: its root may hold more than containers.
	for id in $(timeout -k 5 30 "$runtime" --root "$state_root" list -q 2>/dev/null); do
		echo "# isolate: removing container $id left by the test" >&2
		timeout -k 5 30 "$runtime" --root "$state_root" delete --force "$id" >/dev/null 2>&1
	done
	return "$rc"
}

do_cleanup() {
	local name="$1" mp fstype opts dir d pid left=0 try
	[ "${CONFORMANCE_CGROUPNS:-1}" = 0 ] && return 0
	while read -r mp fstype opts dir; do
		d="$dir/$PARENT/$name"
		[ -d "$d" ] || continue
		for try in 1 2 3 4 5; do
			left=0
			while read -r pid; do
				[ -n "$pid" ] || continue
				left=1
				[ "$try" = 1 ] && echo "# cleanup: killing pid $pid left in $d"
				kill -KILL "$pid" 2>/dev/null
			done < <(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)
			[ "$left" = 0 ] && break
			sleep 0.2
		done
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$d" ] && echo "# cleanup: cannot remove cgroup $d"
	done < <(cgroup_mounts)
	return 0
}

# cleanup-parent: remove the test-only parent cgroups when they are empty.
do_cleanup_parent() {
	local mp fstype opts dir
	[ "${CONFORMANCE_CGROUPNS:-1}" = 0 ] && return 0
	while read -r mp fstype opts dir; do
		[ -d "$dir/$PARENT" ] && rmdir "$dir/$PARENT" 2>/dev/null
	done < <(cgroup_mounts)
	return 0
}

# check: can tests get their cgroup namespace here? Creates the parent
# cgroups (cleanup-parent removes them).
do_check() {
	local mp fstype opts dir n=0
	while read -r mp fstype opts dir; do
		make_cgroup "$dir/$PARENT" || { echo "cannot create cgroup $dir/$PARENT"; return 1; }
		n=$((n + 1))
	done < <(cgroup_mounts)
	[ "$n" -gt 0 ] || { echo "no cgroup file system mounted"; return 1; }
	unshare -C true 2>/dev/null || { echo "unshare -C (cgroup namespace) is not supported"; return 1; }
}

case "${1:-}" in
run) shift; do_run "$@" ;;
check) do_check ;;
cleanup-parent) do_cleanup_parent ;;
inner | inner-nocg) do_inner "$@" ;;
cleanup) shift; do_cleanup "$@" ;;
*) echo "usage: $0 run NAME TIMEOUT RUNTIME STATE_ROOT -- CMD... | cleanup NAME" >&2; exit 2 ;;
esac
