/* Bind-mount sources opened by the parent for an init in a user namespace.
 *
 * Root of a new user namespace holds no rights over the host's files: a
 * source below a directory only the host's root may enter (0700) cannot be
 * looked up by the init, though brig, which made the container, could. So
 * the init asks (MOUNT_SOURCE with the mount's index, process/handshake.c) and the
 * parent opens the source with its own rights, O_PATH, and hands the fd
 * over; the init mounts from that fd and closes it at once.
 *
 * The parent resolves the path inside the init's mount namespace, through
 * /proc/PID/root with openat2(RESOLVE_IN_ROOT): before pivot_root that root
 * is the host's "/", so the path means what it means on the host (symlinks
 * included), and the fd names a mount of the init's own namespace, which
 * is the only kind the kernel binds there. Earlier entries of "mounts"
 * (already made by the init) are seen, as when the init resolves it
 * itself; a source inside the rootfs is resolved in it, as the init
 * resolves one. For an idmapped mount the parent also makes the idmapped copy
 * (rootfs/idmap.c) and sends that mount instead. Only a mounts[] entry's
 * own source can be asked for; the request comes from brig's init code,
 * before anything of the container runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rootfs/mounts.h"
#include "paths.h"
#include "rootfs/rootfs.h"
#include "sync.h"
#include "utils.h"

/* A source inside the rootfs is the container's path, as the init resolves
 * it (rootfs.c): in the rootfs's top mount in the init's namespace (the
 * self-bind every earlier entry was mounted on), symlinks taken from that
 * root. *below tells whether src lies there; then the fd or -errno. */
static int
open_inside_rootfs (const oci_config *cfg, const char *bundle, int root, const char *src,
                    bool *below)
{
  const char *rp = cfg->root && cfg->root->path ? cfg->root->path : "rootfs";
  _cleanup_free_ char *joined = NULL, *rootfs = NULL, *inside = NULL;
  _cleanup_close_ int rfd = -1;

  if (rp[0] != '/')
    rp = joined = xasprintf ("%s/%s", bundle ? bundle : ".", rp);
  /* the canonical path create mounted on (container/validate.c) */
  rootfs = realpath (rp, NULL);
  *below = rootfs && (inside = brig_path_below (rootfs, src)) != NULL;
  if (!*below)
    return -ENOENT;
  rfd = brig_path_open_in_root_nolinks (root, rootfs, O_PATH | O_DIRECTORY);
  if (rfd < 0)
    return rfd;
  return brig_path_open_in_root (rfd, inside, O_PATH);
}

int
rootfs_source_open (const oci_config *cfg, const char *bundle, pid_t pid, size_t i,
                    brig_error *err)
{
  const oci_mount *m;
  _cleanup_free_ char *owned = NULL, *clean = NULL;
  _cleanup_close_ int root = -1;
  char path[64];
  const char *src;
  bool below;
  int fd;

  if (i >= cfg->mounts_len || cfg->mounts[i].source == NULL || *cfg->mounts[i].source == '\0')
    return brig_error_say (err, EINVAL, "mounts[%zu]: no source to open", i);
  m = &cfg->mounts[i];
  src = m->source;
  if (src[0] != '/')
    src = owned = xasprintf ("%s/%s", bundle ? bundle : ".", m->source);
  /* as the init takes it (rootfs.c): ".." as written */
  src = clean = brig_path_clean_lexical (src);
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return brig_error_errno (err, "mount %s to %s: open %s", m->source, m->destination, path);
  fd = open_inside_rootfs (cfg, bundle, root, src, &below);
  if (!below)
    fd = brig_path_open_in_root (root, src, O_PATH);
  if (fd < 0)
    return brig_error_set (err, -fd, "mount %s to %s", m->source, m->destination);
  return fd;
}

int
rootfs_source_open_for_init (const oci_config *cfg, const char *bundle, pid_t pid, size_t i,
                             brig_error *err)
{
  int fd = rootfs_source_open (cfg, bundle, pid, i, err);
  if (fd >= 0 && rootfs_wants_idmap (&cfg->mounts[i]))
    {
      int tree = rootfs_idmap_tree (cfg, i, fd, pid, err);
      close (fd);
      if (tree < 0 && err->msg)
        brig_error_wrap (err, "mount %s to %s", cfg->mounts[i].source, cfg->mounts[i].destination);
      fd = tree;
    }
  return fd;
}
