/* The "cgroup" mount type, as runc builds it:
 * - unified (cgroup v2) host: a cgroup2 mount (in a cgroup namespace it
 *   shows the container's cgroup as root); when the kernel refuses it (a
 *   user namespace without a cgroup namespace), a bind of the container's
 *   own cgroup directory;
 * - v1 and hybrid hosts: a tmpfs holding one directory per v1 hierarchy
 *   (the cgroup2 "unified" mount of a hybrid host is not included, like
 *   runc). With a cgroup namespace each hierarchy is a new cgroup mount of
 *   its controllers (rooted at the container's cgroup by the namespace);
 *   without one it is a bind of the container's cgroup directory.
 *   Co-mounted controllers ("cpu,cpuacct") get symlinks per controller.
 * The container init must already be in its cgroups when this runs. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "mountinfo.h"
#include "paths.h"
#include "rootfs/internal.h"
#include "utils.h"

#define CGROUP_MOUNT_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Same set of comma-separated words, in any order. */
static bool
same_set (const char *a, const char *b)
{
  _cleanup_free_ char *ca = xstrdup (a);
  char *save = NULL;
  size_t na = 0, nb = 1;

  for (const char *p = b; *p; p++)
    nb += *p == ',';
  if (*b == '\0')
    nb = 0;
  for (char *t = strtok_r (ca, ",", &save); t; t = strtok_r (NULL, ",", &save), na++)
    {
      size_t l = strlen (t);
      bool found = false;
      for (const char *p = b; *p;)
        {
          const char *e = strchr (p, ',');
          size_t pl = e ? (size_t) (e - p) : strlen (p);
          if (pl == l && strncmp (p, t, l) == 0)
            found = true;
          p = e ? e + 1 : p + pl;
        }
      if (!found)
        return false;
    }
  return na == nb;
}

/* The process's cgroup path in the hierarchy with these controllers
 * ("" for the v2 line "0::/path" when controllers is ""), from the text of
 * /proc/self/cgroup in *cache (read on first use; the caller frees it:
 * every v1 hierarchy is looked up in one read). */
static char *
own_cgroup (const char *controllers, char **cache, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  char *save = NULL;

  if (*cache == NULL && brig_read_file_at (AT_FDCWD, "/proc/self/cgroup", cache, &len, err) < 0)
    return NULL;
  buf = xstrdup (*cache);
  for (char *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c2 = '\0';
      if (same_set (c1 + 1, controllers))
        return xstrdup (c2 + 1);
    }
  brig_error_say (err, ENOENT, "no cgroup for controllers \"%s\" in /proc/self/cgroup", controllers);
  return NULL;
}

static int
mount_v2 (struct rootfs_ctx *c, const char *dest, int target, const struct brig_mount_options *o,
          brig_error *err)
{
  _cleanup_free_ char *own = NULL, *src = NULL;
  struct brig_mount_options b = *o;
  int r;

  r = rootfs_mount_fs (c, "cgroup", dest, target, "cgroup2", o->flags, o->data, o, false, err);
  if (r != -EPERM && r != -EBUSY)
    return r;
  /* A user namespace without a cgroup namespace: emulate one with a bind
     of the container's own cgroup. */
  brig_error_clear (err);
  _cleanup_free_ char *cache = NULL;
  own = own_cgroup ("", &cache, err);
  if (own == NULL)
    return -ENOENT;
  src = xasprintf ("/sys/fs/cgroup%s", strcmp (own, "/") == 0 ? "" : own);
  return rootfs_bind_path (c, src, target, true, &b, err);
}

/* One v1 hierarchy in the tmpfs at destfd (the fresh tmpfs brig has just
 * mounted: nothing of the image is in it and the container runs nothing
 * yet, so its entries are named relative to destfd rather than resolved
 * from the root: one mkdirat and the mount per hierarchy). */
static int
mount_v1_hierarchy (struct rootfs_ctx *c, const struct brig_cgroup_hier *h, const char *dest,
                    int destfd, const struct brig_mount_options *o, char **cgroup_cache,
                    struct brig_fd_batch *fds, bool *attached, brig_error *err)
{
  const char *name = strrchr (h->mountpoint, '/') + 1;
  _cleanup_free_ char *sub = xasprintf ("%s/%s", dest, name);
  const char *controllers = h->controllers;
  int r;

