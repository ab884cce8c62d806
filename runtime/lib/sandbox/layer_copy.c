/* brig fork's copy of a layer: the source container's upper directory,
 * written by its tenant, into a new container's empty upper directory.
 *
 * The tenant chose everything in the source tree: names, depth, links,
 * special files, sizes, holes. So the walk is fd-relative and never
 * follows a symlink (every open is O_NOFOLLOW below the directory it was
 * listed in; a symlink is read with readlinkat and made again, never
 * entered), an entry's type is what lstat says and an opened file must be
 * the inode that was listed, depth is bounded, holes stay holes (a sparse
 * file of a terabyte costs what its data costs), and nothing is made but
 * in the new layer, which has the source's size= and, the caller sees to
 * it, is charged to the new container's memory cgroup. Device nodes other
 * than overlay whiteouts (char 0/0) and sockets are skipped; security.*
 * xattrs (file capabilities, LSM labels) are not copied. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/capability.h>
#include <unistd.h>

#include "sandbox/layer_copy.h"
#include "utils.h"

/* ---- id maps ---- */

static int
read_map (pid_t pid, const char *which, struct brig_idmap_line *out, size_t *n,
          brig_error *err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/%s", (int) pid, which), *text = NULL;
  char *p, *end;

  int r = brig_read_file_at (AT_FDCWD, path, &text, NULL, err);

  if (r < 0)
    return r;
  *n = 0;
  for (p = text; *p && *n < 340;)
    {
      unsigned long v[3];
      for (int i = 0; i < 3; i++)
        {
          errno = 0;
          v[i] = strtoul (p, &end, 10);
          if (end == p || errno != 0 || v[i] > UINT32_MAX)
            return brig_error_say (err, EINVAL, "%s: cannot parse \"%s\"", path, text);
          p = end;
        }
      out[*n].inside = (uint32_t) v[0];
      out[*n].outside = (uint32_t) v[1];
      out[*n].count = (uint32_t) v[2];
      (*n)++;
      while (*p == ' ' || *p == '\n')
        p++;
    }
  return 0;
}

int
brig_idmaps_read (pid_t pid, struct brig_idmaps *m, brig_error *err)
{
  int r = read_map (pid, "uid_map", m->uid, &m->nuid, err);
  if (r == 0)
    r = read_map (pid, "gid_map", m->gid, &m->ngid, err);
  return r;
}

/* host id of the source -> the id inside -> host id of the copy */
static int
translate (const struct brig_idmap_line *from, size_t nfrom, const struct brig_idmap_line *to,
           size_t nto, uint32_t id, uint32_t *out)
{
  for (size_t i = 0; i < nfrom; i++)
    if (id >= from[i].outside && id - from[i].outside < from[i].count)
      {
        uint32_t inside = from[i].inside + (id - from[i].outside);
        for (size_t j = 0; j < nto; j++)
          if (inside >= to[j].inside && inside - to[j].inside < to[j].count)
            {
              *out = to[j].outside + (inside - to[j].inside);
              return 0;
            }
        return -EOVERFLOW;
      }
  return -EOVERFLOW;
}

/* ---- the walk ---- */

struct frame {
  DIR *dir;          /* the source directory being listed */
  int dst;           /* its copy, O_RDONLY */
  struct stat st;    /* the source directory's stat, applied when done */
  size_t path_len;   /* length of its path in c->path */
};

/* A file with more than one link, copied once: where its copy is. */
struct link {
  dev_t dev;
  ino_t ino;
  char *path;        /* relative to the new upper */
};

struct copy {
  const struct brig_idmaps *from, *to;
  dev_t dev;         /* the source layer's file system: never left */
  uid_t fsuid;       /* what a new inode gets: the new range's root */
  gid_t fsgid;
  bool inherit_gid;  /* the new upper is set-group-ID: new inodes take its group */
  int dst_root;
  struct frame *stack;
  size_t depth;
  char *path;        /* the entry's path below the upper, for messages */
  size_t path_cap;
  struct link *links;
  size_t nlinks, links_cap;
  bool splice;       /* copy_file_range refused (across tmpfs instances) */
  char xbuf[65536];
  char xnames[65536];
};

