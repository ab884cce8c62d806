/* run.brig.userns=auto: a host id range of its own for each container.
 *
 * Every container of a config shared the host ids of its mappings, so the
 * kernel's per-user counts (keys, pipe pages, inotify, message queues,
 * processes) were one budget for all of them: one tenant at a limit was
 * every tenant's limit. With the annotation brig gives the container the
 * lowest free range of 65536 ids from its own host range, recorded in a
 * registry shared by every state root (BRIG_USERNS_REGISTRY) and in the
 * container's state, freed when the container is deleted
 * (docs/sandbox.md "Id ranges"). */
#ifndef BRIG_SANDBOX_USERNS_AUTO_H
#define BRIG_SANDBOX_USERNS_AUTO_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"

#define BRIG_USERNS_KEY "run.brig.userns"
/* One symlink per range in use, named by its first host id, pointing to
 * the state directory of the container that has it. */
#define BRIG_USERNS_REGISTRY "/run/brig-userns"
/* In the state directory: the first host id of the container's range,
 * written before the range is taken, so a killed create leaves what
 * delete needs to free it. */
#define BRIG_USERNS_FILE "userns"
#define BRIG_USERNS_SIZE UINT32_C (65536)
/* The default host range (--userns-range): right after spec --sandbox's
 * fixed mapping (0x70000000, 65536 ids), up to systemd's foreign range
 * (0x7ffe0000): 4093 ranges. */
#define BRIG_USERNS_FIRST UINT32_C (0x70010000)
#define BRIG_USERNS_COUNT UINT32_C (4093)

/* The host ids auto hands out: count ranges of 65536 from first. */
struct brig_userns_range {
  uint32_t first, count;
};

/* The container's ids as the config gave them (how its files are owned on
 * disk) against the range it runs in: the maps of the idmapped rootfs. */
struct brig_userns_auto {
  struct brig_userns_range from; /* the host range it comes from */
  uint32_t base;            /* first host id of the range */
  oci_id_mapping *uid, *gid;/* containerID: config's hostID; hostID: range's */
  size_t nuid, ngid;
};

/* *on = the annotation says "auto"; anything else but absence is refused,
 * and so is auto without a new user namespace (new_userns), when rootless,
 * or with mappings beyond 65536 container ids. range: --userns-range
 * ("FIRST:COUNT", FIRST a multiple of 65536, ending at or below 2^31) or
 * NULL for the default, into a->from. */
int brig_userns_auto_parse (const oci_config *cfg, bool new_userns, bool rootless,
                            const char *range, bool *on, struct brig_userns_auto *a,
                            brig_error *err);

/* Take the lowest free range of from for the container ID of state_root,
 * whose state directory is dirfd. */
int brig_userns_auto_alloc (const struct brig_userns_range *from, const char *state_root,
                            const char *id, int dirfd, uint32_t *base, brig_error *err);

/* The range recorded in the state directory: 0, or -ENOENT without one. */
int brig_userns_auto_recorded (int dirfd, uint32_t *base);

/* Free the container's range (only if the registry still gives it to this
 * container) and its record. Never fails: what stays is reclaimed when the
 * host range runs out. */
void brig_userns_auto_free (const char *state_root, const char *id, int dirfd);

/* Move cfg's mappings into the range at base; *a keeps the config's own. */
void brig_userns_auto_apply (oci_config *cfg, uint32_t base, struct brig_userns_auto *a);

/* A detached tree of rootfs, idmapped from the config's host ids to the
 * range's (the init attaches it in place of its rootfs bind). */
int brig_userns_auto_rootfs_tree (const char *rootfs, const struct brig_userns_auto *a,
                                  brig_error *err);

/* brig state's brig.userns. */
oci_userns_state *brig_userns_auto_state (const struct brig_userns_auto *a);

/* Release what apply allocated. */
void brig_userns_auto_clear (struct brig_userns_auto *a);

#endif
