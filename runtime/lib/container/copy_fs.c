/* `brig cp`'s file work, the same on both sides (copy_internal.h): a tree
 * walked into a tar stream and a tar stream extracted under a directory by
 * docker cp's rules. Nothing here follows a symlink it did not resolve on
 * purpose: the named path is resolved by the side (inside the container's
 * root, or by the host's rules on the host), everything below it one
 * component at a time with O_NOFOLLOW (walking) or with no symlink at all
 * (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, extracting), and every entry is
 * made under a fresh temporary name and renamed over its final name, so a
 * symlink planted there is replaced, never written through. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container/copy_internal.h"
#include "log.h"
#include "paths.h"
#include "utils.h"

#define COPY_BUF (128 * 1024)

/* Open path as side resolves it. */
static int
side_open (const struct brig_copy_side *side, const char *path, int flags)
{
  int fd;

  if (side->root >= 0)
    return brig_path_open_in_root (side->root, path, flags);
  fd = open (path, flags | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* path without trailing "/" and "/." (what names the object): malloc'd,
 * "/" for the root; *contents when it ended in "/.". */
static char *
trim (const char *path, bool *contents)
{
  char *p = xstrdup (path);
  size_t n = strlen (p);

  *contents = false;
  for (;;)
    {
      if (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
      else if (n >= 2 && p[n - 1] == '.' && p[n - 2] == '/')
        {
          *contents = true;
          p[--n] = '\0';
        }
      else if (n == 1 && p[0] == '.')
        {
          *contents = true;
          break;
        }
      else
        break;
    }
  return p;
}

/* Split a trimmed path into its directory (malloc'd) and last name. */
static char *
split (const char *p, const char **last)
{
  const char *s = strrchr (p, '/');

  if (s == NULL)
    {
      *last = p;
      return xstrdup (".");
    }
  *last = s + 1;
  return s == p ? xstrdup ("/") : strndup (p, (size_t) (s - p));
}

/* ---- writing a tree ---- */

struct link_seen {
  dev_t dev;
  ino_t ino;
  char *name;
};

struct walker {
  struct brig_tar *t;
  brig_error *err;
  struct link_seen *links;
  size_t nlinks;
  char *buf;
};

static int
put_entry (struct walker *w, const char *name, int type, const struct stat *st, const char *link,
           uint64_t size)
{
  struct brig_tar_entry e = {
    .name = (char *) name, .link = (char *) link, .type = type, .mode = st->st_mode & 07777,
    .uid = st->st_uid, .gid = st->st_gid, .size = size, .mtime = st->st_mtim,
  };
  return brig_tar_write_header (w->t, &e, w->err);
}

/* A hard link to a file already written, or NULL (and it is noted). */
static const char *
link_of (struct walker *w, const struct stat *st, const char *name)
{
  if (st->st_nlink < 2)
    return NULL;
  for (size_t i = 0; i < w->nlinks; i++)
    if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino)
      return w->links[i].name;
  w->links = realloc (w->links, (w->nlinks + 1) * sizeof *w->links);
  if (w->links == NULL)
    abort ();
  w->links[w->nlinks++] = (struct link_seen) { st->st_dev, st->st_ino, xstrdup (name) };
  return NULL;
}

/* A regular file's data: exactly st_size bytes (a file that shrinks while
 * it is read is padded with zeros, one that grows is cut), so the stream
 * stays whole. */
static int
put_file (struct walker *w, int fd, const struct stat *st, const char *name)
{
  const char *ln = link_of (w, st, name);
  uint64_t size = (uint64_t) st->st_size, done = 0;

  if (ln)
    return put_entry (w, name, BRIG_TAR_HARDLINK, st, ln, 0);
  if (put_entry (w, name, BRIG_TAR_FILE, st, NULL, size) < 0)
    return -EIO;
  while (done < size)
    {
      size_t want = size - done < COPY_BUF ? (size_t) (size - done) : COPY_BUF;
      ssize_t k = read (fd, w->buf, want);
      if (k < 0 && errno == EINTR)
        continue;
      if (k < 0)
        return brig_error_errno (w->err, "%s: read", name);
      if (k == 0)
        {
          memset (w->buf, 0, want);
          k = (ssize_t) want;
        }
      if (brig_tar_write_data (w->t, w->buf, (size_t) k, w->err) < 0)
        return -EIO;
      done += (uint64_t) k;
    }
  return brig_tar_write_pad (w->t, size, w->err);
}

static int walk_at (struct walker *w, int dirfd, const char *child, const char *name);

static int
put_dir (struct walker *w, int fd, const struct stat *st, const char *name)
{
  _cleanup_closedir_ DIR *d = NULL;
  int dfd, r;
  struct dirent *de;

  if (put_entry (w, name, BRIG_TAR_DIR, st, NULL, 0) < 0)
    return -EIO;
  dfd = dup (fd);
  if (dfd < 0 || (d = fdopendir (dfd)) == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return brig_error_errno (w->err, "%s: read the directory", name);
    }
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", name, de->d_name);
      if ((r = walk_at (w, dirfd (d), de->d_name, sub)) < 0)
        return r;
    }
  if (errno)
    return brig_error_errno (w->err, "%s: read the directory", name);
  return 0;
}

/* An object opened for reading (a file or a directory). */
static int
walk_fd (struct walker *w, int fd, const struct stat *st, const char *name)
{
  if (S_ISREG (st->st_mode))
    return put_file (w, fd, st, name);
  if (S_ISDIR (st->st_mode))
    return put_dir (w, fd, st, name);
  if (S_ISFIFO (st->st_mode))
    return put_entry (w, name, BRIG_TAR_FIFO, st, NULL, 0);
  brig_log (BRIG_LOG_WARNING, "cp: %s: not a file, directory, symlink or fifo: left out", name);
  return 0;
}

/* child of dirfd, by name only (no path, no symlink followed). */
static int
walk_at (struct walker *w, int dirfd, const char *child, const char *name)
{
  struct stat st, now;
  _cleanup_close_ int fd = -1;
  char target[PATH_MAX];
  ssize_t n;

  if (fstatat (dirfd, child, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (w->err, "%s", name);
  if (S_ISLNK (st.st_mode))
    {
      n = readlinkat (dirfd, child, target, sizeof target - 1);
      if (n < 0)
        return brig_error_errno (w->err, "%s: read the symlink", name);
      target[n] = '\0';
      return put_entry (w, name, BRIG_TAR_SYMLINK, &st, target, 0);
    }
  if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    return walk_fd (w, -1, &st, name);
  /* O_NONBLOCK: a fifo swapped in after the fstatat must not block us */
  fd = openat (dirfd, child, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
               | (S_ISDIR (st.st_mode) ? O_DIRECTORY : 0));
  if (fd < 0)
    return brig_error_errno (w->err, "%s", name);
  if (fstat (fd, &now) < 0)
    return brig_error_errno (w->err, "%s", name);
  if (now.st_ino != st.st_ino || now.st_dev != st.st_dev
      || (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
    return brig_error_say (w->err, EAGAIN, "%s: changed while it was copied", name);
  return walk_fd (w, fd, &now, name);
}

int
brig_copy_write_path (struct brig_tar *t, const struct brig_copy_side *side, const char *path,
                      bool follow, brig_error *err)
{
  struct walker w = { .t = t, .err = err };
  bool contents;
  _cleanup_free_ char *p = trim (path, &contents), *dir = NULL;
  const char *last, *top;
  _cleanup_close_ int fd = -1;
  struct stat st;
  int r;

  dir = split (p, &last);
  top = *last ? last : ".";
  w.buf = xmalloc0 (COPY_BUF);
  if (follow || contents || *last == '\0' || strcmp (last, "..") == 0)
    {
      /* the object itself, its last symlink followed (inside the root) */
      fd = side_open (side, p, O_RDONLY | O_NONBLOCK | O_NOCTTY);
      if (fd < 0 || fstat (fd, &st) < 0)
        r = brig_error_set (err, fd < 0 ? -fd : errno, "%s", path);
      else
        r = walk_fd (&w, fd, &st, contents ? "." : top);
    }
  else
    {
      fd = side_open (side, dir, O_PATH | O_DIRECTORY);
      if (fd < 0)
        r = brig_error_set (err, -fd, "%s", path);
      else
        {
          r = walk_at (&w, fd, last, top);
          /* nothing written: the named path itself failed */
          if (r < 0 && w.t->entries == 0 && err->code == ENOENT)
            r = brig_error_set (err, ENOENT, "%s", path);
        }
    }
  if (r == 0)
    r = brig_tar_write_end (t, err);
  for (size_t i = 0; i < w.nlinks; i++)
    free (w.links[i].name);
  free (w.links);
  free (w.buf);
  return r;
}

/* ---- extracting ---- */

struct extractor {
  struct brig_tar *t;
  const struct brig_copy_side *side;
  brig_error *err;
  int base;              /* the directory everything goes under */
  char *top;             /* the archive's first name, normalized; NULL: as is */
  char *as;              /* what top becomes under base ("": base itself) */
  char *pdir;            /* the last entry's directory below base ... */
  int pfd;               /* ... open (O_PATH), or -1 */
  char *buf;
  struct dir_made {      /* directories made: their mode and mtime are set */
    char *rel;           /* last, after their contents (a 0555 directory */
    mode_t mode;         /* still takes its entries; the mtime is the */
    struct timespec mtime; /* archive's, not the time of the last entry) */
  } *dirs;
  size_t ndirs;
};

/* name without "/" at either end, "." and empty components; NULL for one
 * with ".." (refused, as GNU tar refuses it). malloc'd. */
static char *
normalize (const char *name)
{
  char *out = xmalloc0 (strlen (name) + 1), *o = out;
  const char *p = name;

  while (*p)
    {
      const char *e = strchrnul (p, '/');
      size_t n = (size_t) (e - p);
      if (n == 2 && p[0] == '.' && p[1] == '.')
        {
          free (out);
          return NULL;
        }
      if (n > 0 && !(n == 1 && p[0] == '.'))
        {
          if (o != out)
            *o++ = '/';
          memcpy (o, p, n);
          o += n;
        }
      p = *e ? e + 1 : e;
    }
  *o = '\0';
  return out;
}

/* Where an archive name goes, relative to base (malloc'd; "" is base
 * itself), or NULL with err set. */
static char *
target_of (struct extractor *x, const char *name)
{
  _cleanup_free_ char *n = normalize (name);
  size_t tl;

  if (n == NULL)
    {
      brig_error_say (x->err, EINVAL, "tar entry %llu (%s): a name with \"..\" is refused",
                      x->t->entries, name);
      return NULL;
    }
  if (x->top == NULL)
    return brig_steal_ptr (n);
  tl = strlen (x->top);
  if (tl == 0)
    return *x->as ? (*n ? xasprintf ("%s/%s", x->as, n) : xstrdup (x->as)) : brig_steal_ptr (n);
  if (strncmp (n, x->top, tl) != 0 || (n[tl] != '\0' && n[tl] != '/'))
    {
      brig_error_say (x->err, EINVAL, "tar entry %llu (%s): not under \"%s\", the first entry",
                      x->t->entries, name, x->top);
      return NULL;
    }
  if (n[tl] == '\0')
    return xstrdup (x->as);
  return *x->as ? xasprintf ("%s/%s", x->as, n + tl + 1) : xstrdup (n + tl + 1);
}

/* The directory dir below base, by no symlink at all (a new fd). */
static int
open_dir (struct extractor *x, const char *dir, const char *name)
{
  int fd = *dir ? brig_path_open_in_root_nolinks (x->base, dir, O_PATH | O_DIRECTORY)
                : fcntl (x->base, F_DUPFD_CLOEXEC, 3);

  if (*dir == '\0' && fd < 0)
    fd = -errno;
  if (fd < 0)
    return brig_error_set (x->err, -fd, "%s: its directory%s", name,
                           fd == -ELOOP || fd == -EXDEV ? " is or passes a symlink" : "");
  return fd;
}

/* The directory an entry goes into (borrowed: the last one is kept, as
 * the entries of one directory come together). */
static int
open_parent (struct extractor *x, const char *rel, const char **last, const char *name)
{
  const char *s = strrchr (rel, '/');
  _cleanup_free_ char *dir = s ? strndup (rel, (size_t) (s - rel)) : xstrdup ("");

  *last = s ? s + 1 : rel;
  if (x->pfd >= 0 && strcmp (x->pdir, dir) == 0)
    return x->pfd;
  if (x->pfd >= 0)
    close (x->pfd);
  free (x->pdir);
  x->pdir = brig_steal_ptr (dir);
  x->pfd = open_dir (x, x->pdir, name);
  return x->pfd;
}

/* Make a new entry in dirfd with make: at its final name when nothing is
 * there (tmp = ""), else under a fresh temporary name (tmp) to be renamed
 * over it. Neither follows a symlink found at the name. 0 or -errno. */
static int
make_new (int dirfd, const char *last, char tmp[32],
          int (*make) (int dirfd, const char *tmp, void *data), void *data)
{
  int r = make (dirfd, last, data);

  tmp[0] = '\0';
  if (r != -EEXIST)
    return r;
  for (int i = 0; i < 16; i++)
    {
      unsigned v;
      if (getrandom (&v, sizeof v, 0) != sizeof v)
        v = (unsigned) rand ();
      snprintf (tmp, 32, ".brig-cp.%08x", v);
      r = make (dirfd, tmp, data);
      if (r != -EEXIST)
        return r;
    }
  return -EEXIST;
}

static mode_t
entry_mode (const struct extractor *x, const struct brig_tar_entry *e)
{
  /* a tenant's setuid binary must not land on the host as the caller's */
  return x->side->host ? e->mode & 01777 : e->mode & 07777;
}

static int
set_owner (struct extractor *x, int fd, int dirfd, const char *tmp,
           const struct brig_tar_entry *e)
{
  int r;

  if (!x->side->keep_owner)
    return 0;
  r = fd >= 0 ? fchown (fd, e->uid, e->gid)
              : fchownat (dirfd, tmp, e->uid, e->gid, AT_SYMLINK_NOFOLLOW);
  if (r < 0)
    return brig_error_errno (x->err, "%s: owner %u:%u%s", e->name, (unsigned) e->uid,
                             (unsigned) e->gid, errno == EINVAL ? " (not mapped)" : "");
  return 0;
}

struct file_make {
  int fd;
  mode_t mode;
};

static int
make_file (int dirfd, const char *tmp, void *data)
{
  struct file_make *m = data;

  m->fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  return m->fd < 0 ? -errno : 0;
}

static int
make_symlink (int dirfd, const char *tmp, void *data)
{
  return symlinkat (data, dirfd, tmp) < 0 ? -errno : 0;
}

static int
make_fifo (int dirfd, const char *tmp, void *data)
{
  return mkfifoat (dirfd, tmp, *(mode_t *) data) < 0 ? -errno : 0;
}

struct link_make {
  int dirfd;
  const char *name;
};

static int
make_link (int dirfd, const char *tmp, void *data)
{
  struct link_make *m = data;

  return linkat (m->dirfd, m->name, dirfd, tmp, 0) < 0 ? -errno : 0;
}

/* A regular file's data into fd. */
static int
copy_data (struct extractor *x, int fd, const struct brig_tar_entry *e)
{
  for (;;)
    {
      ssize_t k = brig_tar_read_data (x->t, x->buf, COPY_BUF, x->err);
      if (k < 0)
        return (int) k;
      if (k == 0)
        return 0;
      if (brig_write_all (fd, x->buf, (size_t) k) < 0)
        return brig_error_errno (x->err, "%s: write", e->name);
    }
}

/* The object made by make_new in dirfd (fd: open for its metadata, or
 * -1) gets its owner, mode and mtime, then its final name. */
static int
finish (struct extractor *x, int dirfd, const char *tmp, int fd, const char *last,
        const struct brig_tar_entry *e)
{
  struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };
  const char *at = *tmp ? tmp : last;
  int r = set_owner (x, fd, dirfd, at, e);

  /* after the chown, which would clear the setuid bits again */
  if (r == 0 && fd >= 0 && fchmod (fd, entry_mode (x, e)) < 0)
    r = brig_error_errno (x->err, "%s: mode", e->name);
  if (r == 0 && (fd >= 0 ? futimens (fd, ts) : utimensat (dirfd, at, ts, AT_SYMLINK_NOFOLLOW)) < 0)
    r = brig_error_errno (x->err, "%s: mtime", e->name);
  if (r == 0 && *tmp && renameat (dirfd, tmp, dirfd, last) < 0)
    r = brig_error_errno (x->err, "%s", e->name);
  if (r < 0)
    unlinkat (dirfd, at, 0);
  return r;
}

static int
extract_dir (struct extractor *x, int dirfd, const char *rel, const char *last,
             const struct brig_tar_entry *e)
{
  _cleanup_close_ int fd = -1;
  struct stat st;
  bool made = mkdirat (dirfd, last, 0700) == 0;

  if (!made && errno != EEXIST)
    return brig_error_errno (x->err, "%s", e->name);
  fd = openat (dirfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
    return brig_error_say (x->err, EEXIST, "%s: exists and is not a directory", e->name);
  if (fd < 0 || fstat (fd, &st) < 0)
    return brig_error_errno (x->err, "%s", e->name);
  /* a directory that was there keeps its owner and mode: the archive (a
   * tenant's, copied out) must not make the caller's directory 0777 */
  if (!made)
    return 0;
  if (set_owner (x, fd, -1, NULL, e) < 0)
    return -EPERM;
  x->dirs = realloc (x->dirs, (x->ndirs + 1) * sizeof *x->dirs);
  if (x->dirs == NULL)
    abort ();
  x->dirs[x->ndirs++] = (struct dir_made) { xstrdup (rel), entry_mode (x, e), e->mtime };
  return 0;
}

/* The mode and mtime of the directories made, deepest (latest) first,
 * each found again with no symlink below base. */
static int
finish_dirs (struct extractor *x, int r)
{
  for (size_t i = x->ndirs; i-- > 0;)
    {
      struct dir_made *d = &x->dirs[i];
      struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, d->mtime };
      int fd = brig_path_open_in_root_nolinks (x->base, d->rel, O_RDONLY | O_DIRECTORY);
      if (fd < 0 || fchmod (fd, d->mode) < 0 || futimens (fd, ts) < 0)
        {
          if (r == 0)
            r = brig_error_set (x->err, fd < 0 ? -fd : errno, "%s: mode", d->rel);
        }
      if (fd >= 0)
        close (fd);
      free (d->rel);
    }
  free (x->dirs);
  return r;
}

static int
extract_entry (struct extractor *x, const struct brig_tar_entry *e)
{
  _cleanup_free_ char *rel = target_of (x, e->name), *lrel = NULL, *ldir_name = NULL;
  _cleanup_close_ int ldir = -1;
  int dirfd;
  char tmp[32];
  const char *last, *llast;
  int r;

  if (rel == NULL)
    return -EINVAL;
  if (*rel == '\0')
    {
      if (e->type == BRIG_TAR_DIR)
        return 0;   /* the destination itself: left as it is */
      return brig_error_say (x->err, EISDIR, "%s: would replace the destination directory",
                             e->name);
    }
  if ((dirfd = open_parent (x, rel, &last, e->name)) < 0)
    return dirfd;
  switch (e->type)
    {
    case BRIG_TAR_DIR:
      return extract_dir (x, dirfd, rel, last, e);
    case BRIG_TAR_FILE:
    case '7':
      {
        struct file_make m = { -1, 0 };
        _cleanup_close_ int fd = -1;
        if ((r = make_new (dirfd, last, tmp, make_file, &m)) < 0)
          return brig_error_set (x->err, -r, "%s", e->name);
        fd = m.fd;
        if ((r = copy_data (x, fd, e)) < 0)
          {
            unlinkat (dirfd, *tmp ? tmp : last, 0);
            return r;
          }
        return finish (x, dirfd, tmp, fd, last, e);
      }
    case BRIG_TAR_SYMLINK:
      if ((r = make_new (dirfd, last, tmp, make_symlink, e->link ? e->link : (char *) "")) < 0)
        return brig_error_set (x->err, -r, "%s", e->name);
      return finish (x, dirfd, tmp, -1, last, e);
    case BRIG_TAR_FIFO:
      {
        mode_t mode = entry_mode (x, e);
        if ((r = make_new (dirfd, last, tmp, make_fifo, &mode)) < 0)
          return brig_error_set (x->err, -r, "%s", e->name);
        return finish (x, dirfd, tmp, -1, last, e);
      }
    case BRIG_TAR_HARDLINK:
      {
        struct link_make m;
        if (e->link == NULL || (lrel = target_of (x, e->link)) == NULL || *lrel == '\0')
          return lrel ? brig_error_say (x->err, EINVAL, "%s: a hard link to nothing", e->name)
                      : -EINVAL;
        llast = strrchr (lrel, '/');
        ldir_name = llast ? strndup (lrel, (size_t) (llast - lrel)) : xstrdup ("");
        llast = llast ? llast + 1 : lrel;
        if ((ldir = open_dir (x, ldir_name, e->link)) < 0)
          return ldir;
        m = (struct link_make) { ldir, llast };
        if ((r = make_new (dirfd, last, tmp, make_link, &m)) < 0)
          return brig_error_set (x->err, -r, "%s: link to %s", e->name, e->link);
        if (*tmp && renameat (dirfd, tmp, dirfd, last) < 0)
          {
            r = brig_error_errno (x->err, "%s", e->name);
            unlinkat (dirfd, tmp, 0);
          }
        return r;
      }
    case BRIG_TAR_CHAR:
    case BRIG_TAR_BLOCK:
      brig_log (BRIG_LOG_WARNING, "cp: %s: a device node: left out", e->name);
      return 0;
    default:
      return brig_error_say (x->err, EINVAL, "tar entry %llu (%s): type '%c' is not supported",
                             x->t->entries, e->name, e->type);
    }
}

/* Where the archive goes, by docker cp's rules (copy_internal.h). */
static int
plan (struct extractor *x, const char *path, bool as_is, bool contents,
      const struct brig_tar_entry *first)
{
  bool dst_slash, src_dir = first->type == BRIG_TAR_DIR;
  _cleanup_free_ char *p = trim (path, &dst_slash), *dir = NULL;
  const char *last;
  int fd;

  dst_slash = dst_slash || (strlen (path) > 1 && path[strlen (path) - 1] == '/');
  if (!as_is)
    {
      x->top = normalize (first->name);
      if (x->top == NULL)
        return brig_error_say (x->err, EINVAL, "tar entry 1 (%s): a name with \"..\" is refused",
                               first->name);
    }
  fd = side_open (x->side, p, O_PATH | O_DIRECTORY);
  if (fd >= 0)
    {
      x->base = fd;
      /* into the directory: under the source's name, or its contents */
      if (as_is || contents || *x->top == '\0')
        x->as = xstrdup ("");
      else
        {
          const char *s = strrchr (x->top, '/');
          x->as = xstrdup (s ? s + 1 : x->top);
        }
      return 0;
    }
  if (as_is)
    return brig_error_set (x->err, -fd, "%s: the destination of a tar stream must be a "
                           "directory", path);
  if (fd == -ENOTDIR && src_dir)
    return brig_error_say (x->err, ENOTDIR, "%s: cannot copy a directory onto a file", path);
  if ((fd == -ENOTDIR || fd == -ENOENT) && dst_slash && !src_dir)
    return brig_error_say (x->err, -fd, "%s: %s", path,
                           fd == -ENOENT ? "no such directory" : "not a directory");
  if (fd != -ENOTDIR && fd != -ENOENT)
    return brig_error_set (x->err, -fd, "%s", path);
  dir = split (p, &last);
  if (*last == '\0' || strcmp (last, "..") == 0)
    return brig_error_set (x->err, EINVAL, "%s", path);
  fd = side_open (x->side, dir, O_PATH | O_DIRECTORY);
  if (fd < 0)
    return brig_error_set (x->err, -fd, "%s: its directory %s", path, dir);
  x->base = fd;
  x->as = xstrdup (last);
  return 0;
}

int
brig_copy_extract_path (struct brig_tar *t, const struct brig_copy_side *side, const char *path,
                        bool as_is, bool contents, brig_error *err)
{
  struct extractor x = { .t = t, .side = side, .err = err, .base = -1, .pfd = -1 };
  struct brig_tar_entry e = { 0 };
  int r = brig_tar_read_header (t, &e, err);

  if (r <= 0)
    return r;
  r = plan (&x, path, as_is, contents, &e);
  x.buf = xmalloc0 (COPY_BUF);
  while (r == 0)
    {
      if ((r = extract_entry (&x, &e)) < 0)
        break;
      r = brig_tar_read_header (t, &e, err);
      r = r == 1 ? 0 : r < 0 ? r : 1;
    }
  brig_tar_entry_clear (&e);
  if (x.base >= 0)
    r = finish_dirs (&x, r < 0 ? r : 0);
  free (x.top);
  free (x.as);
  free (x.pdir);
  if (x.pfd >= 0)
    close (x.pfd);
  free (x.buf);
  if (x.base >= 0)
    close (x.base);
  return r < 0 ? r : 0;
}
