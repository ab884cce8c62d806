/* Container-level cgroup operations behind `pause`, `resume`, `update` and
 * `events`: each loads the container from the state store, checks its
 * status and calls the cgroup manager recorded at create. */
#ifndef BRIG_CGROUP_CONTAINER_H
#define BRIG_CGROUP_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "context.h"
#include "error.h"
#include "ocispec.h"

/* `pause`: freeze every process of a running container. */
int brig_container_pause (const struct brig_context *ctx, const char *id, brig_error *err);

/* `resume`: thaw a paused container. */
int brig_container_resume (const struct brig_context *ctx, const char *id, brig_error *err);

/* `update`: apply res to a created, running or paused container's cgroup. */
int brig_container_update (const struct brig_context *ctx, const char *id,
                           const oci_resources *res, brig_error *err);

/* An open view of a container's cgroup for `events`. */
typedef struct brig_events brig_events;

/* Open the container's cgroup (it must exist and not be stopped). */
int brig_events_open (const struct brig_context *ctx, const char *id, brig_events **out,
                      brig_error *err);

/* True while the container's init is alive. */
bool brig_events_running (brig_events *ev);

/* The cgroup handle (owned by ev). */
brig_cgroup *brig_events_cgroup (brig_events *ev);

/* Release ev. */
void brig_events_close (brig_events *ev);

#endif
