/* envd's filesystem calls (Stat, ListDir, MakeDir, Move, Remove) on a
 * container's root, as EntryInfo JSON (docs/serve.md "Files"), called in
 * fscall.c's child joined to the container's user and mount namespaces
 * and root: root is its "/".
 *
 * Every path is resolved by the kernel inside root (paths.h:
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)); the last component is
 * then acted on relative to its parent's fd (lstat, mkdirat, renameat,
 * unlinkat), so a symlink as the last component is the link itself, as in
 * envd. Below a directory, ListDir and Remove descend with no symlink at
 * all (openat O_NOFOLLOW on each name, the fd of the directory they came
 * from), so a tenant swapping a directory for a symlink mid-walk can at
 * worst make an entry fail. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "serve/fsops.h"
#include "serve/internal.h"
#include "utils.h"

#define MAX_DEPTH 64
/* ListDir answers at most this many entries (the answer is one message) */
#define MAX_ENTRIES 100000

/* The parent directory of a cleaned absolute path and its last name ("."
 * for "/"), with the parent opened inside root. */
static int
open_parent (int root, const char *clean, char **base, brig_error *err)
{
  const char *slash = strrchr (clean, '/');
  _cleanup_free_ char *parent = xstrdup (clean);
  int fd;

  if (strcmp (clean, "/") == 0)
    {
      *base = xstrdup (".");
      slash = clean;
    }
  else
    *base = xstrdup (slash + 1);
  parent[slash - clean + (slash == clean)] = '\0';
  fd = brig_path_open_in_root (root, parent, O_PATH | O_DIRECTORY);
  if (fd < 0)
    return brig_error_set (err, -fd, "%s", clean);
  return fd;
}

/* Go's FileMode.String() of st: "-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx". */
static void
perm_string (mode_t m, char out[11])
{
  static const char rwx[] = "rwxrwxrwx";
  out[0] = S_ISDIR (m) ? 'd' : S_ISLNK (m) ? 'L' : S_ISFIFO (m) ? 'p' : S_ISSOCK (m) ? 'S'
           : S_ISCHR (m) ? 'c' : S_ISBLK (m) ? 'D' : '-';
  for (int i = 0; i < 9; i++)
    out[i + 1] = (m & (1u << (8 - i))) ? rwx[i] : '-';
  out[10] = '\0';
}

