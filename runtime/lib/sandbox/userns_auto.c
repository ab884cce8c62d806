/* run.brig.userns=auto: each container's own host id range (userns_auto.h).
 *
 * The registry is a directory of symlinks, one per range in use, named by
 * the range's first host id and pointing to the owner's state directory.
 * symlinkat(2) fails with EEXIST when the name exists, so two creates (of
 * any state root) never take the same range, without a lock. The range is
 * written to the state directory before it is taken: a create killed
 * between the two leaves a record whose registry entry is not its own
 * (delete checks the link before it removes it), one killed after leaves
 * both, and delete -f frees it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "paths.h"
#include "rootfs/rootfs.h"
#include "sandbox/userns_auto.h"
#include "utils.h"

/* Every range lies below 2^31: brig refuses larger ids in mappings. */
#define ID_END UINT64_C (0x80000000)

static int
check_maps (const oci_id_mapping *m, size_t n, const char *field, brig_error *err)
{
  for (size_t i = 0; i < n; i++)
    if ((uint64_t) m[i].container_id + m[i].size > BRIG_USERNS_SIZE)
      return brig_error_say (err, EINVAL, "annotation " BRIG_USERNS_KEY "=auto: %s[%zu] "
                             "(containerID %u, size %u) goes beyond the %u ids of a range",
                             field, i, m[i].container_id, m[i].size, BRIG_USERNS_SIZE);
  return 0;
}

static int
parse_range (const char *s, struct brig_userns_range *out, brig_error *err)
{
  unsigned long long first, count;
  char *end;

  *out = (struct brig_userns_range) { BRIG_USERNS_FIRST, BRIG_USERNS_COUNT };
  if (s == NULL)
    return 0;
  errno = 0;
  first = strtoull (s, &end, 10);
  if (*s < '0' || *s > '9' || errno || *end != ':' || end[1] < '0' || end[1] > '9')
    goto bad;
  count = strtoull (end + 1, &end, 10);
  if (errno || *end || first == 0 || first % BRIG_USERNS_SIZE || count == 0
      || first >= ID_END || count > (ID_END - first) / BRIG_USERNS_SIZE)
    goto bad;
  *out = (struct brig_userns_range) { (uint32_t) first, (uint32_t) count };
  return 0;
bad:
  return brig_error_say (err, EINVAL, "--userns-range \"%s\": not FIRST:COUNT, FIRST a "
                         "non-zero multiple of 65536 and COUNT ranges of 65536 ending at or "
                         "below 2147483648", s);
}

int
brig_userns_auto_parse (const oci_config *cfg, bool new_userns, bool rootless,
                        const char *range, bool *on, struct brig_userns_auto *a,
                        brig_error *err)
{
  const char *v = oci_map_get (cfg->annotations, BRIG_USERNS_KEY);
  const oci_linux *lx = cfg->linux;
  int r;

  *on = false;
  if (v == NULL)
    return 0;
  if (strcmp (v, "auto") != 0)
    return brig_error_say (err, EINVAL, "annotation " BRIG_USERNS_KEY ": \"%s\" is not "
                           "\"auto\"", v);
  if (!new_userns)
    return brig_error_say (err, EINVAL, "annotation " BRIG_USERNS_KEY "=auto: needs a new "
                           "user namespace (a \"user\" entry without a path in "
                           "linux.namespaces)");
  if (rootless)
    return brig_error_say (err, EINVAL, "annotation " BRIG_USERNS_KEY "=auto: needs brig to "
                           "run as root (an unprivileged user maps only its own ids)");
  if ((r = check_maps (lx->uid_mappings, lx->uid_mappings_len, "linux.uidMappings", err)) < 0
      || (r = check_maps (lx->gid_mappings, lx->gid_mappings_len, "linux.gidMappings", err)) < 0
      || (r = parse_range (range, &a->from, err)) < 0)
    return r;
  *on = true;
  return 0;
}

