/* The ephemeral layer's lower, as container root must see it to write its
 * root: a bundle's rootfs is usually owned by host root (0..65535), which
 * the container's user namespace does not map (container root is host
 * 1879048192 or an auto range), so every file read as the overflow id and
 * `echo hi >/x` was refused. The lower is then an idmapped tree from the
 * block of host ids that owns root.path to the container's own ids; it is
 * read-only, attached only inside the layer's tmpfs and detached right
 * after the overlay mount (ephemeral.c), so writes land in the tenant's
 * tmpfs and the bundle is never reachable to be remounted writable. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "rootfs/rootfs.h"
#include "sandbox/ephemeral.h"
#include "utils.h"

#ifndef MOUNT_ATTR_RDONLY
# define MOUNT_ATTR_RDONLY 0x00000001
# define MOUNT_ATTR_NOSUID 0x00000002
# define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef MOUNT_ATTR_IDMAP
# define MOUNT_ATTR_IDMAP 0x00100000
#endif

/* Whether id lies in the outside side of one of the mappings
 * (outside = host_id, or container_id for a disk mapping). */
static bool
covered (const oci_id_mapping *m, size_t n, uint32_t id, bool disk)
{
  for (size_t i = 0; i < n; i++)
    {
      uint64_t first = disk ? m[i].container_id : m[i].host_id;
      if (id >= first && id < first + m[i].size)
        return true;
    }
  return false;
}

/* The mapping of container id 0, or NULL. */
static const oci_id_mapping *
of_root (const oci_id_mapping *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].container_id == 0 && m[i].size > 0)
      return &m[i];
  return NULL;
}

/* A detached, read-only copy of rootfs idmapped by the user namespace
 * with the maps u, g (inside: the ids on disk; outside: the container's). */
static int
idmapped_tree (const char *rootfs, const oci_id_mapping *u, size_t nu, const oci_id_mapping *g,
               size_t ng, brig_error *err)
{
  _cleanup_close_ int userns = -1;
  int tree, r;

  userns = brig_idmap_userns (u, nu, g, ng, err);
  if (userns < 0)
    return brig_error_wrap (err, "annotation " BRIG_EPHEMERAL_KEY ": the lower layer's id map");
  tree = brig_open_tree (AT_FDCWD, rootfs, OPEN_TREE_CLONE | AT_RECURSIVE);
  if (tree < 0)
    return brig_error_set (err, -tree, "annotation " BRIG_EPHEMERAL_KEY ": open_tree %s", rootfs);
  r = brig_mount_setattr_fd (tree, true,
                             MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV, 0, 0, userns);
  if (r < 0)
    {
      close (tree);
      return brig_error_set (err, -r, "annotation " BRIG_EPHEMERAL_KEY ": idmap the rootfs %s "
                             "(its file system must support idmapped mounts)", rootfs);
    }
  return tree;
}

int
brig_ephemeral_lower_tree (const char *rootfs, const oci_config *cfg,
                           const oci_id_mapping *disk_u, size_t ndisk_u,
                           const oci_id_mapping *disk_g, size_t ndisk_g, int *tree,
                           brig_error *err)
{
  const oci_linux *lx = cfg->linux;
  const oci_id_mapping *ru = lx ? of_root (lx->uid_mappings, lx->uid_mappings_len) : NULL;
  const oci_id_mapping *rg = lx ? of_root (lx->gid_mappings, lx->gid_mappings_len) : NULL;
  bool disk = disk_u != NULL;
  struct stat st;

  *tree = -1;
  if (stat (rootfs, &st) < 0)
    return brig_error_errno (err, "stat the rootfs %s", rootfs);
  /* The mapping (auto: the image's disk mapping) covers the owner: the
   * files are what the image intends, idmapped only by auto. */
  if (covered (disk ? disk_u : lx ? lx->uid_mappings : NULL,
               disk ? ndisk_u : lx ? lx->uid_mappings_len : 0, st.st_uid, disk)
      && covered (disk ? disk_g : lx ? lx->gid_mappings : NULL,
                  disk ? ndisk_g : lx ? lx->gid_mappings_len : 0, st.st_gid, disk))
    {
      if (!disk)
        return 0;
      *tree = idmapped_tree (rootfs, disk_u, ndisk_u, disk_g, ndisk_g, err);
      return *tree < 0 ? *tree : 0;
    }
  if (ru == NULL || rg == NULL)
    return 0;
  /* From the owner's block: the bundle's id block+n is container id n. */
  oci_id_mapping u = { .container_id = st.st_uid & ~UINT32_C (0xffff), .host_id = ru->host_id,
                       .size = ru->size < 65536 ? ru->size : 65536 };
  oci_id_mapping g = { .container_id = st.st_gid & ~UINT32_C (0xffff), .host_id = rg->host_id,
                       .size = rg->size < 65536 ? rg->size : 65536 };
  *tree = idmapped_tree (rootfs, &u, 1, &g, 1, err);
  return *tree < 0 ? *tree : 0;
}
