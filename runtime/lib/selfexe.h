/* The runtime binary, out of the container's reach (CVE-2019-5736 class).
 *
 * A process that brig places in a container (the init clone, exec's C2)
 * runs brig's binary until its execve, and a container program that
 * executes /proc/self/exe (a symlink to it, or a `#!/proc/self/exe` script)
 * runs that same file inside the container, where its /proc/PID/exe can be
 * reopened for writing. So the commands that place a process in a container
 * first re-execute brig from a sealed memfd copy of itself: the only file
 * the container can ever reach is that copy, which nothing can write. A
 * binary on a read-only mount is already out of reach and is not copied. */
#ifndef BRIG_SELFEXE_H
#define BRIG_SELFEXE_H

#include "error.h"

/* Unless /proc/self/exe already is a memfd sealed against writes, growth
 * and shrinking (asked of the kernel, never of the environment), or lies on
 * a read-only mount, copy it
 * into such a memfd and execveat that with argv and the current
 * environment: the same pid, fds, signal mask and argv go on in the copy.
 * Returns 0 when already sealed or read-only, else only on failure. */
int brig_selfexe_seal (char **argv, brig_error *err);

#endif
