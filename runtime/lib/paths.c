/* Resolution inside the rootfs and mounts onto resolved fds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paths.h"
#include "utils.h"

#define MAX_SYMLINKS 40
#define PROC_ROOT_INO 1

static size_t next_component (const char **rest, const char **comp);
static bool only_slashes (const char *p);

const char *
brig_fd_path (int fd, char buf[static 32])
{
  snprintf (buf, 32, "/proc/self/fd/%d", fd);
  return buf;
}

static bool openat2_missing;

static int
open_in_root (int rootfd, const char *path, int flags, uint64_t resolve)
{
  struct open_how how = {
    .flags = (uint64_t) (flags | O_CLOEXEC),
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
  };
  const char *p = path;
  int fd;

  if (openat2_missing)
    return resolve ? -ELOOP : brig_path_open_in_root_walk (rootfd, path, flags);
  /* openat2 resolves "/x" from rootfd already; "" would mean rootfd. */
  while (*p == '/')
    p++;
  if (*p == '\0')
    p = ".";
  for (int tries = 0; tries < 64; tries++)
    {
      fd = (int) syscall (SYS_openat2, rootfd, p, &how, sizeof (how));
      if (fd >= 0)
        return fd;
      /* EAGAIN: a rename raced with ".." resolution; simply retry. */
      if (errno != EAGAIN && errno != EINTR)
        break;
    }
  if (errno == ENOSYS)
    {
      /* Linux < 5.6, or a seccomp filter that hides openat2. */
      openat2_missing = true;
      return resolve ? -ELOOP : brig_path_open_in_root_walk (rootfd, path, flags);
    }
  return -errno;
}

int
brig_path_open_in_root (int rootfd, const char *path, int flags)
{
  return open_in_root (rootfd, path, flags, 0);
}

int
brig_path_open_in_root_nolinks (int rootfd, const char *path, int flags)
{
  for (const char *p = path; (p = strstr (p, "..")) != NULL; p += 2)
    if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return -ELOOP;
  return open_in_root (rootfd, path, flags, RESOLVE_NO_SYMLINKS);
}

/* A symlink on procfs other than the few plain ones of its root (self,
 * thread-self, mounts, net) is a magic link: refused, like
 * RESOLVE_NO_MAGICLINKS does. */
