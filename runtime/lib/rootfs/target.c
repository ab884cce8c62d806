/* The targets of the rootfs's mounts: opened or made inside the rootfs
 * without leaving it, and checked (not the root itself, not inside /proc).
 * A target reached without a symlink or ".." is known to lie at its
 * destination as written; only one reached through the image's symlinks
 * needs the kernel asked where it landed. Split from rootfs.c. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "mountinfo.h"
#include "paths.h"
#include "rootfs/internal.h"
#include "utils.h"

/* Refuse a destination that resolved to the root itself, and destinations
 * inside /proc (a mount there could hide the masks or redirect /proc/self),
 * except /proc itself for procfs and the files lxcfs emulates, as runc
 * does. path: where the target lies in the rootfs. */
static int
check_dest_path (const char *path, const char *type, int bind_src, brig_error *err)
{
  static const char *const allowed[] = {
    "/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat", "/proc/swaps",
    "/proc/uptime", "/proc/loadavg", "/proc/slabinfo", "/proc/net/dev",
    "/proc/sys/kernel/ns_last_pid",
  };

  if (strcmp (path, "/") == 0)
    return brig_error_say (err, EINVAL, "the destination resolves to \"/\"");
  if (!brig_path_has_prefix (path, "/proc"))
    return 0;
  if (strcmp (path, "/proc") == 0)
    {
      struct statfs sfs;
      if (type && strcmp (type, "proc") == 0)
        return 0;
      if (bind_src >= 0 && fstatfs (bind_src, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
        return 0;
    }
  else
    for (size_t i = 0; i < BRIG_ARRAY_SIZE (allowed); i++)
      if (strcmp (path, allowed[i]) == 0)
        return 0;
  return brig_error_say (err, EPERM, "%s is inside /proc and cannot be a mount point", path);
}

int
rootfs_check_dest (struct rootfs_ctx *c, int target, const char *type, int bind_src,
                   brig_error *err)
{
  _cleanup_free_ char *path = brig_path_of_fd_in_root (target, c->rootfs);

  if (path == NULL)
    return brig_error_say (err, EINVAL, "the mount point is outside the rootfs");
  return check_dest_path (path, type, bind_src, err);
}

/* The target of a mount, opened by its (clean) destination. *known is dest
 * when no symlink or ".." was on the way: the target is then the path as
 * written and nothing needs to ask the kernel where it landed. */
int
rootfs_open_dest (struct rootfs_ctx *c, const char *dest, int flags, const char **known)
{
  int fd = brig_path_open_in_root_nolinks (c->rootfd, dest, flags);

  *known = fd >= 0 ? dest : NULL;
  if (fd == -ELOOP)
    fd = brig_path_open_in_root (c->rootfd, dest, flags);
  return fd;
}

/* dest is "/dev/NAME" and /dev is the tmpfs this create mounted: NAME is
 * made and opened relative to that tmpfs's root, where nothing of the
 * image lies and no symlink can be (3 calls fewer than resolving and
 * creating from the rootfs). -ENOENT when this does not apply or NAME is
 * there already: the caller takes the general way. */
int
rootfs_create_in_fresh_dev (struct rootfs_ctx *c, const char *dest, bool dir)
{
  const char *name = dest + sizeof "/dev/" - 1;
  int fd;

  if (c->fresh_dev < 0 || strncmp (dest, "/dev/", sizeof "/dev/" - 1) != 0 || *name == '\0'
      || strchr (name, '/') || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return -ENOENT;
  if ((dir ? mkdirat (c->fresh_dev, name, 0755) : mknodat (c->fresh_dev, name, S_IFREG | 0644, 0))
      < 0)
    return -ENOENT;
  fd = openat (c->fresh_dev, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
  return fd < 0 ? -ENOENT : fd;
}

int
rootfs_create_dest (struct rootfs_ctx *c, const char *dest, enum brig_path_kind kind,
                    const char **known, brig_error *err)
{
  bool plain;
  int fd = brig_path_create_absent_in_root_plain (c->rootfd, dest, kind, &plain, err);

  *known = fd >= 0 && plain ? dest : NULL;
  return fd;
}

int
rootfs_check_dest_known (struct rootfs_ctx *c, int target, const char *known,
                         const char *type, int bind_src, brig_error *err)
{
  if (known)
    return check_dest_path (known, type, bind_src, err);
  return rootfs_check_dest (c, target, type, bind_src, err);
}

/* procfs, sysfs and /dev go only onto a plain directory of the image, as
 * runc requires: a symlink there, even one that stays inside the rootfs,
 * lets the image choose where they land (how CVE-2019-16884 and
 * CVE-2023-27561 began). The last component is not followed. Returns an
 * O_PATH fd of the directory, -ENOENT (err untouched) when there is
 * nothing, or -errno with err naming dest. */
int
rootfs_open_plain_dir (struct rootfs_ctx *c, const char *dest, const char **known,
                       brig_error *err)
{
  struct stat st;
  /* O_DIRECTORY with O_NOFOLLOW refuses a symlink as well as a file
     (ENOTDIR): one call for the common case, a plain directory. */
  int fd = rootfs_open_dest (c, dest, O_PATH | O_NOFOLLOW | O_DIRECTORY, known);
  bool link = false;

  if (fd >= 0 || fd == -ENOENT)
    return fd;
  if (fd != -ENOTDIR)
    return brig_error_set (err, -fd, "open %s in the rootfs", dest);
  /* Only to say what is there instead. */
  fd = brig_path_open_in_root (c->rootfd, dest, O_PATH | O_NOFOLLOW);
  if (fd >= 0)
    {
      link = fstat (fd, &st) == 0 && S_ISLNK (st.st_mode);
      close (fd);
    }
  /* runc's words first (what scripts match), then what is there */
  return brig_error_say (err, ENOTDIR, "%s must be mounted on ordinary directory: %s in the "
                         "rootfs is %s", dest, dest, link ? "a symlink" : "not a directory");
}

