#!/usr/bin/env bats
# The layers of the code (docs/architecture.md "Layers", issue #23): no file
# of runtime/ or libocispec/ calls into a file that calls it back (through
# any chain), and the folders call downwards only: commands -> sandbox ->
# container -> {process, rootfs, seccomp, cgroup} -> the shared files ->
# libocispec, with no cycle among the four. Drawn from the build's objects
# by contrib/callgraph.py (nm); and no file of runtime/lib outside sandbox/
# includes a sandbox header (the core reaches it only through
# container/extension.h). Needs no root.

load helpers

@test "layers: no file cycle, and the folder graph follows the layers" {
	requires program:python3 program:nm
	run python3 "$SRCDIR/contrib/callgraph.py" "${BUILDDIR:-$SRCDIR}" --check
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "file cycles (strongly connected groups): 0,"
	assert_contains "$output" "folder cycles: 0"
}

@test "layers: no core file includes a sandbox header" {
	run grep -rlE '#include "sandbox/' "$SRCDIR/runtime/lib" --include=*.c --include=*.h
	echo "$output"
	# serve/ sits above the sandbox (its own test below)
	[ -z "$(grep -v -e '/runtime/lib/sandbox/' -e '/runtime/lib/serve/' <<<"$output")" ]
}

@test "layers: nothing below serve/ includes a serve header (serve sits on top of the sandbox)" {
	run grep -rlE '#include "serve/' "$SRCDIR/runtime/lib" --include=*.c --include=*.h
	echo "$output"
	[ -z "$(grep -v '/runtime/lib/serve/' <<<"$output")" ]
}
