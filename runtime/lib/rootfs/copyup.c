/* tmpcopyup: copy what a directory of the image holds into the tmpfs just
 * mounted over it. Everything is fd-relative and never follows symlinks,
 * so the image cannot make the copy read or write outside the two trees. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootfs/internal.h"
#include "utils.h"

#define MAX_DEPTH 128

static int
copy_data (int in, int out)
{
  char buf[65536];
  for (;;)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, 1 << 30, 0);
      if (n == 0)
        return 0;
      if (n > 0)
        continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
        return -errno;
      break;
    }
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof (buf));
      if (n == 0)
        return 0;
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      if (brig_write_all (out, buf, (size_t) n) < 0)
        return -errno;
    }
}

/* Owner, then mode (a chown clears setuid bits), then times. */
static void
copy_meta (int fd, const struct stat *st)
{
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  (void) !fchown (fd, st->st_uid, st->st_gid);
  (void) !fchmod (fd, st->st_mode & 07777);
  futimens (fd, t);
}

static int copy_dir (int src, int dst, int depth, brig_error *err);

static int
copy_entry (int src, int dst, const char *name, int depth, brig_error *err)
{
  struct stat st;
  int r = 0;

  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "tmpcopyup: stat %s", name);
  if (S_ISDIR (st.st_mode))
    {
      _cleanup_close_ int s = -1, d = -1;
      if (mkdirat (dst, name, 0700) < 0 && errno != EEXIST)
        return brig_error_errno (err, "tmpcopyup: mkdir %s", name);
      s = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      d = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (s < 0 || d < 0)
        return brig_error_errno (err, "tmpcopyup: open %s", name);
      r = copy_dir (s, d, depth + 1, err);
      if (r == 0)
        copy_meta (d, &st);
    }
  else if (S_ISREG (st.st_mode))
    {
      _cleanup_close_ int s = openat (src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      _cleanup_close_ int d = -1;
      if (s < 0)
        return brig_error_errno (err, "tmpcopyup: open %s", name);
      d = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (d < 0)
        return brig_error_errno (err, "tmpcopyup: create %s", name);
      if ((r = copy_data (s, d)) < 0)
        return brig_error_set (err, -r, "tmpcopyup: copy %s", name);
      copy_meta (d, &st);
    }
  else if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (src, name, target, sizeof (target) - 1);
      if (n < 0)
        return brig_error_errno (err, "tmpcopyup: readlink %s", name);
      target[n] = '\0';
      if (symlinkat (target, dst, name) < 0)
        return brig_error_errno (err, "tmpcopyup: symlink %s", name);
      (void) !fchownat (dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
    }
  else
    {
      /* Device nodes need privileges a user namespace lacks: skip those. */
      if (mknodat (dst, name, st.st_mode, st.st_rdev) < 0)
        return errno == EPERM ? 0 : brig_error_errno (err, "tmpcopyup: mknod %s", name);
      (void) !fchownat (dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
    }
  return r;
}

static int
copy_dir (int src, int dst, int depth, brig_error *err)
{
  _cleanup_closedir_ DIR *d = NULL;
  int fd = dup (src);
  struct dirent *e;

  if (depth > MAX_DEPTH)
    return brig_error_say (err, ELOOP, "tmpcopyup: directories nested too deep");
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return brig_error_errno (err, "tmpcopyup: read a directory");
    }
  while ((e = readdir (d)) != NULL)
    {
      int r;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      r = copy_entry (src, dst, e->d_name, depth, err);
      if (r < 0)
        return r;
    }
  return 0;
}

int
rootfs_copy_tree (int src, int dst, brig_error *err)
{
  return copy_dir (src, dst, 0, err);
}
