// Replaces $GOROOT/src/os/rlimit.go when tests/conformance/build.sh builds
// runtimetest (go build -overlay). Since Go 1.19 that file's init raises the
// program's soft RLIMIT_NOFILE to the hard limit before main runs, so
// runtimetest would check its own raised limit instead of the one the
// runtime under test set (validation/process_rlimits: soft 3000, hard
// 4000). Without it the os package leaves the limit alone, as before 1.19.

package os
