/* The runtime binary, out of the container's reach (CVE-2019-5736 class).
 *
 * A process that brig places in a container (the init clone, exec's C2)
 * runs brig's binary until its execve, and a container program that
 * executes /proc/self/exe (a symlink to it, or a `#!/proc/self/exe` script)
 * runs that same file inside the container, where its /proc/PID/exe can be
 * reopened for writing. So the commands that place a process in a container
 * first re-execute brig from a file nobody can write: a detached read-only
 * bind mount of the binary (no mount namespace holds it), or, where the
 * kernel or brig's privileges do not allow that, a sealed memfd copy. A
 * binary already on a read-only mount is run in place. */
#ifndef BRIG_SELFEXE_H
#define BRIG_SELFEXE_H

#include "error.h"

/* Unless /proc/self/exe already lies on a read-only mount or is a memfd
 * sealed against writes, growth and shrinking (asked of the kernel, never
 * of the environment), execveat it again with argv and the current
 * environment from a detached read-only mount of it, else from a sealed
 * memfd copy: the same pid, fds, signal mask and argv go on there.
 * Returns 0 when already read-only or sealed, else only on failure. */
int brig_selfexe_seal (char **argv, brig_error *err);

/* Set (to 1) by the binary's entry point (runtime/entry.c) when it found
 * /proc/self/exe on a read-only mount before glibc started: statfs asked,
 * brig_selfexe_seal returns 0 without asking again. */
extern int brig_selfexe_readonly __attribute__ ((visibility ("hidden")));

#endif
