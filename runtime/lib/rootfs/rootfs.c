/* The container's filesystem view, before pivot: propagation, the rootfs
 * self-bind, every entry of config.json "mounts" in order, and /dev.
 *
 * Every destination is resolved inside the rootfs (paths.c) and mounted
 * through the resolved fd by rootfs/mount.c (bind mounts with open_tree +
 * mount_setattr + move_mount, filesystems with mount(2) onto
 * /proc/self/fd/N of the resolved target). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rootfs/devices.h"
#include "log.h"
#include "mountinfo.h"
#include "namespaces.h"
#include "paths.h"
#include "rootfs/internal.h"
#include "utils.h"

bool
rootfs_has_namespace (const oci_config *cfg, const char *type)
{
  for (size_t i = 0; cfg->linux && i < cfg->linux->namespaces_len; i++)
    if (cfg->linux->namespaces[i].type && strcmp (cfg->linux->namespaces[i].type, type) == 0)
      return true;
  return false;
}

static bool
is_bind (const oci_mount *m, const struct brig_mount_options *o)
{
  return o->bind || (m->type && strcmp (m->type, "bind") == 0);
}

static const char *
mount_name (const oci_mount *m)
{
  if (m->source && *m->source)
    return m->source;
  return m->type ? m->type : "none";
}

/* True when the cleaned path names "/" once ".." is applied lexically. */
static bool
names_root (const char *clean)
{
  _cleanup_free_ char *lexical = brig_path_clean_lexical (clean);
  return strcmp (lexical, "/") == 0;
}

int
rootfs_validate (const oci_config *cfg, brig_error *err)
{
  const char *prop = cfg->linux ? cfg->linux->rootfs_propagation : NULL;
  bool userns = rootfs_has_namespace (cfg, "user");

  if (prop && *prop && brig_mount_propagation_parse (prop) == 0)
    return brig_error_say (err, EINVAL, "linux.rootfsPropagation: \"%s\" is not one of "
                           "private, rprivate, slave, rslave, shared, rshared, unbindable, runbindable",
                           prop);
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      struct brig_mount_options o;
      _cleanup_free_ char *dest = NULL;
      bool has_maps;

      if (m->destination == NULL || *m->destination == '\0')
        return brig_error_say (err, EINVAL, "mounts[%zu].destination: must not be empty", i);
      dest = brig_path_clean (m->destination);
      if (brig_mount_options_parse (m->options, m->options_len, &o, err) < 0)
        return brig_error_wrap (err, "mounts[%zu]", i);
      if (names_root (dest) && (!is_bind (m, &o) || (o.flags & MS_REMOUNT)))
        {
          /* A bind onto "/" replaces the rootfs (as runc); anything else
             there would be an empty or foreign root to pivot into. */
          brig_mount_options_free (&o);
          return brig_error_say (err, EINVAL, "mounts[%zu]: destination \"%s\" is the root: only "
                                 "a bind mount may replace the rootfs", i, m->destination);
        }
      has_maps = m->uid_mappings_len > 0 || m->gid_mappings_len > 0;
      if (brig_ns_validate_id_mapping (m->uid_mappings, m->uid_mappings_len, "uidMappings", err) < 0
          || brig_ns_validate_id_mapping (m->gid_mappings, m->gid_mappings_len, "gidMappings",
                                          err) < 0)
        {
          brig_mount_options_free (&o);
          return brig_error_wrap (err, "mounts[%zu]", i);
        }
      if ((m->uid_mappings_len > 0) != (m->gid_mappings_len > 0))
        {
          brig_mount_options_free (&o);
          return brig_error_say (err, EINVAL, "mounts[%zu]: uidMappings and gidMappings must be given together", i);
        }
      if ((o.idmap || has_maps) && !is_bind (m, &o))
        {
          brig_mount_options_free (&o);
          return brig_error_say (err, EINVAL, "mounts[%zu]: idmap is only supported on bind mounts", i);
        }
      if (o.idmap && !has_maps && !userns)
        {
          brig_mount_options_free (&o);
          return brig_error_say (err, EINVAL, "mounts[%zu]: idmap needs uidMappings and gidMappings "
                                 "or a user namespace", i);
        }
      if (is_bind (m, &o) && (m->source == NULL || *m->source == '\0'))
        {
          brig_mount_options_free (&o);
          return brig_error_say (err, EINVAL, "mounts[%zu]: a bind mount needs a source", i);
        }
      brig_mount_options_free (&o);
    }
  return brig_devices_validate (cfg, err);
}