static void
gen_entry (yajl_gen g, const char *path, const char *name, const struct stat *st, int dirfd)
{
  char perms[11], when[48], num[32], target[4096];
  struct tm tm;
  ssize_t n;

  yajl_gen_map_open (g);
  serve_jg_kstr (g, "name", name);
  serve_jg_kstr (g, "type", S_ISDIR (st->st_mode)   ? "FILE_TYPE_DIRECTORY"
                            : S_ISLNK (st->st_mode) ? "FILE_TYPE_SYMLINK"
                            : S_ISREG (st->st_mode) ? "FILE_TYPE_FILE"
                                                    : "FILE_TYPE_UNSPECIFIED");
  serve_jg_kstr (g, "path", path);
  snprintf (num, sizeof num, "%lld", (long long) st->st_size);
  serve_jg_kstr (g, "size", num);
  serve_jg_kint (g, "mode", st->st_mode & 0777);
  perm_string (st->st_mode, perms);
  serve_jg_kstr (g, "permissions", perms);
  /* names need the container's /etc/passwd: the ids for now */
  snprintf (num, sizeof num, "%u", (unsigned) st->st_uid);
  serve_jg_kstr (g, "owner", num);
  snprintf (num, sizeof num, "%u", (unsigned) st->st_gid);
  serve_jg_kstr (g, "group", num);
  gmtime_r (&st->st_mtim.tv_sec, &tm);
  strftime (when, 24, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (when + strlen (when), sizeof when - strlen (when), ".%03ldZ",
            st->st_mtim.tv_nsec / 1000000);
  serve_jg_kstr (g, "modifiedTime", when);
  if (S_ISLNK (st->st_mode) && (n = readlinkat (dirfd, name, target, sizeof target - 1)) >= 0)
    {
      target[n] = '\0';
      serve_jg_kstr (g, "symlinkTarget", target);
    }
  yajl_gen_map_close (g);
}

int
serve_fs_stat (int root, const char *path, yajl_gen g, brig_error *err)
{
  _cleanup_free_ char *clean = brig_path_clean (path), *base = NULL;
  _cleanup_close_ int dir = open_parent (root, clean, &base, err);
  struct stat st;

  if (dir < 0)
    return dir;
  if (fstatat (dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "%s", clean);
  gen_entry (g, clean, strcmp (clean, "/") == 0 ? "/" : base, &st, dir);
  return 0;
}

/* A directory stream on fd (taken over: closed when there is none). */
static DIR *
dir_of (int fd)
{
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;

  if (d == NULL && fd >= 0)
    close (fd);
  return d;
}

/* The entries of dir (an open directory at path), depth levels down. */
static int
list_into (int dir, const char *path, unsigned depth, size_t *left, yajl_gen g, brig_error *err)
{
  DIR *d = dir_of (dup (dir));
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    return brig_error_errno (err, "%s", path);
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      _cleanup_free_ char *child = NULL;
      struct stat st;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (fstatat (dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue; /* gone meanwhile */
      if ((*left)-- == 0)
        {
          r = brig_error_say (err, E2BIG, "%s: more than %d entries", path, MAX_ENTRIES);
          break;
        }
      child = xasprintf ("%s%s%s", path, strcmp (path, "/") == 0 ? "" : "/", de->d_name);
      gen_entry (g, child, de->d_name, &st, dir);
      if (depth > 1 && S_ISDIR (st.st_mode))
        {
          _cleanup_close_ int sub = openat (dir, de->d_name,
                                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            r = list_into (sub, child, depth - 1, left, g, err);
        }
    }
  closedir (d);
  return r;
}

int
serve_fs_list (int root, const char *path, unsigned depth, yajl_gen g, brig_error *err)
{
  _cleanup_free_ char *clean = brig_path_clean (path);
  _cleanup_close_ int dir = -1;
  size_t left = MAX_ENTRIES;
  int r;

  if (depth < 1 || depth > MAX_DEPTH)
    return brig_error_say (err, EINVAL, "depth: expected 1..%d", MAX_DEPTH);
  /* the listed path itself is resolved (a symlink to a directory lists it) */
  dir = brig_path_open_in_root (root, clean, O_RDONLY | O_DIRECTORY);
  if (dir < 0)
    return brig_error_set (err, -dir, "%s", clean);
  yajl_gen_array_open (g);
  r = list_into (dir, clean, depth, &left, g, err);
  yajl_gen_array_close (g);
  return r;
}

int
serve_fs_mkdir (int root, const char *path, yajl_gen g, brig_error *err)
{
  _cleanup_free_ char *clean = brig_path_clean (path), *base = NULL;
  _cleanup_close_ int dir = -1, made = -1;
  struct stat st;

  dir = open_parent (root, clean, &base, err);
  if (dir == -ENOENT)
    {
      /* parents first, as MkdirAll */
      _cleanup_free_ char *parent = xstrdup (clean);
      brig_error_clear (err);
      *strrchr (parent, '/') = '\0';
      made = brig_path_create_in_root (root, *parent ? parent : "/", BRIG_PATH_DIR, err);
      if (made < 0)
        return made;
      free (base);
      dir = open_parent (root, clean, &base, err);
    }
  if (dir < 0)
    return dir;
  if (mkdirat (dir, base, 0755) < 0)
    {
      if (errno == EEXIST && fstatat (dir, base, &st, 0) == 0 && S_ISDIR (st.st_mode))
        return brig_error_say (err, EEXIST, "directory already exists: %s", clean);
      return brig_error_errno (err, "%s", clean);
    }
  if (fstatat (dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "%s", clean);
  gen_entry (g, clean, base, &st, dir);
  return 0;
}

int
serve_fs_move (int root, const char *src, const char *dst, yajl_gen g, brig_error *err)
{
  _cleanup_free_ char *cs = brig_path_clean (src), *cd = brig_path_clean (dst);
  _cleanup_free_ char *sb = NULL, *db = NULL, *dparent = xstrdup (cd);
  _cleanup_close_ int sdir = -1, ddir = -1, made = -1;
  struct stat st;

  if (strcmp (cs, "/") == 0 || strcmp (cd, "/") == 0)
    return brig_error_say (err, EINVAL, "cannot move the root");
  sdir = open_parent (root, cs, &sb, err);
  if (sdir < 0)
    return sdir;
  if (fstatat (sdir, sb, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "%s", cs);
  /* the destination's parents are made, as envd does */
  *strrchr (dparent, '/') = '\0';
  made = brig_path_create_in_root (root, *dparent ? dparent : "/", BRIG_PATH_DIR, err);
  if (made < 0)
    return made;
  ddir = open_parent (root, cd, &db, err);
  if (ddir < 0)
    return ddir;
  if (renameat (sdir, sb, ddir, db) < 0)
    return brig_error_errno (err, "move %s to %s", cs, cd);
  if (fstatat (ddir, db, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "%s", cd);
  gen_entry (g, cd, db, &st, ddir);
  return 0;
}

/* Remove name in dir and, for a directory, everything below it, never
 * following a symlink. */
static int
remove_at (int dir, const char *name, unsigned level, brig_error *err)
{
  struct stat st;

  if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : brig_error_errno (err, "%s", name);
  if (S_ISDIR (st.st_mode))
    {
      DIR *d = dir_of (openat (dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      struct dirent *de;
      int r = 0;
      if (d == NULL)
        return brig_error_errno (err, "%s", name);
      if (level > 4096)
        r = brig_error_say (err, ELOOP, "%s: too deep", name);
      while (r == 0 && (de = readdir (d)) != NULL)
        if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
          r = remove_at (dirfd (d), de->d_name, level + 1, err);
      closedir (d);
      if (r < 0)
        return r;
      if (unlinkat (dir, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return brig_error_errno (err, "%s", name);
      return 0;
    }
  if (unlinkat (dir, name, 0) < 0 && errno != ENOENT)
    return brig_error_errno (err, "%s", name);
  return 0;
}

int
serve_fs_remove (int root, const char *path, brig_error *err)
{
  _cleanup_free_ char *clean = brig_path_clean (path), *base = NULL;
  _cleanup_close_ int dir = -1;

  if (strcmp (clean, "/") == 0)
    return brig_error_say (err, EINVAL, "cannot remove the root");
  dir = open_parent (root, clean, &base, err);
  /* RemoveAll: what is not there is removed */
  if (dir == -ENOENT)
    {
      brig_error_clear (err);
      return 0;
    }
  if (dir < 0)
    return dir;
  return remove_at (dir, base, 0, err);
}
