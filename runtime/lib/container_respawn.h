/* A new init for an existing container (brig reset): create's path from
 * the moment the state directory, cgroup and saved config exist. Not part
 * of libbrig's interface beyond runtime/lib/sandbox/reset.c. */
#ifndef BRIG_CONTAINER_RESPAWN_H
#define BRIG_CONTAINER_RESPAWN_H

#include <sys/types.h>

#include "cgroup.h"
#include "context.h"
#include "error.h"
#include "state.h"

struct brig_respawn {
  int dirfd;                   /* the container's locked state directory */
  brig_cgroup *cg;             /* its cgroup (kept, emptied by the caller) */
  struct brig_state_file *old; /* the state before: bundle, rootfs, egress
                                  (the egress state is moved to the new one) */
  int netns_fd;                /* a network namespace to join, or -1: new */
  pid_t pid;                   /* out: the new init */
  unsigned long long start_time; /* out: its start time */
};

/* Clone a new init for container id from the config saved in its state
 * directory into rs->cg, as create would, up to waiting for `start`, and
 * publish the new state (status created). On failure the new init is
 * killed; the cgroup and the state directory are left to the caller. */
int brig_container_respawn (const struct brig_context *ctx, const char *id,
                            struct brig_respawn *rs, brig_error *err);

#endif
