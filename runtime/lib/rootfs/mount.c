/* The one way the rootfs mounts something onto a resolved target: bind mounts
 * with open_tree + mount_setattr + move_mount (attributes are set on the
 * detached copy, so the mount is never visible with the wrong flags; the
 * classic bind + remount on kernels without them), filesystems with mount(2)
 * onto /proc/self/fd/N of the target, then the propagation asked for. Used by
 * the config's mounts (rootfs.c), the cgroup mount (cgroup_mount.c) and the
 * idmapped ones (idmap.c); it calls nothing of theirs. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paths.h"
#include "rootfs/internal.h"
#include "utils.h"

/* Re-apply the attributes of a bind with a remount, for kernels without
 * mount_setattr(2). The flags the mount has (and may be locked) are kept. */
static int
remount_bind_classic (int mount_fd, const struct brig_mount_options *o)
{
  struct statvfs sv;
  unsigned long flags = MS_BIND | MS_REMOUNT | (o->flags & brig_mount_attr_flags ());
  int r;

  r = brig_mount_onto_fd (NULL, mount_fd, NULL, flags, NULL);
  if (r == -EPERM && fstatvfs (mount_fd, &sv) == 0)
    {
      flags |= sv.f_flag & (ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC);
      r = brig_mount_onto_fd (NULL, mount_fd, NULL, flags, NULL);
    }
  return r;
}

int
rootfs_apply_propagation (int mount_fd, const struct brig_mount_options *o)
{
  for (size_t i = 0; i < o->n_propagation; i++)
    {
      unsigned long p = o->propagation[i];
      int r = brig_mount_setattr_fd (mount_fd, (p & MS_REC) != 0, 0, 0, p & ~MS_REC, -1);
      if (r == -ENOSYS)
        r = brig_mount_onto_fd (NULL, mount_fd, NULL, p, NULL);
      if (r < 0)
        return r;
    }
  return 0;
}

/* Attach the detached tree onto target (name NULL), or onto name in the
 * directory target (see brig_move_mount_at), with o's attributes,
 * idmapping (userns_fd >= 0) and propagation. */
int
rootfs_attach_tree (int tree, int target, const char *name, const struct brig_mount_options *o,
             int userns_fd)
{
  bool classic = false;
  int r;

  if (o && (o->attr_set || o->attr_clr))
    {
      uint64_t implied = brig_mount_implied_clr (o);
      r = brig_mount_setattr_fd (tree, false, o->attr_set, o->attr_clr | implied, 0, -1);
      /* A source whose read-only flag is locked (a host mount seen from a
         user namespace) stays read-only: rw is only implied. */
      if (r == -EPERM && implied)
        r = brig_mount_setattr_fd (tree, false, o->attr_set, o->attr_clr, 0, -1);
      if (r == -ENOSYS)
        classic = true;
      else if (r < 0)
        return r;
    }
  if (userns_fd >= 0)
    {
      r = brig_mount_setattr_fd (tree, o && o->ridmap, MOUNT_ATTR_IDMAP, 0, 0, userns_fd);
      if (r < 0)
        return r;
    }
  if (o && (o->rec_attr_set || o->rec_attr_clr))
    {
      r = brig_mount_setattr_fd (tree, true, o->rec_attr_set, o->rec_attr_clr, 0, -1);
      if (r < 0)
        return r;
    }
  r = name ? brig_move_mount_at (tree, target, name) : brig_move_mount_to_fd (tree, target);
  if (r < 0)
    return r;
  if (classic && (r = remount_bind_classic (tree, o)) < 0)
    return r;
  return o ? rootfs_apply_propagation (tree, o) : 0;
}

int
rootfs_attach_tree_at (int tree, int dirfd, const char *name, const struct brig_mount_options *o)
{
  return rootfs_attach_tree (tree, dirfd, name, o, -1);
}

