/* The ephemeral root filesystem (run.brig.rootfs.ephemeral annotations):
 * the container sees its rootfs through an overlay whose upper layer is
 * brig's own, a size-capped tmpfs made inside the container's mount
 * namespace or a directory in the container's state directory, so the
 * bundle's rootfs is never written and delete discards every write
 * (docs/sandbox.md "Ephemeral root filesystem"). */
#ifndef BRIG_SANDBOX_EPHEMERAL_H
#define BRIG_SANDBOX_EPHEMERAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"
#include "rootfs/rootfs.h"

#define BRIG_EPHEMERAL_KEY "run.brig.rootfs.ephemeral"
#define BRIG_EPHEMERAL_SIZE_KEY "run.brig.rootfs.ephemeral.size"
/* The disk layer's directory inside the container's state directory. */
#define BRIG_EPHEMERAL_DIR "ephemeral"
/* The tmpfs layer's size when run.brig.rootfs.ephemeral.size is absent. */
#define BRIG_EPHEMERAL_DEFAULT_SIZE (UINT64_C (256) << 20)

enum brig_ephemeral_mode { BRIG_EPHEMERAL_OFF, BRIG_EPHEMERAL_TMPFS, BRIG_EPHEMERAL_DISK };

struct brig_ephemeral {
  enum brig_ephemeral_mode mode;
  uint64_t size;   /* bytes of the tmpfs layer; 0 for disk */
};

/* Parse run.brig.rootfs.ephemeral and .size; refuse any other value, a
 * size without the switch, and a config the layer cannot serve (no mount
 * namespace, root.readonly). e->mode is OFF when the switch is absent or
 * "false", and on a CRI pod's pause container (pod.h). */
int brig_ephemeral_parse (const oci_config *cfg, struct brig_ephemeral *e, brig_error *err);

/* In the parent, for the disk layer: make STATE/ephemeral/{upper,work}
 * under the state directory dirfd, owned by cfg's container root. */
int brig_ephemeral_make_disk (int dirfd, const oci_config *cfg, brig_error *err);

/* In the init, inside the container's mount namespace and before any
 * config mount: mount the overlay over rootfs (the absolute host path of
 * root.path), its lower layer the bundle's rootfs and its upper layer a
 * fresh tmpfs or disk_dir's upper/work (disk_dir is opened here: overlayfs
 * takes only layers mounted in the caller's mount namespace, not an fd
 * from the parent's). userns: the init runs in a new user namespace
 * (user.* xattrs, kernel >= 5.11). tree: the parent's idmapped tree of
 * the rootfs (brig_ephemeral_lower_tree), attached inside the tmpfs layer
 * as the lower and detached right after the overlay mount; -1: the rootfs
 * itself. upper_out: NULL, or where an O_PATH fd of the tmpfs layer's upper
 * directory goes (-1 for the disk layer, which is the host's). */
int brig_ephemeral_mount (const char *rootfs, const struct brig_ephemeral *e, const char *disk_dir,
                          bool userns, int tree, int *upper_out,
                          const struct brig_layer_seed *seed, brig_error *err);

/* In the init, for a read-only root that must stay read-only against a
 * tenant with CAP_SYS_ADMIN in its user namespace: an overlay of the
 * rootfs (or tree, as above) without an upper layer over rootfs, read-only
 * in its superblock (no remount, bind or mount_setattr makes it writable),
 * its lower in no mount namespace. */
int brig_ephemeral_mount_locked (const char *rootfs, bool userns, int tree, brig_error *err);

/* In the parent: *tree = a detached, read-only tree of rootfs idmapped from
 * the block of 65536 host ids that owns it (st_uid & ~0xffff) to the ids
 * of container 0.. (cfg's mappings, after auto moved them), when the
 * container's mapping does not cover that owner; auto: its disk mapping
 * (b5's tree) when it does. -1 when none is needed. */
int brig_ephemeral_lower_tree (const char *rootfs, const oci_config *cfg,
                               const oci_id_mapping *disk_u, size_t ndisk_u,
                               const oci_id_mapping *disk_g, size_t ndisk_g, int *tree,
                               brig_error *err);

/* Remove the disk layer STATE/ephemeral under dirfd, never following a
 * symlink the tenant left in it. 0 when there is none. */
int brig_ephemeral_discard (int dirfd);

/* What the state shows: {mode, size, upper} (upper: the disk layer's
 * path, NULL for tmpfs). */
oci_rootfs_state *brig_ephemeral_state (const struct brig_ephemeral *e, const char *state_dir);

#endif
