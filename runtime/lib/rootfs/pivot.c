/* Switching to the rootfs (pivot_root, or MS_MOVE + chroot) and what is
 * done inside it afterwards: readonlyPaths, maskedPaths, a read-only /dev
 * and root, and the final propagation of "/". All of it resolves paths
 * inside the new root and mounts through fds, so it needs no /proc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rootfs/devices.h"
#include "log.h"
#include "mountinfo.h"
#include "paths.h"
#include "rootfs/internal.h"
#include "utils.h"

static int
sort_deepest_first (const void *a, const void *b)
{
  return (int) (strlen (*(char *const *) b) - strlen (*(char *const *) a));
}

/* Without pivot_root the host's mounts stay reachable below the old root;
 * detach every mount outside the rootfs (cover it where that is refused) so
 * the chroot cannot be walked out of through them. */
static int
hide_host_mounts (const char *rootfs, brig_error *err)
{
  struct brig_mountinfo *mi = NULL;
  size_t n = 0, k = 0;
  _cleanup_free_ char **points = NULL;

  if (brig_mountinfo_read (NULL, &mi, &n, err) < 0)
    return -1;
  points = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      const char *mp = mi[i].mountpoint;
      if (brig_path_has_prefix (mp, rootfs) || brig_path_has_prefix (rootfs, mp))
        continue;
      points[k++] = mi[i].mountpoint;
    }
  qsort (points, k, sizeof (char *), sort_deepest_first);
  for (size_t i = 0; i < k; i++)
    if (umount2 (points[i], MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
      {
        if (mount ("tmpfs", points[i], "tmpfs", MS_RDONLY, NULL) < 0 && errno != ENOTDIR)
          brig_debug ("cannot hide %s: %m", points[i]);
      }
  brig_mountinfo_free (mi, n);
  return 0;
}

/* Stdio that is the host's /dev/null becomes the container's: no fd of a
 * host mount crosses into the container. What each of fds 0..2 is after
 * that goes to stdio_st (bit fd of *known), so that the init's
 * brig_process_fix_stdio_owner does not fstat them again. */
static void
reopen_dev_null (struct stat stdio_st[3], unsigned *known)
{
  struct stat null_st;
  _cleanup_close_ int null = -1;
  unsigned host_null = 0;

  *known = 0;
  for (int fd = 0; fd < 3; fd++)
    if (fstat (fd, &stdio_st[fd]) == 0)
      {
        *known |= 1u << fd;
        if (S_ISCHR (stdio_st[fd].st_mode) && stdio_st[fd].st_rdev == makedev (1, 3))
          host_null |= 1u << fd;
      }
  /* Pipes, files, a terminal (the usual stdio of an engine): nothing to
   * open. */
  if (host_null == 0)
    return;
  null = open ("/dev/null", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (null < 0 || fstat (null, &null_st) < 0 || !S_ISCHR (null_st.st_mode)
      || null_st.st_rdev != makedev (1, 3))
    return;
  for (int fd = 0; fd < 3; fd++)
    {
      struct stat *st = &stdio_st[fd];
      if (!(host_null & (1u << fd))
          || (st->st_dev == null_st.st_dev && st->st_ino == null_st.st_ino))
        continue;
      if (dup3 (null, fd, 0) == 0)
        *st = null_st;
      else
        *known &= ~(1u << fd);
    }
}

int
rootfs_pivot (const oci_config *cfg, const char *rootfs, int rootfd, bool no_pivot,
              struct stat stdio_st[3], unsigned *stdio_known, brig_error *err)
{
  _cleanup_close_ int oldroot = -1, opened = -1;
  int newroot = rootfd;

  if (newroot < 0)
    newroot = opened = open (rootfs, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (newroot < 0)
    return brig_error_errno (err, "open the rootfs %s", rootfs);
  if (!rootfs_has_namespace (cfg, "mount"))
    {
      /* The runtime's mount namespace: pivot_root or MS_MOVE would change
         the host's mount table, chroot changes only this process. */
      if (fchdir (newroot) < 0)
        return brig_error_errno (err, "chdir %s", rootfs);
      if (chroot (".") < 0)
        return brig_error_errno (err, "chroot %s", rootfs);
    }
  else if (no_pivot)
    {
      _cleanup_free_ char *real = realpath (rootfs, NULL);
      if (real == NULL)
        return brig_error_errno (err, "rootfs %s", rootfs);
      /* Unmounting below must not propagate to the host. */
      if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return brig_error_errno (err, "make / rslave");
      if (hide_host_mounts (real, err) < 0)
        return -1;
      if (fchdir (newroot) < 0)
        return brig_error_errno (err, "chdir %s", rootfs);
      if (mount (real, "/", NULL, MS_MOVE, NULL) < 0)
        return brig_error_errno (err, "move the rootfs %s to /", rootfs);
      if (chroot (".") < 0)
        return brig_error_errno (err, "chroot %s", rootfs);
    }
  else
    {
      oldroot = open ("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
      if (oldroot < 0)
        return brig_error_errno (err, "open /");
      if (fchdir (newroot) < 0)
        return brig_error_errno (err, "chdir %s", rootfs);
      /* pivot_root(".", "."): the old root ends up stacked on the new one
         and is detached right away, no put_old directory needed. */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return brig_error_errno (err, "pivot_root %s", rootfs);
      if (fchdir (oldroot) < 0)
        return brig_error_errno (err, "chdir to the old root");
      if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return brig_error_errno (err, "make the old root rslave");
      if (umount2 (".", MNT_DETACH) < 0)
        return brig_error_errno (err, "unmount the old root");
    }
  if (chdir ("/") < 0)
    return brig_error_errno (err, "chdir /");
  reopen_dev_null (stdio_st, stdio_known);
  return 0;
}

/* The entries of the container's own procfs, listed once after the pivot
 * (getdents64 records, in a new pid namespace a few kilobytes): masked and
 * read-only paths directly under /proc that this kernel lacks are skipped
 * without a lookup each, and a masked one's type needs no fstat. n == 0:
 * no listing, every path is looked up. */
struct proc_listing {
  char buf[8192] __attribute__ ((aligned (8)));
  size_t n;
};

static void
proc_list (int rootfd, struct proc_listing *l)
{
  _cleanup_close_ int fd = openat (rootfd, "proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  long n;

  l->n = 0;
  if (fd < 0)
    return;
  while ((n = syscall (SYS_getdents64, fd, l->buf + l->n, sizeof l->buf - l->n)) > 0)
    l->n += (size_t) n;
  /* Incomplete (an error, or more entries than fit): not used. */
  if (n < 0)
    l->n = 0;
}

/* For "/proc/NAME" (one component) with a listing: 0 when /proc has no
 * NAME, else its DT_ type. -1: not such a path, or no listing. */
static int
proc_entry (const struct proc_listing *l, const char *path)
{
  const char *name = path + sizeof "/proc/" - 1;

  if (l == NULL || l->n == 0 || strncmp (path, "/proc/", sizeof "/proc/" - 1) != 0
      || *name == '\0' || strchr (name, '/') || strcmp (name, ".") == 0
      || strcmp (name, "..") == 0 || strspn (name, "0123456789") == strlen (name))
    return -1;
  /* (A number: a thread can be looked up without being listed.) */
  for (size_t off = 0; off < l->n;)
    {
      const struct dirent64 *de = (const struct dirent64 *) (l->buf + off);
      if (strcmp (de->d_name, name) == 0)
        return de->d_type == DT_UNKNOWN ? -1 : de->d_type;
      off += de->d_reclen;
    }
  return 0;
}

/* Mask path: an empty read-only tmpfs over a directory (one mount(2): the
 * fsopen/fsconfig/fsmount/move_mount way takes six syscalls), the
 * container's /dev/null over anything else (one bind through the
 * /proc/self/fd paths of both fds, where open_tree + move_mount take two
 * calls and a close). The target is resolved once, inside the root; *devnull
 * caches the node's fd across calls (-1 at first; the caller closes it, not
 * the batch: a full batch is closed early, and a number closed there could
 * be reused by the next target). The other fds opened go to fds, which the
 * caller closes after the last path. */
static int
mask_path (int rootfd, const char *path, int *devnull, struct brig_fd_batch *fds,
           const struct proc_listing *proc, brig_error *err)
{
  int type = proc_entry (proc, path);
  int target = type == 0 ? -ENOENT : brig_path_open_in_root (rootfd, path, O_PATH);
  struct stat st;
  int r;

  if (target == -ENOENT)
    return 0;
  if (target < 0)
    return brig_error_set (err, -target, "mask %s", path);
  brig_fd_batch_add (fds, target);
  if (type == DT_DIR || type == DT_REG)
    st.st_mode = type == DT_DIR ? S_IFDIR : S_IFREG;
  else if (fstat (target, &st) < 0)
    return brig_error_errno (err, "mask %s", path);
  if (S_ISDIR (st.st_mode))
    r = brig_mount_onto_fd ("tmpfs", target, "tmpfs", MS_RDONLY, NULL);
  else
    {
      struct stat nst;
      char src[32];
      if (*devnull < 0)
        {
          int fd = brig_path_open_in_root (rootfd, "/dev/null", O_PATH);
          if (fd < 0)
            return brig_error_set (err, -fd, "mask %s: open /dev/null", path);
          *devnull = fd;
          if (fstat (fd, &nst) < 0 || !S_ISCHR (nst.st_mode) || nst.st_rdev != makedev (1, 3))
            return brig_error_say (err, EINVAL, "mask %s: /dev/null is not the null device",
                                   path);
        }
      r = brig_mount_onto_fd (brig_fd_path (*devnull, src), target, NULL, MS_BIND, NULL);
    }
  if (r < 0)
    return brig_error_set (err, -r, "mask %s", path);
  return 0;
}

/* The mount of fd read-only without mount_setattr (kernels before 5.12):
 * a bind remount that keeps its nosuid, nodev and noexec. */
static int
remount_ro_legacy (int fd)
{
  struct statvfs sv;
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;

  if (fstatvfs (fd, &sv) == 0)
    flags |= sv.f_flag & (ST_NOSUID | ST_NODEV | ST_NOEXEC);
  return brig_mount_onto_fd (NULL, fd, NULL, flags, NULL);
}

/* A read-only copy of the path with its submounts, put on top of it: the
 * attributes it had (nosuid, nodev, noexec) stay. Four calls (openat2,
 * open_tree, mount_setattr, move_mount) and the fds go to fds: mount(2)
 * would need as many, since a remount through /proc/self/fd/N reaches the
 * mount under the new bind, not the bind. */
static int
readonly_path (int rootfd, const char *path, struct brig_fd_batch *fds,
               const struct proc_listing *proc, brig_error *err)
{
  int target = proc_entry (proc, path) == 0 ? -ENOENT
               : brig_path_open_in_root (rootfd, path, O_PATH);
  int tree, r;

  if (target == -ENOENT)
    return 0;
  if (target < 0)
    return brig_error_set (err, -target, "make %s read-only", path);
  brig_fd_batch_add (fds, target);
  tree = brig_open_tree (target, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return brig_error_set (err, -tree, "make %s read-only", path);
  brig_fd_batch_add (fds, tree);
  r = brig_mount_setattr_fd (tree, true, MOUNT_ATTR_RDONLY, 0, 0, -1);
  if (r == 0)
    r = brig_move_mount_to_fd (tree, target);
  else if (r == -ENOSYS && (r = brig_move_mount_to_fd (tree, target)) == 0)
    r = remount_ro_legacy (tree);
  if (r < 0)
    return brig_error_set (err, -r, "make %s read-only", path);
  return 0;
}

/* path's mount read-only; "/" is rootfd itself, not looked up again. */
static int
make_mount_readonly (int rootfd, const char *path, brig_error *err)
{
  _cleanup_close_ int opened = -1;
  int fd = rootfd, r;

  if (strcmp (path, "/") != 0)
    {
      fd = opened = brig_path_open_in_root (rootfd, path, O_PATH | O_DIRECTORY);
      if (fd < 0)
        return brig_error_set (err, -fd, "remount %s read-only", path);
    }
  r = brig_mount_setattr_fd (fd, false, MOUNT_ATTR_RDONLY, 0, 0, -1);
  if (r == -ENOSYS)
    r = remount_ro_legacy (fd);
  if (r < 0)
    return brig_error_set (err, -r, "remount %s read-only", path);
  return 0;
}

/* True when the config mounts /dev read-only (mounted rw until the nodes
 * were made, see rootfs.c). */
static bool
dev_wants_ro (const oci_config *cfg)
{
  bool ro = false;
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      _cleanup_free_ char *dest = NULL;
      struct brig_mount_options o;
      if (cfg->mounts[i].destination == NULL)
        continue;
      dest = brig_path_clean (cfg->mounts[i].destination);
      if (strcmp (dest, "/dev") != 0
          || brig_mount_options_parse (cfg->mounts[i].options, cfg->mounts[i].options_len, &o, NULL) < 0)
        continue;
      ro = (o.flags & MS_RDONLY) != 0 && !o.bind;
      brig_mount_options_free (&o);
    }
  return ro;
}

int
rootfs_finalize (const oci_config *cfg, int root, const struct brig_rootfs_procfs *procfs,
                 brig_error *err)
{
  /* The fd of the new root from before the pivot is "/" now. */
  _cleanup_close_ int opened = root >= 0 ? -1 : open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int rootfd = root >= 0 ? root : opened;
  struct brig_fd_batch fds = { .n = 0 };
  int devnull = -1;
  const oci_linux *l = cfg->linux;
  int r = 0;

  if (rootfd < 0)
    return brig_error_errno (err, "open /");
  /* Nothing to do in the runtime's mount namespace (see rootfs_prepare). */
  if (!rootfs_has_namespace (cfg, "mount"))
    return 0;
  /* With a procfs of the container's own on /proc (nothing else may be
     mounted inside it, rootfs/target.c), one listing of it. */
  _cleanup_free_ struct proc_listing *proc = NULL;
  if (l && l->readonly_paths_len + l->masked_paths_len > 0
      && brig_config_mounts_at (cfg, "/proc", "proc"))
    {
      proc = xmalloc0 (sizeof *proc);
      proc_list (rootfd, proc);
    }
  for (size_t i = 0; r == 0 && l && i < l->readonly_paths_len; i++)
    r = readonly_path (rootfd, l->readonly_paths[i], &fds, proc, err);
  for (size_t i = 0; r == 0 && l && i < l->masked_paths_len; i++)
    r = mask_path (rootfd, l->masked_paths[i], &devnull, &fds, proc, err);
  /* The same paths below every other procfs (rootfs/procfs.c). */
  for (size_t i = 0; r == 0 && procfs && procfs->readonly && procfs->readonly[i]; i++)
    r = readonly_path (rootfd, procfs->readonly[i], &fds, NULL, err);
  for (size_t i = 0; r == 0 && procfs && procfs->masked && procfs->masked[i]; i++)
    r = mask_path (rootfd, procfs->masked[i], &devnull, &fds, NULL, err);
  brig_fd_batch_close (&fds);
  if (devnull >= 0)
    close (devnull);
  if (r < 0)
    return r;
  if (dev_wants_ro (cfg) && (r = make_mount_readonly (rootfd, "/dev", err)) < 0)
    return r;
  if (cfg->root && cfg->root->readonly && (r = make_mount_readonly (rootfd, "/", err)) < 0)
    return r;
  if (l && l->rootfs_propagation && *l->rootfs_propagation)
    {
      unsigned long p = brig_mount_propagation_parse (l->rootfs_propagation);
      if (p && mount (NULL, "/", NULL, p, NULL) < 0)
        return brig_error_errno (err, "set the propagation of / to %s", l->rootfs_propagation);
    }
  return 0;
}

int
rootfs_mount_console (int console_fd, brig_error *err)
{
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return brig_error_errno (err, "open /");
  return brig_devices_mount_console (rootfd, console_fd, err);
}