  if (mkdirat (destfd, name, 0755) < 0 && errno != EEXIST)
    return brig_error_errno (err, "mkdir %s", sub);
  if (c->cgroupns)
    {
      const char *source = strncmp (controllers, "name=", 5) == 0 ? controllers + 5 : "cgroup";
      char fdp[32];
      _cleanup_free_ char *target = xasprintf ("%s/%s", brig_fd_path (destfd, fdp), name);
      if (mount (source, target, "cgroup", CGROUP_MOUNT_FLAGS | (o->flags & MS_RDONLY),
                 controllers) < 0)
        return brig_error_errno (err, "mount cgroup %s to %s", controllers, sub);
    }
  else
    {
      _cleanup_free_ char *own = NULL;
      _cleanup_free_ char *src = NULL;
      int tree;
      struct brig_mount_options b = *o;
      const char *rel;

      /* The init joined it itself (docs/cgroups.md "Joining"): its cgroup
       * there is known without reading /proc/self/cgroup. */
      if (!brig_cgroup_self_joined (h->mountpoint, &rel))
        {
          own = own_cgroup (controllers, cgroup_cache, err);
          if (own == NULL)
            return -ENOENT;
          rel = own;
          if (strcmp (h->root, "/") != 0 && brig_path_has_prefix (own, h->root))
            rel = own + strlen (h->root);
        }
      src = xasprintf ("%s%s", h->mountpoint, strcmp (rel, "/") == 0 ? "" : rel);
      b.attr_set |= MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
      b.rec_attr_set = b.rec_attr_clr = 0;
      b.n_propagation = 0;
      /* The source is the host's path of this container's own cgroup. */
      tree = brig_open_tree (AT_FDCWD, src, OPEN_TREE_CLONE | AT_RECURSIVE);
      brig_fd_batch_add (fds, tree);
      if (tree == -ENOSYS)
        {
          _cleanup_close_ int target = openat (destfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY
                                               | O_CLOEXEC);
          if (target < 0)
            return brig_error_errno (err, "open %s", sub);
          r = rootfs_bind_path (c, src, target, true, &b, err);
          if (r < 0)
            return brig_error_wrap (err, "mount %s to %s", src, sub);
        }
      else if (tree < 0)
        return brig_error_set (err, -tree, "mount %s to %s: open_tree", src, sub);
      /* its attributes come with the tmpfs's, in one recursive call once
       * every hierarchy is in place (mount_v1): nothing runs in the
       * container before that */
      else if ((r = brig_move_mount_at (tree, destfd, name)) < 0)
        return brig_error_set (err, -r, "mount %s to %s", src, sub);
      else
        *attached = true;
    }
  if (strchr (name, ','))
    {
      _cleanup_free_ char *copy = xstrdup (name);
      char *save = NULL;
      for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
        if (symlinkat (name, destfd, t) < 0 && errno != EEXIST)
          return brig_error_errno (err, "symlink %s/%s", dest, t);
    }
  return 0;
}

static int
mount_v1 (struct rootfs_ctx *c, const char *dest, int target, const struct brig_mount_options *o,
          brig_error *err)
{
  struct brig_mount_options t = { .n_propagation = o->n_propagation };
  /* The host's hierarchies as the parent parsed them before the clone
   * (the init is a copy of it): no second read of mountinfo here. */
  size_t n = 0;
  const struct brig_cgroup_hier *h = brig_cgroup_host_v1 (&n);
  _cleanup_close_ int top = -1;
  _cleanup_free_ char *cgroup_cache = NULL;
  struct brig_fd_batch fds = { .n = 0 }; /* the trees, closed together */
  bool attached = false;
  int r;

  memcpy (t.propagation, o->propagation, sizeof (t.propagation));
  r = rootfs_mount_fs (c, "tmpfs", dest, target, "tmpfs", CGROUP_MOUNT_FLAGS, "mode=755", &t, false, err);
  if (r < 0)
    return r;
  top = brig_path_open_in_root (c->rootfd, dest, O_PATH | O_DIRECTORY);
  if (top < 0)
    return brig_error_set (err, -top, "open %s", dest);
  for (size_t i = 0; i < n && r >= 0; i++)
    if (brig_path_has_prefix (h[i].mountpoint, "/sys/fs/cgroup")
        && strcmp (h[i].mountpoint, "/sys/fs/cgroup") != 0)
      r = mount_v1_hierarchy (c, &h[i], dest, top, o, &cgroup_cache, &fds, &attached, err);
  brig_fd_batch_close (&fds);
  if (r < 0)
    return r;
  if (attached)
    {
      /* the binds of the container's cgroups (no cgroup namespace) and the
       * tmpfs: one mount_setattr for all, instead of one per bind */
      uint64_t set = o->attr_set | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                     | ((o->flags & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0);
      uint64_t implied = brig_mount_implied_clr (o);
      r = brig_mount_setattr_fd (top, true, set, o->attr_clr | implied, 0, -1);
      /* a host mount seen from a user namespace keeps its locked flags:
       * what is only implied stays as it is */
      if (r == -EPERM && implied)
        r = brig_mount_setattr_fd (top, true, set, o->attr_clr, 0, -1);
      if (r < 0)
        return brig_error_set (err, -r, "set the attributes of %s", dest);
    }
  else if ((o->flags & MS_RDONLY)
           && (r = brig_mount_setattr_fd (top, false, MOUNT_ATTR_RDONLY, 0, 0, -1)) < 0)
    return brig_error_set (err, -r, "remount %s read-only", dest);
  if ((o->rec_attr_set || o->rec_attr_clr)
      && (r = brig_mount_setattr_fd (top, true, o->rec_attr_set, o->rec_attr_clr, 0, -1)) < 0)
    return brig_error_set (err, -r, "set recursive attributes of %s", dest);
  return 0;
}

int
rootfs_mount_cgroup (struct rootfs_ctx *c, const oci_mount *m, const char *dest,
                     const struct brig_mount_options *o, brig_error *err)
{
  _cleanup_close_ int target = brig_path_create_in_root (c->rootfd, dest, BRIG_PATH_DIR, err);
  const char *unified = brig_cgroup_host_unified ();

  if (target < 0 || rootfs_check_dest (c, target, "cgroup", -1, err) < 0)
    return brig_error_wrap (err, "mount cgroup to %s", m->destination);
  /* /sys/fs/cgroup is the visible cgroup2 mount (the host's layout, as
   * parsed before the clone): a unified host */
  if (unified && strcmp (unified, "/sys/fs/cgroup") == 0)
    return mount_v2 (c, dest, target, o, err);
  return mount_v1 (c, dest, target, o, err);
}
