/* brig fork's copy of an ephemeral layer's upper directory into a new
 * container's, owners translated from one id range to the other. */
#ifndef BRIG_SANDBOX_LAYER_COPY_H
#define BRIG_SANDBOX_LAYER_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* The deepest tree copied: the tenant chose the depth, and each level
 * holds two fds open. */
#define BRIG_LAYER_COPY_MAX_DEPTH 4096

/* One line of /proc/PID/uid_map or gid_map, as the host reads it. */
struct brig_idmap_line {
  uint32_t inside, outside, count;
};

/* A process's user namespace mappings (at most 340 lines each, the
 * kernel's limit). No user namespace: "0 0 4294967295". */
struct brig_idmaps {
  struct brig_idmap_line uid[340], gid[340];
  size_t nuid, ngid;
};

/* Read the uid and gid maps of pid's user namespace. */
int brig_idmaps_read (pid_t pid, struct brig_idmaps *m, brig_error *err);

/* Copy the tree under src (any fd of the source upper directory) into dst
 * (an fd of the new, empty upper directory): directories, regular files
 * (holes kept), symlinks, hard links, overlay whiteouts, fifos, modes,
 * times, user.* and trusted.overlay.* xattrs; each owner translated from
 * the source's ids (host ids of from's namespace) to the same ids inside
 * to's. Never follows a symlink of src, never leaves it, skips device
 * nodes and sockets, refuses deeper than BRIG_LAYER_COPY_MAX_DEPTH. Run as
 * host root in a process of its own: it changes the fs ids and raises
 * RLIMIT_NOFILE. */
int brig_layer_copy (int src, int dst, const struct brig_idmaps *from,
                     const struct brig_idmaps *to, brig_error *err);

#endif
