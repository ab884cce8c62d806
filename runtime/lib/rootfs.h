/* The container's filesystem view, built inside the container's new mount
 * namespace by the container init. Every path inside the rootfs is resolved
 * without following the container's symlinks out of it. */
#ifndef BRIG_ROOTFS_H
#define BRIG_ROOTFS_H

#include <stdbool.h>

#include "error.h"
#include "ocispec.h"

struct brig_rootfs_opts {
  bool no_pivot;     /* --no-pivot: MS_MOVE + chroot instead of pivot_root */
  bool userns;       /* the container has a new user namespace: bind device
                        nodes from the host instead of mknod */
  int console_fd;    /* >= 0: pty slave to bind on /dev/console, else -1 */
};

/* Before pivot: make mounts private/slave per rootfsPropagation, bind the
 * rootfs onto itself, apply every entry of cfg->mounts in order, set up /dev
 * (default nodes, linux.devices, /dev/pts/ptmx, /dev/fd and std links,
 * /dev/console). rootfs is the absolute host path of root.path. */
int rootfs_prepare (const oci_config *cfg, const char *rootfs,
                    const struct brig_rootfs_opts *opts, brig_error *err);

/* Make rootfs the process's root (pivot_root, or MS_MOVE + chroot with
 * no_pivot), detach the old root and chdir("/"). */
int rootfs_pivot (const char *rootfs, bool no_pivot, brig_error *err);

/* After pivot: maskedPaths, readonlyPaths, root.readonly, and the final
 * propagation of "/". */
int rootfs_finalize (const oci_config *cfg, brig_error *err);

#endif
