/* A new init for an existing container: create's path from the moment the
 * state directory, cgroup and saved config exist. The container layer's
 * interface for the layers above it (brig reset, runtime/lib/sandbox/). */
#ifndef BRIG_CONTAINER_RESPAWN_H
#define BRIG_CONTAINER_RESPAWN_H

#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "context.h"
#include "error.h"
#include "container/state.h"

#include "ocispec.h"

struct respawn_prep;

struct brig_respawn {
  int dirfd;                   /* the container's locked state directory */
  brig_cgroup *cg;             /* its cgroup (kept, emptied by the caller) */
  struct brig_state_file *old; /* the state before: bundle, rootfs, the
                                  extension's record (which it may move to
                                  the new one) */
  int netns_fd;                /* a network namespace to join, or -1: new */
  pid_t pid;                   /* out: the new init */
  unsigned long long start_time; /* out: its start time */
  struct respawn_prep *prep;   /* private: what prepare made */
};

/* Everything of a respawn that touches nothing: create's checks of the
 * config saved in the state directory (cfg, parsed by the caller, who
 * keeps it and must keep it until the respawn is done or cleared), the
 * namespace plan and the seccomp program. Call brig_container_respawn_clear
 * when the respawn does not follow. */
int brig_container_respawn_prepare (const struct brig_context *ctx, const char *id,
                                    oci_config *cfg, struct brig_respawn *rs, brig_error *err);

/* Clone a new init for the prepared container into rs->cg, as create
 * would, up to waiting for `start`, and publish the new state (status
 * created). On failure the new init is killed; the cgroup and the state
 * directory are left to the caller. Clears the preparation. */
int brig_container_respawn (struct brig_respawn *rs, brig_error *err);

/* Drop what prepare made (once the respawn is not going to happen). */
void brig_container_respawn_clear (struct brig_respawn *rs);

#endif