int
rootfs_bind_path (struct rootfs_ctx *c, const char *src, int target_fd, bool recursive,
                  const struct brig_mount_options *o, brig_error *err)
{
  _cleanup_close_ int fd = open (src, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return brig_error_errno (err, "bind mount %s", src);
  return rootfs_bind_fd (c, fd, src, target_fd, recursive, o, err);
}

int
rootfs_bind_fd (struct rootfs_ctx *c, int src_fd, const char *name, int target_fd,
                bool recursive, const struct brig_mount_options *o, brig_error *err)
{
  _cleanup_close_ int tree = -1;
  int r;

  tree = brig_open_tree (src_fd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH
                         | (recursive ? AT_RECURSIVE : 0));
  if (tree == -ENOSYS)
    {
      /* Linux < 5.2: bind through the fd's path, then remount the
         attributes. */
      _cleanup_close_ int top = -1;
      char src[32];
      r = brig_mount_onto_fd (brig_fd_path (src_fd, src), target_fd, NULL,
                              MS_BIND | (recursive ? MS_REC : 0), NULL);
      if (r < 0)
        return brig_error_set (err, -r, "bind mount %s", name);
      _cleanup_free_ char *path = brig_path_of_fd_in_root (target_fd, c->rootfs);
      top = path ? brig_path_open_in_root (c->rootfd, path, O_PATH) : -EINVAL;
      if (top < 0)
        return brig_error_set (err, -top, "reopen the bind mount of %s", name);
      if (o && (o->flags & brig_mount_attr_flags ()) && (r = remount_bind_classic (top, o)) < 0)
        return brig_error_set (err, -r, "remount the bind mount of %s", name);
      if (o && (r = rootfs_apply_propagation (top, o)) < 0)
        return brig_error_set (err, -r, "set the propagation of %s", name);
      return 0;
    }
  if (tree < 0)
    return brig_error_set (err, -tree, "open_tree %s", name);
  r = rootfs_attach_tree (tree, target_fd, NULL, o, -1);
  if (r < 0)
    return brig_error_set (err, -r, "bind mount %s", name);
  return 0;
}

static bool
has_data_option (const char *data, const char *key)
{
  size_t n = strlen (key);
  for (const char *p = data; p && *p;)
    {
      if (strncmp (p, key, n) == 0)
        return true;
      p = strchr (p, ',');
      if (p)
        p++;
    }
  return false;
}

int
rootfs_mount_fs (struct rootfs_ctx *c, const char *source, const char *dest, int target_fd,
                 const char *type, unsigned long flags, const char *data,
                 const struct brig_mount_options *o, bool keep_mode, brig_error *err)
{
  bool tmpfs = type && strcmp (type, "tmpfs") == 0 && !(flags & MS_REMOUNT);
  bool copyup = tmpfs && keep_mode && o && o->tmpcopyup;
  bool delay_ro, need_top;
  _cleanup_close_ int top = -1, under = -1;
  struct stat before;
  int r;

  /* A tmpfs over a directory of the image keeps that directory's mode
     unless mode= says otherwise (as runc does), and gets its content with
     tmpcopyup; it is mounted writable for that and made read-only after. */
  keep_mode = keep_mode && tmpfs && !has_data_option (data, "mode=");
  delay_ro = (keep_mode || copyup) && (flags & MS_RDONLY);
  need_top = keep_mode || copyup || (o && (o->n_propagation || o->rec_attr_set || o->rec_attr_clr));
  if ((keep_mode || copyup) && fstat (target_fd, &before) < 0)
    return brig_error_errno (err, "stat %s", dest);
  if (copyup && (under = openat (target_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return brig_error_errno (err, "tmpcopyup: open %s", dest);
  r = brig_mount_onto_fd (source, target_fd, type, delay_ro ? flags & ~MS_RDONLY : flags, data);
  if (r < 0)
    return brig_error_set (err, -r, "mount %s to %s", source ? source : type, dest);
  if (!need_top)
    return 0;
  /* The target fd still names the directory under the new mount: look the
     destination up again to get the mount itself. */
  top = brig_path_open_in_root (c->rootfd, dest, O_RDONLY | O_DIRECTORY);
  if (top < 0)
    top = brig_path_open_in_root (c->rootfd, dest, O_PATH);
  if (top < 0)
    return brig_error_set (err, -top, "reopen %s after mounting", dest);
  if (copyup)
    {
      if (rootfs_copy_tree (under, top, err) < 0)
        return brig_error_wrap (err, "mount %s to %s", source ? source : type, dest);
      (void) !fchown (top, before.st_uid, before.st_gid);
    }
  if (keep_mode && fchmod (top, before.st_mode & 07777) < 0)
    return brig_error_errno (err, "chmod %s", dest);
  if (delay_ro && (r = brig_mount_setattr_fd (top, false, MOUNT_ATTR_RDONLY, 0, 0, -1)) == -ENOSYS)
    r = brig_mount_onto_fd (NULL, top, NULL, MS_REMOUNT | flags, data);
  if (r < 0)
    return brig_error_set (err, -r, "remount %s read-only", dest);
  if (o && (o->rec_attr_set || o->rec_attr_clr)
      && (r = brig_mount_setattr_fd (top, true, o->rec_attr_set, o->rec_attr_clr, 0, -1)) < 0)
    return brig_error_set (err, -r, "set recursive attributes of %s", dest);
  if (o && (r = rootfs_apply_propagation (top, o)) < 0)
    return brig_error_set (err, -r, "set the propagation of %s", dest);
  return 0;
}