static void
path_set (struct copy *c, size_t at, const char *name)
{
  size_t len = strlen (name);
  if (at + len + 2 > c->path_cap)
    {
      c->path_cap = (at + len + 2) * 2;
      c->path = xrealloc (c->path, c->path_cap);
    }
  if (at > 0)
    c->path[at++] = '/';
  memcpy (c->path + at, name, len + 1);
}

/* The entry named by its path below the upper; the tenant chose how long
 * that is: the end of a long one. */
static int
fail (struct copy *c, brig_error *err, int e, const char *what)
{
  size_t len = strlen (c->path);

  if (len > 200)
    return brig_error_set (err, e, "%s .../%s", what, c->path + len - 180);
  return brig_error_set (err, e, "%s /%s", what, c->path);
}

static int
owner (struct copy *c, const struct stat *st, uid_t *uid, gid_t *gid)
{
  uint32_t u, g;
  if (translate (c->from->uid, c->from->nuid, c->to->uid, c->to->nuid, st->st_uid, &u) < 0
      || translate (c->from->gid, c->from->ngid, c->to->gid, c->to->ngid, st->st_gid, &g) < 0)
    return -EOVERFLOW;
  *uid = u;
  *gid = g;
  return 0;
}

/* user.* (overlay's own with userxattr, opaque directories, the tenant's)
 * and trusted.overlay.* (overlay's own without a user namespace). */
static int
copy_xattrs (struct copy *c, int src, int dst, brig_error *err)
{
  ssize_t n = flistxattr (src, c->xnames, sizeof c->xnames);

  if (n < 0)
    return errno == ENOTSUP ? 0 : fail (c, err, errno, "list the xattrs of");
  for (char *name = c->xnames; name < c->xnames + n; name += strlen (name) + 1)
    {
      ssize_t v;
      if (strncmp (name, "user.", 5) != 0 && strncmp (name, "trusted.overlay.", 16) != 0)
        continue;
      v = fgetxattr (src, name, c->xbuf, sizeof c->xbuf);
      if (v < 0 && errno == ENODATA)
        continue;
      if (v < 0 || fsetxattr (dst, name, c->xbuf, (size_t) v, 0) < 0)
        return fail (c, err, errno, "copy the xattrs of");
    }
  return 0;
}

/* Owner, mode (after the owner: chown clears set-id bits), xattrs, times.
 * made_with_mode: dst was created with the permission bits already (umask
 * 0): only set-id and sticky bits need a chmod. A file of the new range's
 * root (most of a layer) needs no chown. */
static int
copy_attrs (struct copy *c, int src, int dst, const struct stat *st, bool made_with_mode,
            brig_error *err)
{
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  uid_t uid;
  gid_t gid;

  if (owner (c, st, &uid, &gid) < 0)
    return fail (c, err, EOVERFLOW, "translate the owner of");
  if (((uid != c->fsuid || gid != c->fsgid || c->inherit_gid) && fchown (dst, uid, gid) < 0)
      || ((!made_with_mode || (st->st_mode & 07000)) && fchmod (dst, st->st_mode & 07777) < 0))
    return fail (c, err, errno, "set the owner and mode of");
  if (copy_xattrs (c, src, dst, err) < 0)
    return -1;
  if (futimens (dst, t) < 0)
    return fail (c, err, errno, "set the times of");
  return 0;
}

/* [from, to) of in at the same offsets of out, whose file offset is *at
 * (sendfile writes there). 0, 1 when in shrank meanwhile, or -errno. */