static const char *
bind_source (const struct rootfs_ctx *c, const char *src, char **owned)
{
  if (src[0] == '/')
    return src;
  *owned = xasprintf ("%s/%s", c->opts && c->opts->bundle ? c->opts->bundle : ".", src);
  return *owned;
}

/* A bind onto "/": the source goes over the rootfs's self-bind, so
 * pivot_root and every later entry (resolved from the reopened rootfd) use
 * it as the root. */
static int
mount_bind_root (struct rootfs_ctx *c, const oci_mount *m, const struct brig_mount_options *o,
                 int srcfd, bool prepared, const struct stat *st, brig_error *err)
{
  int r, fd;

  if (!S_ISDIR (st->st_mode))
    return brig_error_say (err, ENOTDIR, "mount %s to %s: a new root must be a directory",
                           m->source, m->destination);
  if (prepared)
    {
      r = brig_move_mount_to_fd (srcfd, c->rootfd);
      if (r == 0)
        r = rootfs_apply_propagation (srcfd, o);
      if (r < 0)
        return brig_error_set (err, -r, "mount %s to %s", m->source, m->destination);
    }
  else if (rootfs_bind_fd (c, srcfd, m->source, c->rootfd, o->recursive, o, err) < 0)
    return brig_error_wrap (err, "mount %s to %s", m->source, m->destination);
  fd = open (c->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return brig_error_errno (err, "reopen the rootfs %s", c->rootfs);
  close (c->rootfd);
  c->rootfd = fd;
  c->fresh_dev = -1;
  return 0;
}

static int
mount_bind_entry (struct rootfs_ctx *c, size_t i, const oci_mount *m, const char *dest,
                  const struct brig_mount_options *o, brig_error *err)
{
  _cleanup_free_ char *owned = NULL, *inside = NULL, *clean = NULL;
  const char *src = bind_source (c, m->source, &owned);
  _cleanup_close_ int prepared = -1, srcfd = -1, tree = -1, userns = -1;
  const char *known = NULL;
  int target;
  struct stat st;
  int r;

  if (c->opts && c->opts->open_source && (o->idmap || m->uid_mappings_len > 0))
    {
      /* Inside its user namespace the init cannot idmap host filesystems:
         the parent makes the idmapped copy, from what the source is now. */
      prepared = c->opts->open_source (c->opts->barrier_arg, i, err);
      if (prepared < 0)
        return prepared;
    }
  else
    {
      /* The source is opened once and mounted from that fd. One inside
       * the rootfs is the container's path: resolved in its root, through
       * what earlier entries mounted there and the image's symlinks taken
       * from that root (an absolute one never leads to the host's file);
       * any other source is a host path, its ".." taken as written (as
       * runc), not through a symlink of the image it passes. */
      clean = brig_path_clean_lexical (src);
      inside = brig_path_below (c->rootfs, clean);
      if (inside)
        r = srcfd = brig_path_open_in_root (c->rootfd, inside, O_PATH);
      else if ((r = srcfd = open (clean, O_PATH | O_CLOEXEC)) < 0)
        r = -errno;
      if ((r == -EACCES || r == -EPERM) && c->opts && c->opts->open_source)
        {
          /* Root of the user namespace may not look it up: brig may. */
          srcfd = c->opts->open_source (c->opts->barrier_arg, i, err);
          if (srcfd < 0)
            return srcfd;
        }
      else if (r < 0)
        return brig_error_set (err, -r, "mount %s to %s", m->source, m->destination);
    }
  if (fstat (prepared >= 0 ? prepared : srcfd, &st) < 0)
    return brig_error_errno (err, "mount %s to %s", m->source, m->destination);
  /* A procfs (any part of one), or a tree that may hold one: its masks are
   * found after the mounts (rootfs/procfs.c). */
  if (!c->procfs_elsewhere)
    {
      struct statfs sfs;
      c->procfs_elsewhere = (o->recursive && S_ISDIR (st.st_mode))
        || fstatfs (prepared >= 0 ? prepared : srcfd, &sfs) < 0 || sfs.f_type == PROC_SUPER_MAGIC;
    }
  if (strcmp (dest, "/") == 0)
    return mount_bind_root (c, m, o, prepared >= 0 ? prepared : srcfd, prepared >= 0, &st, err);
  if (strcmp (dest, "/dev") == 0)
    c->fresh_dev = -1;
  target = rootfs_create_in_fresh_dev (c, dest, S_ISDIR (st.st_mode));
  if (target >= 0)
    known = dest;
  else
    target = rootfs_open_dest (c, dest, O_PATH, &known);
  if (target == -ENOENT)
    target = rootfs_create_dest (c, dest, S_ISDIR (st.st_mode) ? BRIG_PATH_DIR
                                 : BRIG_PATH_FILE, &known, err);
  else if (target < 0)
    target = brig_error_set (err, -target, "open %s in the rootfs", dest);
  if (target < 0)
    return brig_error_wrap (err, "mount %s to %s", m->source, m->destination);
  brig_fd_batch_add (&c->held, target);
  if (rootfs_check_dest_known (c, target, known, NULL, prepared >= 0 ? prepared : srcfd,
                               err) < 0)
    return brig_error_wrap (err, "mount %s to %s", m->source, m->destination);

  if (prepared >= 0)
    {
      /* Made, idmapped and given its attributes by the parent (where the
         host's filesystems can be idmapped): only attach it here. */
      r = brig_move_mount_to_fd (prepared, target);
      if (r == 0)
        r = rootfs_apply_propagation (prepared, o);
      if (r < 0)
        return brig_error_set (err, -r, "mount %s to %s", m->source, m->destination);
      return 0;
    }
  if (!o->idmap && m->uid_mappings_len == 0)
    {
      r = rootfs_bind_fd (c, srcfd, src, target, o->recursive, o, err);
      return r < 0 ? brig_error_wrap (err, "mount %s to %s", m->source, m->destination) : 0;
    }
  userns = rootfs_idmap_userns (c->cfg, m, err);
  if (userns < 0)
    return brig_error_wrap (err, "mount %s to %s", m->source, m->destination);
  tree = brig_open_tree (srcfd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH
                         | (o->recursive ? AT_RECURSIVE : 0));
  if (tree < 0)
    return brig_error_set (err, -tree, "mount %s to %s: open_tree", m->source, m->destination);
  r = rootfs_attach_tree (tree, target, NULL, o, userns);
  if (r < 0)
    return brig_error_set (err, -r, "mount %s to %s: idmapped bind", m->source, m->destination);
  return 0;
}

static bool
needs_plain_dir (const char *type, const char *dest)
{
  return strcmp (dest, "/dev") == 0
         || (type && (strcmp (type, "proc") == 0 || strcmp (type, "sysfs") == 0));
}

static int
mount_fs_entry (struct rootfs_ctx *c, const oci_mount *m, const char *dest,
                const struct brig_mount_options *o, brig_error *err)
{
  int target;
  const char *type = m->type, *known = NULL;
  unsigned long flags = o->flags;
  bool existed, made = false;
  int r;

  if (strcmp (dest, "/dev") == 0)
    c->fresh_dev = -1;
  if (needs_plain_dir (type, dest))
    {
      target = rootfs_open_plain_dir (c, dest, &known, err);
      if (target < 0 && target != -ENOENT)
        return brig_error_wrap (err, "mount %s to %s", mount_name (m), m->destination);
    }
  else if ((target = rootfs_create_in_fresh_dev (c, dest, true)) >= 0)
    {
      known = dest;
      made = true;
    }
  else
    target = rootfs_open_dest (c, dest, O_PATH, &known);
  existed = target >= 0 && !made;
  if (target == -ENOENT)
    target = rootfs_create_dest (c, dest, BRIG_PATH_DIR, &known, err);
  else if (target < 0)
    target = brig_path_create_in_root (c->rootfd, dest, BRIG_PATH_DIR, err);
  if (target < 0)
    return brig_error_wrap (err, "mount %s to %s", mount_name (m), m->destination);
  brig_fd_batch_add (&c->held, target);
  if (rootfs_check_dest_known (c, target, known, type, -1, err) < 0)
    return brig_error_wrap (err, "mount %s to %s", mount_name (m), m->destination);
  if (type && strcasecmp (type, "proc") == 0 && (known == NULL || strcmp (known, "/proc") != 0))
    c->procfs_elsewhere = true;
  /* /dev is filled after the mounts; rootfs_finalize makes it read-only. */
  if (strcmp (dest, "/dev") == 0)
    flags &= ~MS_RDONLY;

  r = rootfs_mount_fs (c, m->source ? m->source : type, dest, target, type, flags, o->data, o,
                       existed, err);
  if (r == 0 && strcmp (dest, "/dev") == 0 && type && strcmp (type, "tmpfs") == 0
      && !o->tmpcopyup)
    {
      /* An empty tmpfs of ours: /dev/pts, /dev/shm ... go straight in. */
      int fd = brig_path_open_in_root_nolinks (c->rootfd, dest, O_PATH | O_DIRECTORY);
      brig_fd_batch_add (&c->held, fd);
      c->fresh_dev = fd >= 0 ? fd : -1;
    }
  if (r == -EPERM && type && (strcmp (type, "sysfs") == 0 || strcmp (type, "mqueue") == 0))
    {
      /* sysfs needs the network namespace's owner, mqueue the ipc one: in
         a user namespace without them, bind the host's instead, as runc
         does; the requested flags become attributes of the bind. */
      const char *host = strcmp (type, "sysfs") == 0 ? "/sys" : "/dev/mqueue";
      struct brig_mount_options b = *o;
      brig_debug ("mount %s to %s: %s, binding %s instead", type, dest, err->msg, host);
      brig_error_clear (err);
      b.rec_attr_set |= b.attr_set;
      b.rec_attr_clr |= b.attr_clr;
      b.attr_set = b.attr_clr = 0;
      r = rootfs_bind_path (c, host, target, true, &b, err);
      if (r < 0)
        return brig_error_wrap (err, "mount %s to %s", mount_name (m), m->destination);
    }
  return r < 0 ? r : 0;
}

static int
cgroup_barrier (struct rootfs_ctx *c, brig_error *err)
{
  if (c->opts == NULL || c->opts->cgroup_barrier == NULL)
    return 0;
  return c->opts->cgroup_barrier (c->opts->barrier_arg, err);
}

/* A cgroup or cgroup2 mount shows the process's cgroup namespace: only
 * once the process is in its cgroups and has that namespace. */
static int
mount_cgroup_entry (struct rootfs_ctx *c, const oci_mount *m, const char *dest,
                    const struct brig_mount_options *o, brig_error *err)
{
  int r = cgroup_barrier (c, err);
  if (r < 0)
    return r;
  if (strcmp (m->type, "cgroup") == 0)
    return rootfs_mount_cgroup (c, m, dest, o, err);
  return mount_fs_entry (c, m, dest, o, err);
}

static int
mount_entry (struct rootfs_ctx *c, size_t i, brig_error *err)
{
  const oci_mount *m = &c->cfg->mounts[i];
  struct brig_mount_options o;
  _cleanup_free_ char *dest = NULL;
  int r;

  if (m->destination == NULL || *m->destination == '\0')
    return brig_error_say (err, EINVAL, "mounts[%zu].destination: must not be empty", i);
  dest = brig_path_clean (m->destination);
  {
    /* runc's form of a destination written with the rootfs's host path:
     * the path inside the container */
    char *inside = brig_path_below (c->rootfs, dest);
    if (inside)
      {
        free (dest);
        dest = inside;
      }
  }
  if (brig_mount_options_parse (m->options, m->options_len, &o, err) < 0)
    return brig_error_wrap (err, "mounts[%zu]", i);
  if (names_root (dest) && (!is_bind (m, &o) || (o.flags & MS_REMOUNT)))
    r = brig_error_say (err, EINVAL, "mounts[%zu]: destination \"%s\" is the root: only a bind "
                        "mount may replace the rootfs", i, m->destination);
  else if (is_bind (m, &o) && !(o.flags & MS_REMOUNT))
    r = mount_bind_entry (c, i, m, names_root (dest) ? "/" : dest, &o, err);
  else if (m->type && (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0))
    r = mount_cgroup_entry (c, m, dest, &o, err);
  else
    r = mount_fs_entry (c, m, dest, &o, err);
  brig_mount_options_free (&o);
  return r;
}

/* pivot_root refuses a shared parent of the new root; a shared parent would
 * also propagate every mount made below the rootfs back to the host. */
static int
make_parent_private (const char *rootfs, brig_error *err)
{
  struct brig_mountinfo *mi = NULL;
  size_t n = 0;
  const struct brig_mountinfo *parent;
  int r = 0;

  if (brig_mountinfo_read (NULL, &mi, &n, err) < 0)
    return -1;
  parent = brig_mountinfo_find_parent (mi, n, rootfs);
  if (parent && strstr (parent->optional, "shared:")
      && mount (NULL, parent->mountpoint, NULL, MS_PRIVATE, NULL) < 0)
    r = brig_error_errno (err, "make %s private", parent->mountpoint);
  brig_mountinfo_free (mi, n);
  return r;
}

static bool
needs_dev_setup (const oci_config *cfg)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      struct brig_mount_options o;
      _cleanup_free_ char *dest = NULL;
      bool bind;

      if (m->destination == NULL)
        continue;
      dest = brig_path_clean (m->destination);
      if (strcmp (dest, "/dev") != 0)
        continue;
      if (brig_mount_options_parse (m->options, m->options_len, &o, NULL) < 0)
        continue;
      bind = is_bind (m, &o);
      brig_mount_options_free (&o);
      if (bind)
        return false;
    }
  return true;
}