static bool
is_magic_link (int parent, int link)
{
  struct statfs sfs;
  struct stat pst;
  if (fstatfs (link, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
    return false;
  return fstat (parent, &pst) < 0 || pst.st_ino != PROC_ROOT_INO;
}

struct walk {
  int *fds;       /* the directories of the resolved path, [0] = the root */
  size_t depth;   /* index of the current directory */
  size_t cap;
};

static void
walk_free (struct walk *w)
{
  for (size_t i = 0; w->fds && i <= w->depth; i++)
    if (w->fds[i] >= 0)
      close (w->fds[i]);
  free (w->fds);
}

static void
walk_push (struct walk *w, int fd)
{
  if (w->depth + 2 > w->cap)
    {
      w->cap = w->cap ? w->cap * 2 : 16;
      w->fds = xrealloc (w->fds, w->cap * sizeof (int));
    }
  w->fds[++w->depth] = fd;
}

int
brig_path_open_in_root_walk (int rootfd, const char *path, int flags)
{
  struct walk w = { 0 };
  _cleanup_free_ char *todo = xstrdup (path);
  const char *rest = todo, *comp;
  size_t len;
  int links = 0, r = 0, root;

  root = fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
  if (root < 0)
    return -errno;
  w.depth = (size_t) -1;
  walk_push (&w, root);
  while ((len = next_component (&rest, &comp)) > 0)
    {
      char name[NAME_MAX + 1], target[PATH_MAX];
      struct stat st;
      int fd;
      ssize_t n;

      if (len > NAME_MAX)
        {
          r = -ENAMETOOLONG;
          break;
        }
      memcpy (name, comp, len);
      name[len] = '\0';
      if (strcmp (name, ".") == 0)
        continue;
      if (strcmp (name, "..") == 0)
        {
          /* Never look ".." up: pop, and stop at the root. */
          if (w.depth > 0)
            close (w.fds[w.depth--]);
          continue;
        }
      fd = openat (w.fds[w.depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &st) < 0)
        {
          r = -errno;
          if (fd >= 0)
            close (fd);
          break;
        }
      if (!S_ISLNK (st.st_mode) || (only_slashes (rest) && (flags & O_NOFOLLOW)))
        {
          walk_push (&w, fd);
          continue;
        }
      if (is_magic_link (w.fds[w.depth], fd))
        {
          close (fd);
          r = -ELOOP;
          break;
        }
      n = readlinkat (fd, "", target, sizeof (target) - 1);
      close (fd);
      if (n < 0 || ++links > MAX_SYMLINKS)
        {
          r = n < 0 ? -errno : -ELOOP;
          break;
        }
      target[n] = '\0';
      /* Go on with the link's text, then what was left of the path. */
      if (target[0] == '/')
        while (w.depth > 0)
          close (w.fds[w.depth--]);
      {
        char *next = xasprintf ("%s%s", target, rest);
        free (todo);
        todo = next;
        rest = todo;
      }
    }
  if (r == 0)
    {
      int top = w.fds[w.depth];
      char proc[32];
      struct stat st;
      if ((flags & O_DIRECTORY) && (fstat (top, &st) < 0 || !S_ISDIR (st.st_mode)))
        errno = ENOTDIR, r = -1;
      else if (flags & O_PATH)
        r = fcntl (top, F_DUPFD_CLOEXEC, 3);
      else
        /* Reopen our own O_PATH fd with the wanted flags. */
        r = open (brig_fd_path (top, proc), (flags & ~O_NOFOLLOW) | O_CLOEXEC);
      if (r < 0)
        r = -errno;
    }
  walk_free (&w);
  return r;
}

char *
brig_path_clean (const char *path)
{
  size_t n = strlen (path ? path : "");
  char *out = xmalloc0 (n + 2);
  size_t o = 0;
  const char *p = path ? path : "";

  out[o++] = '/';
  while (*p)
    {
      const char *start, *end;
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      start = p;
      while (*p && *p != '/')
        p++;
      end = p;
      if (end - start == 1 && start[0] == '.')
        continue;
      if (o > 1)
        out[o++] = '/';
      memcpy (out + o, start, (size_t) (end - start));
      o += (size_t) (end - start);
    }
  out[o] = '\0';
  return out;
}

char *
brig_path_clean_lexical (const char *path)
{
  _cleanup_free_ char *clean = brig_path_clean (path);
  char *out = xmalloc0 (strlen (clean) + 2);
  size_t o = 0;

  for (const char *p = clean; *p;)
    {
      const char *e;
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      e = strchrnul (p, '/');
      if (e - p == 2 && p[0] == '.' && p[1] == '.')
        {
          while (o > 0 && out[o - 1] != '/')
            o--;
          if (o > 0)
            o--;
        }
      else
        {
          out[o++] = '/';
          memcpy (out + o, p, (size_t) (e - p));
          o += (size_t) (e - p);
        }
      p = e;
    }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

char *
brig_path_below (const char *root, const char *path)
{
  char *out = brig_path_clean_lexical (path);
  size_t rl = strlen (root);

  while (rl > 1 && root[rl - 1] == '/')
    rl--;
  if (rl <= 1)
    return out;
  if (strncmp (out, root, rl) != 0 || (out[rl] != '/' && out[rl] != '\0'))
    {
      free (out);
      return NULL;
    }
  memmove (out, out + rl, strlen (out + rl) + 1);
  if (out[0] == '\0')
    strcpy (out, "/");
  return out;
}

char *
brig_path_of_fd_in_root (int fd, const char *rootfs)
{
  char proc[32], buf[PATH_MAX];
  ssize_t n = readlink (brig_fd_path (fd, proc), buf, sizeof (buf) - 1);
  size_t rl;

  if (n < 0)
    return NULL;
  buf[n] = '\0';
  if (rootfs == NULL || strcmp (rootfs, "/") == 0)
    return xstrdup (buf);
  rl = strlen (rootfs);
  while (rl > 1 && rootfs[rl - 1] == '/')
    rl--;
  if (strncmp (buf, rootfs, rl) != 0 || (buf[rl] != '/' && buf[rl] != '\0'))
    return NULL;
  return xstrdup (buf[rl] ? buf + rl : "/");
}

/* Split off the first component of *rest (skipping slashes); returns its
 * length and leaves *rest after it. */
static size_t
next_component (const char **rest, const char **comp)
{
  const char *p = *rest;
  while (*p == '/')
    p++;
  *comp = p;
  while (*p && *p != '/')
    p++;
  *rest = p;
  return (size_t) (p - *comp);
}

static bool
only_slashes (const char *p)
{
  while (*p == '/')
    p++;
  return *p == '\0';
}

/* Create name in dir: an empty file or a directory; one already there is
 * fine (the caller re-resolves whatever is there). */
static int
create_entry (int dir, const char *name, bool file, const char *path, brig_error *err)
{
  if (file)
    {
      int f = openat (dir, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (f < 0 && errno != EEXIST)
        return brig_error_errno (err, "create %s in the rootfs", path);
      if (f >= 0)
        close (f);
    }
  else if (mkdirat (dir, name, 0755) < 0 && errno != EEXIST)
    return brig_error_errno (err, "mkdir %s in the rootfs", path);
  return 0;
}

/* One walk over todo creating what is missing. Returns an fd (>= 0),
 * -errno with err set, or RESTART with *next_todo set when a dangling
 * symlink redirected the rest of the walk. */
#define RESTART (-100000)
static int
walk_create (int rootfd, const char *todo, enum brig_path_kind kind, char **next_todo,
             brig_error *err)
{
  _cleanup_free_ char *resolved = xstrdup ("");
  _cleanup_close_ int cur = brig_path_open_in_root (rootfd, "/", O_PATH | O_DIRECTORY);
  const char *rest = todo, *comp;
  size_t len;

  if (cur < 0)
    return brig_error_set (err, -cur, "open the rootfs");
  while ((len = next_component (&rest, &comp)) > 0)
    {
      _cleanup_free_ char *name = strndup (comp, len);
      _cleanup_free_ char *candidate = NULL;
      int next;

      if (name == NULL)
        abort ();
      if (strcmp (name, ".") == 0)
        continue;
      candidate = xasprintf ("%s/%s", resolved, name);
      next = brig_path_open_in_root (rootfd, candidate, O_PATH);
      if (next == -ENOENT)
        {
          char target[PATH_MAX];
          ssize_t n = readlinkat (cur, name, target, sizeof (target) - 1);
          if (n >= 0)
            {
              /* A dangling symlink: go on with its target, inside the
                 root, the way the kernel resolves it there. */
              target[n] = '\0';
              if (target[0] == '/')
                *next_todo = xasprintf ("%s%s", target, rest);
              else
                *next_todo = xasprintf ("%s/%s%s", resolved, target, rest);
              return RESTART;
            }
          int r = create_entry (cur, name, only_slashes (rest) && kind == BRIG_PATH_FILE,
                                candidate, err);
          if (r < 0)
            return r;
          /* Re-resolve what is there now: if it was swapped for a symlink
             meanwhile, resolution still stays inside the root. */
          next = brig_path_open_in_root (rootfd, candidate, O_PATH);
        }
      if (next < 0)
        return brig_error_set (err, -next, "open %s in the rootfs", candidate);
      close (cur);
      cur = next;
      free (resolved);
      resolved = brig_steal_ptr (candidate);
    }
  return brig_steal_fd (cur);
}

/* The common case: only the last component is missing. Create it in its
 * parent and open it: a handful of syscalls instead of a walk from the
 * root. Returns RESTART when the slow walk must decide (the parent is
 * missing too, or the leaf is a dangling symlink or "." / ".."). */
static int
create_leaf (int rootfd, const char *path, enum brig_path_kind kind, bool *plain,
             brig_error *err)
{
  _cleanup_free_ char *parent = xstrdup (path);
  _cleanup_close_ int dir = -1;
  char *leaf;
  size_t n = strlen (parent);

  while (n > 1 && parent[n - 1] == '/')
    parent[--n] = '\0';
  leaf = strrchr (parent, '/');
  if (leaf == NULL)
    return RESTART;
  *leaf++ = '\0';
  if (*leaf == '\0' || strcmp (leaf, ".") == 0 || strcmp (leaf, "..") == 0)
    return RESTART;
  dir = brig_path_open_in_root (rootfd, *parent ? parent : "/", O_PATH | O_DIRECTORY);
  if (dir < 0)
    return RESTART;
  /* Neither mkdirat nor O_CREAT|O_EXCL follows a symlink at leaf: EEXIST
     means something is there after all (a dangling symlink, or a racing
     creation), which the slow walk sorts out. */
  if (kind == BRIG_PATH_FILE)
    {
      int f = openat (dir, leaf, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (f >= 0)
        close (f);
      else if (errno == EEXIST)
        return RESTART;
      else
        return brig_error_errno (err, "create %s in the rootfs", path);
    }
  else if (mkdirat (dir, leaf, 0755) < 0)
    {
      if (errno == EEXIST)
        return RESTART;
      return brig_error_errno (err, "mkdir %s in the rootfs", path);
    }
  /* Re-resolve what is there now: if it was swapped for a symlink
     meanwhile, resolution still stays inside the root. Without a symlink
     on the way it is the path as written (*plain). */
  int fd = brig_path_open_in_root_nolinks (rootfd, path, O_PATH);
  *plain = fd >= 0;
  if (fd == -ELOOP)
    fd = brig_path_open_in_root (rootfd, path, O_PATH);
  if (fd < 0)
    return brig_error_set (err, -fd, "open %s in the rootfs", path);
  return fd;
}

int
brig_path_create_in_root (int rootfd, const char *path, enum brig_path_kind kind,
                          brig_error *err)
{
  int fd = brig_path_open_in_root (rootfd, path, O_PATH);
  if (fd >= 0)
    return fd;
  if (fd != -ENOENT)
    return brig_error_set (err, -fd, "open %s in the rootfs", path);
  return brig_path_create_absent_in_root (rootfd, path, kind, err);
}

int
brig_path_create_absent_in_root (int rootfd, const char *path, enum brig_path_kind kind,
                                 brig_error *err)
{
  bool plain;
  return brig_path_create_absent_in_root_plain (rootfd, path, kind, &plain, err);
}

int
brig_path_create_absent_in_root_plain (int rootfd, const char *path,
                                       enum brig_path_kind kind, bool *plain, brig_error *err)
{
  _cleanup_free_ char *todo = NULL;
  int fd;

  *plain = false;
  fd = create_leaf (rootfd, path, kind, plain, err);
  if (fd != RESTART)
    return fd;
  todo = xstrdup (path);
  for (int links = 0; links <= MAX_SYMLINKS; links++)
    {
      char *next_todo = NULL;
      fd = walk_create (rootfd, todo, kind, &next_todo, err);
      if (fd != RESTART)
        return fd;
      free (todo);
      todo = next_todo;
    }
  return brig_error_set (err, ELOOP, "resolve %s in the rootfs", path);
}

int
brig_mount_onto_fd (const char *source, int target_fd, const char *type,
                    unsigned long flags, const char *data)
{
  char target[32];
  if (mount (source, brig_fd_path (target_fd, target), type, flags, data) < 0)
    return -errno;
  return 0;
}

int
brig_open_tree (int dirfd, const char *path, unsigned int flags)
{
  int fd = (int) syscall (SYS_open_tree, dirfd, path, flags | OPEN_TREE_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int
brig_move_mount_to_fd (int mount_fd, int target_fd)
{
  if (syscall (SYS_move_mount, mount_fd, "", target_fd, "",
               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return -errno;
  return 0;
}

int
brig_move_mount_at (int mount_fd, int dirfd, const char *name)
{
  /* Without MOVE_MOUNT_T_SYMLINKS a symlink at name is not followed. */
  if (syscall (SYS_move_mount, mount_fd, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return -errno;
  return 0;
}

int
brig_mount_setattr_fd (int fd, bool recursive, uint64_t attr_set, uint64_t attr_clr,
                       uint64_t propagation, int userns_fd)
{
  struct mount_attr attr = {
    .attr_set = attr_set,
    .attr_clr = attr_clr,
    .propagation = propagation,
    .userns_fd = userns_fd >= 0 ? (uint64_t) userns_fd : 0,
  };
  unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);

  if (syscall (SYS_mount_setattr, fd, "", flags, &attr, sizeof (attr)) < 0)
    return -errno;
  return 0;
}

int
brig_bind_fd_onto_fd (int src_fd, int target_fd, bool recursive, int *mount_fd)
{
  _cleanup_close_ int tree = -1;
  int r;

  if (mount_fd)
    *mount_fd = -1;
  tree = brig_open_tree (src_fd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH
                         | (recursive ? AT_RECURSIVE : 0));
  if (tree == -ENOSYS)
    {
      char src[32];
      return brig_mount_onto_fd (brig_fd_path (src_fd, src), target_fd, NULL,
                                 MS_BIND | (recursive ? MS_REC : 0), NULL);
    }
  if (tree < 0)
    return tree;
  r = brig_move_mount_to_fd (tree, target_fd);
  if (r < 0)
    return r;
  if (mount_fd)
    *mount_fd = brig_steal_fd (tree);
  return 0;
}

void
brig_fd_batch_add (struct brig_fd_batch *b, int fd)
{
  if (fd < 0)
    return;
  if (b->n == BRIG_FD_BATCH_MAX)
    brig_fd_batch_close (b);
  b->fds[b->n++] = fd;
}

static int
cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

void
brig_fd_batch_close (struct brig_fd_batch *b)
{
  qsort (b->fds, b->n, sizeof (int), cmp_int);
  for (size_t i = 0; i < b->n;)
    {
      size_t j = i;
      /* A run of consecutive numbers, all of them ours. */
      while (j + 1 < b->n && b->fds[j + 1] == b->fds[j] + 1)
        j++;
      if (j == i || syscall (SYS_close_range, (unsigned) b->fds[i], (unsigned) b->fds[j], 0) < 0)
        for (size_t k = i; k <= j; k++)
          close (b->fds[k]);
      i = j + 1;
    }
  b->n = 0;
}
