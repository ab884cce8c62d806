/* The container's /dev: the default device nodes (null, zero, full, random,
 * urandom, tty), linux.devices, /dev/ptmx -> pts/ptmx, /dev/fd and the
 * stdin/stdout/stderr links, /dev/shm, and /dev/console. */
#ifndef BRIG_DEVICES_H
#define BRIG_DEVICES_H

#include <stdbool.h>

#include "error.h"
#include "ocispec.h"

/* Check linux.devices without touching the system: type is one of c, b, u,
 * p; major/minor given for c, b and u; path absolute and not "/dev". */
int brig_devices_validate (const oci_config *cfg, brig_error *err);

/* Create the default nodes and linux.devices below rootfd (the rootfs,
 * before pivot), then the /dev links. devfd: an O_PATH fd of /dev the
 * caller resolved inside the root already, or -1 to resolve (and create)
 * it here. userns: bind-mount the host's node instead of mknod (mknod is
 * refused in a user namespace). */
int brig_devices_setup (int rootfd, int devfd, const oci_config *cfg, bool userns,
                        brig_error *err);

/* Bind the terminal console_fd refers to onto /dev/console below rootfd
 * (use the fd of "/" after pivot). The pty must belong to the container's
 * mount namespace (opened after unshare), else the kernel refuses the bind. */
int brig_devices_mount_console (int rootfd, int console_fd, brig_error *err);

#endif