/* Absolute, no "//", no "." or ".." component, no trailing "/" (but "/"). */
static bool
is_canonical (const char *p)
{
  if (p[0] != '/')
    return false;
  if (p[1] == '\0')
    return true;
  for (const char *c = p; *c; c++)
    if (c[0] == '/'
        && (c[1] == '/' || c[1] == '\0'
            || (c[1] == '.' && (c[2] == '/' || c[2] == '\0'
                                || (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))))
      return false;
  return true;
}

/* Without a mount namespace of its own the container shares the runtime's
 * (runtime-spec: a namespace type not listed is inherited), which is the
 * host's mount table: brig changes nothing in it. The rootfs is entered with
 * chroot (rootfs_pivot) and what the config would mount is left out, with a
 * warning naming it (create refuses maskedPaths, readonlyPaths and
 * root.readonly then: restrictions are not dropped silently). */
static void
warn_unmounted (const oci_config *cfg)
{
  const oci_linux *l = cfg->linux;
  const char *parts[2];
  size_t n = 0;

  if (cfg->mounts_len)
    parts[n++] = "mounts";
  if (l && l->devices_len)
    parts[n++] = "linux.devices";
  if (n > 0)
    brig_warn ("linux.namespaces has no mount namespace: %s%s%s are not applied (the "
               "container shares the runtime's mount table, which brig does not change)",
               parts[0], n > 1 ? " and " : "", n > 1 ? parts[1] : "");
}

int
rootfs_prepare (const oci_config *cfg, const char *rootfs,
                const struct brig_rootfs_opts *opts, brig_error *err)
{
  struct rootfs_ctx c = { .cfg = cfg, .opts = opts, .rootfd = -1, .fresh_dev = -1 };
  const char *pname = cfg->linux ? cfg->linux->rootfs_propagation : NULL;
  unsigned long prop = MS_SLAVE | MS_REC;
  int r = 0;

  if (pname && *pname && (prop = brig_mount_propagation_parse (pname)) == 0)
    return brig_error_say (err, EINVAL, "linux.rootfsPropagation: \"%s\" is not valid", pname);
  if (!rootfs_has_namespace (cfg, "mount"))
    {
      warn_unmounted (cfg);
      return 0;
    }
  /* The rootfs is bind-mounted from the mount holding it, which must stay
   * bindable: [r]unbindable is applied to the new root after pivot_root. */
  if (prop & MS_UNBINDABLE)
    prop = MS_SLAVE | MS_REC;
  /* create_load_bundle's realpath already (a readlink per component):
     only a path with "." or ".." parts, "//" or a relative one is
     resolved again. Symlinks in it would be followed by the mount below
     either way. */
  c.rootfs = is_canonical (rootfs) ? xstrdup (rootfs) : realpath (rootfs, NULL);
  if (c.rootfs == NULL)
    return brig_error_errno (err, "rootfs %s", rootfs);
  c.cgroupns = rootfs_has_namespace (cfg, "cgroup");
  c.netns = rootfs_has_namespace (cfg, "network");

  /* Nothing done below may reach the host's mount table. */
  if (mount (NULL, "/", NULL, prop, NULL) < 0)
    {
      r = brig_error_errno (err, "set the propagation of / to %s", pname ? pname : "rslave");
      goto out;
    }
  if ((prop & MS_SHARED || !(prop & MS_REC)) && (r = make_parent_private (c.rootfs, err)) < 0)
    goto out;
  if (opts && opts->rootfs_tree >= 0 && !opts->layer.mount)
    {
      /* an extension's idmapped tree: the files as the container's own
       * id range sees them, in place of the self-bind (a layer attaches it
       * itself, under its own tmpfs) */
      _cleanup_close_ int at = open (c.rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (at < 0 || (r = brig_move_mount_to_fd (opts->rootfs_tree, at)) < 0)
        {
          r = brig_error_set (err, at < 0 ? errno : -r, "attach the idmapped rootfs on %s",
                              c.rootfs);
          goto out;
        }
    }
  if (opts && opts->layer.mount)
    {
      /* The layer is the new root's mount, as the self-bind would be;
       * every config mount below lands on top of it. */
      r = opts->layer.mount (opts->layer.data, c.rootfs, opts->userns, opts->rootfs_tree,
                             opts->layer_upper_out, opts->seed.fill ? &opts->seed : NULL, err);
      if (r < 0)
        goto out;
    }
  else if (opts && opts->seed.fill)
    {
      /* asked to seed a layer the config does not have: the fill says so */
      r = opts->seed.fill (opts->seed.arg, -1, err);
      if (r == 0)
        r = brig_error_say (err, EINVAL, "no root layer to seed");
      goto out;
    }
  else if ((opts == NULL || opts->rootfs_tree < 0)
           && mount (c.rootfs, c.rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    {
      r = brig_error_errno (err, "bind mount the rootfs %s", c.rootfs);
      goto out;
    }
  c.rootfd = open (c.rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c.rootfd < 0)
    {
      r = brig_error_errno (err, "open the rootfs %s", c.rootfs);
      goto out;
    }
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if ((r = mount_entry (&c, i, err)) < 0)
      goto out;
  if (c.procfs_elsewhere && opts && opts->procfs_out && rootfs_procfs_has_masks (cfg)
      && (r = rootfs_procfs_find (&c, opts->procfs_out, err)) < 0)
    goto out;
  if (needs_dev_setup (cfg))
    {
      /* The device nodes follow the same rule as a /dev mount; the
         directory checked is the one the nodes go into (created there
         when the image has none). */
      const char *known;
      _cleanup_close_ int opened = c.fresh_dev >= 0
                                   ? -1 : rootfs_open_plain_dir (&c, "/dev", &known, err);
      int devfd = c.fresh_dev >= 0 ? c.fresh_dev : opened;
      if (devfd < 0 && devfd != -ENOENT)
        {
          r = brig_error_wrap (err, "set up /dev");
          goto out;
        }
      if ((r = cgroup_barrier (&c, err)) < 0
          || (r = brig_devices_setup (c.rootfd, devfd, cfg, opts && opts->userns, err)) < 0)
        goto out;
    }
  if (opts && opts->console_fd >= 0)
    r = brig_devices_mount_console (c.rootfd, opts->console_fd, err);
out:
  brig_fd_batch_close (&c.held);
  if (r == 0 && opts && opts->rootfd_out)
    *opts->rootfd_out = brig_steal_fd (c.rootfd);
  if (c.rootfd >= 0)
    close (c.rootfd);
  free (c.rootfs);
  return r;
}