static int
copy_extent (struct copy *c, int in, int out, off_t from, off_t to, off_t *at)
{
  while (from < to)
    {
      off_t o_in = from, o_out = from;
      ssize_t n = -1;
      if (!c->splice)
        {
          n = copy_file_range (in, &o_in, out, &o_out, (size_t) (to - from), 0);
          /* between two tmpfs instances: EXDEV (no reflink, no splice) */
          if (n < 0 && (errno == EXDEV || errno == EOPNOTSUPP || errno == EINVAL
                        || errno == ENOSYS))
            c->splice = true;
        }
      if (c->splice)
        {
          o_in = from;
          if (*at != from && lseek (out, from, SEEK_SET) < 0)
            return -errno;
          *at = from;
          n = sendfile (out, in, &o_in, (size_t) (to - from));
          if (n > 0)
            *at += n;
        }
      if (n < 0)
        return -errno;
      if (n == 0)
        return 1;
      from += n;
    }
  return 0;
}

/* The data extents of in, at their offsets; what lies between stays a
 * hole. Never more than the size lstat saw. */
static int
copy_data (struct copy *c, int in, int out, const struct stat *st)
{
  off_t pos = 0, at = 0, size = st->st_size;
  int r = 0;

  /* no hole to keep: one extent, no lseek */
  if ((off_t) st->st_blocks * 512 >= size)
    r = copy_extent (c, in, out, 0, size, &at);
  else
    while (r == 0 && pos < size)
      {
        off_t data = lseek (in, pos, SEEK_DATA), hole;
        if (data < 0 && errno == ENXIO)
          break;
        if (data < 0)
          data = pos;
        if (data >= size)
          break;
        hole = lseek (in, data, SEEK_HOLE);
        if (hole < 0 || hole > size)
          hole = size;
        r = copy_extent (c, in, out, data, hole, &at);
        pos = hole;
      }
  if (r < 0)
    return r;
  /* the holes at the end, or what shrank meanwhile */
  if (at != size && ftruncate (out, size) < 0)
    return -errno;
  return 0;
}

/* Open addressing on (dev, ino): the tenant chose how many links there
 * are (up to the layer's inode count), so no scan per file. */
static struct link *
link_slot (struct copy *c, const struct stat *st)
{
  size_t i = (size_t) (st->st_ino * 0x9E3779B97F4A7C15ULL ^ st->st_dev) & (c->links_cap - 1);

  while (c->links[i].path && !(c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino))
    i = (i + 1) & (c->links_cap - 1);
  return &c->links[i];
}

static struct link *
link_find (struct copy *c, const struct stat *st)
{
  struct link *l = c->links_cap ? link_slot (c, st) : NULL;
  return l && l->path ? l : NULL;
}

static void
link_add (struct copy *c, const struct stat *st)
{
  if (2 * (c->nlinks + 1) > c->links_cap)
    {
      struct link *old = c->links;
      size_t n = c->links_cap;
      c->links_cap = n ? n * 2 : 64;
      c->links = xmalloc0 (c->links_cap * sizeof *c->links);
      for (size_t i = 0; i < n; i++)
        if (old[i].path)
          *link_slot (c, &(struct stat) { .st_dev = old[i].dev, .st_ino = old[i].ino }) = old[i];
      free (old);
    }
  *link_slot (c, st) = (struct link) { st->st_dev, st->st_ino, xstrdup (c->path) };
  c->nlinks++;
}

