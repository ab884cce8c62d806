/* Shared between the rootfs files (rootfs.c, rootfs/cgroup_mount.c,
 * rootfs/pivot.c, rootfs/idmap.c); not part of libbrig's interface. */
#ifndef BRIG_ROOTFS_INTERNAL_H
#define BRIG_ROOTFS_INTERNAL_H

#include <stdbool.h>

#include "rootfs/mounts.h"
#include "paths.h"
#include "rootfs/rootfs.h"

struct rootfs_ctx {
  const oci_config *cfg;
  const struct brig_rootfs_opts *opts;
  char *rootfs;      /* canonical host path of the rootfs */
  int rootfd;        /* O_PATH fd of the rootfs (after its self-bind) */
  bool cgroupns;     /* the container has (or joins) a cgroup namespace */
  bool netns;        /* ... a network namespace */
  /* the mount targets opened so far, closed together once the mounts
   * are done (a few close_range calls instead of a close per mount) */
  struct brig_fd_batch held;
  /* the root of the tmpfs this create mounted on /dev while it is still
   * as made (empty but for what later entries put there), else -1 */
  int fresh_dev;
  /* a mount may have put a procfs somewhere other than /proc: a "proc"
   * mount elsewhere, a bind from a procfs, an rbind of a directory */
  bool procfs_elsewhere;
};

/* True when cfg->linux->namespaces lists type. */
bool rootfs_has_namespace (const oci_config *cfg, const char *type);

/* Check a resolved mount point: not the root itself, not inside /proc
 * (except /proc for procfs or a procfs bind from the fd bind_src, and the
 * lxcfs files). bind_src: -1 when not a bind. */
int rootfs_check_dest (struct rootfs_ctx *c, int target, const char *type, int bind_src,
                       brig_error *err);

/* ---- rootfs/target.c: a mount's target; *known is dest when the target
 * was reached without a symlink or ".." (it lies at dest as written), else
 * NULL ---- */

/* Open dest (clean) inside the rootfs with flags; -errno. */
int rootfs_open_dest (struct rootfs_ctx *c, const char *dest, int flags, const char **known);

/* Make dest's missing target (a directory or a file, per kind); -errno with
 * err set. */
int rootfs_create_dest (struct rootfs_ctx *c, const char *dest, enum brig_path_kind kind,
                        const char **known, brig_error *err);

/* dest "/dev/NAME" while /dev is the empty tmpfs this create mounted
 * (c->fresh_dev): NAME made and opened in it; -ENOENT when that does not
 * apply or NAME exists (the caller takes the general way). */
int rootfs_create_in_fresh_dev (struct rootfs_ctx *c, const char *dest, bool dir);

/* rootfs_check_dest, by known when the caller has it (no lookup). */
int rootfs_check_dest_known (struct rootfs_ctx *c, int target, const char *known,
                             const char *type, int bind_src, brig_error *err);

/* The plain directory (not a symlink) that procfs, sysfs and /dev need;
 * -ENOENT (err untouched) when nothing is there, -errno with err set. */
int rootfs_open_plain_dir (struct rootfs_ctx *c, const char *dest, const char **known,
                           brig_error *err);

/* Mount type on the object target_fd refers to (dest is its path in the
 * container, for errors and to find the new mount), then apply the
 * propagation and recursive attributes of o (may be NULL). keep_mode: the
 * target existed in the image, so a tmpfs without mode= keeps its mode. */
int rootfs_mount_fs (struct rootfs_ctx *c, const char *source, const char *dest, int target_fd,
                     const char *type, unsigned long flags, const char *data,
                     const struct brig_mount_options *o, bool keep_mode, brig_error *err);

/* Bind the host path src onto target_fd (recursive: rbind) with the
 * attributes and propagation of o (o may be NULL: a plain bind). */
int rootfs_bind_path (struct rootfs_ctx *c, const char *src, int target_fd, bool recursive,
                      const struct brig_mount_options *o, brig_error *err);

/* Attach the detached tree onto target (name NULL), or onto name in the
 * directory target, with o's attributes, idmapping (userns_fd >= 0) and
 * propagation; 0 or -errno (rootfs/mount.c). */
int rootfs_attach_tree (int tree, int target, const char *name,
                        const struct brig_mount_options *o, int userns_fd);
/* The propagation changes of o on the mount mount_fd; 0 or -errno. */
int rootfs_apply_propagation (int mount_fd, const struct brig_mount_options *o);

/* rootfs_bind_path from the object src_fd refers to (an O_PATH fd of the
 * source, opened once); name is the source for errors. */
int rootfs_bind_fd (struct rootfs_ctx *c, int src_fd, const char *name, int target_fd,
                    bool recursive, const struct brig_mount_options *o, brig_error *err);

/* Attach the detached mount tree (open_tree OPEN_TREE_CLONE) onto name in
 * dirfd with the attributes and propagation of o (may be NULL); name must
 * be a directory brig made on a filesystem of its own (brig_move_mount_at).
 * Returns 0 or -errno (without mount_setattr the attributes are applied
 * with a classic remount, as for every bind). */
int rootfs_attach_tree_at (int tree, int dirfd, const char *name,
                           const struct brig_mount_options *o);

/* The "cgroup" mount type: cgroup2 on a unified host, else a tmpfs with the
 * v1 hierarchies (mounted per controller in a cgroup namespace, bound from
 * the container's cgroups without one), as runc does. */
int rootfs_mount_cgroup (struct rootfs_ctx *c, const oci_mount *m, const char *dest,
                         const struct brig_mount_options *o, brig_error *err);

/* ---- rootfs/procfs.c ---- */

/* Whether cfg has readonlyPaths or maskedPaths under /proc. */
bool rootfs_procfs_has_masks (const oci_config *cfg);

/* After the mounts, before the pivot: the config's paths under /proc mapped
 * below every procfs mount in the rootfs but /proc itself, into out. */
int rootfs_procfs_find (const struct rootfs_ctx *c, struct brig_rootfs_procfs *out,
                        brig_error *err);

/* tmpcopyup: copy the content of directory src into dst (owners, modes,
 * times, symlinks, nodes where allowed), never following symlinks. */
int rootfs_copy_tree (int src, int dst, brig_error *err);

/* The user namespace fd for an idmapped mount: the mount's own
 * uidMappings/gidMappings, else the container's. -errno on failure. */
int rootfs_idmap_userns (const oci_config *cfg, const oci_mount *m, brig_error *err);

#endif
