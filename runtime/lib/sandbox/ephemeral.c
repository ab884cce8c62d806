/* run.brig.rootfs.ephemeral: the container's rootfs seen through an
 * overlay whose upper layer is brig's own.
 *
 * The tmpfs layer is made by the init inside the container's mount
 * namespace: it is mounted over root.path, and the overlay over it, so it
 * is never in the host's mount table and goes away with the namespace. The
 * disk layer is STATE/ephemeral/{upper,work}, made by the parent (which can
 * reach the state root) and handed to the init as an fd; delete removes it
 * with the state directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "paths.h"
#include "sandbox/ephemeral.h"
#include "sandbox/pod.h"
#include "utils.h"

/* "123", "64k", "256m", "2g" (powers of 1024, either case) to bytes. */
static int
parse_size (const char *s, uint64_t *out)
{
  uint64_t v = 0, mult = 1;
  const char *p = s;

  if (*p < '0' || *p > '9')
    return -EINVAL;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (v > (UINT64_MAX - 9) / 10)
        return -ERANGE;
      v = v * 10 + (uint64_t) (*p - '0');
    }
  switch (*p)
    {
    case '\0': break;
    case 'k': case 'K': mult = UINT64_C (1) << 10; p++; break;
    case 'm': case 'M': mult = UINT64_C (1) << 20; p++; break;
    case 'g': case 'G': mult = UINT64_C (1) << 30; p++; break;
    default: return -EINVAL;
    }
  if (*p != '\0')
    return -EINVAL;
  if (v > UINT64_MAX / mult)
    return -ERANGE;
  *out = v * mult;
  return 0;
}

static bool
has_namespace (const oci_config *cfg, const char *type)
{
  for (size_t i = 0; cfg->linux && i < cfg->linux->namespaces_len; i++)
    if (cfg->linux->namespaces[i].type && strcmp (cfg->linux->namespaces[i].type, type) == 0)
      return true;
  return false;
}

int
brig_ephemeral_parse (const oci_config *cfg, struct brig_ephemeral *e, brig_error *err)
{
  const char *on = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_KEY);
  const char *size = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_SIZE_KEY);

  *e = (struct brig_ephemeral) { .mode = BRIG_EPHEMERAL_OFF };
  if (on == NULL || strcmp (on, "false") == 0)
    {
      if (size)
        return brig_error_say (err, EINVAL, "annotation %s: needs %s=true", BRIG_EPHEMERAL_SIZE_KEY,
                               BRIG_EPHEMERAL_KEY);
      return 0;
    }
  if (strcmp (on, "true") != 0)
    return brig_error_say (err, EINVAL, "annotation %s: \"%s\" is not true or false",
                           BRIG_EPHEMERAL_KEY, on);
  /* A CRI pod's pause container gets the pod's annotations and a read-only
   * root: the layer is for the pod's other containers (pod.h). */
  if (brig_pod_sandbox_container (cfg->annotations))
    return 0;
  e->mode = BRIG_EPHEMERAL_TMPFS;
  e->size = BRIG_EPHEMERAL_DEFAULT_SIZE;
  if (size && strcmp (size, "disk") == 0)
    {
      e->mode = BRIG_EPHEMERAL_DISK;
      e->size = 0;
    }
  else if (size)
    {
      int r = parse_size (size, &e->size);
      /* tmpfs rounds to pages: less than one would be no layer at all. */
      if (r == 0 && e->size < 4096)
        r = -ERANGE;
      if (r < 0)
        return brig_error_say (err, EINVAL, "annotation %s: \"%s\" is not a size of at least "
                               "4096 bytes (bytes or a k, m or g suffix) or \"disk\"",
                               BRIG_EPHEMERAL_SIZE_KEY, size);
    }
  if (!has_namespace (cfg, "mount"))
    return brig_error_say (err, EINVAL, "annotation %s: needs a mount namespace in "
                           "linux.namespaces (the layer lives in it)", BRIG_EPHEMERAL_KEY);
  /* A read-only root would never write the layer: asking for both is a
   * mistake in the config, not something to guess about. */
  /* The init opens the disk layer by path inside its mount namespace; as
   * container root of a user namespace it cannot traverse the state root. */
  if (e->mode == BRIG_EPHEMERAL_DISK && has_namespace (cfg, "user"))
    return brig_error_say (err, EINVAL, "annotation %s=disk: not supported with a user "
                           "namespace (the layer's directory is under the state root, which "
                           "container root cannot reach): use the tmpfs layer",
                           BRIG_EPHEMERAL_SIZE_KEY);
  if (cfg->root && cfg->root->readonly)
    return brig_error_say (err, EINVAL, "annotation %s: root.readonly is true, so the layer "
                           "would never be written: set root.readonly to false (the bundle's "
                           "rootfs stays unwritten either way)", BRIG_EPHEMERAL_KEY);
  return 0;
}