static int
copy_regular (struct copy *c, int sdir, int ddir, const char *name, const struct stat *st,
              brig_error *err)
{
  _cleanup_close_ int in = -1, out = -1;
  struct stat now;
  int r;

  in = openat (sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (in < 0 || fstat (in, &now) < 0)
    return fail (c, err, errno, "open");
  if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
    return fail (c, err, ESTALE, "open (it changed while being copied)");
  out = openat (ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                now.st_mode & 0777);
  if (out < 0)
    return fail (c, err, errno, "create");
  if ((r = copy_data (c, in, out, &now)) < 0)
    return fail (c, err, -r, "copy");
  return copy_attrs (c, in, out, &now, true, err);
}

/* Symlinks, whiteouts, fifos: made again, never opened. */
static int
copy_special (struct copy *c, int sdir, int ddir, const char *name, const struct stat *st,
              brig_error *err)
{
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  uid_t uid;
  gid_t gid;

  if (S_ISLNK (st->st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (sdir, name, target, sizeof target - 1);
      if (n < 0)
        return fail (c, err, errno, "read the symlink");
      target[n] = '\0';
      if (symlinkat (target, ddir, name) < 0)
        return fail (c, err, errno, "create the symlink");
    }
  else if (mknodat (ddir, name, (st->st_mode & S_IFMT) | (st->st_mode & 0777),
                    S_ISCHR (st->st_mode) ? makedev (0, 0) : 0) < 0)
    return fail (c, err, errno, "create");
  if (owner (c, st, &uid, &gid) < 0)
    return fail (c, err, EOVERFLOW, "translate the owner of");
  if (fchownat (ddir, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0
      || (!S_ISLNK (st->st_mode) && fchmodat (ddir, name, st->st_mode & 07777, 0) < 0)
      || utimensat (ddir, name, t, AT_SYMLINK_NOFOLLOW) < 0)
    return fail (c, err, errno, "set the attributes of");
  return 0;
}

static int
push_dir (struct copy *c, int sdir, int ddir, const char *name, const struct stat *st,
          size_t path_len, brig_error *err)
{
  _cleanup_close_ int in = -1, out = -1;
  struct stat now;
  DIR *d;

  if (c->depth >= BRIG_LAYER_COPY_MAX_DEPTH)
    return fail (c, err, ELOOP, "copy (the tree is deeper than 4096 levels)");
  in = openat (sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || fstat (in, &now) < 0)
    return fail (c, err, errno, "open");
  if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
    return fail (c, err, ESTALE, "open (it changed while being copied)");
  if (mkdirat (ddir, name, 0700) < 0)
    return fail (c, err, errno, "create");
  out = openat (ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (out < 0 || (d = fdopendir (in)) == NULL)
    return fail (c, err, errno, "open");
  in = -1;
  c->stack[c->depth++] = (struct frame) { d, brig_steal_fd (out), now, path_len };
  return 0;
}

/* One entry of the directory on top of the stack. */
static int
copy_entry (struct copy *c, const char *name, brig_error *err)
{
  struct frame *f = &c->stack[c->depth - 1];
  int sdir = dirfd (f->dir);
  size_t at = f->path_len;
  struct stat st;
  struct link *l;

  path_set (c, at, name);
  if (fstatat (sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : fail (c, err, errno, "stat");
  /* a mount on the way (in the namespace the source's fd belongs to) */
  if (st.st_dev != c->dev)
    return fail (c, err, EXDEV, "copy (another file system is mounted there)");
  if (S_ISDIR (st.st_mode))
    return push_dir (c, sdir, f->dst, name, &st, at + (at ? 1 : 0) + strlen (name), err);
  if (st.st_nlink > 1 && (l = link_find (c, &st)) != NULL)
    {
      /* the first copy's path in the new layer, made by this walk */
      if (linkat (c->dst_root, l->path, f->dst, name, 0) < 0)
        return fail (c, err, errno, "link");
      return 0;
    }
  if (S_ISREG (st.st_mode))
    {
      if (copy_regular (c, sdir, f->dst, name, &st, err) < 0)
        return -1;
    }
  else if (S_ISLNK (st.st_mode) || S_ISFIFO (st.st_mode)
           || (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0)))
    {
      if (copy_special (c, sdir, f->dst, name, &st, err) < 0)
        return -1;
    }
  else
    return 0; /* devices, sockets: not copied */
  if (st.st_nlink > 1)
    link_add (c, &st);
  return 0;
}

/* The directory on top is listed: its attributes (times after its
 * entries), then back to its parent. */
static int
pop_dir (struct copy *c, brig_error *err)
{
  struct frame *f = &c->stack[c->depth - 1];
  int r;

  c->path[f->path_len] = '\0';
  r = copy_attrs (c, dirfd (f->dir), f->dst, &f->st, false, err);
  closedir (f->dir);
  close (f->dst);
  c->depth--;
  return r;
}

/* Host root with the copy's fs ids: an inode of the new layer (a tmpfs of
 * the new user namespace) can only be made with an id that namespace maps;
 * setfsuid drops the file capabilities from the effective set, which the
 * permitted set gives back (reading every file of the source, chown to
 * any mapped id, the whiteouts' mknod). */
static int
become_copier (struct copy *c, const struct brig_idmaps *to, brig_error *err)
{
  static const struct brig_idmap_line identity = { 0, 0, 1 };
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  struct rlimit rl;
  uint32_t uid = 0, gid = 0;
  size_t want = 2 * BRIG_LAYER_COPY_MAX_DEPTH + 64;

  if (translate (&identity, 1, to->uid, to->nuid, 0, &uid) < 0
      || translate (&identity, 1, to->gid, to->ngid, 0, &gid) < 0)
    return brig_error_say (err, EOVERFLOW, "the new container's user namespace maps no root");
  setfsgid (gid);
  setfsuid (uid);
  c->fsuid = uid;
  c->fsgid = gid;
  /* new inodes get the source's permission bits as they are */
  umask (0);
  if (syscall (SYS_capget, &h, d) < 0)
    return brig_error_errno (err, "capget");
  d[0].effective = d[0].permitted;
  d[1].effective = d[1].permitted;
  if (syscall (SYS_capset, &h, d) < 0)
    return brig_error_errno (err, "capset");
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
    {
      rl.rlim_cur = want;
      if (rl.rlim_max < want)
        rl.rlim_max = want;
      setrlimit (RLIMIT_NOFILE, &rl);
    }
  return 0;
}

static int
walk (struct copy *c, brig_error *err)
{
  while (c->depth > 0)
    {
      struct dirent *de;
      errno = 0;
      de = readdir (c->stack[c->depth - 1].dir);
      if (de == NULL && errno != 0)
        return fail (c, err, errno, "list");
      if (de == NULL)
        {
          if (pop_dir (c, err) < 0)
            return -1;
          continue;
        }
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (copy_entry (c, de->d_name, err) < 0)
        return -1;
    }
  return 0;
}

int
brig_layer_copy (int src, int dst, const struct brig_idmaps *from,
                 const struct brig_idmaps *to, brig_error *err)
{
  struct copy *c = xmalloc0 (sizeof *c);
  int in, r;

  c->from = from;
  c->to = to;
  c->dst_root = -1;
  c->path = xmalloc0 (c->path_cap = 256);
  c->stack = xmalloc0 (BRIG_LAYER_COPY_MAX_DEPTH * sizeof *c->stack);
  r = become_copier (c, to, err);
  if (r == 0)
    {
      c->dst_root = openat (dst, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      in = openat (src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat root;
      if (c->dst_root < 0 || in < 0 || fstat (c->dst_root, &root) < 0)
        r = brig_error_errno (err, "open the layers' upper directories");
      else
        {
          struct stat st;
          DIR *d = NULL;
          if (fstat (in, &st) < 0 || (d = fdopendir (in)) == NULL)
            r = brig_error_errno (err, "open the source layer");
          else
            {
              c->dev = st.st_dev;
              c->inherit_gid = (root.st_mode & S_ISGID) != 0;
              in = -1;
              c->stack[c->depth++] = (struct frame) {
                d, fcntl (c->dst_root, F_DUPFD_CLOEXEC, 0), st, 0 };
              r = walk (c, err) < 0 ? (err && err->code ? -err->code : -EIO) : 0;
            }
        }
      if (in >= 0)
        close (in);
    }
  while (c->depth > 0)
    {
      closedir (c->stack[c->depth - 1].dir);
      close (c->stack[--c->depth].dst);
    }
  if (c->dst_root >= 0)
    close (c->dst_root);
  for (size_t i = 0; i < c->links_cap; i++)
    free (c->links[i].path);
  free (c->links);
  free (c->stack);
  free (c->path);
  free (c);
  return r;
}