/* The registry, made on first use: root's, and nobody else's to write. */
static int
open_registry (brig_error *err)
{
  struct stat st;
  int fd;

  if (mkdir (BRIG_USERNS_REGISTRY, 0700) < 0 && errno != EEXIST)
    return brig_error_errno (err, "create %s", BRIG_USERNS_REGISTRY);
  fd = open (BRIG_USERNS_REGISTRY, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return brig_error_errno (err, "open %s", BRIG_USERNS_REGISTRY);
  if (fstat (fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022))
    {
      close (fd);
      return brig_error_say (err, EPERM, "%s: not a directory only root may write",
                             BRIG_USERNS_REGISTRY);
    }
  return fd;
}

/* A range's first id from a registry name or record ("N" or "N\n"), 0
 * for anything that names none. */
static uint32_t
first_id (const char *s)
{
  char *end;
  unsigned long v;

  if (*s < '1' || *s > '9')
    return 0;
  errno = 0;
  v = strtoul (s, &end, 10);
  if (errno || (*end && strcmp (end, "\n") != 0) || v % BRIG_USERNS_SIZE || v >= ID_END)
    return 0;
  return (uint32_t) v;
}

/* A registry name to its slot in from, or -1 for anything else. */
static long
slot_of (const struct brig_userns_range *from, const char *name)
{
  uint32_t v = first_id (name);

  if (v < from->first || (v - from->first) / BRIG_USERNS_SIZE >= from->count)
    return -1;
  return (long) ((v - from->first) / BRIG_USERNS_SIZE);
}

/* The state directory a registry entry points to, as create wrote it. */
static char *
owner_path (const char *state_root, const char *id)
{
  _cleanup_free_ char *root = realpath (state_root, NULL);
  return root ? xasprintf ("%s/%s", root, id) : NULL;
}

int
brig_userns_auto_recorded (int dirfd, uint32_t *base)
{
  char buf[16];
  ssize_t n;
  int fd = openat (dirfd, BRIG_USERNS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -EINVAL;
  buf[n] = '\0';
  *base = first_id (buf);
  return *base ? 0 : -EINVAL;
}

/* Remove the registry entries whose container no longer records them (a
 * state directory removed by hand): called when no range is free. */
static void
reclaim_stale (int reg)
{
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  int fd = fcntl (reg, F_DUPFD_CLOEXEC, 0);

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    {
      char target[PATH_MAX];
      ssize_t n;
      uint32_t base;
      int dir;

      if (first_id (de->d_name) == 0)
        continue;
      n = readlinkat (reg, de->d_name, target, sizeof target - 1);
      if (n <= 0)
        continue;
      target[n] = '\0';
      dir = open (target, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dir >= 0 && brig_userns_auto_recorded (dir, &base) == 0
          && base == first_id (de->d_name))
        {
          close (dir);
          continue;
        }
      if (dir >= 0)
        close (dir);
      unlinkat (reg, de->d_name, 0);
    }
}

/* Mark the slots the registry holds. */
static int
scan_registry (const struct brig_userns_range *from, int reg, unsigned char *used)
{
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  int fd = fcntl (reg, F_DUPFD_CLOEXEC, 0);

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return -e;
    }
  memset (used, 0, (from->count + 7) / 8);
  while ((de = readdir (d)) != NULL)
    {
      long s = slot_of (from, de->d_name);
      if (s >= 0)
        used[s / 8] |= (unsigned char) (1u << (s % 8));
    }
  return 0;
}

static int
take_lowest_free (const struct brig_userns_range *from, int reg, int dirfd, const char *owner,
                  unsigned char *used, uint32_t *base, brig_error *err)
{
  for (long s = 0; s < (long) from->count; s++)
    {
      uint32_t b = from->first + (uint32_t) s * BRIG_USERNS_SIZE;
      char name[16], rec[16];
      int n, r;

      if (used[s / 8] & (1u << (s % 8)))
        continue;
      snprintf (name, sizeof name, "%u", b);
      n = snprintf (rec, sizeof rec, "%u\n", b);
      /* the record first: a create killed after the link must find it */
      r = brig_write_file_atomic (dirfd, BRIG_USERNS_FILE, rec, (size_t) n, 0600, err);
      if (r < 0)
        return brig_error_wrap (err, "record the id range");
      if (symlinkat (owner, reg, name) == 0)
        {
          *base = b;
          return 0;
        }
      if (errno != EEXIST)
        return brig_error_errno (err, "take the id range %s/%s", BRIG_USERNS_REGISTRY, name);
      used[s / 8] |= (unsigned char) (1u << (s % 8));
    }
  return -ENOSPC;
}

int
brig_userns_auto_alloc (const struct brig_userns_range *from, const char *state_root,
                        const char *id, int dirfd, uint32_t *base, brig_error *err)
{
  _cleanup_free_ char *owner = owner_path (state_root, id);
  _cleanup_free_ unsigned char *used = xmalloc0 ((from->count + 7) / 8);
  _cleanup_close_ int reg = -1;
  int r;

  if (owner == NULL)
    return brig_error_errno (err, "state root %s", state_root);
  reg = open_registry (err);
  if (reg < 0)
    return reg;
  for (int pass = 0; pass < 2; pass++)
    {
      if ((r = scan_registry (from, reg, used)) < 0)
        return brig_error_set (err, -r, "read %s", BRIG_USERNS_REGISTRY);
      r = take_lowest_free (from, reg, dirfd, owner, used, base, err);
      if (r != -ENOSPC)
        return r;
      reclaim_stale (reg);
    }
  unlinkat (dirfd, BRIG_USERNS_FILE, 0);
  return brig_error_say (err, ENOSPC, "annotation " BRIG_USERNS_KEY "=auto: all %u id "
                         "ranges of %u ids from %u are in use", from->count, BRIG_USERNS_SIZE,
                         from->first);
}

void
brig_userns_auto_free (const char *state_root, const char *id, int dirfd)
{
  _cleanup_free_ char *owner = NULL;
  char name[16], target[PATH_MAX];
  uint32_t base;
  ssize_t n;
  int reg;

  if (brig_userns_auto_recorded (dirfd, &base) < 0)
    return;
  owner = owner_path (state_root, id);
  snprintf (name, sizeof name, "%u", base);
  reg = open (BRIG_USERNS_REGISTRY, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (reg >= 0 && owner)
    {
      /* only our own: after a create killed between record and link the
       * range may be another container's */
      n = readlinkat (reg, name, target, sizeof target - 1);
      if (n > 0 && (size_t) n == strlen (owner) && memcmp (target, owner, (size_t) n) == 0
          && unlinkat (reg, name, 0) < 0)
        brig_warn ("free the id range %s/%s: %s", BRIG_USERNS_REGISTRY, name, strerror (errno));
    }
  if (reg >= 0)
    close (reg);
  unlinkat (dirfd, BRIG_USERNS_FILE, 0);
}

static oci_id_mapping *
move_maps (oci_id_mapping *m, size_t n, uint32_t base)
{
  oci_id_mapping *disk = xmalloc0 ((n ? n : 1) * sizeof *disk);
  for (size_t i = 0; i < n; i++)
    {
      disk[i] = (oci_id_mapping) { .container_id = m[i].host_id,
                                   .host_id = base + m[i].container_id, .size = m[i].size };
      m[i].host_id = base + m[i].container_id;
    }
  return disk;
}

void
brig_userns_auto_apply (oci_config *cfg, uint32_t base, struct brig_userns_auto *a)
{
  oci_linux *lx = cfg->linux;

  a->base = base;
  a->nuid = lx->uid_mappings_len;
  a->ngid = lx->gid_mappings_len;
  a->uid = move_maps (lx->uid_mappings, a->nuid, base);
  a->gid = move_maps (lx->gid_mappings, a->ngid, base);
}

int
brig_userns_auto_rootfs_tree (const char *rootfs, const struct brig_userns_auto *a,
                              brig_error *err)
{
  _cleanup_close_ int userns = -1;
  int tree, r;

  userns = brig_idmap_userns (a->uid, a->nuid, a->gid, a->ngid, err);
  if (userns < 0)
    return brig_error_wrap (err, "annotation " BRIG_USERNS_KEY "=auto: the rootfs's id map");
  tree = brig_open_tree (AT_FDCWD, rootfs, OPEN_TREE_CLONE | AT_RECURSIVE);
  if (tree < 0)
    return brig_error_set (err, -tree, "annotation " BRIG_USERNS_KEY "=auto: open_tree %s",
                           rootfs);
  r = brig_mount_setattr_fd (tree, true, MOUNT_ATTR_IDMAP, 0, 0, userns);
  if (r < 0)
    {
      close (tree);
      return brig_error_set (err, -r, "annotation " BRIG_USERNS_KEY "=auto: idmap the rootfs "
                             "%s (its file system must support idmapped mounts)", rootfs);
    }
  return tree;
}

oci_userns_state *
brig_userns_auto_state (const struct brig_userns_auto *a)
{
  oci_userns_state *s = xmalloc0 (sizeof *s);

  s->mode = xstrdup ("auto");
  s->uid = s->gid = a->base;
  s->size = BRIG_USERNS_SIZE;
  s->has_uid = s->has_gid = s->has_size = true;
  return s;
}

void
brig_userns_auto_clear (struct brig_userns_auto *a)
{
  free (a->uid);
  free (a->gid);
  a->uid = a->gid = NULL;
}