/* The host id container root has: its user namespace's mapping of 0,
 * else 0. */
static uint32_t
root_host_id (const oci_config *cfg, bool uid)
{
  const oci_linux *l = cfg->linux;
  const oci_id_mapping *m = l ? (uid ? l->uid_mappings : l->gid_mappings) : NULL;
  size_t n = l ? (uid ? l->uid_mappings_len : l->gid_mappings_len) : 0;

  for (size_t i = 0; i < n; i++)
    if (m[i].container_id == 0 && m[i].size > 0)
      return m[i].host_id;
  return 0;
}

int
brig_ephemeral_make_disk (int dirfd, const oci_config *cfg, brig_error *err)
{
  static const char *const sub[] = { BRIG_EPHEMERAL_DIR "/upper", BRIG_EPHEMERAL_DIR "/work" };
  uid_t uid = root_host_id (cfg, true);
  gid_t gid = root_host_id (cfg, false);
  struct statfs sf;

  /* The disk layer has no cap of its own: on a memory filesystem (the
   * default state root /run/brig is tmpfs) a tenant could fill the host's
   * /run, which the tmpfs layer's size would have prevented. */
  if (fstatfs (dirfd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC))
    return brig_error_say (err, EINVAL, "annotation " BRIG_EPHEMERAL_SIZE_KEY "=disk: the "
                           "state root is on a memory file system (tmpfs), where the layer "
                           "would have no size limit; give a size, or a --root on disk");
  if (mkdirat (dirfd, BRIG_EPHEMERAL_DIR, 0700) < 0)
    return brig_error_errno (err, "create the ephemeral layer directory");
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (sub); i++)
    if (mkdirat (dirfd, sub[i], 0755) < 0
        || fchownat (dirfd, sub[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
      return brig_error_errno (err, "create the ephemeral layer directory %s", sub[i]);
  return 0;
}

/* The host's overflow uid (what stat shows for an id the user namespace
 * does not map). */
static uid_t
overflow_uid (void)
{
  _cleanup_free_ char *text = NULL;
  uid_t id = 65534;

  if (brig_read_file_at (AT_FDCWD, "/proc/sys/kernel/overflowuid", &text, NULL, NULL) == 0)
    id = (uid_t) strtoul (text, NULL, 10);
  return id;
}

/* The merged root takes the upper directory's owner and mode: give it the
 * bundle root's, so "/" looks as the image made it. In a user namespace
 * the image's owner may be unmapped (it reads as the overflow id, which
 * the namespace maps to nobody): then it stays container root's. */
static int
make_upper_like (int layer, const struct stat *lower, bool tmpfs, brig_error *err)
{
  if (tmpfs && (mkdirat (layer, "upper", 0755) < 0 || mkdirat (layer, "work", 0700) < 0))
    return brig_error_errno (err, "create the ephemeral layer's directories");
  if (lower->st_uid != overflow_uid ()
      && fchownat (layer, "upper", lower->st_uid, lower->st_gid, AT_SYMLINK_NOFOLLOW) < 0
      && errno != EINVAL && errno != EPERM)
    return brig_error_errno (err, "chown the ephemeral layer");
  if (fchmodat (layer, "upper", lower->st_mode & 07777, 0) < 0)
    return brig_error_errno (err, "chmod the ephemeral layer");
  return 0;
}

/* brig fork: the upper is filled from outside while nothing uses it
 * (overlayfs does not allow changes to an upper it has mounted). */
static int
seed_upper (int layer, const struct brig_layer_seed *seed, brig_error *err)
{
  _cleanup_close_ int upper = openat (layer, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW
                                      | O_CLOEXEC);
  if (upper < 0)
    return brig_error_errno (err, "open the ephemeral layer's upper directory");
  return seed->fill (seed->arg, upper, err);
}

/* A tmpfs of size bytes over rootfs, its fd in *layer. */
static int
layer_tmpfs (const char *rootfs, uint64_t size, int *layer, brig_error *err)
{
  /* nr_inodes: empty files cost kernel memory the size does not count;
   * one per KiB of the size. */
  uint64_t inodes = size / 1024 < 1024 ? 1024 : size / 1024;
  _cleanup_free_ char *opts = xasprintf ("size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0755",
                                         size, inodes);

  if (mount ("tmpfs", rootfs, "tmpfs", 0, opts) < 0)
    return brig_error_errno (err, "mount the ephemeral layer's tmpfs");
  *layer = open (rootfs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*layer < 0)
    return brig_error_errno (err, "open the ephemeral layer");
  return 0;
}

/* The idmapped tree (an extension's, made by the parent) attached at
 * LAYER/lower, inside the layer's own tmpfs: the overlay takes only
 * layers mounted in the caller's mount namespace. Its fd in *lower. */
static int
attach_lower (int layer, int tree, int *lower, brig_error *err)
{
  int r;

  if (mkdirat (layer, "lower", 0700) < 0)
    return brig_error_errno (err, "create the ephemeral layer's lower directory");
  r = brig_move_mount_at (tree, layer, "lower");
  if (r < 0)
    return brig_error_set (err, -r, "attach the idmapped rootfs in the ephemeral layer");
  *lower = openat (layer, "lower", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*lower < 0)
    return brig_error_errno (err, "open the ephemeral layer's lower directory");
  return 0;
}

/* Once the overlay holds its private clone of the lower: out of every
 * mount namespace, so nobody (a tenant with CAP_SYS_ADMIN in its user
 * namespace) can remount it writable and write the bundle through it. */
static int
detach_lower (int layer, int *lower, brig_error *err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/self/fd/%d/lower", layer);

  close (brig_steal_fd (*lower));
  if (umount2 (path, MNT_DETACH) < 0)
    return brig_error_errno (err, "detach the ephemeral layer's lower tree");
  if (unlinkat (layer, "lower", AT_REMOVEDIR) < 0)
    return brig_error_errno (err, "remove the ephemeral layer's lower directory");
  return 0;
}

/* The lower layer when there is no tree to attach: root.path's directory
 * itself, held before anything covers it (named through the fd: no
 * escaping of a path with commas or colons in the mount options). */
static int
open_lower (const char *rootfs, int tree, int *lower, brig_error *err)
{
  if (tree >= 0)
    return 0;
  *lower = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*lower < 0)
    return brig_error_errno (err, "open the rootfs %s", rootfs);
  return 0;
}

int
brig_ephemeral_mount (const char *rootfs, const struct brig_ephemeral *e, const char *disk_dir,
                      bool userns, int tree, int *upper_out, const struct brig_layer_seed *seed,
                      brig_error *err)
{
  _cleanup_close_ int lower = -1, layer = -1;
  _cleanup_free_ char *data = NULL;
  struct stat st;
  int r;

  if (tree >= 0 && e->mode != BRIG_EPHEMERAL_TMPFS)
    return brig_error_say (err, EINVAL, "the ephemeral disk layer takes no idmapped rootfs");
  if ((r = open_lower (rootfs, tree, &lower, err)) < 0)
    return r;
  if (e->mode == BRIG_EPHEMERAL_TMPFS)
    r = layer_tmpfs (rootfs, e->size, &layer, err);
  else if (disk_dir == NULL)
    return brig_error_say (err, EINVAL, "the ephemeral disk layer has no directory");
  else if ((layer = open (disk_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return brig_error_errno (err, "open the ephemeral layer %s", disk_dir);
  if (r < 0 || (tree >= 0 && (r = attach_lower (layer, tree, &lower, err)) < 0))
    return r;
  if (fstat (lower, &st) < 0)
    return brig_error_errno (err, "stat the rootfs %s", rootfs);
  r = make_upper_like (layer, &st, e->mode == BRIG_EPHEMERAL_TMPFS, err);
  if (r < 0)
    return r;
  if (seed && (r = seed_upper (layer, seed, err)) < 0)
    return r;
  /* In a user namespace overlayfs may only keep its metadata in user.*
   * xattrs (userxattr, kernel >= 5.11); trusted.* needs the host's root. */
  data = xasprintf ("lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d/upper,"
                    "workdir=/proc/self/fd/%d/work%s", lower, layer, layer,
                    userns ? ",userxattr" : "");
  if (mount ("overlay", rootfs, "overlay", 0, data) < 0)
    {
      if (userns && (errno == EPERM || errno == EINVAL))
        return brig_error_errno (err, "annotation %s: mount the overlay in the user namespace "
                                 "(this kernel may not allow overlayfs with userxattr there: "
                                 "it needs Linux >= 5.11%s)", BRIG_EPHEMERAL_KEY,
                                 e->mode == BRIG_EPHEMERAL_TMPFS ? " and tmpfs user xattrs, 6.6" : "");
      return brig_error_errno (err, "annotation %s: mount the overlay on %s", BRIG_EPHEMERAL_KEY,
                               rootfs);
    }
  if (tree >= 0 && (r = detach_lower (layer, &lower, err)) < 0)
    return r;
  /* for brig's pid 1, which keeps it for `brig fork` (the tenant's own
   * tmpfs, in no mount namespace's path once the overlay covers it) */
  if (upper_out && e->mode == BRIG_EPHEMERAL_TMPFS)
    {
      *upper_out = openat (layer, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (*upper_out < 0)
        return brig_error_errno (err, "open the ephemeral layer's upper directory");
    }
  return 0;
}

int
brig_ephemeral_mount_locked (const char *rootfs, bool userns, int tree, brig_error *err)
{
  _cleanup_close_ int lower = -1, layer = -1;
  _cleanup_free_ char *data = NULL;
  int r;

  /* The layer only holds the empty second lower (overlayfs wants two
   * lowers without an upper) and, for a moment, the idmapped tree. */
  if ((r = open_lower (rootfs, tree, &lower, err)) < 0
      || (r = layer_tmpfs (rootfs, 4096, &layer, err)) < 0
      || (tree >= 0 && (r = attach_lower (layer, tree, &lower, err)) < 0))
    return r;
  if (mkdirat (layer, "empty", 0755) < 0)
    return brig_error_errno (err, "create the read-only layer's empty directory");
  data = xasprintf ("lowerdir=/proc/self/fd/%d:/proc/self/fd/%d/empty%s", lower, layer,
                    userns ? ",userxattr" : "");
  if (mount ("overlay", rootfs, "overlay", MS_RDONLY, data) < 0)
    return brig_error_errno (err, "root.readonly: mount the read-only overlay on %s", rootfs);
  if (tree >= 0 && (r = detach_lower (layer, &lower, err)) < 0)
    return r;
  return 0;
}

int
brig_ephemeral_discard (int dirfd)
{
  int fd, depth = 0;
  struct stat top;

  fd = openat (dirfd, BRIG_EPHEMERAL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -errno;
  if (fstat (fd, &top) < 0)
    {
      int e = errno;
      close (fd);
      return -e;
    }
  /* Depth-first with one directory open at a time: the tenant chose the
   * tree's depth, so neither recursion nor an fd per level. A directory
   * that is not empty is entered; an emptied one is left through "..". */
  for (;;)
    {
      _cleanup_free_ char *sub = NULL;
      DIR *d;
      struct dirent *de = NULL;
      int dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 0), next;

      if (dup_fd < 0 || (d = fdopendir (dup_fd)) == NULL)
        {
          if (dup_fd >= 0)
            close (dup_fd);
          close (fd);
          return -EIO;
        }
      while (sub == NULL && (de = readdir (d)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          if (unlinkat (fd, de->d_name, 0) == 0 || errno == ENOENT)
            continue;
          /* Anything but "a directory" / "not empty" stops the walk: an
           * entry that cannot go would send it round forever. */
          if (errno != EISDIR)
            break;
          if (unlinkat (fd, de->d_name, AT_REMOVEDIR) == 0)
            continue;
          if (errno != ENOTEMPTY)
            break;
          sub = xstrdup (de->d_name);
        }
      if (sub == NULL && de != NULL)
        {
          int e = errno;
          closedir (d);
          close (fd);
          return -e;
        }
      closedir (d);
      if (sub)
        {
          next = openat (fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          depth++;
        }
      else if (depth > 0)
        {
          struct stat st;
          next = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          depth--;
          /* A tenant still running (one that escaped the kill) may move the
           * directory being emptied higher up its tree: the count would
           * then climb past the layer into the state root. Every way up
           * passes the layer's top, where the walk is at depth 0 whatever
           * it counted. */
          if (next >= 0 && fstat (next, &st) == 0 && st.st_dev == top.st_dev
              && st.st_ino == top.st_ino)
            depth = 0;
        }
      else
        break;
      close (fd);
      if (next < 0)
        return -errno;
      fd = next;
    }
  close (fd);
  if (unlinkat (dirfd, BRIG_EPHEMERAL_DIR, AT_REMOVEDIR) < 0)
    return -errno;
  return 0;
}

oci_rootfs_state *
brig_ephemeral_state (const struct brig_ephemeral *e, const char *state_dir)
{
  oci_rootfs_state *s;

  if (e->mode == BRIG_EPHEMERAL_OFF)
    return NULL;
  s = xmalloc0 (sizeof *s);
  if (e->mode == BRIG_EPHEMERAL_DISK)
    {
      s->mode = xstrdup ("disk");
      s->upper = xasprintf ("%s/" BRIG_EPHEMERAL_DIR "/upper", state_dir);
    }
  else
    {
      s->mode = xstrdup ("tmpfs");
      s->size = e->size;
      s->has_size = true;
    }
  return s;
}
